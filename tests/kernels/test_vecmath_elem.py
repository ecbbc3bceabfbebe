"""The loops of mxcy/_vecmath_elem.h through the kernel twins (`unary_np`, `binary_np`,
`grad_np`): float32 sin, cos, log, pow and hypot computed in double (within 0.51 ulp of the
float64 truth), sqrt, and the gradient factors of square, sqrt, log and exp, against NumPy;
special values as libm; every length and offset, in place, both dtypes.

float32 gelu and softrelu (computed in float32) are in test_vecmath_act.py.
"""
import numpy as np
import pytest

from mxcy import _ops, _reference
from mxcy._ops import BINARY_OPS, GRAD_OPS, UNARY_OPS

IMPLS = [pytest.param(_reference, id='reference'), pytest.param(_ops, id='cython')]


def ulps(got, truth):
    rounded = truth.astype(np.float32)
    spacing = np.maximum(np.spacing(np.abs(rounded)), np.finfo(np.float32).smallest_subnormal)
    return np.abs(got.astype(np.float64) - truth) / spacing.astype(np.float64)


def unary(impl, op, x, dtype=np.float32):
    x = np.ascontiguousarray(x, dtype=dtype)
    out = np.empty_like(x)
    assert impl.unary_np(UNARY_OPS[op], x, out) is out
    return out


def binary(op, x, y, dtype=np.float32):
    x = np.ascontiguousarray(x, dtype=dtype)
    y = np.ascontiguousarray(y, dtype=dtype) if isinstance(y, np.ndarray) else y
    out = np.empty_like(x)
    return _ops.binary_np(BINARY_OPS[op], x, y, out)


def trig_inputs():
    rng = np.random.default_rng(5)
    return np.concatenate([np.linspace(-70000, 70000, 400_001), rng.uniform(-10, 10, 100_000),
                           np.geomspace(1e-38, 1, 2000), -np.geomspace(1e-38, 1, 2000),
                           np.arange(-200, 200) * (np.pi / 2)]).astype(np.float32)


# ---------------------------------------------------------------- sin, cos, log, sqrt
@pytest.mark.parametrize('op, ref', [('sin', np.sin), ('cos', np.cos)])
def test_sin_cos_float32_rounded_once(op, ref):
    # |x| <= 65536 by the vector loop; beyond it (and inf/NaN) through libm: both checked
    x = trig_inputs()
    assert ulps(unary(_ops, op, x), ref(x.astype(np.float64))).max() <= 0.51


def test_log_float32_rounded_once_down_to_the_subnormals():
    x = np.concatenate([np.geomspace(1e-45, 3e38, 300_001),
                        np.random.default_rng(6).uniform(0.5, 2, 100_000)]).astype(np.float32)
    assert ulps(unary(_ops, 'log', x), np.log(x.astype(np.float64))).max() <= 0.51


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_special_values_as_libm(impl, dtype):
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, -1.0, 1e30, 65537.0, 1.0], dtype)
    with np.errstate(all='ignore'):
        for op, ref in (('sin', np.sin), ('cos', np.cos), ('log', np.log),
                        ('sqrt', np.sqrt)):
            got = unary(impl, op, x, dtype)
            want = ref(x.astype(np.float64)).astype(dtype)
            np.testing.assert_array_equal(got, want, err_msg=op)
            signed = ~np.isnan(want)        # (the sign of a NaN is not specified)
            np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]),
                                          err_msg=op)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('op, ref, lo, hi', [('sin', np.sin, -1e5, 1e5),
                                             ('cos', np.cos, -1e5, 1e5),
                                             ('log', np.log, 1e-3, 1e5),
                                             ('sqrt', np.sqrt, 0, 1e5)])
def test_every_length_offset_and_in_place(dtype, op, ref, lo, hi):
    # lengths around the 256-element blocks of the libm pass, with inputs that need it
    base = np.random.default_rng(7).uniform(lo, hi, 700).astype(dtype)
    base[::97] = [np.nan, -1.0, 0.0, np.inf, 7e4, -7e4, 1.0, 2.0][:base[::97].size]
    rtol = 1.2e-7 if dtype == np.float32 else 1e-15
    with np.errstate(all='ignore'):
        for start in range(3):
            for n in (0, 1, 7, 255, 256, 257, 511, 513, 600):
                x = np.ascontiguousarray(base[start:start + n])
                want = ref(x.astype(np.float64)).astype(dtype)
                np.testing.assert_allclose(unary(_ops, op, x, dtype), want, rtol=rtol)
                _ops.unary_np(UNARY_OPS[op], x, x)
                np.testing.assert_allclose(x, want, rtol=rtol)


def test_parallel_parts_match_one_pass():
    # 2^18 elements and more are split between workers
    x = np.random.default_rng(8).uniform(-1e4, 1e4, (1 << 18) + 37).astype(np.float32)
    for op in ('sin', 'cos'):
        got = unary(_ops, op, x)
        np.testing.assert_array_equal(got[:1000], unary(_ops, op, x[:1000]))
        assert ulps(got, getattr(np, op)(x.astype(np.float64))).max() <= 0.51


# ---------------------------------------------------------------- pow, hypot
def test_pow_float32_rounded_once():
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.uniform(0, 10, 300_000), np.geomspace(1e-40, 1e38, 1000)])
    y = np.concatenate([rng.uniform(-30, 30, 300_000), rng.uniform(-3, 3, 1000)])
    x, y = x.astype(np.float32), y.astype(np.float32)
    truth = np.power(x.astype(np.float64), y.astype(np.float64))
    got = binary('power', x, y)
    finite = np.abs(truth) < np.finfo(np.float32).max
    assert ulps(got[finite], truth[finite]).max() <= 0.51
    assert np.isinf(got[~finite]).all()
    # one exponent for all (the scalar form and a broadcast row); (0.51: exp(y log x) is
    # carried to 2^-31, so a value within 1e-9 of a tie between two floats may round
    # either way)
    truth = np.power(x.astype(np.float64), 2.5)
    finite = truth < np.finfo(np.float32).max
    assert ulps(binary('power', x, 2.5)[finite], truth[finite]).max() <= 0.51


def test_pow_special_values_as_libm():
    x = np.array([0, -0.0, -2, -2, np.inf, -np.inf, 2, np.nan, 1, 0, -0.0, 0.5, 3e38, 1e-45],
                 np.float32)
    y = np.array([2, 3, 3, 0.5, -1, 3, np.inf, 0, np.nan, -1, -3, -np.inf, 2, 0.5],
                 np.float32)
    with np.errstate(all='ignore'):
        want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    got = binary('power', x, y)
    np.testing.assert_array_equal(got, want)
    signed = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]))


def test_hypot_float32_exact_before_one_rounding():
    rng = np.random.default_rng(10)
    x = (rng.standard_normal(200_000) * 10.0 ** rng.uniform(-30, 30, 200_000)).astype(
        np.float32)
    y = (rng.standard_normal(200_000) * 10.0 ** rng.uniform(-30, 30, 200_000)).astype(
        np.float32)
    truth = np.hypot(x.astype(np.float64), y.astype(np.float64))
    assert ulps(binary('hypot', x, y), truth).max() <= 0.51
    special = binary('hypot', np.array([np.inf, np.nan, -np.inf, 3e38], np.float32),
                     np.array([np.nan, -np.inf, 1, 3e38], np.float32))
    np.testing.assert_array_equal(special, [np.inf, np.inf, np.inf, np.inf])


@pytest.mark.parametrize('op, ref', [('power', np.power), ('hypot', np.hypot)])
def test_binary_lengths_and_in_place(op, ref):
    rng = np.random.default_rng(11)
    xs = rng.uniform(0.1, 5, 700).astype(np.float32)
    ys = rng.uniform(-4, 4, 700).astype(np.float32)
    xs[::101] = -1.5            # libm pass for pow (negative base, fractional exponent)
    with np.errstate(all='ignore'):
        for n in (0, 1, 9, 255, 256, 257, 700):
            x, y = xs[:n].copy(), ys[:n].copy()
            want = ref(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
            np.testing.assert_allclose(binary(op, x, y), want, rtol=1.2e-7)
            _ops.binary_np(BINARY_OPS[op], x, y, x)
            np.testing.assert_allclose(x, want, rtol=1.2e-7)


# ---------------------------------------------------------------- gradient loops
@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('req', [1, 2])
@pytest.mark.parametrize('op, factor', [('square', lambda v: 2 * v),
                                        ('sqrt', lambda v: 0.5 / v),
                                        ('log', lambda v: 1 / v), ('exp', lambda v: v)])
def test_gradient_factors(impl, dtype, req, op, factor):
    rng = np.random.default_rng(12)
    for n in (0, 1, 5, 33, 1001):
        v = rng.uniform(0.1, 4, n).astype(dtype)
        dy = rng.uniform(-2, 2, n).astype(dtype)
        prior = rng.uniform(-1, 1, n).astype(dtype)
        dx = prior.copy() if req == 2 else np.zeros_like(v)
        assert impl.grad_np(GRAD_OPS[op], v, dy, dx, req) is dx
        want = (dy.astype(np.float64) * factor(v.astype(np.float64))).astype(dtype)
        if req == 2:
            want = want + prior
        np.testing.assert_allclose(dx, want, rtol=1.2e-7 if dtype == np.float32 else 1e-15)
