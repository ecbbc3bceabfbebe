"""Shared error type, dtype tables and argument coercion helpers."""
import numbers

import numpy as np


class MXNetError(RuntimeError):
    """An error raised by mxcy (named like MXNet's, so `except mx.base.MXNetError` works)."""


# MXNet type flags (mshadow): the codes _ops and the file format use.
DTYPE_CODES = {
    np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2,
    np.dtype(np.uint8): 3, np.dtype(np.int32): 4, np.dtype(np.int8): 5, np.dtype(np.int64): 6,
    np.dtype(np.bool_): 7,
}
CODE_DTYPES = {code: dt for dt, code in DTYPE_CODES.items()}
DTYPE_NAMES = ', '.join(str(dt) for dt in DTYPE_CODES)
mx_real_t = np.float32


# exact-match shortcut for the common spellings (NumPy type, dtype, name): np.dtype()
# parsing is most of an allocation's Python cost
_CODE_OF = {key: code for dt, code in DTYPE_CODES.items() for key in (dt, dt.type, dt.name)}


def dtype_code(dtype, what='dtype'):
    """The MXNet type flag of a dtype given as a name, a NumPy type or a dtype."""
    try:
        code = _CODE_OF.get(dtype)
    except TypeError:                       # not hashable: not a common spelling
        code = None
    if code is not None:
        return code
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{what}: {dtype!r} is not a dtype; supported: {DTYPE_NAMES}") from None
    if dt not in DTYPE_CODES:
        raise TypeError(f"{what}: unsupported dtype {dt}; supported: {DTYPE_NAMES}")
    return DTYPE_CODES[dt]


def as_shape(shape, what='shape'):
    """A tuple of non-negative Python ints from an int, a tuple/list or NumPy integers."""
    if type(shape) is tuple and all(type(d) is int and d >= 0 for d in shape):
        return shape                        # already one (the common case, kept cheap)
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"{what} must be an int or a tuple of ints, got "
                        f"{type(shape).__name__} {shape!r}")
    out = []
    for dim in shape:
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
            raise TypeError(f"{what} must contain integers, got {type(dim).__name__} "
                            f"{dim!r} in {tuple(shape)!r}")
        if dim < 0:
            raise ValueError(f"{what} must not contain negative sizes, got {tuple(shape)!r}")
        out.append(int(dim))
    return tuple(out)


def as_axis(axis, ndim, what='axis'):
    """A normalised axis in [0, ndim) from an int (negative counts from the end)."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{what} must be an integer, got {type(axis).__name__} {axis!r}")
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}={axis} is out of range for an array of {ndim} dimensions")
    return axis + ndim if axis < 0 else axis
