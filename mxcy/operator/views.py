"""``reshape_like`` and ``diag`` as registry operators (MXNet 1.x names, parameters and
semantics), so ``mx.sym`` has them, hybridized blocks can use them and autograd
differentiates them (their ``mx.nd`` functions are generated from these records).

* ``reshape_like(lhs, rhs, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None)``:
  lhs's values with lhs's dims ``[lhs_begin, lhs_end)`` replaced by rhs's dims
  ``[rhs_begin, rhs_end)`` (by default all of them: rhs's shape). rhs is read for its
  shape only and gets a zero gradient; its dtype may differ from lhs's.
* ``diag(data, k=0, axis1=0, axis2=1)``: a 1-D input becomes the square matrix with the
  input on diagonal k; an N-D input gives diagonal k of its (axis1, axis2) planes, as
  the last axis (NumPy's ``diagonal``). A diagonal that does not exist is an error, as in
  MXNet (NumPy would return an empty one).
"""
import numpy as np

from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, ShapeError, register_op
from mxcy.operator.tensor import (check_axis, prod, push_scatter, push_value, write_copy,
                                  zero_grads)


def _range(op, begin, end, shape, which):
    """(start, stop) of dims [begin, end) of `shape`, negative and None as MXNet."""
    n = len(shape)
    start = 0 if begin is None else begin
    stop = n if end is None else end
    start, stop = (start + n if start < 0 else start), (stop + n if stop < 0 else stop)
    if not 0 <= start <= n or not 0 <= stop <= n or start > stop:
        raise ShapeError(f"{op.name}: {which}_begin={begin}, {which}_end={end} is not a "
                         f"valid range of dims of {which} {tuple(shape)}")
    return start, stop


@register_op
class reshape_like(OpSpec):
    """lhs reshaped: its dims [lhs_begin, lhs_end) become rhs's dims [rhs_begin, rhs_end)."""
    name = 'reshape_like'
    params = ParamSchema(
        Param('lhs_begin', 'int', None, optional=True),
        Param('lhs_end', 'int', None, optional=True),
        Param('rhs_begin', 'int', None, optional=True),
        Param('rhs_end', 'int', None, optional=True),
    )
    backward_needs = ('out_grads',)

    def arguments(self, p):
        return ['lhs', 'rhs']

    def infer_shape(self, p, in_shapes):
        lhs, rhs = (None if s is None else tuple(s) for s in in_shapes)
        if lhs is None or rhs is None:
            return [lhs, rhs], [None], []
        lb, le = _range(self, p.lhs_begin, p.lhs_end, lhs, 'lhs')
        rb, re = _range(self, p.rhs_begin, p.rhs_end, rhs, 'rhs')
        out = lhs[:lb] + rhs[rb:re] + lhs[le:]
        if prod(out) != prod(lhs):
            raise ShapeError(f"{self.name}: lhs {lhs} has {prod(lhs)} elements, the shape "
                             f"{out} taken from rhs {rhs} has {prod(out)}")
        return [lhs, rhs], [out], []

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0]], []

    def forward(self, p, is_train, req, ins, outs, aux):
        write_copy(outs[0], ins[0], req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        write_copy(in_grads[0], out_grads[0], req[0])
        zero_grads(req, in_grads, which=(1,))


@register_op
class diag(OpSpec):
    """1-D: the matrix with data on diagonal k. N-D: diagonal k of the (axis1, axis2)
    planes, appended as the last axis."""
    name = 'diag'
    params = ParamSchema(Param('k', 'int', 0), Param('axis1', 'int', 0),
                         Param('axis2', 'int', 1))
    backward_needs = ('out_grads',)

    def _axes(self, p, shape):
        a1 = check_axis(self, p.axis1, shape, 'axis1')
        a2 = check_axis(self, p.axis2, shape, 'axis2')
        if a1 == a2:
            raise ShapeError(f"{self.name}: axis1 and axis2 must differ, both are {a1}")
        return a1, a2

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        s = tuple(s)
        if len(s) == 0:
            raise self.shape_error('data', 'an array of at least 1 dimension', s)
        if len(s) == 1:
            n = s[0] + abs(p.k)
            return [s], [(n, n)], []
        a1, a2 = self._axes(p, s)
        out = np.diagonal(np.broadcast_to(np.int8(0), s), p.k, a1, a2).shape
        if out[-1] == 0:
            raise ShapeError(f"{self.name}: diagonal k={p.k} does not exist in the "
                             f"({a1}, {a2}) planes of shape {s}")
        return [s], [tuple(out)], []

    def forward(self, p, is_train, req, ins, outs, aux):
        k = p.k
        if ins[0].ndim == 1:
            push_value(lambda x: np.diag(x, k), ins, outs[0], req[0], 'diag')
            return
        a1, a2 = self._axes(p, ins[0].shape)
        push_value(lambda x: np.diagonal(x, k, a1, a2), ins, outs[0], req[0], 'diag')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        k, shape = p.k, ins[0].shape
        if len(shape) == 1:
            push_value(lambda dy: np.diagonal(dy, k), out_grads, in_grads[0], req[0],
                       'diag_backward')
            return
        a1, a2 = self._axes(p, shape)

        def scatter(dy, acc):
            # a writable view of acc's diagonal k in the (a1, a2) planes, laid out as dy
            # (np.diagonal's view is read-only; einsum's '...ii->...i' is writable)
            planes = np.moveaxis(acc, (a1, a2), (-2, -1))
            n = dy.shape[-1]
            sub = planes[..., :n, k:k + n] if k >= 0 else planes[..., -k:n - k, :n]
            d = np.einsum('...ii->...i', sub)
            d += dy
        push_scatter(scatter, out_grads, in_grads[0], req[0], 'diag_backward')
