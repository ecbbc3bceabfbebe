"""Which mx.nd functions are also NDArray methods (``a.sum()`` is ``mx.nd.sum(a)``), and
the few methods of MXNet's NDArray that are not an mx.nd function of the same name."""

# MXNet 1.x NDArray methods that take the array as their first argument.
METHOD_NAMES = (
    'sum', 'mean', 'max', 'min', 'prod', 'argmax', 'argmin', 'norm', 'nansum', 'nanprod',
    'transpose', 'swapaxes', 'split', 'slice',
    'slice_axis', 'slice_like', 'clip', 'exp', 'log', 'sqrt', 'rsqrt', 'square', 'abs',
    'sign', 'relu', 'sigmoid', 'tanh', 'floor', 'ceil', 'round', 'rint', 'fix', 'trunc',
    'log1p', 'expm1', 'log2', 'log10', 'sin', 'cos', 'tan', 'arctan', 'reciprocal', 'cbrt',
    'softmax', 'log_softmax', 'one_hot', 'take', 'pick', 'topk', 'sort', 'argsort',
    'tile', 'repeat', 'flip', 'broadcast_to', 'broadcast_like', 'broadcast_axes',
    'broadcast_axis', 'zeros_like', 'ones_like', 'diag', 'dot', 'where', 'maximum',
    'minimum', 'pad', 'depth_to_space', 'space_to_depth', 'reshape_like', 'size_array',
    'shape_array', 'softmin', 'arcsin', 'arccos', 'arcsinh', 'arccosh', 'arctanh', 'sinh',
    'cosh', 'degrees', 'radians', 'rcbrt', 'argmax_channel', 'split_v2',
)


def _nd():
    import mxcy.ndarray as nd
    return nd


def expand_dims(arr, axis, inplace=False):
    """A new axis at `axis`; inplace=True returns a view sharing arr's memory."""
    if inplace:
        nd = len(arr.shape)
        ax = axis + nd + 1 if axis < 0 else axis
        if not 0 <= ax <= nd:
            raise ValueError(f"expand_dims: axis {axis} is out of range for {nd} dimensions")
        return arr.reshape(arr.shape[:ax] + (1,) + arr.shape[ax:])
    return _nd().expand_dims(arr, axis=axis)


def flatten(arr, inplace=False):
    """(N, prod(rest)); inplace=True returns a view sharing arr's memory."""
    if inplace:
        return arr.reshape((arr.shape[0], -1) if arr.shape else (1, 1))
    return _nd().flatten(arr)


def squeeze(arr, axis=None, inplace=False):
    """arr without size-1 axes (those of `axis`); inplace=True returns a view."""
    out_shape = _nd().squeeze(arr, axis=axis).shape if inplace else None
    if inplace:
        return arr.reshape(out_shape)
    return _nd().squeeze(arr, axis=axis)


def tostype(arr, stype):
    """A dense copy for stype='default'; other storage types are not supported."""
    if stype != 'default':
        raise ValueError(f"tostype: stype={stype!r} is not supported; mxcy arrays are dense "
                         "(stype='default')")
    return arr.copy()


def _slices(arr, begin, end, step, fname):
    if not (len(begin) == len(end) and len(step or ()) in (0, len(begin))):
        raise ValueError(f"{fname}: begin {begin}, end {end} and step {step} must have the "
                         "same length")
    step = tuple(step or (None,) * len(begin))
    return tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))


def slice_assign(arr, rhs, begin, end, step):
    """arr[begin:end:step] = rhs, in place; returns arr."""
    arr[_slices(arr, begin, end, step, 'slice_assign')] = rhs
    return arr


def slice_assign_scalar(arr, value, begin, end, step):
    """arr[begin:end:step] = value, in place; returns arr."""
    arr[_slices(arr, begin, end, step, 'slice_assign_scalar')] = value
    return arr


def as_nd_ndarray(arr):
    return arr


def as_np_ndarray(arr):
    """The array as an ``mx.np.ndarray`` (needs mxcy's NumPy interface)."""
    try:
        from mxcy import numpy as mnp
    except ImportError:
        from mxcy.base import MXNetError
        raise MXNetError("as_np_ndarray: mx.np (MXNet's NumPy interface) is not available "
                         "in this mxcy build") from None
    return mnp.array(arr, dtype=arr.dtype)


def broadcast_like(arr, other):
    """arr broadcast to the shape of `other`."""
    return _nd().broadcast_like(arr, other)


def to_dlpack_for_read(arr):
    return _nd().to_dlpack_for_read(arr)


def to_dlpack_for_write(arr):
    return _nd().to_dlpack_for_write(arr)


EXTRA = {f.__name__: f for f in (broadcast_like, to_dlpack_for_read, to_dlpack_for_write,
                                 expand_dims, flatten, squeeze, tostype, slice_assign,
                                 slice_assign_scalar, as_nd_ndarray, as_np_ndarray)}


def method_table():
    """name -> function, for the names that mx.nd defines, and the extra methods."""
    nd = _nd()
    table = {name: getattr(nd, name) for name in METHOD_NAMES if hasattr(nd, name)}
    table.update(EXTRA)
    return table
