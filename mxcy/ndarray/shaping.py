"""Shape functions of ``mx.nd`` that have no registry operator yet: reshape_like,
shape_array, size_array, slice_like, pad, depth_to_space, space_to_depth (MXNet 1.x
semantics). reshape, transpose, concat, split, slice, tile, ... are registry operators
(`mxcy.operator.tensor`, `mxcy.operator.indexing`); importing one of them from here gives
the generated ``mx.nd`` function.

Contract: every function validates its arguments and computes the output shape before it
pushes one engine op, and returns fresh arrays (or ``out=``), never views of the input.
``pad`` takes 4-D/5-D input with MXNet's flat pad_width. Negative axes are accepted.
"""
import builtins
import numbers

import numpy as np

from mxcy._ndarray import push_numpy
from mxcy.ndarray.elemwise import check_nd, norm_axes, prepare_out


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


# ---------------------------------------------------------------- pad, depth/space
_PAD_MODES = {'constant': 'constant', 'edge': 'edge', 'reflect': 'reflect'}


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


def __getattr__(name):
    from mxcy.ndarray._gen import module_attr
    return module_attr(__name__, name)


__all__ = ['depth_to_space', 'shape_array', 'size_array',
           'slice_like', 'space_to_depth']
