"""The operator registry (internal: `register_op`, `get_op`, `list_ops`).

Importing this package registers every built-in operator family.
"""
from mxcy.operator._spec import OpSpec, ShapeError, register_op, get_op, list_ops
from mxcy.operator import nn, conv, loss, elemwise, tensor  # noqa: F401  (registers the operators)
from mxcy.operator import activation, norm, rnn, custom, init_ops  # noqa: F401
from mxcy.operator import views, ctc  # noqa: F401
from mxcy.operator import optimizer_ops, optimizer_multi_ops  # noqa: F401
from mxcy.operator.custom import CustomOp, CustomOpProp, register
from mxcy.operator.legacy import NDArrayOp, NumpyOp, PythonOp

__all__ = ['OpSpec', 'ShapeError', 'register_op', 'get_op', 'list_ops',
           'CustomOp', 'CustomOpProp', 'register', 'NumpyOp', 'NDArrayOp', 'PythonOp']
