"""Pure-NumPy reference of the kernels in `mxcy._ops`: slow, short, obviously right.

Each function has the signature of its Cython twin in `_ops` (`binary_np`, `unary_np`,
`gemm_np`, `grad_np`, `softmax_np`), so kernel tests run one body against both. `_ndarray`
also uses `binary_np` and `unary_np` as the explicit float16 path (the C kernels have no
float16 loop).

Semantics (MXNet 1.x, as the C kernels implement them):
* a scalar operand is first cast to the array's dtype (MXNet's `DType(scalar)`), so
  `int32 array * 1.5` multiplies by 1;
* integer division truncates toward zero (C `/`, MXNet's `mshadow_op::div`), unlike
  NumPy's floor division; `x / -1` wraps like negation;
* modulo takes the sign of the divisor (Python / MXNet `mshadow_op::mod`);
* integer division or modulo by zero raises ZeroDivisionError (MXNet crashed or returned
  0); float modulo by zero gives NaN, as NumPy does;
* comparisons return 1/0 in the operands' dtype;
* power, hypot and every transcendental unary op are computed in float64 and cast back
  (C's `(DType)pow((double)a, (double)b)`), so float→int casts truncate;
* `round` rounds halves away from zero (C `round`), not to even as `numpy.round` does.
Operands must have one dtype; same-shape arrays, broadcastable arrays or a scalar `y`.
"""
import numpy as np
from scipy.special import ndtr

from mxcy._ops import BINARY_OPS, GRAD_OPS, UNARY_OPS

_B = BINARY_OPS
_U = UNARY_OPS
_REVERSED = {_B['rsubtract']: _B['subtract'], _B['rdivide']: _B['divide'],
             _B['rmodulo']: _B['modulo'], _B['rpower']: _B['power']}
_COMPARE = {_B['equal']: np.equal, _B['not_equal']: np.not_equal,
            _B['greater']: np.greater, _B['greater_equal']: np.greater_equal,
            _B['lesser']: np.less, _B['lesser_equal']: np.less_equal}


def _is_int(dtype):
    return np.issubdtype(dtype, np.integer)


def _scalar_as(value, dtype):
    """MXNet's DType(scalar): truncation toward zero for integer dtypes."""
    return np.asarray(np.float64(value)).astype(dtype)


def _int_divide(a, b):
    if np.any(b == 0):
        raise ZeroDivisionError("integer division or modulo by zero")
    with np.errstate(over='ignore'):
        q = a // np.where(b == -1, 1, b)           # b == -1 handled below (INT_MIN wraps)
        r = a - q * np.where(b == -1, 1, b)
        q = np.where((r != 0) & ((a < 0) != (b < 0)), q + 1, q)   # floor -> trunc
        return np.where(b == -1, -a, q)


def _int_modulo(a, b):
    if np.any(b == 0):
        raise ZeroDivisionError("integer division or modulo by zero")
    safe_b = np.where(b == -1, 1, b)
    return np.where(b == -1, 0, np.mod(a, safe_b))   # NumPy's integer mod is Python's


def _float_modulo(a, b):
    with np.errstate(invalid='ignore', divide='ignore'):
        r = np.fmod(a.astype(np.float64), b.astype(np.float64))
        r = np.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)
    return r


def _binary_values(op, a, b, dtype):
    """a OP b as an array (not yet cast to `dtype`)."""
    if op == _B['add']:
        return a + b
    if op == _B['subtract']:
        return a - b
    if op == _B['multiply']:
        return a * b
    if op == _B['divide']:
        return _int_divide(a, b) if _is_int(dtype) else np.true_divide(a, b)
    if op == _B['modulo']:
        return _int_modulo(a, b) if _is_int(dtype) else _float_modulo(a, b)
    if op == _B['power']:
        with np.errstate(all='ignore'):
            return np.power(a.astype(np.float64), b.astype(np.float64))
    if op == _B['maximum']:
        return np.maximum(a, b)
    if op == _B['minimum']:
        return np.minimum(a, b)
    if op == _B['hypot']:
        return np.hypot(a.astype(np.float64), b.astype(np.float64))
    if op in _COMPARE:
        return _COMPARE[op](a, b)
    raise ValueError(f"reference binary: unknown op code {op}")


def binary_np(op, x, y, out):
    """out[...] := x OP y (y an array of x's dtype, or a scalar); returns `out`."""
    dtype = x.dtype
    b = np.asarray(y) if isinstance(y, np.ndarray) else _scalar_as(y, dtype)
    a = x
    if op in _REVERSED:
        a, b, op = b, a, _REVERSED[op]
    with np.errstate(over='ignore', divide='ignore', invalid='ignore'):
        values = _binary_values(op, a, b, dtype)
        out[...] = np.asarray(values).astype(dtype)
    return out


def _round_half_away(v):
    t = np.trunc(v)
    return t + np.where(np.abs(v - t) >= 0.5, np.sign(v), 0)


_UNARY_F64 = {
    _U['sign']: np.sign, _U['sqrt']: np.sqrt, _U['exp']: np.exp, _U['log']: np.log,
    _U['sigmoid']: lambda v: 1 / (1 + np.exp(-v)), _U['tanh']: np.tanh,
    _U['rsqrt']: lambda v: 1 / np.sqrt(v), _U['floor']: np.floor, _U['ceil']: np.ceil,
    _U['round']: _round_half_away, _U['log1p']: np.log1p, _U['expm1']: np.expm1,
    _U['sin']: np.sin, _U['cos']: np.cos, _U['reciprocal']: lambda v: 1 / v,
    _U['softrelu']: lambda v: np.logaddexp(0, v),
    _U['softsign']: lambda v: v / (1 + np.abs(v)), _U['trunc']: np.trunc,
    _U['log2']: np.log2, _U['log10']: np.log10, _U['cbrt']: np.cbrt,
    _U['arctan']: np.arctan, _U['tan']: np.tan,
    _U['gelu']: lambda v: v * ndtr(v),
}


def unary_np(op, x, out):
    """out[...] := f(x); negative/abs/square/relu in x's dtype (they wrap), the rest via
    float64; returns `out`."""
    with np.errstate(all='ignore'):
        if op == _U['negative']:
            values = np.negative(x)
        elif op == _U['abs']:
            values = np.where(x >= 0, x, np.negative(x))
        elif op == _U['square']:
            values = x * x
        elif op == _U['relu']:
            values = np.where(x > 0, x, np.zeros((), dtype=x.dtype))
        elif op in _UNARY_F64:
            values = _UNARY_F64[op](x.astype(np.float64))
        else:
            raise ValueError(f"reference unary: unknown op code {op}")
        out[...] = np.asarray(values).astype(x.dtype)
    return out


def gemm_np(a, b, trans_a=False, trans_b=False):
    """op(a) · op(b) for 2-D float32/float64 arrays."""
    if a.dtype not in (np.float32, np.float64) or b.dtype != a.dtype:
        raise ValueError(f"reference gemm: needs float32 or float64 operands of one dtype, "
                         f"got {a.dtype} and {b.dtype}")
    x = a.T if trans_a else a
    y = b.T if trans_b else b
    return np.matmul(x, y).astype(a.dtype)


def accuracy_counts(pred, label):
    """[correct, rows] for the accuracy kernel: argmax per row (NumPy's, NaN first) against
    the label truncated to an integer."""
    pred = np.asarray(pred)
    best = np.argmax(pred, axis=1)
    truth = np.asarray(label).ravel().astype(np.int64)
    return np.array([float((best == truth).sum()), float(pred.shape[0])])


def optimizer_update(kind, w, g, states, lr, wd=0.0, rescale_grad=1.0, clip_gradient=None,
                     momentum=0.0, beta1=0.9, beta2=0.999, epsilon=1e-8):
    """The fused optimizer kernels on NumPy arrays, in place: 'sgd', 'sgd_mom', 'adam'."""
    clip = clip_gradient is not None and clip_gradient > 0
    if kind in ('sgd', 'sgd_mom'):
        step = rescale_grad * g
        if clip:
            step = np.clip(step, -clip_gradient, clip_gradient)
        step = step + wd * w
        if kind == 'sgd':
            w -= lr * step
        else:
            states[0][...] = momentum * states[0] - lr * step
            w += states[0]
        return
    step = rescale_grad * g + wd * w
    if clip:
        step = np.clip(step, -clip_gradient, clip_gradient)
    mean, var = states
    mean[...] = beta1 * mean + (1 - beta1) * step
    var[...] = beta2 * var + (1 - beta2) * step * step
    w -= lr * mean / (np.sqrt(var) + epsilon)


# ---------------------------------------------------------------- fused RNN (mxcy._rnn)
# Twins of `_rnn.rnn_fwd_np` / `_rnn.rnn_bwd_np`: one cell at a time, caching each step;
# `saved` is this module's own record (the kernels keep a flat `reserve` instead).
_RNN_GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def rnn_unpack(flat, mode, num_layers, dirs, input_size, hidden):
    """{(layer, direction): (W_x, W_h, b_x, b_h)}: MXNet's packing, every weight first."""
    g, parts, off = _RNN_GATES[mode] * hidden, {}, 0
    for layer in range(num_layers):
        ni = input_size if layer == 0 else dirs * hidden
        for d in range(dirs):
            parts[layer, d] = [flat[off:off + g * ni].reshape(g, ni),
                               flat[off + g * ni:off + g * (ni + hidden)].reshape(g, hidden)]
            off += g * (ni + hidden)
    for layer in range(num_layers):
        for d in range(dirs):
            parts[layer, d] += [flat[off:off + g], flat[off + g:off + 2 * g]]
            off += 2 * g
    return parts


def _rnn_cell(mode, x, h, c, wx, wh, bx, bh):
    """One step: (h', c', cache)."""
    hs = h.shape[1]
    if mode == 'lstm':
        a = x @ wx.T + bx + h @ wh.T + bh
        i, f = _sigmoid(a[:, :hs]), _sigmoid(a[:, hs:2 * hs])
        g, o = np.tanh(a[:, 2 * hs:3 * hs]), _sigmoid(a[:, 3 * hs:])
        c_new = f * c + i * g
        h_new = o * np.tanh(c_new)
        return h_new, c_new, (x, h, c, i, f, g, o, c_new)
    if mode == 'gru':
        ax, ah = x @ wx.T + bx, h @ wh.T + bh
        r = _sigmoid(ax[:, :hs] + ah[:, :hs])
        z = _sigmoid(ax[:, hs:2 * hs] + ah[:, hs:2 * hs])
        n = np.tanh(ax[:, 2 * hs:] + r * ah[:, 2 * hs:])
        return (1 - z) * n + z * h, None, (x, h, r, z, n, ah[:, 2 * hs:])
    a = x @ wx.T + bx + h @ wh.T + bh
    h_new = np.tanh(a) if mode == 'rnn_tanh' else np.maximum(a, 0)
    return h_new, None, (x, h, h_new)


def _rnn_cell_backward(mode, cache, dh, dc, wx, wh):
    """Gradients of one step: (dx, dh_prev, dc_prev, dwx, dwh, dbx, dbh)."""
    if mode == 'lstm':
        x, h, c, i, f, g, o, c_new = cache
        tc = np.tanh(c_new)
        dc = dc + dh * o * (1 - tc * tc)
        da = np.concatenate([dc * g * i * (1 - i), dc * c * f * (1 - f),
                             dc * i * (1 - g * g), dh * tc * o * (1 - o)], axis=1)
        dax = dah = da
        dh_prev, dc = da @ wh, dc * f
    elif mode == 'gru':
        x, h, r, z, n, hn = cache
        dn = dh * (1 - z) * (1 - n * n)
        dr = dn * hn * r * (1 - r)
        dz = dh * (h - n) * z * (1 - z)
        dax = np.concatenate([dr, dz, dn], axis=1)
        dah = np.concatenate([dr, dz, dn * r], axis=1)
        dh_prev = dh * z + dah @ wh
    else:
        x, h, h_new = cache
        dax = dah = dh * ((h_new > 0) if mode == 'rnn_relu' else (1 - h_new * h_new))
        dh_prev = dax @ wh
    return (dax @ wx, dh_prev, dc, dax.T @ x, dah.T @ h, dax.sum(axis=0), dah.sum(axis=0))


def rnn_fwd_np(mode, x, w, hx, cx, num_layers, bidirectional, masks=None):
    """(y, hy, cy, saved); `masks`: dropout mask (T, N, D·H) of each layer but the last."""
    dirs, (t, _, ni), hs = 2 if bidirectional else 1, x.shape, hx.shape[2]
    weights = rnn_unpack(w, mode, num_layers, dirs, ni, hs)
    hy = np.empty_like(hx)
    cy = np.empty_like(hx) if mode == 'lstm' else None
    saved, layer_in = {}, x
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            h, c = hx[k], (cx[k] if mode == 'lstm' else None)
            ys, caches = [None] * t, [None] * t
            for s in (range(t) if d == 0 else range(t - 1, -1, -1)):
                h, c, caches[s] = _rnn_cell(mode, layer_in[s], h, c, *weights[layer, d])
                ys[s] = h
            hy[k] = h
            if cy is not None:
                cy[k] = c
            saved[layer, d] = caches
            outs.append(np.stack(ys))
        layer_in = np.concatenate(outs, axis=2)
        if masks is not None and layer < num_layers - 1:
            layer_in = layer_in * masks[layer]
    saved['masks'] = masks
    return layer_in, hy, cy, saved


def rnn_bwd_np(mode, x, w, hx, cx, saved, dy, dhy, dcy, num_layers, bidirectional,
               masks=False):
    """(dx, dw, dhx, dcx) by backpropagation through time over the cached steps."""
    dirs, (t, _, ni), hs = 2 if bidirectional else 1, x.shape, hx.shape[2]
    weights = rnn_unpack(w, mode, num_layers, dirs, ni, hs)
    dw = np.zeros_like(w)
    dweights = rnn_unpack(dw, mode, num_layers, dirs, ni, hs)
    dhx = np.zeros_like(hx)
    dcx = np.zeros_like(hx) if mode == 'lstm' else None
    d_out = dy
    for layer in range(num_layers - 1, -1, -1):
        d_in = np.zeros((t,) + saved[layer, 0][0][0].shape, dtype=x.dtype)
        for d in range(dirs):
            k = layer * dirs + d
            dh = dhy[k].copy() if dhy is not None else np.zeros_like(hx[k])
            dc = dcy[k].copy() if (dcy is not None and mode == 'lstm') else np.zeros_like(hx[k])
            wx, wh = weights[layer, d][:2]
            for s in (range(t - 1, -1, -1) if d == 0 else range(t)):
                dh = dh + d_out[s][:, d * hs:(d + 1) * hs]
                dxs, dh, dc, *dparams = _rnn_cell_backward(mode, saved[layer, d][s], dh, dc,
                                                           wx, wh)
                d_in[s] += dxs
                for acc, grad in zip(dweights[layer, d], dparams):
                    acc += grad
            dhx[k] = dh
            if dcx is not None:
                dcx[k] = dc
        if layer > 0 and saved['masks'] is not None:
            d_in = d_in * saved['masks'][layer - 1]
        d_out = d_in
    return d_out, dw, dhx, dcx


_G = GRAD_OPS
_DACT = {   # f'(v) in float64, v the input or the output as _ops.pxd notes per code
    _G['relu']: lambda v: (v > 0).astype(np.float64), _G['sigmoid']: lambda v: v * (1 - v),
    _G['tanh']: lambda v: 1 - v * v, _G['softrelu']: lambda v: 1 / (1 + np.exp(-v)),
    _G['softsign']: lambda v: 1 / (1 + np.abs(v)) ** 2, _G['square']: lambda v: 2 * v,
    _G['sqrt']: lambda v: 0.5 / v, _G['exp']: lambda v: v, _G['log']: lambda v: 1 / v,
    _G['abs']: np.sign, _G['softrelu_y']: lambda v: -np.expm1(-v),
    _G['softsign_y']: lambda v: (1 - np.abs(v)) ** 2,
    _G['gelu']: lambda v: ndtr(v) + v * np.exp(-0.5 * v * v) / np.sqrt(2 * np.pi),
}


def grad_np(op, v, dy, dx, req=1):
    """dx := dy · f'(v) (req 1) or dx += it (req 2), in float64 and cast back; v None for
    the identity."""
    with np.errstate(all='ignore'):
        g = dy.astype(np.float64)
        if op != _G['identity']:
            g = g * _DACT[op](v.astype(np.float64))
        g = g.astype(dx.dtype)
        dx[...] = g + dx if req == 2 else g
    return dx


def softmax_np(x, out, axis=-1, temperature=1.0, log=False, dy=None, req=1):
    """Forward: out (req) softmax(x / T) along axis, or its log. Backward (dy given, x the
    forward output y): out (req) y (dy − Σ dy·y) / T, log: (dy − exp(y) Σ dy) / T.
    In float64, cast back to out's dtype."""
    x64 = x.astype(np.float64)
    with np.errstate(all='ignore'):
        if dy is None:
            z = (x64 - x64.max(axis=axis, keepdims=True)) / temperature
            s = np.exp(z).sum(axis=axis, keepdims=True)
            r = z - np.log(s) if log else np.exp(z) / s
        else:
            g = dy.astype(np.float64)
            if log:
                r = (g - np.exp(x64) * g.sum(axis=axis, keepdims=True)) / temperature
            else:
                r = x64 * (g - (g * x64).sum(axis=axis, keepdims=True)) / temperature
        r = r.astype(out.dtype)
        out[...] = r + out if req == 2 else r
    return out
