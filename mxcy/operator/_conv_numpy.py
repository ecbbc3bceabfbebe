"""NumPy kernels for N-D convolution and pooling (used for 3-D data) and for Pad.

Every function takes NumPy arrays (channel-first: (N, C, *spatial)) and returns a new
array; the operators in `mxcy.operator.conv` call them inside one engine op each
(``push_numpy``) and write the result into the output according to req.

Convolution is im2col as a strided window view of the padded input, contracted with the
weight per group and image range (``tensordot``); the data gradient scatters one kernel
offset at a time.
Pooling follows MXNet's CPU kernel: a window is clipped at ``size + pad`` ('full'
convention windows may run past it), average pooling divides by the clipped window size,
or by its part inside the data when ``count_include_pad`` is false; the max gradient goes
to the first maximum of each window.
"""
import itertools

import numpy as np
from numpy.lib.stride_tricks import as_strided

# elements of one im2col buffer (tensordot copies the window view): the batch is cut into
# image ranges that fit, so a big 3-D batch does not allocate its whole column matrix
_COLS_BUDGET = 1 << 23


def store(out, value, req):
    """out (req) value, inside an engine op: 'add' accumulates, 'null' skips."""
    if req == 'add':
        out += value
    elif req != 'null':
        out[...] = value


def _windows(xp, kernel, stride, dilate, out):
    """A read-only view (N, C, *out, *kernel) of the padded array `xp`."""
    st = xp.strides[2:]
    shape = xp.shape[:2] + tuple(out) + tuple(kernel)
    strides = xp.strides[:2] + tuple(s * t for s, t in zip(st, stride)) + \
        tuple(s * d for s, d in zip(st, dilate))
    return as_strided(xp, shape, strides, writeable=False)


def _pad(x, before, after, value=0):
    widths = ((0, 0), (0, 0)) + tuple(zip(before, after))
    if not any(any(w) for w in widths):
        return x
    return np.pad(x, widths, constant_values=value)


def conv_out_size(size, k, s, q, d):
    return (size + 2 * q - d * (k - 1) - 1) // s + 1


def _offset_slices(idx, dilate, stride, out):
    """Where kernel offset `idx` reads, over the whole output, in the padded input."""
    return tuple(slice(i * d, i * d + s * (o - 1) + 1, s)
                 for i, d, s, o in zip(idx, dilate, stride, out))


def _image_chunks(n, per_image):
    """Batch ranges whose column buffers (per_image elements each) stay near _COLS_BUDGET."""
    step = max(1, _COLS_BUDGET // max(1, per_image))
    return [(i, min(i + step, n)) for i in range(0, n, step)]


def conv_forward(x, w, b, stride, pad, dilate, groups):
    """y[n, f] = Σ_c w[f, c] ⋆ x[n, c] (+ b[f]), cross-correlation per group."""
    nd = x.ndim - 2
    kernel = w.shape[2:]
    out = tuple(conv_out_size(*a) for a in zip(x.shape[2:], kernel, stride, pad, dilate))
    win = _windows(_pad(x, pad, pad), kernel, stride, dilate, out)
    f, cg = w.shape[0], w.shape[1]
    fg = f // groups
    y = np.empty((x.shape[0], f) + out, dtype=np.result_type(x, w))
    win_axes = [1] + list(range(2 + nd, 2 + 2 * nd))
    for lo, hi in _image_chunks(x.shape[0], cg * int(np.prod(out + kernel))):
        for g in range(groups):
            t = np.tensordot(win[lo:hi, g * cg:(g + 1) * cg], w[g * fg:(g + 1) * fg],
                             axes=(win_axes, list(range(1, 2 + nd))))
            y[lo:hi, g * fg:(g + 1) * fg] = np.moveaxis(t, -1, 1)
    if b is not None:
        y += b.reshape((1, f) + (1,) * nd)
    return y


def conv_backward_data(dy, w, x_shape, stride, pad, dilate, groups):
    """The gradient of conv_forward with respect to x (the adjoint of the convolution)."""
    kernel = w.shape[2:]
    out = dy.shape[2:]
    f, cg = w.shape[0], w.shape[1]
    fg = f // groups
    padded = x_shape[:2] + tuple(n + 2 * q for n, q in zip(x_shape[2:], pad))
    dxp = np.zeros(padded, dtype=np.result_type(dy, w))
    for g in range(groups):
        dyg, wg = dy[:, g * fg:(g + 1) * fg], w[g * fg:(g + 1) * fg]
        for idx in itertools.product(*(range(k) for k in kernel)):
            part = np.tensordot(dyg, wg[(slice(None), slice(None)) + idx], axes=([1], [0]))
            where = (slice(None), slice(g * cg, (g + 1) * cg)) + \
                _offset_slices(idx, dilate, stride, out)
            dxp[where] += np.moveaxis(part, -1, 1)
    return dxp[(slice(None), slice(None)) +
               tuple(slice(q, q + n) for q, n in zip(pad, x_shape[2:]))]


def conv_backward_weight(x, dy, kernel, stride, pad, dilate, groups):
    """The gradient of conv_forward with respect to w: (F, C / groups, *kernel)."""
    nd = x.ndim - 2
    win = _windows(_pad(x, pad, pad), kernel, stride, dilate, dy.shape[2:])
    f = dy.shape[1]
    fg, cg = f // groups, x.shape[1] // groups
    dw = np.zeros((f, cg) + tuple(kernel), dtype=np.result_type(x, dy))
    axes = [0] + list(range(2, 2 + nd))
    for lo, hi in _image_chunks(x.shape[0], cg * int(np.prod(dy.shape[2:] + tuple(kernel)))):
        for g in range(groups):
            dw[g * fg:(g + 1) * fg] += np.tensordot(dy[lo:hi, g * fg:(g + 1) * fg],
                                                    win[lo:hi, g * cg:(g + 1) * cg],
                                                    axes=(axes, axes))
    return dw


# ---------------------------------------------------------------- pooling
def pool_geometry(shape, kernel, stride, pad, convention):
    """(output sizes, extra right padding so that every window lies inside the array)."""
    out, extra = [], []
    for size, k, s, q in zip(shape[2:], kernel, stride, pad):
        span = size + 2 * q - k
        o = (span // s if convention == 'valid' else -(-span // s)) + 1
        out.append(o)
        extra.append(max(0, (o - 1) * s + k - (size + 2 * q)))
    return tuple(out), tuple(extra)


def _counts(shape, kernel, stride, pad, out, include):
    """The divisor of each average window (MXNet's clipping rules), shaped like the output."""
    nd = len(kernel)
    count = np.ones((1, 1) + (1,) * nd)
    for i, (size, k, s, q, o) in enumerate(zip(shape[2:], kernel, stride, pad, out)):
        start = np.arange(o) * s - q
        end = np.minimum(start + k, size + q)
        if not include:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        view = [1] * (2 + nd)
        view[2 + i] = o
        count = count * np.maximum(end - start, 1).reshape(view)
    return count


def _lowest(dtype):
    """The max-pooling fill: a window of padding only gives this, as MXNet (-FLT_MAX)."""
    dtype = np.dtype(dtype)
    return np.finfo(dtype).min if dtype.kind == 'f' else np.iinfo(dtype).min


def pool_forward(x, kernel, stride, pad, pool_type, convention, include, p_value=2):
    """Max, avg, sum, or lp: (Σ x^p)^(1/p) over each window (MXNet's, signed powers)."""
    out, extra = pool_geometry(x.shape, kernel, stride, pad, convention)
    fill = _lowest(x.dtype) if pool_type == 'max' else 0
    after = tuple(q + e for q, e in zip(pad, extra))
    win = _windows(_pad(x, pad, after, fill), kernel, stride, (1,) * len(kernel), out)
    axes = tuple(range(-len(kernel), 0))
    if pool_type == 'max':
        return win.max(axis=axes)
    if pool_type == 'lp':
        with np.errstate(all='ignore'):
            return np.power(np.power(win, p_value).sum(axis=axes), 1.0 / p_value)
    total = win.sum(axis=axes)
    if pool_type == 'sum':
        return total
    return total / _counts(x.shape, kernel, stride, pad, out, include).astype(x.dtype)


def pool_backward(x, dy, kernel, stride, pad, pool_type, convention, include, p_value=2):
    nd = len(kernel)
    out, extra = pool_geometry(x.shape, kernel, stride, pad, convention)
    after = tuple(q + e for q, e in zip(pad, extra))
    padded = x.shape[:2] + tuple(n + b + a for n, b, a in zip(x.shape[2:], pad, after))
    dxp = np.zeros(padded, dtype=dy.dtype)
    if pool_type == 'max':
        win = _windows(_pad(x, pad, after, _lowest(x.dtype)), kernel, stride, (1,) * nd, out)
        first = win.reshape(win.shape[:2 + nd] + (-1,)).argmax(axis=-1)
    elif pool_type == 'avg':
        dy = dy / _counts(x.shape, kernel, stride, pad, out, include).astype(dy.dtype)
    elif pool_type == 'lp':             # d/dx_i (Σ x^p)^(1/p) = x_i^(p-1) · y^(1-p)
        xp = _pad(x, pad, after, 0)
        with np.errstate(all='ignore'):
            dy = dy * np.power(pool_forward(x, kernel, stride, pad, 'lp', convention,
                                            include, p_value), 1 - p_value)
    for j, idx in enumerate(itertools.product(*(range(k) for k in kernel))):
        where = (slice(None), slice(None)) + _offset_slices(idx, (1,) * nd, stride, out)
        if pool_type == 'lp':
            with np.errstate(all='ignore'):
                part = dy * np.power(xp[where], p_value - 1)
        else:
            part = np.where(first == j, dy, 0) if pool_type == 'max' else dy
        dxp[where] += part
    return dxp[(slice(None), slice(None)) +
               tuple(slice(q, q + n) for q, n in zip(pad, x.shape[2:]))]


# ---------------------------------------------------------------- Pad
def pad_forward(x, pairs, mode, value):
    kwargs = {'constant_values': value} if mode == 'constant' else {}
    return np.pad(x, pairs, mode=mode, **kwargs)


def pad_backward(dy, pairs, mode):
    """The gradient of pad_forward: each padded element adds into the element it copies."""
    crop = tuple(slice(b, dy.shape[i] - a) for i, (b, a) in enumerate(pairs))
    if mode == 'constant':
        return dy[crop]
    g = dy
    for axis, (b, a) in enumerate(pairs):
        if not (b or a):
            continue
        n = dy.shape[axis] - b - a
        source = np.pad(np.arange(n), (b, a), mode=mode)
        lead = (slice(None),) * axis
        acc = g[lead + (slice(b, b + n),)].copy()       # C order: no transposed copies
        for k in [*range(b), *range(b + n, b + n + a)]:    # the few padded rows
            acc[lead + (source[k],)] += g[lead + (k,)]
        g = acc
    return g
