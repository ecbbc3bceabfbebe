"""``_sparse_softmax_ce``: −log_softmax(data)[label] along ``axis``, the value
``gluon.loss.SoftmaxCrossEntropyLoss`` computes with sparse labels, as one recorded call
instead of three (log_softmax, pick, negation). ``keepdims`` keeps the class axis as
size 1 (pick's convention; the loss then averages it away) or drops it (the loss's per-sample
value itself when nothing else is applied, so the loss records one node).

The forward is one kernel when the class axis is last (log-softmax of each row into the
hidden output ``logp``, then −logp at the label); otherwise log_softmax's and pick's
kernels and a negation. The backward is one kernel for any axis, dy · (exp(logp) −
one_hot(label)), with no temporaries. Internal (a hybridized loss still traces MXNet's
three ops, so an exported graph loads in MXNet); the label gets no gradient, as pick
gives it none.
"""
import numpy as np

from mxcy import _ndarray
from mxcy._ops import BINARY_OPS
from mxcy.operator._params import Param, ParamSchema, Params
from mxcy.operator._spec import OpSpec, get_op, register_op
from mxcy.operator.tensor import check_axis, zero_grads

_MUL = BINARY_OPS['multiply']
_FLOATS = (np.float32, np.float64)          # NDArray.dtype is the NumPy type
_INDEXES = _FLOATS + (np.int32, np.int64)


@register_op
class _sparse_softmax_ce(OpSpec):
    """−log_softmax(data)[label] along ``axis`` (see the module doc)."""
    name = '_sparse_softmax_ce'
    params = ParamSchema(Param('axis', 'int', -1), Param('keepdims', 'bool', True))
    backward_needs = ('out_grads', 'inputs', 'outputs')
    unused_out_grads = (1,)     # backward never reads logp's gradient: autograd passes None

    def arguments(self, p):
        return ['data', 'label']

    def outputs(self, p):
        return ['output', 'logp']

    def num_visible_outputs(self, p):
        return 1

    _cache = {}

    def _parts(self, p, shape):
        """(axis, log_softmax, its params, pick, its params), built once per axis."""
        ax = check_axis(self, p.axis, shape)
        key = (ax, bool(p.keepdims))
        parts = self._cache.get(key)
        if parts is None:
            parts = self._cache[key] = (
                ax, get_op('log_softmax'), Params({'axis': ax, 'temperature': None,
                                                   'dtype': None, 'use_length': False}),
                get_op('pick'), Params({'axis': ax, 'keepdims': bool(p.keepdims),
                                        'mode': 'clip'}))
        return parts

    def infer_shape(self, p, in_shapes):
        if not in_shapes[0]:
            return list(in_shapes), [None, None], []
        _, _, _, pick, pick_p = self._parts(p, in_shapes[0])
        shapes, outs, _ = pick.infer_shape(pick_p, in_shapes)
        return shapes, [outs[0], tuple(in_shapes[0])], []

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0], in_types[0]], []

    @staticmethod
    def _kernel_fits(x, label):
        return x.dtype in _FLOATS and label.dtype in _INDEXES and x.size > 0

    def forward(self, p, is_train, req, ins, outs, aux):
        ax, ls, ls_p, pick, pick_p = self._parts(p, ins[0].shape)
        out, logp = outs
        x, label = ins
        if ax == x.ndim - 1 and self._kernel_fits(x, label):
            _ndarray.sparse_ce(x, logp, label, out, ax)
            return
        ls.forward(ls_p, is_train, ['write'], ins[:1], [logp], [])
        pick.forward(pick_p, is_train, ['write'], [logp, label], [out], [])
        _ndarray.binary(out, -1.0, _MUL, out=out)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        zero_grads(req, in_grads, which=(1,))
        if req[0] == 'null':
            return
        ax, ls, ls_p, pick, pick_p = self._parts(p, ins[0].shape)
        x, label, logp = ins[0], ins[1], outs[1]
        if self._kernel_fits(x, label):
            _ndarray.sparse_ce(in_grads[0], logp, label, out_grads[0], ax, backward=True,
                           add=req[0] == 'add')
            return
        minus_dy = _ndarray.binary(out_grads[0], -1.0, _MUL)
        d_logp = _ndarray.new_empty(logp.shape, _ndarray.dtype_of(logp), logp.context)
        pick.backward(pick_p, ['write', 'null'], [minus_dy], [logp, label], None,
                      [d_logp, None], [])         # zero but at the picked spots
        ls.backward(ls_p, [req[0]], [d_logp], [x], [logp], [in_grads[0]], [])
