"""linalg gemm/gemm2 (forward and backward) and trsm on their BLAS paths (mxcy/operator/la_ops.py, mxcy/_seqattn.pyx):
batched odd sizes in float32 and float64 against NumPy, every side/triangle/transpose with
alpha, req='write' over NaN and req='add', and MXNet 1.9.1's BLAS behaviour (only the named
triangle is read, a singular triangle gives inf, beta=0 ignores C); float16 stays on the
NumPy path."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.ndarray.utils import array
from mxcy.operator import get_op
from mxcy.test_utils import check_op_backward

RNG = np.random.default_rng(21)


def run(op, params, inputs, req='write', start=None):
    """Forward of one op on NumPy inputs into an output that holds `start` first."""
    spec = get_op(op)
    p = spec.params.parse(op, params)
    ins = [array(x, dtype=x.dtype) for x in inputs]
    _, shapes, _ = spec.infer_shape(p, [x.shape for x in inputs])
    first = np.full(shapes[0], np.nan) if start is None else start
    y = array(first.astype(inputs[0].dtype), dtype=inputs[0].dtype)
    spec.forward(p, False, [req], ins, [y], [])
    return y.asnumpy()


def tri_system(dtype, batch, k, other, rightside):
    """A (batch, k, k) well conditioned on both triangles, B shaped for the side."""
    a = RNG.standard_normal(batch + (k, k)) + 2 * k * np.eye(k)
    b = RNG.standard_normal(batch + ((other, k) if rightside else (k, other)))
    return a.astype(dtype), b.astype(dtype)


def ref_trsm(a, b, rightside, lower, transpose, alpha):
    m = np.tril(a) if lower else np.triu(a)
    m = np.swapaxes(m, -1, -2) if transpose else m
    inv = np.linalg.inv(m.astype(np.float64))
    return alpha * (b @ inv if rightside else inv @ b)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('rightside', [False, True])
@pytest.mark.parametrize('lower', [True, False])
@pytest.mark.parametrize('transpose', [False, True])
def test_trsm_batched_every_form(dtype, rightside, lower, transpose):
    a, b = tri_system(dtype, (2, 3), 5, 7, rightside)
    p = {'rightside': rightside, 'lower': lower, 'transpose': transpose, 'alpha': -1.75}
    want = ref_trsm(a, b, rightside, lower, transpose, -1.75)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(run('_linalg_trsm', p, [a, b]), want, rtol=tol, atol=tol)
    start = RNG.standard_normal(b.shape)
    got = run('_linalg_trsm', p, [a, b], 'add', start)
    np.testing.assert_allclose(got, want + start.astype(dtype), rtol=tol, atol=tol)


@pytest.mark.parametrize('rightside', [False, True])
def test_trsm_gradient_batched(rightside):
    a, b = tri_system(np.float64, (2,), 3, 4, rightside)
    for lower in (True, False):
        p = {'rightside': rightside, 'lower': lower, 'transpose': True, 'alpha': 0.6}
        check_op_backward('_linalg_trsm', p, [a, b], rtol=1e-4)


def test_trsm_reads_one_triangle_and_a_singular_one_gives_inf():
    a = np.array([[2.0, np.nan], [1.0, 4.0]], np.float32)
    b = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(mx.nd.linalg.trsm(mx.nd.array(a), mx.nd.array(b)).asnumpy(),
                               [[0.5] * 3, [0.125] * 3])      # MXNet 1.9.1's values
    got = mx.nd.linalg.trsm(mx.nd.array([[0.0, 0.0], [1.0, 4.0]]), mx.nd.array(b)).asnumpy()
    assert np.isinf(got).all()


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('ta', [False, True])
@pytest.mark.parametrize('tb', [False, True])
def test_gemm_and_gemm2_every_transpose(dtype, ta, tb):
    m, n, k = 3, 5, 7
    a = RNG.standard_normal((2, k, m) if ta else (2, m, k)).astype(dtype)
    b = RNG.standard_normal((2, n, k) if tb else (2, k, n)).astype(dtype)
    c = RNG.standard_normal((2, m, n)).astype(dtype)
    oa, ob = (np.swapaxes(a, 1, 2) if ta else a), (np.swapaxes(b, 1, 2) if tb else b)
    p = {'transpose_a': ta, 'transpose_b': tb, 'alpha': 1.5}
    tol = 1e-5 if dtype == np.float32 else 1e-12
    prod = 1.5 * oa.astype(np.float64) @ ob
    np.testing.assert_allclose(run('_linalg_gemm2', p, [a, b]), prod, rtol=tol, atol=tol)
    got = run('_linalg_gemm', dict(p, beta=-0.5), [a, b, c])
    np.testing.assert_allclose(got, prod - 0.5 * c, rtol=tol, atol=tol)
    start = RNG.standard_normal(c.shape)
    got = run('_linalg_gemm', dict(p, beta=-0.5), [a, b, c], 'add', start)
    np.testing.assert_allclose(got, start + prod - 0.5 * c, rtol=tol, atol=tol)
    if dtype == np.float64:     # gradients (BLAS GEMMs with alpha), 'write' and 'add'
        check_op_backward('_linalg_gemm', dict(p, beta=-0.5), [a, b, c])
        check_op_backward('_linalg_gemm2', p, [a, b])


def test_gemm_beta_zero_ignores_c_and_writes_in_place():
    a = np.ones((2, 2), np.float32)
    c = np.array([[np.nan, 1], [1, 1]], np.float32)
    got = mx.nd.linalg.gemm(mx.nd.array(a), mx.nd.array(a), mx.nd.array(c), beta=0.0)
    np.testing.assert_array_equal(got.asnumpy(), 2.0)                # MXNet 1.9.1's values
    x, cc = mx.nd.array(a), mx.nd.array(np.full((2, 2), 3.0))
    spec = get_op('_linalg_gemm')
    p = spec.params.parse('_linalg_gemm', {'alpha': 2.0, 'beta': 0.5})
    spec.forward(p, False, ['inplace'], [x, x, cc], [cc], [])          # C is the output
    np.testing.assert_array_equal(cc.asnumpy(), 2 * 2 + 0.5 * 3)


def test_float16_stays_on_numpy():
    a, b = tri_system(np.float16, (), 3, 2, False)
    got = run('_linalg_gemm2', {}, [a, b])
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, a.astype(np.float32) @ b, rtol=1e-2, atol=1e-2)
    # like MXNet 1.9.1, no float16 triangular solve (NumPy's solve refuses it)
    with pytest.raises(TypeError, match=r"(?s)float16 .*_linalg_trsm"):
        run('_linalg_trsm', {}, [a, b])
