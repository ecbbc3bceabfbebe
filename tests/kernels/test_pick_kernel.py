"""The pick kernel (_ops_pick.pxi) against NumPy: every axis position, index dtypes,
clip and wrap with out-of-range and negative indices, backward with req write and add."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _ops


def reference(x, idx, axis, wrap):
    n = x.shape[axis]
    k = np.trunc(idx).astype(np.int64)
    k = np.mod(k, n) if wrap else np.clip(k, 0, n - 1)
    return np.take_along_axis(x, np.expand_dims(k, axis), axis=axis).squeeze(axis), k


@pytest.mark.parametrize('shape,axis', [((5, 7), 1), ((5, 7), 0), ((3, 4, 6), 1),
                                        ((2, 3, 4), 2), ((4, 1), 1)])
@pytest.mark.parametrize('idx_dtype', ['float32', 'float64', 'int32', 'int64'])
@pytest.mark.parametrize('wrap', [False, True])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_pick_forward_and_backward(shape, axis, idx_dtype, wrap, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    out_shape = shape[:axis] + shape[axis + 1:]
    raw = rng.uniform(-2 * shape[axis], 2 * shape[axis], out_shape)   # out of range too
    idx = (raw if idx_dtype.startswith('float') else np.round(raw)).astype(idx_dtype)
    expect, k = reference(x, idx, axis, wrap)
    y = mx.nd.zeros(out_shape, dtype=dtype)
    _ops.push_pick(mx.nd.array(x, dtype=dtype), mx.nd.array(idx, dtype=idx_dtype), y, axis,
                   wrap)
    np.testing.assert_array_equal(y.asnumpy(), expect)
    dy = rng.standard_normal(out_shape).astype(dtype)
    dx = mx.nd.array(np.full(shape, 5.0), dtype=dtype)
    _ops.push_pick(dx, mx.nd.array(idx, dtype=idx_dtype), mx.nd.array(dy, dtype=dtype), axis,
                   wrap, backward=True, add=False)
    want = np.zeros(shape, dtype)
    np.put_along_axis(want, np.expand_dims(k, axis), np.expand_dims(dy, axis), axis=axis)
    np.testing.assert_array_equal(dx.asnumpy(), want)
    _ops.push_pick(dx, mx.nd.array(idx, dtype=idx_dtype), mx.nd.array(dy, dtype=dtype), axis,
                   wrap, backward=True, add=True)
    np.testing.assert_allclose(dx.asnumpy(), 2 * want)


def test_pick_refuses_what_it_cannot_compute():
    with pytest.raises(TypeError, match='float32/float64'):
        _ops.push_pick(mx.nd.ones((2, 3), dtype='int32'), mx.nd.zeros((2,)),
                       mx.nd.zeros((2,), dtype='int32'), 1, False)
    with pytest.raises(ValueError, match='do not match'):
        _ops.push_pick(mx.nd.ones((2, 3)), mx.nd.zeros((3,)), mx.nd.zeros((2,)), 1, False)
