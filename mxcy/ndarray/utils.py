"""Array creation helpers of ``mx.nd`` (MXNet 1.x names, arguments and defaults)."""
import numbers

import numpy as np

from mxcy import _engine
from mxcy._ndarray import NDArray, empty, from_numpy_copy, push_numpy
from mxcy.base import mx_real_t


def array(source_array, ctx=None, dtype=None):
    """A new array copied from an NDArray, a NumPy array or a nested list.

    As in MXNet 1.x, the dtype is the source's when it is an NDArray, else float32
    unless `dtype` says otherwise: NumPy arrays of any dtype (int64, float64, ...) become
    float32 by default, exactly as `mx.nd.array` did in MXNet 1.x.
    """
    if isinstance(source_array, NDArray):
        dtype = source_array.dtype if dtype is None else dtype
        out = empty(source_array.shape, ctx, dtype)
        out[:] = source_array if np.dtype(dtype) == source_array.dtype else \
            source_array.astype(dtype)
        return out
    dtype = mx_real_t if dtype is None else dtype
    try:
        src = np.asarray(source_array)
    except Exception:
        raise TypeError(f"array: source_array must be array-like, got "
                        f"{type(source_array).__name__}") from None
    if src.dtype.kind not in 'biuf':
        raise TypeError(f"array: source_array must be a rectangular array of real numbers, "
                        f"got {type(source_array).__name__} of NumPy dtype {src.dtype}")
    return from_numpy_copy(src, ctx, dtype)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None,
           dtype=mx_real_t):
    """Evenly spaced values in [start, stop), each repeated `repeat` times.

    As in MXNet 1.x, an empty range (start >= stop for a positive step, start <= stop for a
    negative one) is an error rather than an empty array.
    """
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if isinstance(repeat, bool) or not isinstance(repeat, numbers.Integral) or repeat < 1:
        raise ValueError(f"arange: repeat must be a positive integer, got {repeat!r}")
    if (step > 0 and not start < stop) or (step < 0 and not start > stop):
        raise ValueError(f"arange: empty range (start, stop, step) = ({start}, {stop}, "
                         f"{step})")
    values = np.arange(start, stop, step, dtype=np.float64)
    if repeat > 1:
        values = np.repeat(values, repeat)
    return from_numpy_copy(values.astype(dtype), ctx, dtype)


def concatenate(arrays, axis=0, always_copy=True):
    """Join arrays along an existing axis (MXNet 1.x ``mx.nd.concatenate``)."""
    if not arrays:
        raise ValueError("concatenate: need at least one array")
    first = arrays[0]
    nd = len(first.shape)
    if not -nd <= axis < nd:
        raise ValueError(f"concatenate: axis {axis} out of range for {nd}-d arrays")
    axis %= nd
    for i, a in enumerate(arrays):
        if a.dtype != first.dtype:
            raise TypeError(f"concatenate: array {i} has dtype {np.dtype(a.dtype)}, "
                            f"array 0 has {np.dtype(first.dtype)}")
        if len(a.shape) != nd or a.shape[:axis] != first.shape[:axis] or \
                a.shape[axis + 1:] != first.shape[axis + 1:]:
            raise ValueError(f"concatenate: array {i} has shape {a.shape}, incompatible "
                             f"with array 0 of shape {first.shape} along axis {axis}")
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = empty(tuple(shape), first.context, first.dtype)

    def run(*views):
        np.concatenate(views[:-1], axis=axis, out=views[-1])
    push_numpy(run, list(arrays), [out], 'concatenate')
    return out


def waitall():
    """Wait for every op pushed so far; raise the first error any of them stored."""
    _engine.wait_all()
