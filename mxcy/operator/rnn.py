"""The fused recurrent layer ``RNN`` (MXNet 1.x: modes rnn_relu, rnn_tanh, lstm, gru).

Layout (TNC): data (T, N, I); state (L·D, N, H) and, for LSTM, state_cell of the same
shape, row l·D + d for layer l and direction d (D = 2 when bidirectional); output
(T, N, D·H), the directions side by side; with ``state_outputs`` also state_output (the
last h) and, for LSTM, statecell_output (the last c).

``parameters`` is one flat vector in MXNet's cuDNN-compatible packing: first every
weight, per layer and per direction W_x (G·H, I_l) then W_h (G·H, H); then every bias,
per layer and direction b_x (G·H,) then b_h (G·H,). I_0 = I, I_l = D·H above. Gate
blocks in order: LSTM i, f, g, o; GRU r, z, n; vanilla RNN one block (G = 1).

Cells (x the layer input, h and c the previous state, σ the logistic function):

* rnn_tanh / rnn_relu: h' = act(W_x x + b_x + W_h h + b_h)
* lstm: [i, f, g, o] = [σ, σ, tanh, σ](W_x x + b_x + W_h h + b_h);
  c' = f·c + i·g, h' = o·tanh(c')
* gru: r = σ(x_r + h_r), z = σ(x_z + h_z), n = tanh(x_n + r·h_n) with x_* = W_x x + b_x
  and h_* = W_h h + b_h per block; h' = (1 − z)·n + z·h

With ``p`` > 0 in training, dropout (keep with 1 − p, scale 1/(1 − p)) is applied to each
layer's output before it feeds the next layer (not to the last layer's output).

Computation (mxcy/_rnn.pyx): one engine kernel for the forward of the whole sequence,
every layer and direction, and one for the backward, both without the GIL. Per layer
and direction the input projection of every step is one GEMM; the recurrence does one
(N × H)·(H × G·H) GEMM per step and a fused gate loop; backward (BPTT) keeps the gate
gradients of every step and forms dW_x, dW_h and dx with one GEMM each. A hidden output
``reserve`` holds what backward needs: each layer's output and, per layer and direction,
the activated gates (LSTM, GRU) and the cell states (LSTM) or W_hn·h + b_hn (GRU), plus
the dropout masks (drawn by a separate sampling op before the forward kernel). The NumPy
reference of the kernels is ``mxcy._reference.rnn_fwd_np`` / ``rnn_bwd_np``.
"""
from mxcy import _rnn
from mxcy.base import MXNetError
from mxcy.ndarray.random import push_random
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import DTypeError, OpSpec, register_op, unify_shape
from mxcy.operator import rnn_lengths

_GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}


def _dims(p, dshape):
    """(T, N, I, H, L, D, G) for the data shape."""
    seq_len, batch, input_size = dshape
    return (seq_len, batch, input_size, p.state_size, p.num_layers,
            2 if p.bidirectional else 1, _GATES[p.mode])


def param_size(p, input_size):
    """Length of the flat parameter vector (MXNet's GetRnnParamSize without projection)."""
    h, d, g = p.state_size, 2 if p.bidirectional else 1, _GATES[p.mode]
    total = 0
    for layer in range(p.num_layers):
        ni = input_size if layer == 0 else d * h
        total += d * g * h * (ni + h + 2)
    return total


def _has_masks(p):
    """Whether `reserve` keeps dropout masks (between layers, when p > 0)."""
    return p.p > 0 and p.num_layers > 1


# ---------------------------------------------------------------- the operator
@register_op
class RNN(OpSpec):
    """Fused multi-layer (bidirectional) vanilla RNN, LSTM or GRU (see the module doc)."""
    name = 'RNN'
    params = ParamSchema(
        Param('state_size', 'int'),
        Param('num_layers', 'int'),
        Param('bidirectional', 'bool', False),
        Param('mode', 'str', choices=tuple(_GATES)),
        Param('p', 'float', 0.0),
        Param('state_outputs', 'bool', False),
        Param('projection_size', 'int', None, optional=True),
        Param('lstm_state_clip_min', 'float', None, optional=True),
        Param('lstm_state_clip_max', 'float', None, optional=True),
        Param('lstm_state_clip_nan', 'bool', False),
        Param('use_sequence_length', 'bool', False),
    )
    backward_needs = ('out_grads', 'inputs', 'outputs')

    def arguments(self, p):
        return ['data', 'parameters', 'state'] + (['state_cell'] if p.mode == 'lstm' else []) \
            + (['sequence_length'] if p.use_sequence_length else [])

    def outputs(self, p):
        names = ['output']
        if p.state_outputs:
            names.append('state_output')
            if p.mode == 'lstm':
                names.append('statecell_output')
        return names + ['reserve']

    def num_visible_outputs(self, p):
        return len(self.outputs(p)) - 1

    def _check_params(self, p):
        if p.state_size < 1 or p.num_layers < 1:
            raise ValueError(f"RNN: state_size and num_layers must be positive, got "
                             f"state_size={p.state_size}, num_layers={p.num_layers}")
        if not 0.0 <= p.p < 1.0:
            raise ValueError(f"RNN: dropout p must be in [0, 1), got p={p.p}")
        unsupported = [name for name, value in (
            ('projection_size', p.projection_size), ('lstm_state_clip_min',
                                                      p.lstm_state_clip_min),
            ('lstm_state_clip_max', p.lstm_state_clip_max)) if value is not None]
        if unsupported:
            raise MXNetError(f"RNN: parameter(s) {unsupported} are not supported by this "
                             "implementation")

    def infer_shape(self, p, in_shapes):
        self._check_params(p)
        shapes = list(in_shapes)
        dshape = shapes[0]
        n_out = len(self.outputs(p))
        if dshape is None:
            return shapes, [None] * n_out, []
        if len(dshape) != 3:
            raise self.shape_error('data', '(seq_len, batch, input_size)', tuple(dshape),
                                   'RNN takes TNC layout')
        t, n, i, h, num_layers, d, _ = _dims(p, dshape)
        shapes[1] = unify_shape(self, 'parameters', (param_size(p, i),), shapes[1])
        state = (num_layers * d, n, h)
        names = self.arguments(p)
        for idx in range(2, len(shapes)):
            want = (n,) if names[idx] == 'sequence_length' else state
            shapes[idx] = unify_shape(self, names[idx], want, shapes[idx])
        if min(dshape) < 1:     # 0: a dimension not known yet (partial inference)
            return shapes, [(t, n, d * h)] + [state] * (n_out - 2) + [None], []
        reserve = (_rnn.reserve_size(p.mode, t, n, h, num_layers, p.bidirectional,
                                     _has_masks(p)),)
        outs = [(t, n, d * h)] + [state] * (n_out - 2) + [reserve]
        return shapes, outs, []

    def infer_type(self, p, in_types):
        if p.use_sequence_length:       # the lengths may be of any number type
            ins, outs, aux = super().infer_type(p, in_types[:-1])
            return ins + [in_types[-1] or ins[0]], outs, aux
        ins, outs, aux = super().infer_type(p, in_types)
        if ins[0] is not None and ins[0] not in ('float32', 'float64'):
            raise DTypeError(f"RNN: data must be float32 or float64, got {ins[0]}")
        return ins, outs, aux

    # ------------------------------------------------------------ forward
    def forward(self, p, is_train, req, ins, outs, aux):
        x = ins[0]
        t, n, _, h, num_layers, d, _ = _dims(p, x.shape)
        dropout = is_train and _has_masks(p)
        if p.use_sequence_length:
            if dropout:
                raise MXNetError("RNN: dropout between layers (p > 0) together with "
                                 "use_sequence_length is not supported in training")
            rnn_lengths.push_forward(p, req, ins, outs)
            return
        reserve = outs[-1]
        if dropout:
            offsets = _rnn.mask_offsets(p.mode, t, n, h, num_layers, p.bidirectional)
            size, keep = t * n * d * h, 1.0 - p.p

            def draw_masks(gen, flat):
                for off in offsets:
                    mask = flat[off:off + size]
                    mask[...] = (gen.random(size, dtype=mask.dtype) < keep) * (1.0 / keep)
            push_random(draw_masks, [], [reserve], 'RNN_dropout')
        states = list(outs[1:-1]) + [None] * (4 - len(outs))          # hy, cy or None
        reqs = list(req[1:len(outs) - 1]) + ['null'] * (4 - len(outs))
        _rnn.rnn_forward(p.mode, num_layers, p.bidirectional, _has_masks(p), dropout, x,
                         ins[1], ins[2], ins[3] if p.mode == 'lstm' else None, outs[0],
                         states[0], states[1], reserve, req[0], reqs[0], reqs[1])

    # ------------------------------------------------------------ backward
    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if p.use_sequence_length:
            rnn_lengths.push_backward(p, req, out_grads, ins, in_grads)
            return
        n_heads = self.num_visible_outputs(p)
        heads = list(out_grads[:n_heads]) + [None] * (3 - n_heads)
        grads = list(in_grads) + [None] * (4 - len(in_grads))
        reqs = list(req) + ['null'] * (4 - len(req))
        cx = ins[3] if p.mode == 'lstm' else None
        _rnn.rnn_backward(p.mode, p.num_layers, p.bidirectional, _has_masks(p), ins[0],
                          ins[1], ins[2], cx, outs[-1], heads[0], heads[1], heads[2],
                          *grads[:4], *reqs[:4])
