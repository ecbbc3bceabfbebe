"""Hand-written ``mx.nd`` functions of MXNet 1.9.1 that are not single operators:
constructors with MXNet's signatures (``zeros``/``empty`` with ``stype``, ``eye``,
``linspace``, ``from_numpy``), ``moveaxis``, ``onehot_encode``, ``histogram`` and
``split_v2``. Each validates its arguments and names itself in errors.
"""
import numbers

import numpy as np

from mxcy import _ndarray
from mxcy._ndarray import NDArray
from mxcy.ndarray.elemwise import check_nd, norm_axis


def _dense(stype, fname):
    if stype not in (None, 'default'):
        raise ValueError(f"{fname}: stype={stype!r} is not supported; mxcy arrays are dense "
                         "(stype='default')")


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """An array of zeros (MXNet 1.x ``mx.nd.zeros``; only dense storage)."""
    _dense(stype, 'zeros')
    return _ndarray.zeros(shape, ctx, dtype, **kwargs)


def empty(shape, ctx=None, dtype=None, stype=None):
    """An uninitialised array (MXNet 1.x ``mx.nd.empty``; only dense storage)."""
    _dense(stype, 'empty')
    return _ndarray.empty(shape, ctx, dtype)


def _gen(name):
    from mxcy.ndarray._gen import function
    return function(name)


def eye(N, M=0, k=0, ctx=None, dtype=None):
    """An N x M (M=0: N x N) matrix with ones on the k-th diagonal."""
    return _gen('_eye')(N=N, M=M, k=k, ctx=ctx, dtype=dtype or 'float32')


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None):
    """`num` evenly spaced values from start to stop (stop included when endpoint)."""
    return _gen('_linspace')(start=start, stop=stop, num=num, endpoint=endpoint, ctx=ctx,
                             dtype=dtype or 'float32')


def from_numpy(ndarray, zero_copy=True, array_cls=NDArray):
    """An NDArray with the values of a NumPy array (copied: mxcy owns its memory, so
    ``zero_copy`` is accepted and the copy is always made)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: ndarray must be a numpy.ndarray, got "
                        f"{type(ndarray).__name__}")
    from mxcy.ndarray.utils import array
    return array(np.ascontiguousarray(ndarray), dtype=ndarray.dtype)


def moveaxis(tensor, source, destination):
    """`tensor` with axis `source` moved to `destination` (others keep their order)."""
    check_nd(tensor, 'moveaxis', 'tensor')
    nd = len(tensor.shape)
    src = norm_axis(source, nd, 'moveaxis', 'source')
    dst = norm_axis(destination, nd, 'moveaxis', 'destination')
    order = [a for a in range(nd) if a != src]
    order.insert(dst, src)
    return _gen('transpose')(tensor, axes=tuple(order))


def onehot_encode(indices, out):
    """Legacy one-hot: out[i, indices[i]] = 1, the rest 0 (out is (N, depth))."""
    check_nd(indices, 'onehot_encode', 'indices')
    check_nd(out, 'onehot_encode', 'out')
    if len(out.shape) != 2 or indices.shape != (out.shape[0],):
        raise ValueError(f"onehot_encode: expected indices of shape (N,) and out of shape "
                         f"(N, depth), got {indices.shape} and {out.shape}")
    return _gen('one_hot')(indices, depth=out.shape[1], dtype=out.dtype, out=out)


def histogram(a, bins=10, range=None):
    """(counts, bin edges) of `a`: `bins` equal bins over `range` (default: a's min and
    max), or the edges given as an NDArray."""
    check_nd(a, 'histogram', 'a')
    if isinstance(bins, NDArray):
        return _gen('_histogram')(a, bins)
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
        raise ValueError(f"histogram: bins must be a positive integer or an NDArray of bin "
                         f"edges, got {bins!r}")
    if range is None:
        flat = a.asnumpy()
        range = (float(flat.min()), float(flat.max())) if flat.size else (0.0, 1.0)
    return _gen('_histogram')(a, bin_cnt=int(bins), range=tuple(range))


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split `ary` along `axis` into equal sections (an int) or at the given indices (a
    tuple), as NumPy's split."""
    check_nd(ary, 'split_v2', 'ary')
    kw = split_v2_params(indices_or_sections, 'split_v2')
    return _gen('_split_v2')(ary, axis=axis, squeeze_axis=squeeze_axis, **kw)


def split_v2_params(indices_or_sections, fname):
    if isinstance(indices_or_sections, numbers.Integral) and \
            not isinstance(indices_or_sections, bool):
        return {'sections': int(indices_or_sections)}
    if isinstance(indices_or_sections, (tuple, list)):
        return {'indices': (0,) + tuple(int(i) for i in indices_or_sections)}
    raise TypeError(f"{fname}: indices_or_sections must be an int or a tuple of ints, got "
                    f"{indices_or_sections!r}")


# ---------------------------------------------------------------- DLPack
def to_dlpack_for_read(data):
    """A DLPack capsule sharing data's memory, after its pending writes (read it only)."""
    check_nd(data, 'to_dlpack_for_read', 'data')
    data.wait_to_read()
    return data._np_view().__dlpack__()


def to_dlpack_for_write(data):
    """A DLPack capsule sharing data's memory, after every pending op (the consumer may
    write it; push nothing on `data` meanwhile)."""
    check_nd(data, 'to_dlpack_for_write', 'data')
    from mxcy.ndarray.utils import waitall
    waitall()
    return data._np_view().__dlpack__()


class _Capsule:
    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)       # kDLCPU


def from_dlpack(dlpack):
    """An NDArray with the values of a DLPack capsule (or an object with __dlpack__).
    NOTE: the values are copied (MXNet shares the memory): mxcy arrays own theirs."""
    src = dlpack if hasattr(dlpack, '__dlpack__') else _Capsule(dlpack)
    try:
        values = np.from_dlpack(src)
    except (TypeError, RuntimeError, BufferError) as e:
        raise TypeError(f"from_dlpack: not a usable CPU DLPack capsule ({e})") from None
    from mxcy.ndarray.utils import array
    return array(np.ascontiguousarray(values), dtype=values.dtype)


def reset_arrays(*data, **kwargs):
    """Set every given array to zero, in place (MXNet's multi-precision helper); the
    optional num_arrays must match the number of arrays."""
    num = kwargs.pop('num_arrays', len(data))
    kwargs.pop('out', None)
    kwargs.pop('name', None)
    if kwargs:
        raise TypeError(f"reset_arrays: unexpected arguments {sorted(kwargs)}")
    if num != len(data):
        raise ValueError(f"reset_arrays: num_arrays={num} but {len(data)} arrays given")
    for i, a in enumerate(data):
        check_nd(a, 'reset_arrays', f'data[{i}]')
    from mxcy.operator import get_op      # the one declaration (it also gives sym's)
    from mxcy.operator._params import Params
    get_op('reset_arrays').forward(Params({'num_arrays': num}), False, [], list(data), [],
                                   [])
    return []       # MXNet's generated function returns its (empty) list of outputs


def get_oshape_of_gather_nd_op(dshape, ishape):
    """The output shape of gather_nd(data, indices): ishape[1:] + dshape[ishape[0]:]."""
    return tuple(ishape[1:]) + tuple(dshape[ishape[0]:])
