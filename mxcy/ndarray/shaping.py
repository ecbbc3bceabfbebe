"""Shape manipulation of ``mx.nd``: reshape, transpose, swapaxes, expand_dims, flatten,
squeeze, concat, stack, split, slice, slice_axis, slice_like, tile, repeat, flip, pad,
depth_to_space, space_to_depth, shape_array, size_array (MXNet 1.x semantics).

Contract: every function validates its arguments and computes the output shape before it
pushes one engine op, and returns fresh arrays (or ``out=``), never views of the input
(``NDArray.reshape`` and ``a[i:j]`` are the view-making methods). MXNet-specific rules
kept here: ``concat`` joins along dim=1 by default; ``split`` (SliceChannel) needs an
evenly divisible axis and returns a list, or one NDArray when num_outputs == 1;
``flatten`` gives (N, rest) and turns a 1-D (N,) into (N, 1); ``squeeze`` of an
all-ones shape gives (1,); ``pad`` takes 4-D/5-D input with MXNet's flat pad_width.
Negative axes are accepted everywhere.
"""
import builtins
import numbers

import numpy as np

from mxcy._ndarray import push_numpy
from mxcy.ndarray.elemwise import check_nd, norm_axes, norm_axis, prepare_out


def _push_view(data, shape, view_fn, fname, out):
    """Push out := view_fn(data) (a NumPy expression of the input's values)."""
    res = prepare_out(out, shape, data.dtype, data.context, fname)

    def run(x, o):
        np.copyto(o, view_fn(x).reshape(o.shape))
    push_numpy(run, [data], [res], fname)
    return res


def _int_arg(v, fname, arg, minimum=None):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{fname}: {arg} must be an integer, got {type(v).__name__} {v!r}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{fname}: {arg} must be >= {minimum}, got {v}")
    return int(v)


def _int_tuple(v, fname, arg):
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        v = (v,)
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"{fname}: {arg} must be an int or a tuple of ints, got {v!r}")
    return tuple(_int_arg(d, fname, arg) for d in v)


# ---------------------------------------------------------------- reshaping
def reshape(data, shape, reverse=False, out=None):
    """A copy of `data` with a new shape (MXNet's special values 0, -1, -2, -3, -4)."""
    check_nd(data, 'reshape')
    view = data.reshape(shape, reverse=reverse)
    return _push_view(data, view.shape, lambda x: x, 'reshape', out)


def reshape_like(lhs, rhs, out=None):
    """A copy of `lhs` with the shape of `rhs` (same number of elements)."""
    check_nd(lhs, 'reshape_like', 'lhs')
    check_nd(rhs, 'reshape_like', 'rhs')
    if lhs.size != rhs.size:
        raise ValueError(f"reshape_like: lhs {lhs.shape} has {lhs.size} elements, rhs "
                         f"{rhs.shape} has {rhs.size}")
    return _push_view(lhs, rhs.shape, lambda x: x, 'reshape_like', out)


def transpose(data, axes=None, out=None):
    """Permute the axes (reverse them when `axes` is None or ())."""
    check_nd(data, 'transpose')
    ndim = len(data.shape)
    if axes is None or (isinstance(axes, (tuple, list)) and len(axes) == 0):
        perm = tuple(range(ndim))[::-1]
    else:
        perm = tuple(norm_axis(a, ndim, 'transpose', 'axes')
                     for a in _int_tuple(axes, 'transpose', 'axes'))
        if sorted(perm) != list(range(ndim)):
            raise ValueError(f"transpose: axes {tuple(axes)} must be a permutation of "
                             f"0..{ndim - 1}")
    shape = tuple(data.shape[a] for a in perm)
    return _push_view(data, shape, lambda x: x.transpose(perm), 'transpose', out)


def swapaxes(data, dim1=0, dim2=0, out=None):
    """Interchange two axes."""
    check_nd(data, 'swapaxes')
    ndim = len(data.shape)
    d1 = norm_axis(dim1, ndim, 'swapaxes', 'dim1')
    d2 = norm_axis(dim2, ndim, 'swapaxes', 'dim2')
    shape = list(data.shape)
    shape[d1], shape[d2] = shape[d2], shape[d1]
    return _push_view(data, tuple(shape), lambda x: np.swapaxes(x, d1, d2), 'swapaxes', out)


SwapAxis = swapaxes


def expand_dims(data, axis, out=None):
    """Insert a size-1 axis at `axis` (in [-ndim-1, ndim])."""
    check_nd(data, 'expand_dims')
    ax = norm_axis(axis, len(data.shape), 'expand_dims', extra=1)
    shape = data.shape[:ax] + (1,) + data.shape[ax:]
    return _push_view(data, shape, lambda x: x, 'expand_dims', out)


def flatten(data, out=None):
    """Collapse all axes but the first: (N, d1, d2, ...) -> (N, d1*d2*...)."""
    check_nd(data, 'flatten')
    shape = data.shape or (1,)
    shape = (shape[0], int(np.prod(shape[1:], dtype=np.int64)))
    return _push_view(data, shape, lambda x: x, 'flatten', out)


Flatten = flatten


def squeeze(data, axis=None, out=None):
    """Remove size-1 axes (all of them, or those in `axis`); never returns 0-d."""
    check_nd(data, 'squeeze')
    ndim = len(data.shape)
    if axis is None:
        axes = tuple(i for i, d in enumerate(data.shape) if d == 1)
    else:
        axes = norm_axes(axis, ndim, 'squeeze')
        for a in axes:
            if data.shape[a] != 1:
                raise ValueError(f"squeeze: axis {a} has size {data.shape[a]}, not 1 "
                                 f"(input shape {data.shape})")
    shape = tuple(d for i, d in enumerate(data.shape) if i not in axes) or (1,)
    return _push_view(data, shape, lambda x: x, 'squeeze', out)


def shape_array(data, out=None):
    """The shape of `data` as a 1-D int64 array."""
    check_nd(data, 'shape_array')
    res = prepare_out(out, (len(data.shape),), np.int64, data.context, 'shape_array')
    res[:] = np.array(data.shape, dtype=np.int64)
    return res


def size_array(data, out=None):
    """The number of elements of `data` as a (1,) int64 array."""
    check_nd(data, 'size_array')
    res = prepare_out(out, (1,), np.int64, data.context, 'size_array')
    res[:] = data.size
    return res


# ---------------------------------------------------------------- joining and splitting
def _check_joinable(arrays, fname):
    if not arrays:
        raise ValueError(f"{fname}: needs at least one array")
    for i, a in enumerate(arrays):
        check_nd(a, fname, f'data[{i}]')
        if a.dtype != arrays[0].dtype:
            raise TypeError(f"{fname}: data[{i}] has dtype {np.dtype(a.dtype)}, data[0] "
                            f"has {np.dtype(arrays[0].dtype)}")
        if len(a.shape) != len(arrays[0].shape):
            raise ValueError(f"{fname}: data[{i}] has shape {a.shape}, data[0] has "
                             f"{arrays[0].shape}: different numbers of dimensions")


def _check_num_args(num_args, arrays, fname):
    if num_args is not None and num_args != len(arrays):
        raise ValueError(f"{fname}: num_args={num_args} but {len(arrays)} arrays given")


def concat(*data, dim=1, num_args=None, out=None):
    """Join arrays along `dim` (default 1, as in MXNet); the other dims must match."""
    arrays = list(data[0]) if len(data) == 1 and isinstance(data[0], (list, tuple)) \
        else list(data)
    _check_joinable(arrays, 'concat')
    _check_num_args(num_args, arrays, 'concat')
    first = arrays[0]
    ax = norm_axis(dim, len(first.shape), 'concat', 'dim')
    for i, a in enumerate(arrays):
        if a.shape[:ax] != first.shape[:ax] or a.shape[ax + 1:] != first.shape[ax + 1:]:
            raise ValueError(f"concat: data[{i}] has shape {a.shape}, data[0] has "
                             f"{first.shape}: only dim {ax} may differ")
    shape = list(first.shape)
    shape[ax] = builtins.sum(a.shape[ax] for a in arrays)
    res = prepare_out(out, tuple(shape), first.dtype, first.context, 'concat')

    def run(*views):
        np.concatenate(views[:-1], axis=ax, out=views[-1])
    push_numpy(run, arrays, [res], 'concat')
    return res


Concat = concat


def stack(*data, axis=0, num_args=None, out=None):
    """Join same-shape arrays along a new axis."""
    arrays = list(data[0]) if len(data) == 1 and isinstance(data[0], (list, tuple)) \
        else list(data)
    _check_joinable(arrays, 'stack')
    _check_num_args(num_args, arrays, 'stack')
    first = arrays[0]
    for i, a in enumerate(arrays):
        if a.shape != first.shape:
            raise ValueError(f"stack: data[{i}] has shape {a.shape}, data[0] has "
                             f"{first.shape}: all must be equal")
    ax = norm_axis(axis, len(first.shape), 'stack', extra=1)
    shape = first.shape[:ax] + (len(arrays),) + first.shape[ax:]
    res = prepare_out(out, shape, first.dtype, first.context, 'stack')

    def run(*views):
        np.stack(views[:-1], axis=ax, out=views[-1])
    push_numpy(run, arrays, [res], 'stack')
    return res


def split(data, num_outputs, axis=1, squeeze_axis=False):
    """Split `axis` into `num_outputs` equal parts (MXNet's SliceChannel).

    Returns a list of NDArrays, or a single NDArray when num_outputs == 1. With
    squeeze_axis=True the axis must have size num_outputs and is removed.
    """
    check_nd(data, 'split')
    n = _int_arg(num_outputs, 'split', 'num_outputs', 1)
    ax = norm_axis(axis, len(data.shape), 'split')
    size = data.shape[ax]
    if size % n:
        raise ValueError(f"split: axis {ax} of shape {data.shape} has size {size}, which "
                         f"num_outputs={n} does not divide evenly")
    if squeeze_axis and size != n:
        raise ValueError(f"split: squeeze_axis=True needs axis {ax} of size num_outputs="
                         f"{n}, got size {size} (input shape {data.shape})")
    step = size // n
    part = data.shape[:ax] + ((step,) if not squeeze_axis else ()) + data.shape[ax + 1:]
    outs = [prepare_out(None, part or (1,), data.dtype, data.context, 'split')
            for _ in range(n)]

    def run(x, *parts):
        for i, o in enumerate(parts):
            key = (builtins.slice(None),) * ax + (builtins.slice(i * step, (i + 1) * step),)
            np.copyto(o, x[key].reshape(o.shape))
    push_numpy(run, [data], outs, 'split')
    return outs[0] if n == 1 else outs


SliceChannel = split


# ---------------------------------------------------------------- slicing
def slice(data, begin, end, step=None, out=None):
    """data[begin[0]:end[0]:step[0], ...] with Python slice rules; None entries mean the
    default; axes past len(begin) are kept whole."""
    check_nd(data, 'slice')
    begin, end = _slice_tuple(begin, 'begin'), _slice_tuple(end, 'end')
    step = _slice_tuple(step, 'step') if step is not None else (None,) * len(begin)
    if not (len(begin) == len(end) == len(step)):
        raise ValueError(f"slice: begin {begin}, end {end} and step {step} must have the "
                         f"same length")
    if len(begin) > len(data.shape):
        raise ValueError(f"slice: {len(begin)} axes given for an array of shape "
                         f"{data.shape}")
    if any(s == 0 for s in step):
        raise ValueError(f"slice: step must not contain 0, got {step}")
    key = tuple(builtins.slice(b, e, s) for b, e, s in zip(begin, end, step))
    shape = np.broadcast_to(np.int8(0), data.shape)[key].shape
    return _push_view(data, shape, lambda x: x[key], 'slice', out)


def _slice_tuple(v, arg):
    if v is None or isinstance(v, numbers.Integral):
        v = (v,)
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"slice: {arg} must be a tuple of ints or None, got {v!r}")
    for d in v:
        if d is not None and (isinstance(d, bool) or not isinstance(d, numbers.Integral)):
            raise TypeError(f"slice: {arg} must contain ints or None, got {tuple(v)!r}")
    return tuple(None if d is None else int(d) for d in v)


def slice_axis(data, axis, begin, end, out=None):
    """data[..., begin:end, ...] on `axis`; negative indices count from the end, end=None
    is the axis size; the range must be non-empty and inside the axis."""
    check_nd(data, 'slice_axis')
    ax = norm_axis(axis, len(data.shape), 'slice_axis')
    n = data.shape[ax]
    b = _int_arg(begin, 'slice_axis', 'begin')
    e = n if end is None else _int_arg(end, 'slice_axis', 'end')
    b, e = (b + n if b < 0 else b), (e + n if e < 0 else e)
    if not 0 <= b < e <= n:
        raise ValueError(f"slice_axis: begin={begin}, end={end} do not give a non-empty "
                         f"range inside axis {ax} of size {n}")
    shape = data.shape[:ax] + (e - b,) + data.shape[ax + 1:]
    key = (builtins.slice(None),) * ax + (builtins.slice(b, e),)
    return _push_view(data, shape, lambda x: x[key], 'slice_axis', out)


def slice_like(data, shape_like, axes=(), out=None):
    """data sliced from 0 to the sizes of `shape_like` on `axes` (all axes when ())."""
    check_nd(data, 'slice_like')
    check_nd(shape_like, 'slice_like', 'shape_like')
    ndim = len(data.shape)
    if axes is None or (isinstance(axes, (tuple, list)) and len(axes) == 0):
        if len(shape_like.shape) != ndim:
            raise ValueError(f"slice_like: shape_like {shape_like.shape} must have as many "
                             f"dimensions as data {data.shape} when axes=()")
        axes = tuple(range(ndim))
    else:
        axes = norm_axes(axes, ndim, 'slice_like', 'axes')
    shape = list(data.shape)
    for a in axes:
        if a >= len(shape_like.shape):
            raise ValueError(f"slice_like: axis {a} does not exist in shape_like "
                             f"{shape_like.shape}")
        if shape_like.shape[a] > data.shape[a]:
            raise ValueError(f"slice_like: axis {a} of shape_like {shape_like.shape} is "
                             f"larger than data {data.shape}")
        shape[a] = shape_like.shape[a]
    key = tuple(builtins.slice(0, d) for d in shape)
    return _push_view(data, tuple(shape), lambda x: x[key], 'slice_like', out)


# ---------------------------------------------------------------- repetition, flips
def tile(data, reps, out=None):
    """Repeat the whole array `reps` times per axis (NumPy's tile rules)."""
    check_nd(data, 'tile')
    reps = _int_tuple(reps, 'tile', 'reps')
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    ndim = builtins.max(len(reps), len(data.shape))
    src = (1,) * (ndim - len(data.shape)) + data.shape
    full_reps = (1,) * (ndim - len(reps)) + reps
    shape = tuple(s * r for s, r in zip(src, full_reps)) or (1,)
    return _push_view(data, shape, lambda x: np.tile(x, reps), 'tile', out)


def repeat(data, repeats, axis=None, out=None):
    """Repeat each element `repeats` times along `axis` (the flattened array when None)."""
    check_nd(data, 'repeat')
    r = _int_arg(repeats, 'repeat', 'repeats', 0)
    if axis is None:
        shape = (data.size * r,)
        ax = None
    else:
        ax = norm_axis(axis, len(data.shape), 'repeat')
        shape = data.shape[:ax] + (data.shape[ax] * r,) + data.shape[ax + 1:]
    return _push_view(data, shape, lambda x: np.repeat(x, r, axis=ax), 'repeat', out)


def flip(data, axis, out=None):
    """Reverse the order of elements along `axis` (an int or a tuple of ints)."""
    check_nd(data, 'flip')
    axes = norm_axes(axis, len(data.shape), 'flip')
    return _push_view(data, data.shape, lambda x: np.flip(x, axes), 'flip', out)


reverse = flip


# ---------------------------------------------------------------- pad, depth/space
_PAD_MODES = {'constant': 'constant', 'edge': 'edge', 'reflect': 'reflect'}


def pad(data, mode, pad_width, constant_value=0.0, out=None):
    """Pad a 4-D or 5-D array. `pad_width` is MXNet's flat (before_0, after_0, before_1,
    after_1, ...) with zeros for the first two axes; mode constant, edge or reflect."""
    check_nd(data, 'pad')
    ndim = len(data.shape)
    if ndim not in (4, 5):
        raise ValueError(f"pad: needs a 4-D or 5-D input, got shape {data.shape}")
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be 'constant', 'edge' or 'reflect', got {mode!r}")
    widths = _int_tuple(pad_width, 'pad', 'pad_width')
    if len(widths) != 2 * ndim or any(w < 0 for w in widths):
        raise ValueError(f"pad: pad_width must hold {2 * ndim} non-negative ints for a "
                         f"{ndim}-D input, got {widths}")
    if any(widths[:4]):
        raise ValueError(f"pad: the first two axes cannot be padded, got pad_width "
                         f"{widths}")
    pairs = tuple((widths[2 * i], widths[2 * i + 1]) for i in range(ndim))
    for i, (b, a) in enumerate(pairs):
        if mode == 'reflect' and (b >= data.shape[i] or a >= data.shape[i]) and (b or a):
            raise ValueError(f"pad: reflect padding {(b, a)} must be smaller than axis {i} "
                             f"of size {data.shape[i]}")
        if mode == 'edge' and data.shape[i] == 0 and (b or a):
            raise ValueError(f"pad: edge padding needs a non-empty axis {i}")
    shape = tuple(d + b + a for d, (b, a) in zip(data.shape, pairs))
    kwargs = {'constant_values': constant_value} if mode == 'constant' else {}
    return _push_view(data, shape, lambda x: np.pad(x, pairs, mode=mode, **kwargs),
                      'pad', out)


def _check_4d_block(data, block_size, fname):
    check_nd(data, fname)
    b = _int_arg(block_size, fname, 'block_size', 1)
    if len(data.shape) != 4:
        raise ValueError(f"{fname}: needs a 4-D (N, C, H, W) input, got shape {data.shape}")
    return b


def depth_to_space(data, block_size, out=None):
    """(N, C·b², H, W) -> (N, C, H·b, W·b), moving depth blocks into space."""
    b = _check_4d_block(data, block_size, 'depth_to_space')
    n, c, h, w = data.shape
    if c % (b * b):
        raise ValueError(f"depth_to_space: channels {c} of input {data.shape} are not a "
                         f"multiple of block_size**2 = {b * b}")
    shape = (n, c // (b * b), h * b, w * b)
    return _push_view(
        data, shape,
        lambda x: x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2),
        'depth_to_space', out)


def space_to_depth(data, block_size, out=None):
    """(N, C, H·b, W·b) -> (N, C·b², H, W), the inverse of depth_to_space."""
    b = _check_4d_block(data, block_size, 'space_to_depth')
    n, c, h, w = data.shape
    if h % b or w % b:
        raise ValueError(f"space_to_depth: height {h} and width {w} of input {data.shape} "
                         f"must be multiples of block_size={b}")
    shape = (n, c * b * b, h // b, w // b)
    return _push_view(
        data, shape,
        lambda x: x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4),
        'space_to_depth', out)


__all__ = ['reshape', 'reshape_like', 'transpose', 'swapaxes', 'SwapAxis', 'expand_dims', 'flatten',
           'Flatten', 'squeeze', 'shape_array', 'size_array', 'concat', 'Concat', 'stack',
           'split', 'SliceChannel', 'slice', 'slice_axis', 'slice_like', 'tile', 'repeat',
           'flip', 'reverse', 'pad', 'depth_to_space', 'space_to_depth']
