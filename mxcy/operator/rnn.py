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

Computation: one engine op for forward and one for backward (a Python op: NumPy for the
elementwise work, SciPy's BLAS, the one the engine limits per worker, for the GEMMs). Per
layer and direction the input projection of the whole sequence is one GEMM; the
recurrence does one (N × H)·(H × G·H) GEMM per step; backward (BPTT) keeps the gate
gradients of every step and forms dW_x, dW_h and dx with one GEMM each. Measured on 2
cores (T=20, N=32, I=H=256, forward + backward): about 2x faster than the same LSTM
unrolled into FullyConnected/SliceChannel/Activation/elementwise nodes. A hidden
output ``reserve`` holds what backward needs: each layer's output and, per layer and
direction, the activated gates (LSTM, GRU), the cell states (LSTM) or W_hn·h + b_hn (GRU),
plus the dropout masks.
"""
import numpy as np
from scipy.linalg import blas as _blas

from mxcy import _ndarray
from mxcy.base import MXNetError
from mxcy.ndarray.random import push_random
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op, unify_shape

_GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}


def _store(out, value, req):
    if req == 'add':
        out += value
    elif req != 'null':
        out[...] = value


# ---------------------------------------------------------------- packing and layout
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


def unpack_params(flat, p, input_size):
    """{(layer, direction): (W_x, W_h, b_x, b_h)} as views of the flat vector."""
    h, d, g = p.state_size, 2 if p.bidirectional else 1, _GATES[p.mode]
    weights, off = {}, 0
    for layer in range(p.num_layers):
        ni = input_size if layer == 0 else d * h
        for direction in range(d):
            wx = flat[off:off + g * h * ni].reshape(g * h, ni)
            off += g * h * ni
            wh = flat[off:off + g * h * h].reshape(g * h, h)
            off += g * h * h
            weights[layer, direction] = [wx, wh]
    for layer in range(p.num_layers):
        for direction in range(d):
            weights[layer, direction] += [flat[off:off + g * h], flat[off + g * h:off + 2 * g * h]]
            off += 2 * g * h
    return {k: tuple(v) for k, v in weights.items()}


def _reserve_layout(p, dshape):
    """[(key, shape)] of the arrays kept for backward, in their order in `reserve`."""
    t, n, _, h, num_layers, d, _ = _dims(p, dshape)
    layout = []
    for layer in range(num_layers):
        layout.append((('y', layer), (t, n, d * h)))
        for direction in range(d):
            if p.mode == 'lstm':
                layout += [(('gates', layer, direction), (t, n, 4 * h)),
                           (('cells', layer, direction), (t, n, h))]
            elif p.mode == 'gru':
                layout += [(('gates', layer, direction), (t, n, 3 * h)),
                           (('hn', layer, direction), (t, n, h))]
        if p.p > 0 and layer < num_layers - 1:
            layout.append((('mask', layer), (t, n, d * h)))
    return layout


def _reserve_views(flat, layout):
    views, off = {}, 0
    for key, shape in layout:
        size = int(np.prod(shape))
        views[key] = flat[off:off + size].reshape(shape)
        off += size
    return views


def _time_steps(t, reverse):
    return range(t - 1, -1, -1) if reverse else range(t)


def _previous_states(h0, ys, reverse):
    """h_{t-1} for every t of one direction, as a (T, N, H) array."""
    if reverse:
        return np.concatenate([ys[1:], h0[None]], axis=0)
    return np.concatenate([h0[None], ys[:-1]], axis=0)


def _gemm(a, b, out=None, trans_a=False, trans_b=False, beta=0.0):
    """out := op(a)·op(b) + beta·out (row-major) on SciPy's BLAS; returns out.

    SciPy's BLAS is the one the engine limits to its share of the cores (NumPy's own
    BLAS would start extra threads inside a worker and oversubscribe the machine).
    Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, and the .T of a
    C-ordered array is F-ordered, so C-contiguous operands and outputs are not copied.
    """
    gemm = _blas.dgemm if a.dtype == np.float64 else _blas.sgemm
    if out is not None and out.flags.c_contiguous and out.dtype == a.dtype:
        target = out.T
        written = gemm(1.0, b.T, a.T, beta=beta, c=target, trans_a=trans_b, trans_b=trans_a,
                       overwrite_c=1)
        if written is target:       # computed in place (always, for these operands)
            return out
        out[...] = written.T
        return out
    result = gemm(1.0, b.T, a.T, trans_a=trans_b, trans_b=trans_a).T
    if out is None:
        return result
    if beta:
        result += beta * out
    out[...] = result
    return out


def _sigmoid_inplace(v):
    """v := σ(v) = (1 + tanh(v/2)) / 2 (NumPy's vectorised tanh: ~3x faster than expit)."""
    np.multiply(v, 0.5, out=v)
    np.tanh(v, out=v)
    v *= 0.5
    v += 0.5


# ---------------------------------------------------------------- forward cells
def _lstm_forward(x2, h, c, w, ys, gates, cells, reverse):
    wx, wh, bx, bh = w
    t, hs = ys.shape[0], ys.shape[2]
    _gemm(x2, wx, gates.reshape(-1, 4 * hs), trans_b=True)
    gates += bx + bh
    for step in _time_steps(t, reverse):
        g = gates[step]
        _gemm(h, wh, g, trans_b=True, beta=1.0)
        _sigmoid_inplace(g[:, :2 * hs])
        np.tanh(g[:, 2 * hs:3 * hs], out=g[:, 2 * hs:3 * hs])
        _sigmoid_inplace(g[:, 3 * hs:])
        i, f, gg, o = g[:, :hs], g[:, hs:2 * hs], g[:, 2 * hs:3 * hs], g[:, 3 * hs:]
        c_new = cells[step]
        np.multiply(f, c, out=c_new)
        c_new += i * gg
        h_new = ys[step]
        np.tanh(c_new, out=h_new)
        h_new *= o
        h, c = h_new, c_new
    return h, c


def _gru_forward(x2, h, w, ys, gates, hn, reverse):
    wx, wh, bx, bh = w
    t, hs = ys.shape[0], ys.shape[2]
    _gemm(x2, wx, gates.reshape(-1, 3 * hs), trans_b=True)
    gates += bx
    for step in _time_steps(t, reverse):
        g = gates[step]
        gh = _gemm(h, wh, trans_b=True)
        gh += bh
        rz = g[:, :2 * hs]
        rz += gh[:, :2 * hs]
        _sigmoid_inplace(rz)
        r, z, n = g[:, :hs], g[:, hs:2 * hs], g[:, 2 * hs:]
        hn[step] = gh[:, 2 * hs:]
        n += r * hn[step]
        np.tanh(n, out=n)
        h_new = ys[step]
        np.subtract(h, n, out=h_new)        # h' = n + z·(h − n)
        h_new *= z
        h_new += n
        h = h_new
    return h


def _rnn_forward(x2, h, w, ys, relu, reverse):
    wx, wh, bx, bh = w
    t, n, hs = ys.shape
    proj = _gemm(x2, wx, trans_b=True).reshape(t, n, hs)
    proj += bx + bh
    for step in _time_steps(t, reverse):
        pre = proj[step]
        _gemm(h, wh, pre, trans_b=True, beta=1.0)
        if relu:
            np.maximum(pre, 0, out=ys[step])
        else:
            np.tanh(pre, out=ys[step])
        h = ys[step]
    return h


# ---------------------------------------------------------------- backward cells
def _lstm_backward(w, h0, c0, ys, gates, cells, dys, dh, dc, reverse):
    """Gate gradients of every step (T·N, 4H) and the gradients of h0 and c0.

    The factors that do not depend on the recurrence (gate derivatives, tanh(c), the
    previous cells) are formed for the whole sequence first; a step then costs ~10
    elementwise passes and one GEMM.
    """
    wh = w[1]
    t, n, hs = ys.shape
    tanh_c = np.tanh(cells)
    dc_per_dh = gates[:, :, 3 * hs:] * (1 - tanh_c * tanh_c)       # ∂c'/∂h' = o·tanh′(c')
    deriv = gates * (1 - gates)                                    # σ′ of i, f, o
    g_act = gates[:, :, 2 * hs:3 * hs]
    np.subtract(1, g_act * g_act, out=deriv[:, :, 2 * hs:3 * hs])  # tanh′ of g
    c_prevs = _previous_states(c0, cells, reverse)
    dgates = np.empty((t, n, 4 * hs), dtype=ys.dtype)
    for step in _time_steps(t, not reverse):
        g, dg = gates[step], dgates[step]
        dh = dh + dys[step]
        dc = dc + dh * dc_per_dh[step]
        np.multiply(dc, g[:, 2 * hs:3 * hs], out=dg[:, :hs])        # i: dc·g
        np.multiply(dc, c_prevs[step], out=dg[:, hs:2 * hs])        # f: dc·c_prev
        np.multiply(dc, g[:, :hs], out=dg[:, 2 * hs:3 * hs])        # g: dc·i
        np.multiply(dh, tanh_c[step], out=dg[:, 3 * hs:])           # o: dh·tanh(c)
        dg *= deriv[step]
        dc = dc * g[:, hs:2 * hs]
        dh = _gemm(dg, wh)
    flat = dgates.reshape(t * n, 4 * hs)
    return flat, flat, dh, dc


def _gru_backward(w, h0, ys, gates, hn, dys, dh, reverse):
    """Gate gradients of every step, for the W_x side and the W_h side (they differ in
    the n block: r·h_n), and the gradient of h0."""
    wh = w[1]
    t, n, hs = ys.shape
    r, z, cand = gates[:, :, :hs], gates[:, :, hs:2 * hs], gates[:, :, 2 * hs:]
    h_prevs = _previous_states(h0, ys, reverse)
    dn_per_dh = (1 - z) * (1 - cand * cand)                         # through n, pre-tanh
    dr_per_dn = hn * r * (1 - r)                                    # through r, pre-σ
    dz_per_dh = (h_prevs - cand) * z * (1 - z)                      # through z, pre-σ
    dgx = np.empty((t, n, 3 * hs), dtype=ys.dtype)
    dgh = np.empty((t, n, 3 * hs), dtype=ys.dtype)
    for step in _time_steps(t, not reverse):
        dx_t, dh_t = dgx[step], dgh[step]
        dh = dh + dys[step]
        dn_pre = np.multiply(dh, dn_per_dh[step], out=dx_t[:, 2 * hs:])
        np.multiply(dn_pre, dr_per_dn[step], out=dx_t[:, :hs])
        np.multiply(dh, dz_per_dh[step], out=dx_t[:, hs:2 * hs])
        dh_t[:, :2 * hs] = dx_t[:, :2 * hs]
        np.multiply(dn_pre, r[step], out=dh_t[:, 2 * hs:])
        dh = _gemm(dh_t, wh, dh * z[step], beta=1.0)
    return dgx.reshape(t * n, 3 * hs), dgh.reshape(t * n, 3 * hs), dh


def _rnn_backward(w, ys, dys, dh, relu, reverse):
    wh = w[1]
    t, n, hs = ys.shape
    deriv = (ys > 0).astype(ys.dtype) if relu else 1 - ys * ys
    dpre = np.empty((t, n, hs), dtype=ys.dtype)
    for step in _time_steps(t, not reverse):
        dh = dh + dys[step]
        np.multiply(dh, deriv[step], out=dpre[step])
        dh = _gemm(dpre[step], wh)
    flat = dpre.reshape(t * n, hs)
    return flat, flat, dh


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
        return ['data', 'parameters', 'state'] + (['state_cell'] if p.mode == 'lstm' else [])

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
            ('lstm_state_clip_max', p.lstm_state_clip_max),
            ('use_sequence_length', p.use_sequence_length or None)) if value is not None]
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
        for idx in range(2, len(shapes)):
            shapes[idx] = unify_shape(self, self.arguments(p)[idx], state, shapes[idx])
        reserve = (sum(int(np.prod(s)) for _, s in _reserve_layout(p, dshape)),)
        outs = [(t, n, d * h)] + [state] * (n_out - 2) + [reserve]
        return shapes, outs, []

    def infer_type(self, p, in_types):
        ins, outs, aux = super().infer_type(p, in_types)
        if ins[0] is not None and ins[0] not in ('float32', 'float64'):
            raise TypeError(f"RNN: data must be float32 or float64, got {ins[0]}")
        return ins, outs, aux

    # ------------------------------------------------------------ forward
    def forward(self, p, is_train, req, ins, outs, aux):
        dshape = ins[0].shape
        layout = _reserve_layout(p, dshape)
        dropout = is_train and p.p > 0 and p.num_layers > 1
        n_state = len(outs) - 2
        out_req = req[0]

        def run(gen, x, flat, h0, *rest):
            c0 = rest[0] if p.mode == 'lstm' else None
            rest = rest[1:] if p.mode == 'lstm' else rest
            out, states, reserve = rest[0], rest[1:1 + n_state], rest[-1]
            hy, cy = _rnn_forward_all(p, x, flat, h0, c0, _reserve_views(reserve, layout),
                                      gen if dropout else None)
            _store(out, _reserve_views(reserve, layout)['y', p.num_layers - 1], out_req)
            if n_state:
                _store(states[0], hy, req[1])
            if n_state == 2:
                _store(states[1], cy, req[2])
        if dropout:
            push_random(run, list(ins), list(outs), 'RNN')
        else:
            _ndarray.push_numpy(lambda *views: run(None, *views), list(ins), list(outs), 'RNN')

    # ------------------------------------------------------------ backward
    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        targets = [(i, g) for i, g in enumerate(in_grads) if req[i] != 'null']
        if not targets:
            return
        layout = _reserve_layout(p, ins[0].shape)
        n_heads = self.num_visible_outputs(p)
        n_ins = len(ins)

        def run(*views):
            heads, rest = views[:n_heads], views[n_heads:]
            inputs, reserve, grads = rest[:n_ins], rest[n_ins], rest[n_ins + 1:]
            x, flat, h0 = inputs[:3]
            c0 = inputs[3] if p.mode == 'lstm' else None
            dhy = heads[1] if n_heads > 1 else None
            dcy = heads[2] if n_heads > 2 else None
            values = _rnn_backward_all(p, x, flat, h0, c0, _reserve_views(reserve, layout),
                                       heads[0], dhy, dcy)
            for (i, _), out in zip(targets, grads):
                _store(out, values[i], req[i])
        _ndarray.push_numpy(run, list(out_grads[:n_heads]) + list(ins) + [outs[-1]],
                            [g for _, g in targets], 'RNN_backward')


def _rnn_forward_all(p, x, flat, h0, c0, res, gen):
    """Run every layer and direction; fills the reserve views, returns (hy, cy)."""
    t, n, i, h, num_layers, d, _ = _dims(p, x.shape)
    weights = unpack_params(flat, p, i)
    hy, cy = np.empty_like(h0), (np.empty_like(c0) if c0 is not None else None)
    layer_in = x
    for layer in range(num_layers):
        ys = res['y', layer]
        x2 = layer_in.reshape(t * n, -1)
        for direction in range(d):
            k, reverse = layer * d + direction, direction == 1
            w, yd = weights[layer, direction], ys[:, :, direction * h:(direction + 1) * h]
            if p.mode == 'lstm':
                hy[k], cy[k] = _lstm_forward(x2, h0[k], c0[k], w, yd,
                                             res['gates', layer, direction],
                                             res['cells', layer, direction], reverse)
            elif p.mode == 'gru':
                hy[k] = _gru_forward(x2, h0[k], w, yd, res['gates', layer, direction],
                                     res['hn', layer, direction], reverse)
            else:
                hy[k] = _rnn_forward(x2, h0[k], w, yd, p.mode == 'rnn_relu', reverse)
        layer_in = ys
        if layer < num_layers - 1 and p.p > 0:
            mask = res['mask', layer]
            if gen is None:     # inference: no dropout
                mask[...] = 1
            else:
                keep = 1.0 - p.p
                mask[...] = (gen.random(mask.shape, dtype=mask.dtype) < keep) * (1.0 / keep)
                layer_in = ys * mask
    return hy, cy


def _rnn_backward_all(p, x, flat, h0, c0, res, dout, dhy, dcy):
    """Gradients [d data, d parameters, d state, (d state_cell)] by BPTT."""
    t, n, i, h, num_layers, d, _ = _dims(p, x.shape)
    weights = unpack_params(flat, p, i)
    dflat = np.zeros_like(flat)
    dweights = unpack_params(dflat, p, i)
    dh0 = np.zeros_like(h0)
    dc0 = np.zeros_like(c0) if c0 is not None else None
    dys_all = np.array(dout, dtype=x.dtype)
    for layer in range(num_layers - 1, -1, -1):
        if layer == 0:
            layer_in = x
        elif p.p > 0:
            layer_in = res['y', layer - 1] * res['mask', layer - 1]
        else:
            layer_in = res['y', layer - 1]
        x2 = layer_in.reshape(t * n, -1)
        dx2 = np.zeros_like(x2)
        ys = res['y', layer]
        for direction in range(d):
            k, reverse = layer * d + direction, direction == 1
            w, sl = weights[layer, direction], slice(direction * h, (direction + 1) * h)
            dh = dhy[k].copy() if dhy is not None else np.zeros_like(h0[k])
            dys = dys_all[:, :, sl]
            if p.mode == 'lstm':
                dc = dcy[k].copy() if dcy is not None else np.zeros_like(c0[k])
                dgx, dgh, dh0[k], dc0[k] = _lstm_backward(
                    w, h0[k], c0[k], ys[:, :, sl], res['gates', layer, direction],
                    res['cells', layer, direction], dys, dh, dc, reverse)
            elif p.mode == 'gru':
                dgx, dgh, dh0[k] = _gru_backward(w, h0[k], ys[:, :, sl],
                                                 res['gates', layer, direction],
                                                 res['hn', layer, direction], dys, dh, reverse)
            else:
                dgx, dgh, dh0[k] = _rnn_backward(w, ys[:, :, sl], dys, dh,
                                                 p.mode == 'rnn_relu', reverse)
            h_prev = _previous_states(h0[k], ys[:, :, sl], reverse).reshape(t * n, h)
            dwx, dwh, dbx, dbh = dweights[layer, direction]
            _gemm(dgx, x2, dwx, trans_a=True)
            _gemm(dgh, h_prev, dwh, trans_a=True)
            dgx.sum(axis=0, out=dbx)
            dgh.sum(axis=0, out=dbh)
            _gemm(dgx, w[0], dx2, beta=1.0)
        dys_all = dx2.reshape(t, n, -1)
        if layer > 0 and p.p > 0:
            dys_all = dys_all * res['mask', layer - 1]
    grads = [dys_all, dflat, dh0]
    return grads + ([dc0] if c0 is not None else [])
