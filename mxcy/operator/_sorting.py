"""The stable orders behind sort, argsort and topk (NumPy, inside an op).

The contract (what MXNet's sort/argsort/topk give on distinct values, made total): along
``axis`` (None: the flattened array), elements in ascending order (descending: the order of
``-x``), equal elements in index order, NaN last, ``-0.0`` equal to ``0.0``.

float16/float32 take a fast path: each element becomes one unique uint64 key, the
order-preserving bits of its value above its position, so NumPy's (SIMD) quicksort and
introselect on the keys give exactly that stable order, and ``topk`` needs only a
partition plus a sort of k keys per row. Other dtypes use a stable argsort.
"""
import numpy as np

_KEYED = (np.dtype(np.float16), np.dtype(np.float32))
_LOW = np.uint64(0xFFFFFFFF)


def order_keys(x, axis, ascend):
    """uint64 keys along ``axis`` (value bits << 32 | position), or None where the dtype
    (or a length of 2**32 and more) has no key."""
    if x.dtype not in _KEYED or x.shape[axis] >= 2 ** 32:
        return None
    v = x.astype(np.float32)
    v = v + np.float32(0) if ascend else np.float32(0) - v     # NOTE: -0.0 becomes 0.0
    nan = np.isnan(v)
    if nan.any():
        v[nan] = np.float32(np.nan)                             # one NaN, sign bit clear
    i = v.view(np.int32)
    # negative floats: flip every bit; others: set the sign bit -> unsigned order = float order
    bits = (i ^ ((i >> 31) | np.int32(-2 ** 31))).view(np.uint32)
    keys = bits.astype(np.uint64)
    keys <<= np.uint64(32)
    pos = np.arange(x.shape[axis], dtype=np.uint64)
    keys |= pos.reshape((-1,) + (1,) * (x.ndim - 1 - axis % x.ndim))
    return keys


def first_k(x, axis, ascend, k):
    """(int64 indices of the first k elements of the stable order along axis, the array
    they index (x, flattened when axis is None), that array's axis)."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    n = x.shape[axis]
    keys = order_keys(x, axis, ascend) if n else None
    if keys is None:
        key = x if ascend else -(x.astype(np.int64) if x.dtype.kind in 'iu' else x)
        order = np.argsort(key, axis=axis, kind='stable')
        return (order if k >= n else np.take(order, np.arange(k), axis=axis)), x, axis
    if k < n:
        keys = np.partition(keys, k - 1, axis=axis)
        keys = np.take(keys, np.arange(k), axis=axis)
    keys = np.sort(keys, axis=axis)
    return (keys & _LOW).astype(np.int64), x, axis


def sort_order(x, axis, ascend):
    """(stable argsort along axis, the array it indexes, its axis): see the module
    docstring."""
    n = x.size if axis is None else x.shape[axis]
    return first_k(x, axis, ascend, n)
