"""``_sparse_softmax_ce``: −log_softmax(data)[label] along ``axis`` (kept as size 1), the
value ``gluon.loss.SoftmaxCrossEntropyLoss`` computes with sparse labels, as one recorded
call instead of three (log_softmax, pick, negation): an imperative training step records
two fewer nodes. It runs the same declarations' kernels: log_softmax's forward into a
hidden output ``logp``, pick's, a negation; backward is pick's scatter of −dy, then
log_softmax's backward. Internal (a hybridized loss still traces MXNet's three ops, so an
exported graph loads in MXNet); the label gets no gradient, as pick gives it none.
"""
from mxcy import _ndarray
from mxcy._ops import BINARY_OPS
from mxcy.operator._params import Param, ParamSchema, Params
from mxcy.operator._spec import OpSpec, get_op, register_op
from mxcy.operator.tensor import check_axis, zero_grads

_MUL = BINARY_OPS['multiply']


@register_op
class _sparse_softmax_ce(OpSpec):
    """−log_softmax(data)[label] along ``axis``, keepdims (see the module doc)."""
    name = '_sparse_softmax_ce'
    params = ParamSchema(Param('axis', 'int', -1))
    backward_needs = ('out_grads', 'inputs', 'outputs')

    def arguments(self, p):
        return ['data', 'label']

    def outputs(self, p):
        return ['output', 'logp']

    def num_visible_outputs(self, p):
        return 1

    _cache = {}

    def _parts(self, p, shape):
        """(log_softmax, its params, pick, its params) for the axis (built once per axis)."""
        ax = check_axis(self, p.axis, shape)
        parts = self._cache.get(ax)
        if parts is None:
            parts = self._cache[ax] = (
                get_op('log_softmax'), Params({'axis': ax, 'temperature': None,
                                               'dtype': None, 'use_length': False}),
                get_op('pick'), Params({'axis': ax, 'keepdims': True, 'mode': 'clip'}))
        return parts

    def infer_shape(self, p, in_shapes):
        ls, ls_p, pick, pick_p = self._parts(p, in_shapes[0]) if in_shapes[0] else \
            (None,) * 4
        if ls is None:
            return list(in_shapes), [None, None], []
        shapes, outs, _ = pick.infer_shape(pick_p, in_shapes)
        return shapes, [outs[0], tuple(in_shapes[0])], []

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0], in_types[0]], []

    def forward(self, p, is_train, req, ins, outs, aux):
        ls, ls_p, pick, pick_p = self._parts(p, ins[0].shape)
        out, logp = outs
        ls.forward(ls_p, is_train, ['write'], ins[:1], [logp], [])
        pick.forward(pick_p, is_train, ['write'], [logp, ins[1]], [out], [])
        _ndarray.binary(out, -1.0, _MUL, out=out)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        zero_grads(req, in_grads, which=(1,))
        if req[0] == 'null':
            return
        ls, ls_p, pick, pick_p = self._parts(p, ins[0].shape)
        x, logp = ins[0], outs[1]
        minus_dy = _ndarray.binary(out_grads[0], -1.0, _MUL)
        d_logp = _ndarray.new_empty(logp.shape, _ndarray.dtype_of(logp), logp.context)
        pick.backward(pick_p, ['write', 'null'], [minus_dy], [logp, ins[1]], None,
                      [d_logp, None], [])         # zero but at the picked spots
        ls.backward(ls_p, [req[0]], [d_logp], [x], [logp], [in_grads[0]], [])
