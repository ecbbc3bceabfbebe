"""Sequence operators: SequenceMask, SequenceLast, SequenceReverse (MXNet 1.x).

data is (max_len, batch, ...) for ``axis=0`` or (batch, max_len, ...) for ``axis=1``
(SequenceReverse: axis 0 only). With ``use_sequence_length=True`` a second input
`sequence_length` of shape (batch,) (any dtype; floats truncate) gives each sequence's
length; without it every sequence has length max_len. Lengths are clamped to
[0, max_len] (SequenceLast: [1, max_len], so an empty sequence yields its first step).
`sequence_length` gets a zero gradient.
"""
import numpy as np

from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op, unify_shape
from mxcy.operator.tensor import push_scatter, push_value, zero_grads


def _grids(shape, axis, lens, low):
    """(time index, lengths) broadcastable to `shape` (NumPy, inside an op)."""
    n, batch_axis = shape[axis], 1 - axis
    t = np.arange(n).reshape((n,) + (1,) * (len(shape) - axis - 1))
    if lens is None:
        return t, np.full((1,) * len(shape), n)
    lens = np.clip(np.trunc(lens.reshape(-1)).astype(np.int64), low, n)
    return t, lens.reshape((shape[batch_axis],) + (1,) * (len(shape) - batch_axis - 1))


class _SequenceOp(OpSpec):
    backward_needs = ('out_grads', 'inputs')
    axes = (0, 1)

    def arguments(self, p):
        return ['data', 'sequence_length'] if p.use_sequence_length else ['data']

    def _out_shape(self, p, s):
        return s

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if p.axis not in self.axes:
            raise ValueError(f"{self.name}: parameter 'axis' must be one of "
                             f"{list(self.axes)}, got {p.axis}")
        shapes = [None if s is None else tuple(s)] + list(in_shapes[1:])
        if s is None:
            return shapes, [None], []
        s = tuple(s)
        if len(s) < 2:
            raise self.shape_error('data', '(max_len, batch, ...) with at least 2 '
                                   'dimensions', s)
        if p.use_sequence_length:
            given = None if shapes[1] is None else tuple(shapes[1])
            shapes[1] = unify_shape(self, 'sequence_length', (s[1 - p.axis],), given)
        return shapes, [self._out_shape(p, s)], []

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0]], []

    def _lens(self, ins):
        return list(ins[1:2])

    def _finish(self, req, in_grads):
        zero_grads(req, in_grads, which=(1,))


@register_op
class SequenceMask(_SequenceOp):
    """Steps at or past each sequence's length are set to ``value``; the gradient passes
    through the kept steps only."""
    name = 'SequenceMask'
    params = ParamSchema(Param('use_sequence_length', 'bool', False),
                         Param('value', 'float', 0.0), Param('axis', 'int', 0))

    def forward(self, p, is_train, req, ins, outs, aux):
        ax, value = p.axis, p.value

        def fn(x, *lens):
            return _fill_tails(x, ax, lens[0] if lens else None, value)
        push_value(fn, ins, outs[0], req[0], 'SequenceMask')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        ax = p.axis

        def fn(dy, *lens):
            return _fill_tails(dy, ax, lens[0] if lens else None, 0)
        push_value(fn, [out_grads[0]] + self._lens(ins), in_grads[0], req[0],
                   'SequenceMask_backward')
        self._finish(req, in_grads)


def _fill_tails(x, ax, lens, value):
    """A copy of x with the steps at or past each sequence's length set to value: one
    slice assignment per sequence (np.where over the whole array costs ~10 copies)."""
    out = np.array(x, copy=True)
    if lens is None:
        return out
    _, n = _grids(x.shape, ax, lens, 0)
    fill = np.array(value).astype(x.dtype)
    for b, length in enumerate(n.reshape(-1).tolist()):
        where = [slice(None)] * x.ndim
        where[ax], where[1 - ax] = slice(length, None), b
        out[tuple(where)] = fill
    return out


def _last_index(shape, ax, lens):
    """Index (for take_along_axis on `ax`) of each sequence's last step."""
    _, n = _grids(shape, ax, lens, 1)
    return np.broadcast_to(n - 1, shape[:ax] + (1,) + shape[ax + 1:])


@register_op
class SequenceLast(_SequenceOp):
    """Each sequence's last step: the shape of data without ``axis``."""
    name = 'SequenceLast'
    params = ParamSchema(Param('use_sequence_length', 'bool', False), Param('axis', 'int', 0))

    def _out_shape(self, p, s):
        return s[:p.axis] + s[p.axis + 1:]

    def forward(self, p, is_train, req, ins, outs, aux):
        ax, shape = p.axis, outs[0].shape

        def fn(x, *lens):
            idx = _last_index(x.shape, ax, lens[0] if lens else None)
            return np.take_along_axis(x, idx, axis=ax).reshape(shape)
        push_value(fn, ins, outs[0], req[0], 'SequenceLast')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        ax = p.axis

        def scatter(dy, *rest):
            *lens, acc = rest
            idx = _last_index(acc.shape, ax, lens[0] if lens else None)
            vals = np.take_along_axis(acc, idx, axis=ax) + np.expand_dims(dy, ax)
            np.put_along_axis(acc, idx, vals, axis=ax)
        push_scatter(scatter, [out_grads[0]] + self._lens(ins), in_grads[0], req[0],
                     'SequenceLast_backward')
        self._finish(req, in_grads)


def _reversed(x, lens):
    """x with the first len[b] steps of each sequence reversed (axis 0), the rest kept."""
    t, n = _grids(x.shape, 0, lens, 0)
    src = np.where(t < n, n - 1 - t, t)
    return np.take_along_axis(x, np.broadcast_to(src, x.shape), axis=0)


@register_op
class SequenceReverse(_SequenceOp):
    """Reverse each sequence's first length steps along axis 0; padding stays in place.
    The permutation is its own inverse, so backward applies it to the head gradient."""
    name = 'SequenceReverse'
    params = ParamSchema(Param('use_sequence_length', 'bool', False), Param('axis', 'int', 0))
    axes = (0,)

    def forward(self, p, is_train, req, ins, outs, aux):
        push_value(lambda x, *lens: _reversed(x, lens[0] if lens else None), ins, outs[0],
                   req[0], 'SequenceReverse')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        push_value(lambda dy, *lens: _reversed(dy, lens[0] if lens else None),
                   [out_grads[0]] + self._lens(ins), in_grads[0], req[0],
                   'SequenceReverse_backward')
        self._finish(req, in_grads)
