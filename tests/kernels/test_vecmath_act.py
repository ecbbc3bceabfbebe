"""softrelu and gelu by the vector loops of mxcy/_vecmath.h (`unary_np` codes 'softrelu' and
'gelu', `grad_np` code 'gelu'), against float64 truths and the NumPy reference twins.

Accuracy contract: float32 results are computed in float32 (MXNet's precision, 8 SIMD
lanes): softrelu and its gradients within 3 ulp, gelu within 8 ulp everywhere (also in the
negative tail, where MXNet's float32 ½x(1 + erf(x/√2)) cancels) and its gradient within 8
ulp of |Φ(x)| + |x φ(x)|; float64 softrelu within 4 ulp, float64 gelu to 5e-14 relative
where |x| < 8 (further out the truth itself, x·ndtr(x), loses digits to the rounding of
x/√2) and never 0 where the true value is a normal number. The gelu gradient is
Φ(x) + x φ(x).
"""
import numpy as np
import pytest
from scipy.special import ndtr

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
    rounded = truth.astype(dtype)
    spacing = np.maximum(np.spacing(np.abs(rounded)), np.finfo(dtype).smallest_subnormal)
    return np.abs(got.astype(np.float64) - truth) / spacing.astype(np.float64)


def wide_inputs(dtype, lim):
    tiny = np.geomspace(1e-30, 1, 3000)
    rng = np.random.default_rng(11)
    return np.concatenate([np.linspace(-lim, lim, 200_001), rng.uniform(-12, 12, 50_000),
                           tiny, -tiny]).astype(dtype)


def gelu_truth(x):
    return x * ndtr(x)


# ---------------------------------------------------------------- softrelu
@pytest.mark.parametrize('dtype, max_ulp', [(np.float32, 3.0), (np.float64, 4.0)])
def test_softrelu_accuracy(dtype, max_ulp):
    x = wide_inputs(dtype, 800 if dtype == np.float64 else 120)
    got = run_unary(_ops, 'softrelu', x, dtype)
    truth = np.logaddexp(0, x.astype(np.float64))
    assert ulps(got, truth, dtype).max() <= max_ulp


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
def test_softrelu_special_values(impl, dtype):
    x = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e30, 30.0]
    got = run_unary(impl, 'softrelu', x, dtype)
    np.testing.assert_array_equal(
        got, np.array([np.inf, 0, np.nan, np.log(2), np.log(2), 1e30, 0,
                       30 + np.exp(-30)], dtype=dtype))


# ---------------------------------------------------------------- gelu
def test_gelu_float32_within_8_ulp():
    x = wide_inputs(np.float32, 20)
    got = run_unary(_ops, 'gelu', x, np.float32)
    err = ulps(got, gelu_truth(x.astype(np.float64)), np.float32)
    assert err.max() <= 8
    assert np.median(err) <= 1


def test_float32_gradients_within_their_bounds():
    x = wide_inputs(np.float32, 20)
    xd = x.astype(np.float64)
    one = np.ones_like(x)
    # gelu: 8 ulp of |Φ(x)| + |x φ(x)| (the sum cancels near x = -0.75)
    phi = np.exp(-0.5 * xd * xd) / np.sqrt(2 * np.pi)
    got = run_grad(_ops, x, one, np.float32)
    scale = (ndtr(xd) + np.abs(xd * phi)).astype(np.float32)
    tiny = np.finfo(np.float32).smallest_subnormal
    err = np.abs(got - (ndtr(xd) + xd * phi)) / np.maximum(np.spacing(scale), tiny)
    assert err.max() <= 8
    # softrelu: sigmoid from the input, 1 - exp(-y) from the output, within 3 ulp
    x6 = (x * 6).astype(np.float32)
    dx = np.zeros_like(x6)
    _ops.grad_np(GRAD_OPS['softrelu'], x6, one, dx, 1)
    assert ulps(dx, 1 / (1 + np.exp(-x6.astype(np.float64))), np.float32).max() <= 3
    y = np.abs(x6)
    _ops.grad_np(GRAD_OPS['softrelu_y'], y, one, dx, 1)
    assert ulps(dx, -np.expm1(-y.astype(np.float64)), np.float32).max() <= 3


def test_gelu_float64_accuracy():
    x = wide_inputs(np.float64, 40)
    got = run_unary(_ops, 'gelu', x, np.float64)
    truth = gelu_truth(x)
    near = (np.abs(x) < 8) & (x != 0)
    np.testing.assert_allclose(got[near], truth[near], rtol=5e-14, atol=0)
    # the far negative tail keeps relative accuracy (1 + erf(x/√2) would be 0 below -8.3)
    tail = (x < -8) & (np.abs(truth) > np.finfo(np.float64).tiny)
    assert tail.sum() > 1000
    np.testing.assert_allclose(got[tail], truth[tail], rtol=1e-12)


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
def test_gelu_special_values(impl, dtype):
    # gelu(-inf) = -inf · 0 is NaN, as MXNet's x (1 + erf(x/√2)) / 2
    x = [np.inf, -np.inf, np.nan, 0.0, 1e30, -1e30, 60.0, -60.0]
    got = run_unary(impl, 'gelu', x, dtype)
    np.testing.assert_array_equal(got[[0, 1, 2, 3, 4, 6]],
                                  np.array([np.inf, np.nan, np.nan, 0, 1e30, 60],
                                           dtype=dtype))
    assert got[5] == 0 and got[7] == 0


# ---------------------------------------------------------------- both: loops
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('op', ['softrelu', 'gelu'])
def test_loops_handle_every_length_offset_and_in_place(dtype, op):
    rng = np.random.default_rng(3)
    base = rng.uniform(-25, 25, 80).astype(dtype)
    # float32: within 8 ulp (the reference computes in float64), the subnormal results
    # by a least subnormal; float64: the reference's x/√2 is rounded, which moves its
    # tail by up to x² ulp
    tol = 1e-6 if dtype == np.float32 else 3e-13
    atol = 2e-45 if dtype == np.float32 else 1e-300
    for start in range(3):
        for n in range(0, 70, 3):
            x = np.ascontiguousarray(base[start:start + n])
            expected = run_unary(_reference, op, x, dtype)
            np.testing.assert_allclose(run_unary(_ops, op, x, dtype), expected, rtol=tol,
                                       atol=atol)
            _ops.unary_np(UNARY_OPS[op], x, x)
            np.testing.assert_allclose(x, expected, rtol=tol, atol=atol)


@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('op', ['softrelu', 'gelu'])
def test_parallel_parts_match_one_pass(dtype, op):
    # 2^18 elements and more are split between workers in 16-element blocks
    x = np.random.default_rng(4).standard_normal((1 << 18) + 37).astype(dtype) * 6
    got = run_unary(_ops, op, x, dtype)
    head = run_unary(_ops, op, x[:1000], dtype)
    np.testing.assert_array_equal(got[:1000], head)
    np.testing.assert_allclose(got, run_unary(_reference, op, x, dtype),
                               rtol=1e-6 if dtype == np.float32 else 3e-13,
                               atol=2e-45 if dtype == np.float32 else 1e-300)


# ---------------------------------------------------------------- gelu gradient
def run_grad(impl, v, dy, dtype, req=1, dx=None):
    v = np.ascontiguousarray(v, dtype=dtype)
    dy = np.ascontiguousarray(dy, dtype=dtype)
    dx = np.zeros_like(v) if dx is None else np.array(dx, dtype=dtype)
    assert impl.grad_np(GRAD_OPS['gelu'], v, dy, dx, req) is dx
    return dx


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('req', [1, 2])
def test_gelu_gradient(impl, dtype, req):
    x = np.concatenate([np.linspace(-12, 12, 997), [0.0, -0.0, 1e-20, 40, -40]])
    dy = np.linspace(0.5, 2, x.size)
    prior = np.full(x.size, 0.25)
    got = run_grad(impl, x, dy, dtype, req, prior if req == 2 else None)
    d = ndtr(x) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
    expected = dy * d + (prior if req == 2 else 0)
    np.testing.assert_allclose(got, expected.astype(dtype),
                               rtol=6e-7 if dtype == np.float32 else 1e-13,
                               atol=6e-7 if dtype == np.float32 else 1e-15)


def test_gelu_gradient_matches_central_differences():
    x = np.linspace(-6, 6, 1001)
    h = 1e-6
    fd = (run_unary(_ops, 'gelu', x + h, np.float64)
          - run_unary(_ops, 'gelu', x - h, np.float64)) / (2 * h)
    got = run_grad(_ops, x, np.ones_like(x), np.float64)
    np.testing.assert_allclose(got, fd, atol=1e-8)


# ---------------------------------------------------------------- softsign (plain loops)
@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('req', [1, 2])
def test_softsign_forward_and_gradient_from_the_output(impl, dtype, req):
    # (softsign(±inf) is NaN, as MXNet's x / (1 + |x|))
    x = np.concatenate([np.linspace(-50, 50, 1001), [0.0, -0.0, 1e-30, 3e38]])
    y = run_unary(impl, 'softsign', x, dtype)
    np.testing.assert_allclose(y, (x / (1 + np.abs(x))).astype(dtype),
                               rtol=1e-7 if dtype == np.float32 else 1e-15)
    dy = np.linspace(-2, 2, x.size).astype(dtype)
    prior = np.full(x.size, 0.5, dtype)
    dx = prior.copy() if req == 2 else np.zeros_like(y)
    assert impl.grad_np(GRAD_OPS['softsign_y'], y, dy, dx, req) is dx
    expected = dy / (1 + np.abs(x)) ** 2 + (prior if req == 2 else 0)
    # float32: 1 - |y| from a rounded y near ±1 keeps ~5 digits (so does MXNet's)
    np.testing.assert_allclose(dx, expected.astype(dtype), rtol=1e-5 if dtype == np.float32
                               else 1e-12, atol=1e-30)
