"""The elementwise and GEMM kernels of `mxcy._ops`, reached without the engine through
their `*_np` twins, and their pure-NumPy reference `mxcy._reference`.

Every semantic test runs against both implementations ([reference, cython]); a random
cross-check then compares them op by op and dtype by dtype. MXNet 1.x semantics:
integer `/` truncates toward zero (mshadow_op::div is C's `/`), `%` takes the divisor's
sign (mshadow_op::mod), comparisons give 1/0 in the operands' dtype, a scalar operand is
cast to the array dtype first, `round` rounds halves away from zero (C `round`).
mxcy's own choices: integer division or modulo by zero raises ZeroDivisionError; float
modulo by zero is NaN (NumPy; MXNet gave 0, see tests/ndarray/test_arith.py).
The broadcast loop (`binary_bcast`) is not reachable from the twin; tests/ndarray covers it.
"""
import math

import numpy as np
import pytest

from mxcy import _ops, _reference
from mxcy._ops import BINARY_OPS, UNARY_OPS

IMPLS = [pytest.param(_reference, id='reference'), pytest.param(_ops, id='cython')]
C_DTYPES = [np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64]
FLOAT_DTYPES = [np.float32, np.float64]
SIGNED_DTYPES = [np.float32, np.float64, np.int8, np.int32, np.int64]


def run_binary(impl, op, x, y, dtype):
    x = np.ascontiguousarray(x, dtype=dtype)
    if isinstance(y, (list, np.ndarray)):
        y = np.ascontiguousarray(y, dtype=dtype)
    out = np.empty_like(x)
    res = impl.binary_np(BINARY_OPS[op], x, y, out)
    assert res is out
    return out


def run_unary(impl, op, x, dtype):
    x = np.ascontiguousarray(x, dtype=dtype)
    out = np.empty_like(x)
    assert impl.unary_np(UNARY_OPS[op], x, out) is out
    return out


# ---------------------------------------------------------------- binary: known values
SIGNED_CASES = [
    # op, x, y, expected
    ('add', [1, -2, 0], [3, 4, -5], [4, 2, -5]),
    ('subtract', [1, -2, 0], [3, 4, -5], [-2, -6, 5]),
    ('multiply', [1, -2, 0], [3, 4, -5], [3, -8, 0]),
    ('maximum', [1, -2, 7], [3, -4, 7], [3, -2, 7]),
    ('minimum', [1, -2, 7], [3, -4, 7], [1, -4, 7]),
    ('equal', [1, 2, 3], [1, 0, 3], [1, 0, 1]),
    ('not_equal', [1, 2, 3], [1, 0, 3], [0, 1, 0]),
    ('greater', [1, 2, 3], [2, 2, 2], [0, 0, 1]),
    ('greater_equal', [1, 2, 3], [2, 2, 2], [0, 1, 1]),
    ('lesser', [1, 2, 3], [2, 2, 2], [1, 0, 0]),
    ('lesser_equal', [1, 2, 3], [2, 2, 2], [1, 1, 0]),
    ('modulo', [-7, 7, -7, 7, 6, 0], [3, -3, -3, 3, 3, 5], [2, -2, -1, 1, 0, 0]),
    ('power', [2, 3, 0, -2], [3, 2, 0, 3], [8, 9, 1, -8]),
    ('hypot', [3, 5, 0], [4, 12, 0], [5, 13, 0]),
    ('rsubtract', [1, 2], [5, -5], [4, -7]),             # y - x
    ('rmodulo', [3, -3], [-7, 7], [2, -2]),               # y % x
    ('rpower', [2, 3], [2, 2], [4, 8]),                   # y ** x
]


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', SIGNED_DTYPES)
@pytest.mark.parametrize('op, x, y, expected', SIGNED_CASES,
                         ids=[c[0] for c in SIGNED_CASES])
def test_binary_known_values(impl, dtype, op, x, y, expected):
    np.testing.assert_array_equal(run_binary(impl, op, x, y, dtype),
                                  np.array(expected, dtype=dtype))


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', [np.int8, np.int32, np.int64])
def test_integer_divide_truncates_toward_zero_unlike_numpy_floor(impl, dtype):
    x = [-7, 7, -7, 7, 0, 6, -1]
    y = [2, -2, -2, 2, 3, 4, 3]
    np.testing.assert_array_equal(run_binary(impl, 'divide', x, y, dtype),
                                  [-3, -3, 3, 3, 0, 1, 0])
    np.testing.assert_array_equal(run_binary(impl, 'rdivide', y, x, dtype),
                                  [-3, -3, 3, 3, 0, 1, 0])
    np.testing.assert_array_equal(run_binary(impl, 'divide', x, 2, dtype),
                                  [-3, 3, -3, 3, 0, 3, 0])


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
def test_float_divide_and_modulo(impl, dtype):
    np.testing.assert_array_equal(run_binary(impl, 'divide', [-7, 7, 1], [2, -2, 8], dtype),
                                  [-3.5, -3.5, 0.125])
    np.testing.assert_array_equal(run_binary(impl, 'modulo', [-5.5, 5.5, 5.5, -5.5],
                                             [2, -2, 2, -2], dtype), [0.5, -0.5, 1.5, -1.5])


@pytest.mark.parametrize('impl', IMPLS)
def test_unsigned_wraps_and_divides(impl):
    u8 = np.uint8
    np.testing.assert_array_equal(run_binary(impl, 'add', [250, 1], [10, 2], u8), [4, 3])
    np.testing.assert_array_equal(run_binary(impl, 'subtract', [3, 9], [5, 2], u8), [254, 7])
    np.testing.assert_array_equal(run_binary(impl, 'multiply', [16, 3], [16, 3], u8), [0, 9])
    np.testing.assert_array_equal(run_binary(impl, 'divide', [7, 255], [2, 16], u8), [3, 15])
    np.testing.assert_array_equal(run_binary(impl, 'modulo', [7, 255], [3, 16], u8), [1, 15])
    np.testing.assert_array_equal(run_binary(impl, 'greater', [7, 0], [3, 16], u8), [1, 0])


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', [np.int8, np.int32, np.int64])
def test_integer_min_divided_by_minus_one_wraps_and_modulo_is_zero(impl, dtype):
    lo = np.iinfo(dtype).min
    np.testing.assert_array_equal(run_binary(impl, 'divide', [lo, 6], [-1, -1], dtype),
                                  np.array([lo, -6], dtype=dtype))
    np.testing.assert_array_equal(run_binary(impl, 'modulo', [lo, 6], [-1, -1], dtype), [0, 0])


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', [np.int32, np.int64])
def test_integer_power_casts_the_double_result(impl, dtype):
    # (DType)pow((double)a, (double)b): 2 ** -1 = 0.5 truncates to 0
    np.testing.assert_array_equal(run_binary(impl, 'power', [2, 1, 4], [-1, -3, 0], dtype),
                                  [0, 1, 1])


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', SIGNED_DTYPES)
def test_scalar_operand_forms(impl, dtype):
    x = [-6, 1, 4]
    np.testing.assert_array_equal(run_binary(impl, 'add', x, 2, dtype), [-4, 3, 6])
    np.testing.assert_array_equal(run_binary(impl, 'rsubtract', x, 2, dtype), [8, 1, -2])
    np.testing.assert_array_equal(run_binary(impl, 'multiply', x, -3, dtype), [18, -3, -12])
    np.testing.assert_array_equal(run_binary(impl, 'modulo', x, 4, dtype), [2, 1, 0])
    np.testing.assert_array_equal(run_binary(impl, 'rmodulo', [3, -3, 4], 7, dtype),
                                  [1, -2, 3])
    np.testing.assert_array_equal(run_binary(impl, 'rpower', [0, 1, 3], 2, dtype), [1, 2, 8])
    np.testing.assert_array_equal(run_binary(impl, 'greater', x, 1, dtype), [0, 0, 1])


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', [np.int8, np.uint8, np.int32, np.int64])
def test_scalar_is_cast_to_the_integer_dtype_first(impl, dtype):
    # MXNet's DType(scalar): 2.9 becomes 2, so x * 2.9 == x * 2 and x / 2.9 == x / 2
    np.testing.assert_array_equal(run_binary(impl, 'multiply', [1, 5], 2.9, dtype), [2, 10])
    np.testing.assert_array_equal(run_binary(impl, 'divide', [7, 9], 2.9, dtype), [3, 4])
    np.testing.assert_array_equal(run_binary(impl, 'equal', [2, 3], 2.5, dtype), [1, 0])


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', [np.int8, np.uint8, np.int32, np.int64])
@pytest.mark.parametrize('op, y', [('divide', [1, 0, 2]), ('modulo', [1, 0, 2]),
                                   ('divide', 0), ('modulo', 0)])
def test_integer_division_or_modulo_by_zero_raises(impl, dtype, op, y):
    with pytest.raises(ZeroDivisionError):
        run_binary(impl, op, [1, 2, 3], y, dtype)


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', [np.int32, np.int64])
def test_integer_reversed_division_by_zero_raises(impl, dtype):
    with pytest.raises(ZeroDivisionError):
        run_binary(impl, 'rdivide', [1, 0], 5, dtype)
    with pytest.raises(ZeroDivisionError):
        run_binary(impl, 'rmodulo', [0, 1], 5, dtype)


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
def test_float_division_by_zero_is_ieee_and_modulo_by_zero_is_nan(impl, dtype):
    with np.errstate(all='ignore'):
        d = run_binary(impl, 'divide', [1, -1, 0], [0, 0, 0], dtype)
        m = run_binary(impl, 'modulo', [1, -1], [0, 0], dtype)
    assert d[0] == np.inf and d[1] == -np.inf and np.isnan(d[2])
    assert np.isnan(m).all()


# ---------------------------------------------------------------- binary: random cross-check
def random_operands(op, dtype, n=1000, seed=0):
    rng = np.random.default_rng(seed)
    is_int = np.issubdtype(dtype, np.integer)
    unsigned = dtype == np.uint8
    if op in ('power', 'rpower'):
        if is_int:
            base = rng.integers(0 if unsigned else -5, 6, n)
            exp = rng.integers(0, 4, n)
        else:
            base = rng.uniform(0.1, 3, n)
            exp = rng.uniform(-2, 2, n)
        return (base, exp) if op == 'power' else (exp, base)
    if is_int:
        x = rng.integers(0 if unsigned else -50, 51, n)
        y = rng.integers(1, 8, n) * (1 if unsigned else rng.choice([-1, 1], n))
    else:
        x = rng.uniform(-4, 4, n)
        y = rng.uniform(0.5, 3, n) * rng.choice([-1, 1], n)
        x[::7] = y[::7] * 2                      # exact multiples: modulo 0, equality
    if op.startswith('r') and op != 'rsubtract':
        x, y = y, x                               # the divisor is x for rdivide/rmodulo
    return x, y


def assert_same(got, expected, op, dtype):
    if op in ('power', 'rpower', 'hypot') and not np.issubdtype(dtype, np.integer):
        np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype == np.float32 else 1e-14)
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize('dtype', C_DTYPES)
@pytest.mark.parametrize('op', sorted(BINARY_OPS))
def test_cython_matches_reference_on_random_arrays(op, dtype):
    x, y = random_operands(op, dtype)
    assert_same(run_binary(_ops, op, x, y, dtype), run_binary(_reference, op, x, y, dtype),
                op, dtype)


@pytest.mark.parametrize('dtype', C_DTYPES)
@pytest.mark.parametrize('op', sorted(BINARY_OPS))
def test_cython_matches_reference_with_scalars(op, dtype):
    x, y = random_operands(op, dtype, seed=1)
    if op in ('power', 'rpower'):
        scalar = 2 if op == 'power' else 3
    else:
        scalar = 3.7 if np.issubdtype(dtype, np.floating) else 3
    arr = x                 # for rdivide/rmodulo random_operands made x the nonzero one
    assert_same(run_binary(_ops, op, arr, scalar, dtype),
                run_binary(_reference, op, arr, scalar, dtype), op, dtype)


@pytest.mark.parametrize('n', [0, 1, 16385])
def test_cython_binary_sizes(n):
    x = np.arange(n, dtype=np.float32)
    np.testing.assert_array_equal(run_binary(_ops, 'add', x, x, np.float32), 2 * x)


def test_reference_binary_broadcasts_like_numpy():
    # the float16 path of NDArray uses the reference with broadcast shapes
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    y = np.array([1, 2, 3], dtype=np.float16)
    out = np.empty((2, 3), dtype=np.float16)
    _reference.binary_np(BINARY_OPS['subtract'], x, y, out)
    np.testing.assert_array_equal(out, x - y)
    _reference.binary_np(BINARY_OPS['rdivide'], y, x[:, :1], out)     # x[:, :1] / y
    np.testing.assert_allclose(out, x[:, :1] / y, rtol=1e-3)


def test_cython_twin_needs_contiguous_arrays():
    x = np.arange(10, dtype=np.float32)[::2]
    with pytest.raises(ValueError, match='contiguous'):
        _ops.binary_np(BINARY_OPS['add'], x, 1.0, np.empty(5, np.float32))


def test_op_code_tables_are_complete_and_distinct():
    assert len(set(BINARY_OPS.values())) == len(BINARY_OPS) == 19
    assert len(set(UNARY_OPS.values())) == len(UNARY_OPS) == 28


# ---------------------------------------------------------------- unary
UNARY_CASES = [
    ('negative', [-2, 0, 3], [2, 0, -3]),
    ('abs', [-2, 0, 3], [2, 0, 3]),
    ('sign', [-2, 0, 3], [-1, 0, 1]),
    ('square', [-2, 0, 3], [4, 0, 9]),
    ('relu', [-2, 0, 3], [0, 0, 3]),
    ('sqrt', [4, 9, 0], [2, 3, 0]),
    ('rsqrt', [4, 0.25], [0.5, 2]),
    ('exp', [0, 1], [1, math.e]),
    ('log', [1, math.e], [0, 1]),
    ('sigmoid', [0, 100], [0.5, 1]),
    ('tanh', [0, 100], [0, 1]),
    ('floor', [-1.5, 1.5, 2], [-2, 1, 2]),
    ('ceil', [-1.5, 1.5, 2], [-1, 2, 2]),
    ('round', [0.5, 1.5, 2.5, -0.5, -2.5, 1.4], [1, 2, 3, -1, -3, 1]),
    ('trunc', [-1.7, 1.7, 0.2], [-1, 1, 0]),
    ('log1p', [0, math.e - 1], [0, 1]),
    ('expm1', [0, 1], [0, math.e - 1]),
    ('sin', [0, math.pi / 2], [0, 1]),
    ('cos', [0, math.pi], [1, -1]),
    ('tan', [0, math.pi / 4], [0, 1]),
    ('arctan', [0, 1], [0, math.pi / 4]),
    ('reciprocal', [4, -0.5], [0.25, -2]),
    ('softrelu', [0, 30, -30], [math.log(2), 30, math.exp(-30)]),
    ('softsign', [1, -3], [0.5, -0.75]),
    ('log2', [8, 0.5], [3, -1]),
    ('log10', [100, 0.001], [2, -3]),
    ('cbrt', [27, -8], [3, -2]),
]


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('op, x, expected', UNARY_CASES, ids=[c[0] for c in UNARY_CASES])
def test_unary_known_values(impl, dtype, op, x, expected):
    got = run_unary(impl, op, x, dtype)
    np.testing.assert_allclose(got, np.array(expected, dtype=dtype),
                               rtol=1e-6 if dtype == np.float32 else 1e-14, atol=1e-12)


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', [np.int8, np.int32, np.int64])
def test_unary_on_integers_computes_in_double_and_truncates(impl, dtype):
    np.testing.assert_array_equal(run_unary(impl, 'sqrt', [4, 5, 8], dtype), [2, 2, 2])
    np.testing.assert_array_equal(run_unary(impl, 'abs', [-3, 3], dtype), [3, 3])
    np.testing.assert_array_equal(run_unary(impl, 'sign', [-3, 0, 3], dtype), [-1, 0, 1])
    np.testing.assert_array_equal(run_unary(impl, 'relu', [-3, 0, 3], dtype), [0, 0, 3])
    np.testing.assert_array_equal(run_unary(impl, 'cbrt', [27, -9], dtype), [3, -2])
    np.testing.assert_array_equal(run_unary(impl, 'reciprocal', [1, 2, -1], dtype),
                                  [1, 0, -1])
    lo = np.iinfo(dtype).min
    np.testing.assert_array_equal(run_unary(impl, 'negative', [lo, 5], dtype),
                                  np.array([lo, -5], dtype=dtype))     # wraps like C


@pytest.mark.parametrize('impl', IMPLS)
def test_unary_on_uint8_wraps(impl):
    np.testing.assert_array_equal(run_unary(impl, 'negative', [1, 0], np.uint8), [255, 0])
    np.testing.assert_array_equal(run_unary(impl, 'square', [16, 3], np.uint8), [0, 9])


POSITIVE_ONLY = {'log', 'sqrt', 'rsqrt', 'log2', 'log10'}


@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('op', sorted(UNARY_OPS))
def test_cython_unary_matches_reference_on_random_arrays(op, dtype):
    rng = np.random.default_rng(2)
    lo = 0.05 if op in POSITIVE_ONLY else (-0.9 if op == 'log1p' else -3)
    x = rng.uniform(lo, 3, 999)
    x[:4] = [0.5, 1.5, 2.5, 2.0] if lo > 0 else [-0.5, 1.5, -2.5, 0.0]
    # float32 gelu is computed in float32 (within 8 ulp, test_vecmath_act.py)
    f32_rtol = 1e-6 if op == 'gelu' else 2e-7
    np.testing.assert_allclose(run_unary(_ops, op, x, dtype),
                               run_unary(_reference, op, x, dtype),
                               rtol=f32_rtol if dtype == np.float32 else 1e-14, atol=1e-30)


@pytest.mark.parametrize('dtype', [np.int8, np.uint8, np.int32, np.int64])
@pytest.mark.parametrize('op', ['negative', 'abs', 'sign', 'square', 'relu', 'floor', 'ceil',
                                'round', 'trunc', 'sqrt', 'cbrt', 'reciprocal'])
def test_cython_unary_matches_reference_on_integers(op, dtype):
    rng = np.random.default_rng(3)
    lo = 0 if op == 'sqrt' or dtype == np.uint8 else -11
    x = rng.integers(lo, 12, 500)
    if op == 'reciprocal':
        x[x == 0] = 1
    np.testing.assert_array_equal(run_unary(_ops, op, x, dtype),
                                  run_unary(_reference, op, x, dtype))


# ---------------------------------------------------------------- gemm
@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('trans_a', [False, True])
@pytest.mark.parametrize('trans_b', [False, True])
@pytest.mark.parametrize('m, k, n', [(3, 4, 5), (1, 1, 1), (17, 33, 9), (4, 0, 3), (1, 64, 1)])
def test_gemm_all_transposes(impl, dtype, trans_a, trans_b, m, k, n):
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    a_in = np.ascontiguousarray(a.T) if trans_a else a
    b_in = np.ascontiguousarray(b.T) if trans_b else b
    c = impl.gemm_np(a_in, b_in, trans_a, trans_b)
    assert c.shape == (m, n) and c.dtype == dtype
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64),
                               rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize('impl', IMPLS)
def test_gemm_known_product(impl):
    a = np.array([[1, 2], [3, 4]], dtype=np.float32)
    b = np.array([[5, 6], [7, 8]], dtype=np.float32)
    np.testing.assert_array_equal(impl.gemm_np(a, b), [[19, 22], [43, 50]])
    np.testing.assert_array_equal(impl.gemm_np(a, b, True, False), [[26, 30], [38, 44]])
    np.testing.assert_array_equal(impl.gemm_np(a, b, False, True), [[17, 23], [39, 53]])


@pytest.mark.parametrize('impl', IMPLS)
def test_gemm_rejects_integer_operands(impl):
    a = np.ones((2, 2), dtype=np.int32)
    with pytest.raises(ValueError, match='float32'):
        impl.gemm_np(a, a)
