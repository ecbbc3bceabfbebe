"""MXNet's first Python operators, ``mx.operator.NumpyOp`` and ``NDArrayOp`` (deprecated
in MXNet in favour of ``CustomOp``, and crashing in MXNet 1.9.1), run here through the
``Custom`` operator.

A subclass overrides ``list_arguments`` / ``list_outputs`` (default ``['data']`` /
``['output']``), ``infer_shape(in_shape) -> (argument shapes, output shapes)`` (default:
every shape like input 0), ``forward(in_data, out_data)`` and
``backward(out_grad, in_data, out_data, in_grad)``; calling the instance,
``op(data=sym, name=...)``, gives a Symbol. ``NumpyOp`` hands NumPy arrays (write the
results into `out_data` / `in_grad` in place: ``y[:] = ...``); ``NDArrayOp`` hands
NDArrays, written the same way. Results are then assigned with the executor's `req`
(so ``grad_req='add'`` accumulates). `need_top_grad=False` (loss layers) means backward
does not use `out_grad`.
"""
import itertools
import warnings

import numpy as np

from mxcy import ndarray as nd
from mxcy.operator.custom import CustomOp, CustomOpProp, register

__all__ = ['PythonOp', 'NumpyOp', 'NDArrayOp']

_IDS = itertools.count()


class PythonOp:
    """The common base of ``NumpyOp`` and ``NDArrayOp`` (see the module docstring)."""

    _arrays = None     # how forward/backward see the data: 'numpy' or 'ndarray'

    def __init__(self, need_top_grad=True):
        warnings.warn(f'{type(self).__name__} is deprecated (as in MXNet); use CustomOp',
                      DeprecationWarning, stacklevel=2)
        self.need_top_grad_ = need_top_grad
        self._op_type = None

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """The Symbol applying this operator to the given input symbols."""
        from mxcy import symbol
        if self._op_type is None:
            self._op_type = f'_{type(self).__name__}{next(_IDS)}'
            register(self._op_type)(_prop_class(self))
        return symbol.Custom(*args, op_type=self._op_type, **kwargs)

    def forward(self, in_data, out_data):
        """Fill `out_data` from `in_data` (default: copy input 0 to output 0)."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        """Fill `in_grad` (default: pass `out_grad` 0 through to input 0)."""
        in_grad[0][:] = out_grad[0]

    def infer_shape(self, in_shape):
        """(argument shapes, output shapes); default: one output shaped like input 0."""
        return in_shape, [in_shape[0]] * len(self.list_outputs())

    def list_outputs(self):
        return ['output']

    def list_arguments(self):
        return ['data']

    def need_top_grad(self):
        """Whether backward uses the gradient from above."""
        return self.need_top_grad_


class NumpyOp(PythonOp):
    """A Python operator computing on NumPy arrays (see the module docstring)."""

    _arrays = 'numpy'


class NDArrayOp(PythonOp):
    """A Python operator computing on NDArrays (see the module docstring)."""

    _arrays = 'ndarray'

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The data backward reads (kept for it): by default all of it."""
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)


def _prop_class(op):
    """A CustomOpProp class that runs the PythonOp `op`."""
    class _Prop(CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=op.need_top_grad_)

        def list_arguments(self):
            return list(op.list_arguments())

        def list_outputs(self):
            return list(op.list_outputs())

        def infer_shape(self, in_shape):
            arg_shapes, out_shapes = op.infer_shape(in_shape)[:2]
            return arg_shapes, out_shapes, []

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return _Runner(op)
    _Prop.__name__ = _Prop.__qualname__ = f'{type(op).__name__}Prop'
    return _Prop


class _Runner(CustomOp):
    def __init__(self, op):
        super().__init__()
        self._op = op

    def _view(self, arrays):
        if self._op._arrays == 'numpy':
            return [a.asnumpy() for a in arrays]
        return [a.copy() for a in arrays]

    def _blank(self, like):
        if self._op._arrays == 'numpy':
            return [np.zeros(a.shape, dtype=a.dtype) for a in like]
        return [nd.zeros(a.shape, dtype=a.dtype) for a in like]

    def forward(self, is_train, req, in_data, out_data, aux):
        outs = self._blank(out_data)
        self._op.forward(in_data=self._view(in_data), out_data=outs)
        for dst, r, src in zip(out_data, req, outs):
            self.assign(dst, r, src)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        grads = self._blank(in_grad)
        self._op.backward(out_grad=self._view(out_grad), in_data=self._view(in_data),
                          out_data=self._view(out_data), in_grad=grads)
        for dst, r, src in zip(in_grad, req, grads):
            self.assign(dst, r, src)
