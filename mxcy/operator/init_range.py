"""Operators without inputs that fill a range: ``_arange``, ``_linspace``, ``_eye``
(MXNet's names; ``mx.sym.arange/linspace/eye`` build them, mx.nd's hand-written
functions compute the same values). No gradient; ``ctx`` is accepted and ignored.

* ``_arange(start, stop=None, step=1, repeat=1)``: NumPy's arange (start..stop, or
  0..start when stop is None), each value repeated `repeat` times;
* ``_linspace(start, stop, num, endpoint=True)``: NumPy's linspace;
* ``_eye(N, M=0, k=0)``: ones on the k-th diagonal of an N x (M or N) matrix.
"""
import numpy as np

from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op
from mxcy.operator.tensor import push_value

_CTX_DTYPE = (Param('ctx', 'any', None, optional=True), Param('dtype', 'dtype', 'float32'))


class _Range(OpSpec):
    backward_needs = ()
    has_backward = False

    def arguments(self, p):
        return []

    def infer_shape(self, p, in_shapes):
        return [], [self.values(p).shape], []

    def infer_type(self, p, in_types):
        return [], [np.dtype(p.dtype or 'float32').name], []

    def forward(self, p, is_train, req, ins, outs, aux):
        values = self.values(p)
        push_value(lambda: values, [], outs[0], req[0], self.name)


def arange_values(op, start, stop, step, repeat, dtype='float32'):
    if step == 0:
        raise ValueError(f"{op}: parameter 'step' must not be 0")
    if repeat < 1:
        raise ValueError(f"{op}: parameter 'repeat' must be >= 1, got {repeat}")
    if stop is None:
        start, stop = 0.0, start
    values = np.arange(start, stop, step, dtype=np.float64).astype(dtype)
    return np.repeat(values, repeat) if repeat > 1 else values


@register_op
class _arange(_Range):
    name = '_arange'
    params = ParamSchema(Param('start', 'float'), Param('stop', 'float', None, optional=True),
                         Param('step', 'float', 1.0), Param('repeat', 'int', 1),
                         Param('infer_range', 'bool', False), *_CTX_DTYPE)

    def values(self, p):
        return arange_values(self.name, p.start, p.stop, p.step, p.repeat, p.dtype)


@register_op
class _linspace(_Range):
    name = '_linspace'
    params = ParamSchema(Param('start', 'float'), Param('stop', 'float'), Param('num', 'int'),
                         Param('endpoint', 'bool', True), *_CTX_DTYPE)

    def values(self, p):
        if p.num < 0:
            raise ValueError(f"{self.name}: parameter 'num' must be >= 0, got {p.num}")
        return np.linspace(p.start, p.stop, p.num, endpoint=p.endpoint).astype(p.dtype)


@register_op
class _eye(_Range):
    name = '_eye'
    params = ParamSchema(Param('N', 'int'), Param('M', 'int', 0), Param('k', 'int', 0),
                         *_CTX_DTYPE)

    def values(self, p):
        if p.N < 0 or p.M < 0:
            raise ValueError(f"{self.name}: N and M must be >= 0, got N={p.N}, M={p.M}")
        return np.eye(p.N, p.M or p.N, p.k, dtype=p.dtype)
