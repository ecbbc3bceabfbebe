"""The operator registry (internal: `register_op`, `get_op`, `list_ops`).

Importing this package registers every built-in operator family.
"""
from mxcy.operator._spec import OpSpec, ShapeError, register_op, get_op, list_ops
from mxcy.operator import nn, conv, loss, elemwise, tensor  # noqa: F401  (registers the operators)
from mxcy.operator import activation, norm, rnn, custom, init_ops  # noqa: F401
from mxcy.operator import views, ctc, math_ops, shape_ops, init_range  # noqa: F401
from mxcy.operator import array_ops, gather_ops, la_ops, random_ops, contrib_ops  # noqa: F401
from mxcy.operator import nn_extra, spatial_ops, pdf_ops, contrib_nn, box_ops  # noqa: F401
from mxcy.operator import optimizer_ops, optimizer_multi_ops, optimizer_contrib_ops  # noqa: F401
from mxcy.operator import detection_ops, deformable_ops, roi_pool_ops, hawkes_ops  # noqa: F401
from mxcy.operator import fused_loss, npx_ops  # noqa: F401
from mxcy.operator.custom import CustomOp, CustomOpProp, register
from mxcy.operator.introspect import (get_all_registered_operators, get_operator_arguments,
                                      OperatorArguments)
from mxcy.operator.legacy import NDArrayOp, NumpyOp, PythonOp

__all__ = ['OpSpec', 'ShapeError', 'register_op', 'get_op', 'list_ops',
           'CustomOp', 'CustomOpProp', 'register', 'get_all_registered_operators',
           'get_operator_arguments', 'OperatorArguments', 'PythonOp', 'NumpyOp', 'NDArrayOp']
