"""Big GEMMs split over an idle worker's core (rows or columns; opt-in) must equal the
unsplit product for every transpose combination, under both engine types."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _ndarray


@pytest.fixture(autouse=True)
def _split_on():
    old = mx.engine.set_kernel_split(True)
    yield
    mx.engine.set_kernel_split(old)


@pytest.mark.parametrize('shape', [(512, 520, 600), (96, 1200, 700)])   # > 2**26 MACs
@pytest.mark.parametrize('trans_a', [False, True])
@pytest.mark.parametrize('trans_b', [False, True])
def test_split_gemm_matches_numpy(shape, trans_a, trans_b):
    m, n, k = shape
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    c0 = rng.standard_normal((m, n)).astype(np.float32)
    c = mx.nd.array(c0)
    _ndarray.gemm(mx.nd.array(a), mx.nd.array(b), c, m, n, k, trans_a, trans_b, 1, 0.5, 1.0)
    ref = 0.5 * (a.T if trans_a else a) @ (b.T if trans_b else b) + c0
    np.testing.assert_allclose(c.asnumpy(), ref, rtol=2e-3, atol=2e-2)


def test_split_gemm_under_naive_engine_and_two_at_once():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((512, 512)).astype(np.float32)
    x, y = mx.nd.array(a), mx.nd.array(a.T.copy())
    first, second = mx.nd.dot(x, y), mx.nd.dot(y, x)      # both may want the helper
    np.testing.assert_allclose(first.asnumpy(), a @ a.T, rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(second.asnumpy(), a.T @ a, rtol=1e-3, atol=1e-2)
    mx.engine.set_engine_type('NaiveEngine')
    try:
        np.testing.assert_allclose(mx.nd.dot(x, y).asnumpy(), a @ a.T, rtol=1e-3, atol=1e-2)
    finally:
        mx.engine.set_engine_type('ThreadedEngine')


def test_kernel_split_switch():
    old = mx.engine.set_kernel_split(False)
    try:
        assert mx.engine.kernel_split() is False
        a = np.random.default_rng(2).standard_normal((512, 512)).astype(np.float32)
        np.testing.assert_allclose(mx.nd.dot(mx.nd.array(a), mx.nd.array(a)).asnumpy(), a @ a,
                                   rtol=1e-3, atol=1e-2)
    finally:
        mx.engine.set_kernel_split(old)
    assert mx.engine.kernel_split() is old
