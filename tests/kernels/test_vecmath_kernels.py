"""The vectorised exp family (mxcy/_vecmath.h) behind `unary_np` (exp, sigmoid, tanh),
`grad_np` (softrelu) and `softmax_np`, against the float64 NumPy reference
`mxcy._reference` and against the reference's own twins.

Accuracy contract: float32 exp within 1.02 ulp of the correctly rounded value (NumPy's own
float32 exp is 2.5 ulp), float64 exp within 1 ulp; float32 sigmoid/tanh are computed in
double to 2^-31 and rounded once (0.51 ulp); float64 sigmoid and tanh within 4 ulp. Special values (inf, NaN, overflow, underflow through the subnormals, -0) as libm.
"""
import numpy as np
import pytest
from scipy.special import expit

import mxcy as mx
from mxcy import _ops, _reference
from mxcy._ops import GRAD_OPS, UNARY_OPS

IMPLS = [pytest.param(_reference, id='reference'), pytest.param(_ops, id='cython')]
FLOAT_DTYPES = [np.float32, np.float64]


def run_unary(impl, op, x, dtype):
    x = np.ascontiguousarray(x, dtype=dtype)
    out = np.empty_like(x)
    assert impl.unary_np(UNARY_OPS[op], x, out) is out
    return out


def ulps(got, truth, dtype):
    """|got − truth| in units of the spacing at truth rounded to dtype (normal results;
    subnormal ones in units of the least subnormal)."""
    with np.errstate(over='ignore'):
        rounded = truth.astype(dtype)
    spacing = np.maximum(np.spacing(np.abs(rounded)), np.finfo(dtype).smallest_subnormal)
    return np.abs(got.astype(np.float64) - truth) / spacing.astype(np.float64)


def exp_inputs(dtype):
    """Every binade the result can land in: overflow edge, the normal range, subnormal
    results, and tiny and denormal arguments."""
    hi, lo = (89.5, -105.0) if dtype == np.float32 else (710.5, -746.0)
    rng = np.random.default_rng(7)
    tiny = np.geomspace(np.finfo(dtype).smallest_subnormal, 1, 2000)
    return np.concatenate([np.linspace(lo, hi, 200_001), rng.uniform(-3, 3, 20_000),
                           tiny, -tiny]).astype(dtype)


# ---------------------------------------------------------------- exp
@pytest.mark.parametrize('dtype, max_ulp', [(np.float32, 1.02), (np.float64, 1.0)])
def test_exp_is_within_an_ulp_over_the_whole_range(dtype, max_ulp):
    x = exp_inputs(dtype)
    with np.errstate(over='ignore'):
        truth = np.exp(x.astype(np.float64)) if dtype == np.float32 else np.exp(x)
        rounded = truth.astype(dtype)
    got = run_unary(_ops, 'exp', x, dtype)
    finite = np.isfinite(rounded)
    assert ulps(got[finite], truth[finite], dtype).max() <= max_ulp
    np.testing.assert_array_equal(got[~finite], rounded[~finite])


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
def test_exp_special_values(impl, dtype):
    big, small = (88.72284, -103.98) if dtype == np.float32 else (709.79, -745.14)
    x = [np.inf, -np.inf, np.nan, big, small, 1e3, -1e3, 0.0, -0.0, 1e-30, -1e-30,
         np.finfo(dtype).smallest_subnormal]
    got = run_unary(impl, 'exp', x, dtype)
    np.testing.assert_array_equal(got, np.array([np.inf, 0, np.nan, np.inf, 0, np.inf, 0,
                                                 1, 1, 1, 1, 1], dtype=dtype))


@pytest.mark.parametrize('impl', IMPLS)
def test_float32_exp_edges_of_the_finite_range(impl):
    # the largest float32 whose exp is finite, the least subnormal result, the last
    # normal one, and a result that rounds to the least subnormal rather than to 0
    x = np.array([88.72283, -103.27893, -87.33654, -103.9720], dtype=np.float32)
    got = run_unary(impl, 'exp', x, np.float32)
    np.testing.assert_array_equal(got, np.exp(x.astype(np.float64)).astype(np.float32))
    assert np.isfinite(got[0]) and got[1] > 0 and got[2] > 0 and got[3] > 0


@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('op', ['exp', 'sigmoid', 'tanh'])
def test_vector_loops_handle_every_length_and_offset(dtype, op):
    # sizes around the vector widths and the AVX-512 tail; unaligned starts
    rng = np.random.default_rng(1)
    base = rng.uniform(-20, 20, 80).astype(dtype)
    for start in range(3):
        for n in range(0, 70, 3):
            x = np.ascontiguousarray(base[start:start + n])
            np.testing.assert_allclose(run_unary(_ops, op, x, dtype),
                                       run_unary(_reference, op, x, dtype),
                                       rtol=2.5e-7 if dtype == np.float32 else 1e-15,
                                       atol=0)


@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('op', ['exp', 'sigmoid', 'tanh'])
def test_vector_loops_run_in_place(dtype, op):
    x = np.linspace(-5, 5, 101).astype(dtype)
    expected = run_unary(_reference, op, x, dtype)
    _ops.unary_np(UNARY_OPS[op], x, x)
    np.testing.assert_allclose(x, expected, rtol=2.5e-7 if dtype == np.float32 else 1e-15)


# ---------------------------------------------------------------- sigmoid, tanh
@pytest.mark.parametrize('dtype, max_ulp', [(np.float32, 0.51), (np.float64, 4.0)])
@pytest.mark.parametrize('op', ['sigmoid', 'tanh'])
def test_sigmoid_and_tanh_accuracy(op, dtype, max_ulp):
    tiny = np.geomspace(1e-30, 1, 3000)
    x = np.concatenate([np.linspace(-40, 40, 100_001), tiny, -tiny]).astype(dtype)
    # float64 truth; expit, because 1 / (1 + exp(-x)) itself loses digits for x << 0
    truth = expit(x.astype(np.float64)) if op == 'sigmoid' else np.tanh(x.astype(np.float64))
    got = run_unary(_ops, op, x, dtype)
    assert ulps(got, truth, dtype).max() <= max_ulp


@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
def test_sigmoid_keeps_relative_accuracy_in_the_negative_tail(dtype):
    x = np.array([-30, -60, -85, -700 if dtype == np.float64 else -100], dtype=dtype)
    got = run_unary(_ops, 'sigmoid', x, dtype)
    np.testing.assert_allclose(got, expit(x.astype(np.float64)).astype(dtype), rtol=1e-6)
    assert (got > 0).all()


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
def test_sigmoid_and_tanh_special_values(impl, dtype):
    x = [np.inf, -np.inf, np.nan, 0.0, -0.0, 800.0, -800.0]
    np.testing.assert_array_equal(run_unary(impl, 'sigmoid', x, dtype),
                                  np.array([1, 0, np.nan, 0.5, 0.5, 1, 0], dtype=dtype))
    t = run_unary(impl, 'tanh', x, dtype)
    np.testing.assert_array_equal(t, np.array([1, -1, np.nan, 0, 0, 1, -1], dtype=dtype))
    assert np.signbit(t[4]) and not np.signbit(t[3])                  # tanh(-0) = -0
    small = np.finfo(dtype).smallest_subnormal
    np.testing.assert_array_equal(run_unary(impl, 'tanh', [small, -small], dtype),
                                  np.array([small, -small], dtype=dtype))


# ---------------------------------------------------------------- softrelu gradients
def run_grad(impl, op, v, dy, dtype, req=1, dx=None):
    v = np.ascontiguousarray(v, dtype=dtype)
    dy = np.ascontiguousarray(dy, dtype=dtype)
    dx = np.zeros_like(v) if dx is None else np.array(dx, dtype=dtype)
    assert impl.grad_np(GRAD_OPS[op], v, dy, dx, req) is dx
    return dx


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('req', [1, 2])
def test_softrelu_gradients(impl, dtype, req):
    x = np.array([-30, -2, -1e-3, 0, 1e-3, 2, 30, 100, np.inf, -np.inf])
    y = np.logaddexp(0, x)                                  # the forward output, >= 0
    dy = np.linspace(0.5, 2, x.size)
    prior = np.full(x.size, 0.25)
    sig = 1 / (1 + np.exp(-x))
    for op, v in (('softrelu', x), ('softrelu_y', y)):
        got = run_grad(impl, op, v, dy, dtype, req, prior if req == 2 else None)
        expected = dy * sig + (prior if req == 2 else 0)
        np.testing.assert_allclose(got, expected.astype(dtype),
                                   rtol=3e-7 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('op', ['softrelu', 'softrelu_y', 'sigmoid', 'tanh', 'relu'])
def test_cython_gradient_matches_reference(op, dtype):
    rng = np.random.default_rng(4)
    v = rng.uniform(0.01, 0.99, 777) if op in ('sigmoid', 'tanh') else \
        rng.uniform(0 if op == 'softrelu_y' else -20, 20, 777)
    dy = rng.standard_normal(777)
    for req in (1, 2):
        prior = rng.standard_normal(777)
        np.testing.assert_allclose(run_grad(_ops, op, v, dy, dtype, req, prior),
                                   run_grad(_reference, op, v, dy, dtype, req, prior),
                                   rtol=3e-7 if dtype == np.float32 else 1e-14,
                                   atol=3e-7 if dtype == np.float32 else 1e-15)  # dx + g cancel


@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('op', ['exp', 'tanh', 'log'])
def test_big_unary_ops_cut_into_parts(dtype, op):
    # >= 2^18 elements run as parts (shared with idle engine workers); an odd length
    x = np.random.default_rng(3).uniform(0.1, 5, (1 << 18) + 37)
    expected = run_unary(_reference, op, x, dtype)
    np.testing.assert_allclose(run_unary(_ops, op, x, dtype), expected,
                               rtol=2.5e-7 if dtype == np.float32 else 1e-15)
    got = mx.nd.array(x.astype(dtype), dtype=dtype)
    np.testing.assert_allclose(getattr(mx.nd, op)(got).asnumpy(), expected,
                               rtol=2.5e-7 if dtype == np.float32 else 1e-15)
