"""The operator registry (internal: `register_op`, `get_op`, `list_ops`).

Importing this package registers every built-in operator family.
"""
from mxcy.operator._spec import OpSpec, ShapeError, register_op, get_op, list_ops
from mxcy.operator import nn, conv, loss, elemwise, tensor  # noqa: F401  (registers the operators)

__all__ = ['OpSpec', 'ShapeError', 'register_op', 'get_op', 'list_ops']
