"""mxcy/operator/_sorting.py: the keyed (float16/float32) orders behind sort/argsort/topk
equal a stable argsort exactly: ties in index order, NaN last, -0.0 equal to 0.0, any
axis (negative too), the flattened array, 0-size arrays; and through mx.nd."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.operator._sorting import first_k, order_keys, sort_order


def stable_ref(x, axis, ascend, k):
    if axis is None:
        x, axis = x.reshape(-1), 0
    key = x if ascend else -(x.astype(np.int64) if x.dtype.kind in 'iu' else x)
    order = np.argsort(key, axis=axis, kind='stable')
    return np.take(order, np.arange(min(k, x.shape[axis])), axis=axis)


def awkward(shape, dtype, seed=0):
    """Many ties, signed zeros, NaN of both signs and infinities."""
    x = np.random.default_rng(seed).integers(-3, 4, shape).astype(dtype)
    if x.dtype.kind == 'f' and x.size:
        x.flat[::5] = -0.0
        x.flat[1::7] = np.nan
        x.flat[2::11] = -np.float32(np.nan)
        x.flat[3::13] = np.inf
        x.flat[4::17] = -np.inf
    return x


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64', 'int32'])
@pytest.mark.parametrize('shape', [(7,), (5, 9), (3, 4, 6), (0, 5), (4, 0)])
def test_first_k_is_the_stable_order(dtype, shape):
    x = awkward(shape, dtype)
    for axis in [None] + list(range(-len(shape), len(shape))):
        n = x.size if axis is None else x.shape[axis]
        for ascend in (True, False):
            for k in sorted({1, max(n // 2, 1), n}) if n else [0]:
                got = first_k(x, axis, ascend, k)[0]
                want = stable_ref(x, axis, ascend, k)
                assert got.dtype == np.int64
                np.testing.assert_array_equal(got, want, err_msg=f'{axis} {ascend} {k}')
                if k == n:
                    np.testing.assert_array_equal(sort_order(x, axis, ascend)[0], want)


def test_keys_only_for_half_and_single():
    assert order_keys(np.zeros((2, 3), np.float64), 1, True) is None
    assert order_keys(np.zeros((2, 3), np.int32), 1, True) is None
    keys = order_keys(np.array([[2.0, -1.0, -0.0, 0.0]], np.float32), -1, True)
    # -1 < -0.0 == 0.0 < 2, the zeros in index order
    assert list(np.argsort(keys[0])) == [1, 2, 3, 0]


@pytest.mark.parametrize('dtype', ['float16', 'float32'])
def test_nd_topk_sort_argsort_keyed_dtypes(dtype):
    x = awkward((6, 33), dtype, seed=3)
    x[np.isnan(x)] = 1.5                    # mx.nd compares values below
    a = mx.nd.array(x, dtype=dtype)
    for axis in (-1, 0):
        idx = stable_ref(x, axis, False, 4)
        np.testing.assert_array_equal(
            mx.nd.topk(a, axis=axis, k=4, dtype='int32').asnumpy(), idx)
        np.testing.assert_array_equal(
            mx.nd.topk(a, axis=axis, k=4, ret_typ='value').asnumpy(),
            np.take_along_axis(x, idx, axis))
        mask = np.zeros_like(x)
        np.put_along_axis(mask, idx, 1, axis)
        np.testing.assert_array_equal(
            mx.nd.topk(a, axis=axis, k=4, ret_typ='mask').asnumpy(), mask)
        np.testing.assert_array_equal(mx.nd.argsort(a, axis=axis).asnumpy(),
                                      stable_ref(x, axis, True, x.shape[axis]))
        np.testing.assert_array_equal(mx.nd.sort(a, axis=axis, is_ascend=False).asnumpy(),
                                      -np.sort(-x, axis, kind='stable'))


def test_nd_topk_value_gradient_goes_to_the_chosen_positions():
    x = np.array([[0.5, 3.0, 3.0, -1.0, 2.0]], np.float32)
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.topk(a, k=2, ret_typ='value')
    y.backward(mx.nd.array([[10.0, 20.0]]))
    # the tie 3.0, 3.0 keeps index order: index 1 first, then index 2
    np.testing.assert_array_equal(a.grad.asnumpy(), [[0, 10, 20, 0, 0]])
