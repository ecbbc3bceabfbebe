"""Indexing of ``mx.nd``: take, pick, one_hot, topk, sort, argsort, diag (MXNet 1.x).

MXNet semantics kept here:
* index arrays may have any dtype; float indices truncate toward zero;
* ``take`` mode 'clip' clamps to [0, n-1], 'wrap' takes indices modulo n, 'raise'
  rejects any index outside [0, n-1] (negative ones too, as MXNet does) with an
  IndexError naming the first bad index. To raise at the call, 'raise' waits for the
  indices array (not for `a`) before it pushes: the only function here that waits;
* ``topk``/``argsort`` return indices as `dtype` (float32 by default); ties keep the
  original order, ascending or descending; ``topk`` with k <= 0 returns every element,
  ret_typ 'both' returns [values, indices]; axis=None works on the flattened array;
* ``one_hot`` rows of out-of-range indices are all `off_value`.
"""
import numbers

import numpy as np

from mxcy._ndarray import push_numpy
from mxcy.base import dtype_code
from mxcy.ndarray.elemwise import check_nd, norm_axis, prepare_out

_TAKE_MODES = ('clip', 'wrap', 'raise')


def _as_int_indices(idx):
    """Indices as int64, truncating floats toward zero (MXNet's cast)."""
    return idx if idx.dtype == np.int64 else np.trunc(idx).astype(np.int64) \
        if idx.dtype.kind == 'f' else idx.astype(np.int64)


def _fix_indices(idx, n, mode):
    idx = _as_int_indices(idx)
    if mode == 'wrap':
        return np.mod(idx, n) if n else idx
    return np.clip(idx, 0, max(n - 1, 0))


def take(a, indices, axis=0, mode='clip', out=None):
    """Gather slices of `a` along `axis`: the result has shape
    a.shape[:axis] + indices.shape + a.shape[axis+1:]."""
    check_nd(a, 'take', 'a')
    check_nd(indices, 'take', 'indices')
    if mode not in _TAKE_MODES:
        raise ValueError(f"take: mode must be 'clip', 'wrap' or 'raise', got {mode!r}")
    ax = norm_axis(axis, len(a.shape), 'take')
    n = a.shape[ax]
    if n == 0 and indices.size:
        raise IndexError(f"take: cannot take from axis {ax} of size 0 (shape {a.shape})")
    shape = a.shape[:ax] + indices.shape + a.shape[ax + 1:]
    if mode == 'raise':
        # NOTE: waits for the indices (not for `a`) so that a bad index raises here.
        raw = indices.asnumpy()
        checked = _as_int_indices(raw)
        bad = (checked < 0) | (checked >= n)
        if bad.any():
            first = raw.reshape(-1)[np.flatnonzero(bad.reshape(-1))[0]].item()
            first = int(first) if float(first).is_integer() else first
            raise IndexError(f"take: index {first} is out of bounds for axis {ax} with size "
                             f"{n} (mode='raise')")
    res = prepare_out(out, shape, a.dtype, a.context, 'take')

    def run(x, idx, o):
        np.copyto(o, np.take(x, _fix_indices(idx, n, mode), axis=ax).reshape(o.shape))
    push_numpy(run, [a, indices], [res], 'take')
    return res


def pick(data, index, axis=-1, keepdims=False, mode='clip', out=None):
    """out[i, j] = data[i, index[i, j], j] along `axis`: one element per position.

    `index` has data's shape without `axis` (or with it as size 1).
    """
    check_nd(data, 'pick')
    check_nd(index, 'pick', 'index')
    if axis is None:
        raise ValueError("pick: axis=None is not supported; give an axis")
    if mode not in ('clip', 'wrap'):
        raise ValueError(f"pick: mode must be 'clip' or 'wrap', got {mode!r}")
    ax = norm_axis(axis, len(data.shape), 'pick')
    reduced = data.shape[:ax] + data.shape[ax + 1:]
    kept = data.shape[:ax] + (1,) + data.shape[ax + 1:]
    if index.shape not in (reduced, kept) and not (reduced == () and index.shape == (1,)):
        raise ValueError(f"pick: index must have shape {reduced} (data {data.shape} "
                         f"without axis {ax}), got {index.shape}")
    n = data.shape[ax]
    if n == 0:
        raise IndexError(f"pick: cannot pick from axis {ax} of size 0")
    shape = kept if keepdims else (reduced or (1,))
    res = prepare_out(out, shape, data.dtype, data.context, 'pick')

    def run(x, idx, o):
        idx = _fix_indices(idx, n, mode).reshape(kept)
        np.copyto(o, np.take_along_axis(x, idx, axis=ax).reshape(o.shape))
    push_numpy(run, [data, index], [res], 'pick')
    return res


def one_hot(indices, depth, on_value=1.0, off_value=0.0, dtype='float32', out=None):
    """indices.shape + (depth,): on_value at each index, off_value elsewhere."""
    check_nd(indices, 'one_hot', 'indices')
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or depth < 0:
        raise ValueError(f"one_hot: depth must be a non-negative integer, got {depth!r}")
    dtype_code(dtype, 'one_hot: dtype')
    odtype = np.dtype(dtype).type
    depth = int(depth)
    res = prepare_out(out, indices.shape + (depth,), odtype, indices.context, 'one_hot')

    def run(idx, o):
        idx = _as_int_indices(idx)
        o[...] = np.where(idx[..., None] == np.arange(depth), on_value, off_value)
    push_numpy(run, [indices], [res], 'one_hot')
    return res


# ---------------------------------------------------------------- sorting
def _stable_argsort(x, axis, is_ascend):
    """Stable along `axis`; descending keeps equal elements in their original order."""
    if is_ascend:
        return np.argsort(x, axis=axis, kind='stable')
    n = x.shape[axis]
    rev = np.argsort(np.flip(x, axis), axis=axis, kind='stable')
    return n - 1 - np.flip(rev, axis)


def _sort_axis(data, axis, fname):
    """(normalised axis or None for flattened, the length being sorted)."""
    if axis is None:
        return None, data.size
    ax = norm_axis(axis, len(data.shape), fname)
    return ax, data.shape[ax]


def _flat(x, ax):
    return (x.reshape(-1), 0) if ax is None else (x, ax)


def sort(data, axis=-1, is_ascend=True, out=None):
    """Values sorted along `axis` (the flattened array when None)."""
    check_nd(data, 'sort')
    ax, _ = _sort_axis(data, axis, 'sort')
    shape = (data.size,) if ax is None else data.shape
    res = prepare_out(out, shape, data.dtype, data.context, 'sort')

    def run(x, o):
        x, a = _flat(x, ax)
        order = _stable_argsort(x, a, is_ascend)
        np.copyto(o, np.take_along_axis(x, order, axis=a).reshape(o.shape))
    push_numpy(run, [data], [res], 'sort')
    return res


def argsort(data, axis=-1, is_ascend=True, dtype='float32', out=None):
    """Indices that sort `data` along `axis`, as `dtype` (float32 by default)."""
    check_nd(data, 'argsort')
    dtype_code(dtype, 'argsort: dtype')
    ax, _ = _sort_axis(data, axis, 'argsort')
    shape = (data.size,) if ax is None else data.shape
    res = prepare_out(out, shape, np.dtype(dtype).type, data.context, 'argsort')

    def run(x, o):
        x, a = _flat(x, ax)
        o[...] = _stable_argsort(x, a, is_ascend).reshape(o.shape)
    push_numpy(run, [data], [res], 'argsort')
    return res


_RET_TYPES = ('value', 'indices', 'mask', 'both')


def topk(data, axis=-1, k=1, ret_typ='indices', is_ascend=False, dtype='float32',
         out=None):
    """The k largest (smallest with is_ascend) elements along `axis`.

    ret_typ 'value' gives their values, 'indices' their indices as `dtype`, 'mask' a
    0/1 array of data's shape and dtype marking them, 'both' [values, indices] (`out`,
    when given, is then a list of two arrays).
    """
    check_nd(data, 'topk')
    if ret_typ not in _RET_TYPES:
        raise ValueError(f"topk: ret_typ must be one of {_RET_TYPES}, got {ret_typ!r}")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"topk: k must be an integer, got {k!r}")
    dtype_code(dtype, 'topk: dtype')
    ax, n = _sort_axis(data, axis, 'topk')
    k = n if k <= 0 else int(k)
    if k > n:
        raise ValueError(f"topk: k={k} is larger than the {n} elements along axis "
                         f"{axis} (input shape {data.shape})")
    base = (data.size,) if ax is None else data.shape
    a = 0 if ax is None else ax
    part = base[:a] + (k,) + base[a + 1:]
    specs = {'mask': [(data.shape, data.dtype)], 'value': [(part, data.dtype)],
             'indices': [(part, np.dtype(dtype).type)],
             'both': [(part, data.dtype), (part, np.dtype(dtype).type)]}[ret_typ]
    if out is not None and ret_typ != 'both':
        out = [out]
    if out is not None and (not isinstance(out, (list, tuple)) or len(out) != len(specs)):
        raise TypeError(f"topk: out must be a list of {len(specs)} NDArrays for "
                        f"ret_typ={ret_typ!r}")
    outs = [prepare_out(None if out is None else out[i], shape, dt, data.context, 'topk')
            for i, (shape, dt) in enumerate(specs)]

    def run(x, *os):
        x, a = _flat(x, ax)
        order = np.take(_stable_argsort(x, a, is_ascend), np.arange(k), axis=a)
        if ret_typ == 'mask':
            mask = np.zeros(x.shape, dtype=os[0].dtype)
            np.put_along_axis(mask, order, 1, axis=a)
            np.copyto(os[0], mask.reshape(os[0].shape))
            return
        if ret_typ in ('value', 'both'):
            np.copyto(os[0], np.take_along_axis(x, order, axis=a))
        if ret_typ in ('indices', 'both'):
            os[-1][...] = order
    push_numpy(run, [data], outs, 'topk')
    return outs if ret_typ == 'both' else outs[0]


# ---------------------------------------------------------------- diagonals
def diag(data, k=0, axis1=0, axis2=1, out=None):
    """1-D input: a square matrix with `data` on diagonal k. N-D input: diagonal k of the
    (axis1, axis2) planes, appended as the last axis (NumPy's diagonal)."""
    check_nd(data, 'diag')
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"diag: k must be an integer, got {k!r}")
    k = int(k)
    ndim = len(data.shape)
    if ndim == 1:
        size = data.shape[0] + abs(k)
        res = prepare_out(out, (size, size), data.dtype, data.context, 'diag')

        def run_1d(x, o):
            np.copyto(o, np.diag(x, k))
        push_numpy(run_1d, [data], [res], 'diag')
        return res
    if ndim == 0:
        raise ValueError("diag: needs an array of at least 1 dimension")
    a1 = norm_axis(axis1, ndim, 'diag', 'axis1')
    a2 = norm_axis(axis2, ndim, 'diag', 'axis2')
    if a1 == a2:
        raise ValueError(f"diag: axis1 and axis2 must differ, both are {a1}")
    probe = np.broadcast_to(np.int8(0), data.shape)
    shape = np.diagonal(probe, k, a1, a2).shape
    if shape[-1] == 0:
        raise ValueError(f"diag: diagonal k={k} does not exist in the ({a1}, {a2}) planes "
                         f"of shape {data.shape}")
    res = prepare_out(out, shape, data.dtype, data.context, 'diag')

    def run(x, o):
        np.copyto(o, np.diagonal(x, k, a1, a2))
    push_numpy(run, [data], [res], 'diag')
    return res

__all__ = ['take', 'pick', 'one_hot', 'topk', 'sort', 'argsort', 'diag']
