"""unravel_index (mxcy/operator/gather_ops.py) against np.unravel_index and MXNet 1.9.1's
values outside the shape, in every index dtype: float inputs divide in float64 (exact
below 2^53), int64 in int64."""
import numpy as np
import pytest

import mxcy as mx


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'int32', 'int64'])
@pytest.mark.parametrize('shape', [(256, 256), (3, 4, 5), (7,)])
def test_unravel_index_matches_numpy(dtype, shape):
    size = int(np.prod(shape))
    flat = np.random.default_rng(1).integers(0, size, 999)
    got = mx.nd.unravel_index(mx.nd.array(flat, dtype=dtype), shape=shape)
    assert got.dtype == np.dtype(dtype) and got.shape == (len(shape), 999)
    np.testing.assert_array_equal(got.asnumpy(), np.stack(np.unravel_index(flat, shape)))


@pytest.mark.parametrize('dtype', ['float32', 'int64'])
def test_unravel_index_outside_the_shape_as_mxnet(dtype):
    # MXNet 1.9.1's values (C's truncating division; the first coordinate keeps the rest);
    # float inputs are truncated toward zero first
    got = mx.nd.unravel_index(mx.nd.array([-1, 12, 25, -13], dtype=dtype), shape=(3, 4))
    np.testing.assert_array_equal(got.asnumpy(), [[0, 3, 6, -3], [-1, 0, 1, -1]])
    if dtype == 'float32':
        got = mx.nd.unravel_index(mx.nd.array([5.7, 11.2], dtype=dtype), shape=(3, 4))
        np.testing.assert_array_equal(got.asnumpy(), [[1, 2], [1, 3]])
    empty = mx.nd.unravel_index(mx.nd.array(np.zeros(0), dtype=dtype), shape=(3, 4))
    assert empty.shape == (2, 0)
