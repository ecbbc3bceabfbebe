"""Sequence operators: SequenceMask, SequenceLast, SequenceReverse (MXNet 1.x).

data is (max_len, batch, ...) for ``axis=0`` or (batch, max_len, ...) for ``axis=1``
(SequenceReverse: axis 0 only). With ``use_sequence_length=True`` a second input
`sequence_length` of shape (batch,) (any dtype; floats truncate) gives each sequence's
length; without it every sequence has length max_len. Lengths are clamped to
[0, max_len] (SequenceLast: [1, max_len], so an empty sequence yields its first step).
`sequence_length` gets a zero gradient (a NaN length counts as the lowest).

Each op is one engine op of `mxcy._seqattn.seq_op` (row copies over the data's bytes, so
every dtype); req='add' writes a temporary and adds it. Lengths of a dtype the kernel does
not read (float16, bool) are cast to float32 first.
"""
import numpy as np

from mxcy import _seqattn
from mxcy.operator._compute import assign
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op, unify_shape
from mxcy.operator.tensor import zero_grads


def push_seq(kind, x, y, lens, axis, req, name, fill=None, low=0):
    """y (req) the sequence op `kind` of x (see _seqattn.seq_op)."""
    if req == 'null' or y is None:
        return
    if lens is not None and np.dtype(lens.dtype) not in _seqattn.LENGTH_DTYPES:
        lens = lens.astype(np.float32)

    def value(out):
        _seqattn.seq_op(kind, x, out, lens, axis, fill, low, name.encode())
    assign(y, value, req)


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
        return ins[1] if len(ins) > 1 else None

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
        fill = np.array(p.value).astype(outs[0].dtype).tobytes()
        push_seq('mask', ins[0], outs[0], self._lens(ins), p.axis, req[0], 'SequenceMask',
                 fill)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        push_seq('mask', out_grads[0], in_grads[0], self._lens(ins), p.axis, req[0],
                 'SequenceMask_backward')
        self._finish(req, in_grads)


@register_op
class SequenceLast(_SequenceOp):
    """Each sequence's last step: the shape of data without ``axis``."""
    name = 'SequenceLast'
    params = ParamSchema(Param('use_sequence_length', 'bool', False), Param('axis', 'int', 0))

    def _out_shape(self, p, s):
        if s[p.axis] == 0:
            raise self.shape_error('data', f'at least one step on axis {p.axis}', s)
        return s[:p.axis] + s[p.axis + 1:]

    def forward(self, p, is_train, req, ins, outs, aux):
        push_seq('last', ins[0], outs[0], self._lens(ins), p.axis, req[0], 'SequenceLast',
                 low=1)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        push_seq('last_backward', out_grads[0], in_grads[0], self._lens(ins), p.axis, req[0],
                 'SequenceLast_backward', low=1)
        self._finish(req, in_grads)


@register_op
class SequenceReverse(_SequenceOp):
    """Reverse each sequence's first length steps along axis 0; padding stays in place.
    The permutation is its own inverse, so backward applies it to the head gradient."""
    name = 'SequenceReverse'
    params = ParamSchema(Param('use_sequence_length', 'bool', False), Param('axis', 'int', 0))
    axes = (0,)

    def forward(self, p, is_train, req, ins, outs, aux):
        push_seq('reverse', ins[0], outs[0], self._lens(ins), 0, req[0], 'SequenceReverse')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        push_seq('reverse', out_grads[0], in_grads[0], self._lens(ins), 0, req[0],
                 'SequenceReverse_backward')
        self._finish(req, in_grads)
