"""mx.nd.dot / batch_dot against NumPy, with MXNet's rules: N-D operands flattened to 2-D
around the contracted axis, transpose flags, vector · vector of shape (1,), no
transposed vectors; BLAS for float32/float64, NumPy fallback for other dtypes."""
import numpy as np
import pytest

import mxcy as mx

rng = np.random.default_rng(4)




def check(got, want, dtype):
    want = np.asarray(want)
    assert got.dtype == dtype
    assert got.shape == want.shape, (got.shape, want.shape)
    r = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-12}.get(dtype, 0)
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), want.astype(np.float64),
                               rtol=r, atol=r)


def operand(shape, dtype):
    if np.dtype(dtype).kind in 'iu':
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.uniform(-1, 1, shape).astype(dtype)


def mx_dot_ref(x, y, ta, tb):
    """MXNet's dot: flatten lhs/rhs to 2-D around the contracted axis."""
    def size(dims):
        return int(np.prod(dims, dtype=np.int64))
    if ta:
        lhs, lrest = x.reshape(x.shape[0], size(x.shape[1:])).T, x.shape[1:]
    else:
        lhs, lrest = x.reshape(size(x.shape[:-1]), x.shape[-1]), x.shape[:-1]
    if tb:
        rhs, rrest = y.reshape(size(y.shape[:-1]), y.shape[-1]).T, y.shape[:-1]
    else:
        rhs, rrest = y.reshape(y.shape[0], size(y.shape[1:])), y.shape[1:]
    out = lhs.astype(np.float64) @ rhs.astype(np.float64)
    return out.reshape((lrest + rrest) or (1,))


CASES = [((3, 4), (4, 5), False, False), ((4, 3), (4, 5), True, False),
         ((3, 4), (5, 4), False, True), ((4, 3), (5, 4), True, True),
         ((2, 3, 4), (4, 5), False, False), ((3, 4), (4, 2, 5), False, False),
         ((2, 3, 4), (2, 5), True, False), ((3, 4), (5, 2, 4), False, True),
         ((4,), (4, 3), False, False), ((3, 4), (4,), False, False),
         ((4,), (4,), False, False), ((4,), (4, 3), True, False),
         ((3, 4), (4,), False, True), ((3, 0), (0, 2), False, False),
         ((0, 4), (4, 2), False, False)]


@pytest.mark.parametrize('lshape,rshape,ta,tb', CASES)
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_dot_blas_dtypes(lshape, rshape, ta, tb, dtype):
    x, y = operand(lshape, dtype), operand(rshape, dtype)
    got = mx.nd.dot(mx.nd.array(x, dtype=dtype), mx.nd.array(y, dtype=dtype),
                    transpose_a=ta, transpose_b=tb)
    check(got, mx_dot_ref(x, y, ta, tb), dtype)


@pytest.mark.parametrize('lshape,rshape,ta,tb', CASES[:9])
@pytest.mark.parametrize('dtype', [np.float16, np.int32, np.int64])
def test_dot_fallback_dtypes(lshape, rshape, ta, tb, dtype):
    x, y = operand(lshape, dtype), operand(rshape, dtype)
    got = mx.nd.dot(mx.nd.array(x, dtype=dtype), mx.nd.array(y, dtype=dtype),
                    transpose_a=ta, transpose_b=tb)
    check(got, mx_dot_ref(x, y, ta, tb), dtype)


def test_dot_mxnet_shapes():
    assert mx.nd.dot(mx.nd.array([1, 2]), mx.nd.array([3, 4])).asnumpy().tolist() == [11]
    assert mx.nd.dot(mx.nd.ones((2, 3, 4)), mx.nd.ones((4, 5))).shape == (2, 3, 5)
    assert mx.nd.dot(mx.nd.ones((3, 4)), mx.nd.ones((5, 2, 4)),
                     transpose_b=True).shape == (3, 5, 2)
    a = mx.nd.array(operand((3, 4), np.float32))
    check(a.dot(a.T), a.asnumpy().astype(np.float64) @ a.asnumpy().T, np.float32)


def test_dot_errors():
    with pytest.raises(ValueError, match=r"dot: shape mismatch for argument 'rhs': expected 4 "
                                         r"on the contracted axis \(lhs \(3, 4\).*given "
                                         r"\(5, 2\)"):
        mx.nd.dot(mx.nd.ones((3, 4)), mx.nd.ones((5, 2)))
    with pytest.raises(ValueError, match="dot: .*vectors cannot be transposed"):
        mx.nd.dot(mx.nd.ones((2,)), mx.nd.ones((2,)), transpose_a=True)
    with pytest.raises(TypeError, match="dot: argument 'rhs' has dtype float32, expected "
                                        "float64"):
        mx.nd.dot(mx.nd.ones((3, 4), dtype='float64'), mx.nd.ones((4, 2)))
    with pytest.raises(TypeError, match="dot: rhs must be an NDArray"):
        mx.nd.dot(mx.nd.ones((3, 4)), np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"dot: out has shape \(2, 2\)"):
        mx.nd.dot(mx.nd.ones((3, 4)), mx.nd.ones((4, 2)), out=mx.nd.zeros((2, 2)))


def test_dot_into_out_and_views():
    x, y = operand((6, 4), np.float32), operand((4, 3), np.float32)
    a, b = mx.nd.array(x), mx.nd.array(y)
    out = mx.nd.zeros((2, 3))
    assert mx.nd.dot(a[2:4], b, out=out) is out          # a row view as lhs
    check(out, x[2:4].astype(np.float64) @ y, np.float32)


# ---------------------------------------------------------------- batch_dot
BATCH_CASES = [((2, 3, 4), (2, 4, 5), False, False), ((2, 4, 3), (2, 4, 5), True, False),
               ((2, 3, 4), (2, 5, 4), False, True), ((2, 4, 3), (2, 5, 4), True, True),
               ((2, 2, 3, 4), (2, 2, 4, 5), False, False), ((1, 3, 0), (1, 0, 2), False, False)]


def np_batch_dot(x, y, ta, tb):
    if ta:
        x = np.swapaxes(x, -1, -2)
    if tb:
        y = np.swapaxes(y, -1, -2)
    return np.matmul(x.astype(np.float64), y.astype(np.float64))


@pytest.mark.parametrize('lshape,rshape,ta,tb', BATCH_CASES)
@pytest.mark.parametrize('dtype', [np.float32, np.float64, np.float16, np.int32])
def test_batch_dot(lshape, rshape, ta, tb, dtype):
    x, y = operand(lshape, dtype), operand(rshape, dtype)
    got = mx.nd.batch_dot(mx.nd.array(x, dtype=dtype), mx.nd.array(y, dtype=dtype),
                          transpose_a=ta, transpose_b=tb)
    check(got, np_batch_dot(x, y, ta, tb), dtype)


def test_batch_dot_errors():
    with pytest.raises(ValueError, match=r"batch_dot: .*'rhs': expected batch dimensions "
                                         r"\(2,\)"):
        mx.nd.batch_dot(mx.nd.ones((2, 3, 4)), mx.nd.ones((3, 4, 5)))
    with pytest.raises(ValueError, match=r"batch_dot: .*expected N-D arrays with the same "
                                         r"N >= 3"):
        mx.nd.batch_dot(mx.nd.ones((3, 4)), mx.nd.ones((4, 5)))
    with pytest.raises(ValueError, match=r"batch_dot: .*'rhs': expected 4 on the contracted "
                                         r"axis .*given \(2, 3, 5\)"):
        mx.nd.batch_dot(mx.nd.ones((2, 3, 4)), mx.nd.ones((2, 3, 5)))


def test_chained_products_are_ordered_without_waits():
    x = operand((8, 8), np.float32) / 4
    a = mx.nd.array(x)
    want = x.astype(np.float64)
    for _ in range(5):
        a = mx.nd.dot(a, a)
        want = want @ want
    check(a, want, np.float32)
