"""NDArray arithmetic, comparisons, broadcasting and in-place ops (MXNet 1.x semantics).

MXNet 1.x contract pinned here:
* `+ - * / % **` with arrays or scalars, reversed forms (`2 - a`, `2 / a`, `2 ** a`);
  a scalar is cast to the array's dtype first (`DType(scalar)`: int32 array * 1.5 is * 1);
* comparisons return the operands' dtype holding 1 or 0;
* broadcasting follows NumPy's rules, different ndim included (`BinaryBroadcastShape`);
* no dtype promotion: mixed dtypes raise (MXNet failed type inference; here TypeError);
* integer division truncates toward zero (C `/`, `mshadow_op::div`), NumPy floors;
  modulo takes the divisor's sign (`mshadow_op::mod`, as Python);
* integer division by zero raises ZeroDivisionError at the next wait (MXNet crashed);
* `+= -= *= /= %=` write into the array itself, views included;
* float16 has no C kernel: it runs through `mxcy._reference` (NumPy) in a Python op.
"""
import operator

import numpy as np
import pytest

import mxcy as mx
from mxcy import _reference
from mxcy._ndarray import unary
from mxcy._ops import UNARY_OPS

DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int32, np.int64]
INT_DTYPES = [np.int8, np.uint8, np.int32, np.int64]
SIZES = [7, 20000]         # both sides of the engine's 16384-element inline limit




def operands(dtype, n, seed=0):
    """Two arrays without zeros in the divisor, small enough not to overflow any dtype."""
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        lo = 0 if dtype == np.uint8 else -10
        x = rng.integers(lo, 11, n).astype(dtype)
        y = rng.integers(1, 6, n).astype(dtype)
        if dtype != np.uint8:
            y = np.where(rng.random(n) < 0.5, -y, y).astype(dtype)
    else:
        x = rng.uniform(-4, 4, n).astype(dtype)
        y = rng.uniform(0.5, 3, n).astype(dtype) * np.where(rng.random(n) < 0.5, -1, 1)
        y = y.astype(dtype)
    return x, y


def mx_expected(op, x, y, dtype):
    """MXNet 1.x's result of x OP y in `dtype`, written out with NumPy."""
    is_int = np.issubdtype(dtype, np.integer)
    xf, yf = np.float64(x) if np.isscalar(x) else x.astype(np.float64), \
        np.float64(y) if np.isscalar(y) else y.astype(np.float64)
    with np.errstate(all='ignore'):
        if op == '/':
            r = np.trunc(xf / yf) if is_int else xf / yf
        elif op == '%':
            r = np.mod(xf, yf)
        elif op == '**':
            r = np.power(xf, yf)
        else:
            r = {'+': np.add, '-': np.subtract, '*': np.multiply}[op](xf, yf)
    if is_int:
        r = np.asarray(r).astype(np.int64)          # int64 -> narrower ints wraps like C
    return np.asarray(r).astype(dtype)


OPS = {'+': operator.add, '-': operator.sub, '*': operator.mul, '/': operator.truediv,
       '%': operator.mod, '**': operator.pow}
IOPS = {'+': operator.iadd, '-': operator.isub, '*': operator.imul, '/': operator.itruediv,
        '%': operator.imod}


def check(got, expected, dtype):
    assert got.dtype == dtype
    assert got.shape == expected.shape
    if dtype == np.float16:
        np.testing.assert_allclose(got.asnumpy().astype(np.float32),
                                   expected.astype(np.float32), rtol=2e-3, atol=2e-3)
    elif np.issubdtype(dtype, np.floating):
        np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-6 if dtype == np.float32
                                   else 1e-13, atol=1e-6)
    else:
        np.testing.assert_array_equal(got.asnumpy(), expected)


# ---------------------------------------------------------------- array OP array
@pytest.mark.parametrize('n', SIZES)
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('op', ['+', '-', '*', '/', '%'])
def test_array_op_array(op, dtype, n):
    x, y = operands(dtype, n)
    got = OPS[op](mx.nd.array(x, dtype=dtype), mx.nd.array(y, dtype=dtype))
    check(got, mx_expected(op, x, y, dtype), dtype)


@pytest.mark.parametrize('dtype', DTYPES)
def test_array_power_array(dtype):
    x = np.array([0, 1, 2, 3, 2, 5], dtype=dtype)
    y = np.array([3, 2, 0, 2, 5, 1], dtype=dtype)
    got = mx.nd.array(x, dtype=dtype) ** mx.nd.array(y, dtype=dtype)
    check(got, mx_expected('**', x, y, dtype), dtype)


def test_float_power_with_fractional_exponents():
    x = np.array([0.25, 4.0, 9.0, 2.0], dtype=np.float32)
    got = mx.nd.array(x) ** mx.nd.array([0.5, 0.5, -0.5, 1.5])
    np.testing.assert_allclose(got.asnumpy(), [0.5, 2.0, 1 / 3, 2 ** 1.5], rtol=1e-6)


# ---------------------------------------------------------------- scalars, reversed forms
@pytest.mark.parametrize('n', SIZES)
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('op', ['+', '-', '*', '/', '%', '**'])
def test_array_op_scalar_and_scalar_op_array(op, dtype, n):
    x, y = operands(dtype, n, seed=1)
    if op == '**':
        x = np.abs(x) % 4
    scalar = 3
    a = mx.nd.array(x, dtype=dtype)
    check(OPS[op](a, scalar), mx_expected(op, x, np.full(n, scalar, dtype), dtype), dtype)
    base = np.abs(y).astype(dtype)                 # nonzero: the divisor of `3 / a`
    b = mx.nd.array(base, dtype=dtype)
    if op == '**':
        b = mx.nd.array(x, dtype=dtype)
        base = x
    check(OPS[op](scalar, b), mx_expected(op, np.full(n, scalar, dtype), base, dtype), dtype)


def test_reversed_forms_small_values():
    a = mx.nd.array([1, 2, 4])
    np.testing.assert_allclose((2 - a).asnumpy(), [1, 0, -2])
    np.testing.assert_allclose((2 / a).asnumpy(), [2, 1, 0.5])
    np.testing.assert_allclose((2 ** a).asnumpy(), [2, 4, 16])
    np.testing.assert_allclose((5 % a).asnumpy(), [0, 1, 1])
    np.testing.assert_allclose((2 + a).asnumpy(), [3, 4, 6])
    np.testing.assert_allclose((2 * a).asnumpy(), [2, 4, 8])


def test_numpy_scalars_on_either_side_give_ndarrays():
    a = mx.nd.array([1, 2])
    for r in (np.float32(2) * a, a * np.float64(2), np.int64(2) * a, 2.0 * a):
        assert isinstance(r, mx.nd.NDArray) and r.dtype == np.float32
        np.testing.assert_array_equal(r.asnumpy(), [2, 4])


def test_scalar_is_cast_to_the_array_dtype_first_like_mxnet():
    # MXNet's _plus_scalar/_mul_scalar/_div_scalar use DType(scalar)
    a = mx.nd.array([10, -10, 7], dtype='int32')
    np.testing.assert_array_equal((a * 1.5).asnumpy(), [10, -10, 7])
    np.testing.assert_array_equal((a / 2.5).asnumpy(), [5, -5, 3])
    np.testing.assert_array_equal((a + 0.9).asnumpy(), [10, -10, 7])
    np.testing.assert_array_equal((a - -1.9).asnumpy(), [11, -9, 8])
    assert (a * 1.5).dtype == np.int32


def test_bool_scalar_counts_as_int():
    np.testing.assert_array_equal((mx.nd.array([1, 2]) + True).asnumpy(), [2, 3])


@pytest.mark.parametrize('bad', ['x', None, object(), 1j])
def test_unsupported_operand_raises_typeerror(bad):
    a = mx.nd.array([1, 2])
    with pytest.raises(TypeError):
        a + bad
    with pytest.raises(TypeError):
        bad * a


@pytest.mark.parametrize('dtype', [np.float32, np.float16, np.int32])
def test_zero_size_operands(dtype):
    z = mx.nd.zeros((0, 3), dtype=dtype)
    for got in (z + 1, z + z, z * mx.nd.ones((3,), dtype=dtype), -z, 2 - z, z > 0):
        assert got.shape == (0, 3) and got.dtype == dtype
        assert got.asnumpy().shape == (0, 3)


# ---------------------------------------------------------------- unary
@pytest.mark.parametrize('n', SIZES)
@pytest.mark.parametrize('dtype', DTYPES)
def test_negative_abs_and_pos(dtype, n):
    x, _ = operands(dtype, n, seed=2)
    a = mx.nd.array(x, dtype=dtype)
    with np.errstate(over='ignore'):
        check(-a, np.negative(x), dtype)
    check(abs(a), np.abs(x), dtype)
    assert +a is a


def test_unary_minus_wraps_for_unsigned_like_c():
    np.testing.assert_array_equal((-mx.nd.array([1, 0], dtype='uint8')).asnumpy(), [255, 0])


# ---------------------------------------------------------------- comparisons
CMP = {'==': operator.eq, '!=': operator.ne, '>': operator.gt, '>=': operator.ge,
       '<': operator.lt, '<=': operator.le}


@pytest.mark.parametrize('n', SIZES)
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('op', list(CMP))
def test_comparisons_return_same_dtype_ones_and_zeros(op, dtype, n):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, n).astype(dtype)
    y = rng.integers(0, 4, n).astype(dtype)
    a, b = mx.nd.array(x, dtype=dtype), mx.nd.array(y, dtype=dtype)
    for got, expected in ((CMP[op](a, b), CMP[op](x, y)), (CMP[op](a, 2), CMP[op](x, 2)),
                          (CMP[op](2, a), CMP[op](2, x))):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.asnumpy(), expected.astype(dtype))


def test_comparison_with_none_is_python_identity():
    a = mx.nd.array([1])
    assert (a == None) is False       # noqa: E711
    assert (a != None) is True        # noqa: E711


# ---------------------------------------------------------------- broadcasting
@pytest.mark.parametrize('xs, ys', [
    ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 1, 4), (3, 1)),
    ((1,), (2, 3)), ((4, 1, 1), (1, 5, 1)), ((2, 3, 4), (4,)), ((3, 1), (1, 3)),
    ((2, 0, 3), (1, 3)), ((5, 1, 3, 1, 2), (3, 4, 2)), ((200, 100), (100,)),
    ((1, 1), (120, 150)),
])
@pytest.mark.parametrize('dtype', [np.float32, np.float64, np.float16, np.int32, np.uint8])
def test_broadcasting_follows_numpy_rules(xs, ys, dtype):
    rng = np.random.default_rng(4)
    x = rng.integers(1, 5, xs).astype(dtype)
    y = rng.integers(1, 5, ys).astype(dtype)
    a, b = mx.nd.array(x, dtype=dtype), mx.nd.array(y, dtype=dtype)
    for op in ('+', '-', '*', '/', '%'):
        check(OPS[op](a, b), mx_expected(op, x, y, dtype), dtype)
        check(OPS[op](b, a), mx_expected(op, y, x, dtype), dtype)
    got = a > b
    np.testing.assert_array_equal(got.asnumpy(), (x > y).astype(dtype))


@pytest.mark.parametrize('xs, ys', [((2, 3), (2,)), ((2, 3), (3, 2)), ((4, 1, 3), (2, 4))])
def test_incompatible_shapes_raise_naming_both(xs, ys):
    with pytest.raises(ValueError, match=rf'{xs}.*{ys}'.replace('(', r'\(').replace(')', r'\)')):
        mx.nd.zeros(xs) + mx.nd.zeros(ys)


def test_mixed_dtypes_raise_typeerror_naming_both():
    a = mx.nd.ones((2,))
    b = mx.nd.ones((2,), dtype='int32')
    for fn in (operator.add, operator.sub, operator.mul, operator.truediv, operator.mod,
               operator.pow, operator.gt, operator.eq):
        with pytest.raises(TypeError, match='float32.*int32'):
            fn(a, b)
    with pytest.raises(TypeError, match='int32.*float32'):
        b + a
    with pytest.raises(TypeError, match='astype'):
        a += b
    np.testing.assert_array_equal(a.asnumpy(), 1)


# ---------------------------------------------------------------- integer semantics
def test_integer_division_truncates_toward_zero_unlike_numpy():
    # MXNet 1.x mshadow_op::div on ints is C's `/`; NumPy's floor division gives -4 / -4.
    a = mx.nd.array([-7, 7, -7, 7, 6, -1], dtype='int32')
    b = mx.nd.array([2, -2, -2, 2, 4, 3], dtype='int32')
    np.testing.assert_array_equal((a / b).asnumpy(), [-3, -3, 3, 3, 1, 0])
    assert (np.array([-7]) // 2)[0] == -4                  # what NumPy would say
    np.testing.assert_array_equal((a / 2).asnumpy(), [-3, 3, -3, 3, 3, 0])
    np.testing.assert_array_equal((7 / mx.nd.array([-2, 2], dtype='int64')).asnumpy(), [-3, 3])


def test_modulo_takes_the_divisor_sign_like_mxnet_and_python():
    for dtype in ('int8', 'int32', 'int64', 'float32', 'float64', 'float16'):
        a = mx.nd.array([-7, 7, -7, 7, 6], dtype=dtype)
        b = mx.nd.array([3, -3, -3, 3, 3], dtype=dtype)
        np.testing.assert_array_equal((a % b).asnumpy(), [2, -2, -1, 1, 0])
        np.testing.assert_array_equal((a % 3).asnumpy(), [2, 1, 2, 1, 0])
    np.testing.assert_allclose((mx.nd.array([-5.5, 5.5]) % 2).asnumpy(), [0.5, 1.5])


def test_integer_overflow_wraps_like_c():
    np.testing.assert_array_equal((mx.nd.array([100], dtype='int8') + 100).asnumpy(), [-56])
    np.testing.assert_array_equal((mx.nd.array([1], dtype='uint8') - 2).asnumpy(), [255])
    big = mx.nd.array([2**62], dtype='int64')
    np.testing.assert_array_equal((big * 4).asnumpy(), [0])


def test_integer_power_truncates_negative_exponents():
    a = mx.nd.array([2, 3, 1], dtype='int32')
    np.testing.assert_array_equal((a ** 2).asnumpy(), [4, 9, 1])
    np.testing.assert_array_equal((2 ** a).asnumpy(), [4, 8, 2])
    np.testing.assert_array_equal((a ** -1).asnumpy(), [0, 0, 1])


@pytest.mark.parametrize('n', SIZES)
@pytest.mark.parametrize('dtype', INT_DTYPES)
@pytest.mark.parametrize('make', [
    lambda a, z: a / z, lambda a, z: a / 0, lambda a, z: a % z, lambda a, z: 5 / z,
], ids=['div_array', 'div_scalar', 'mod_array', 'rdiv'])
def test_integer_division_by_zero_raises_at_the_next_wait(make, dtype, n):
    # MXNet 1.x crashed (SIGFPE) on integer division by zero; mxcy keeps the error and
    # raises it, as ZeroDivisionError, at the next wait -- not at the call.
    a = mx.nd.ones((n,), dtype=dtype)
    z = mx.nd.zeros((n,), dtype=dtype)
    bad = make(a, z)                       # no exception here
    downstream = bad + 1                   # skipped by the engine, inherits the error
    with pytest.raises(ZeroDivisionError):
        bad.asnumpy()
    with pytest.raises(ZeroDivisionError):
        downstream.wait_to_read()
    with pytest.raises(ZeroDivisionError):
        mx.nd.waitall()
    np.testing.assert_array_equal((a + a).asnumpy(), 2)      # the engine goes on working


def test_float_division_by_zero_gives_inf_and_nan_without_error():
    with np.errstate(all='ignore'):
        got = (mx.nd.array([1, -1, 0]) / 0).asnumpy()
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])


def test_float_modulo_by_zero_is_nan_not_a_silent_zero():
    # MXNet 1.x's mshadow_op::mod returns 0 here, which hides the bad divisor; mxcy
    # follows IEEE/NumPy (NaN) for floats and raises ZeroDivisionError for integers
    out = (mx.nd.array([5, -5]) % 0).asnumpy()
    assert np.isnan(out).all()


# ---------------------------------------------------------------- in place
@pytest.mark.parametrize('n', SIZES)
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('op', list(IOPS))
def test_inplace_ops_write_into_the_array_itself(op, dtype, n):
    x, y = operands(dtype, n, seed=5)
    a = mx.nd.array(x, dtype=dtype)
    alias = a
    before = id(a)
    a = IOPS[op](a, mx.nd.array(y, dtype=dtype))
    assert id(a) == before and a is alias
    check(alias, mx_expected(op, x, y, dtype), dtype)
    a = IOPS[op](a, 2)
    assert a is alias
    check(alias, mx_expected(op, mx_expected(op, x, y, dtype), np.full(n, 2, dtype), dtype),
          dtype)


@pytest.mark.parametrize('op', list(IOPS))
def test_inplace_on_a_view_changes_the_base(op):
    base = mx.nd.array(np.arange(1, 13).reshape(3, 4))
    ref = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    row = base[1]
    IOPS[op](row, 2)
    IOPS[op](ref[1], np.float32(2))
    np.testing.assert_allclose(base.asnumpy(), ref)
    chunk = base[1:3].reshape(2, 2, 2)
    IOPS[op](chunk, mx.nd.array([[1, 2], [3, 4]]))
    IOPS[op](ref[1:3].reshape(2, 2, 2), np.array([[1, 2], [3, 4]], np.float32))
    np.testing.assert_allclose(base.asnumpy(), ref, rtol=1e-6)


@pytest.mark.parametrize('dtype', [np.float32, np.float16, np.int64])
@pytest.mark.parametrize('n', [3, 30000])
def test_inplace_with_broadcast_rhs(dtype, n):
    a = mx.nd.ones((2, n), dtype=dtype)
    rhs = (np.arange(n) % 50).astype(dtype)
    a += mx.nd.array(rhs, dtype=dtype)
    a *= mx.nd.array([[2], [3]], dtype=dtype)
    expected = (1 + rhs.astype(np.float64)) * np.array([[2], [3]])
    check(a, expected.astype(dtype), dtype)


@pytest.mark.parametrize('op', list(IOPS))
def test_inplace_whose_result_would_not_fit_raises_and_writes_nothing(op):
    a = mx.nd.ones((3,))
    with pytest.raises(ValueError, match=r'\(2, 3\).*\(3,\)'):
        IOPS[op](a, mx.nd.ones((2, 3)))
    with pytest.raises(ValueError, match=r'\(4,\)'):
        IOPS[op](a, mx.nd.ones((4,)))
    np.testing.assert_array_equal(a.asnumpy(), 1)


def test_many_inplace_ops_keep_push_order():
    a = mx.nd.zeros((20000,))
    b = mx.nd.zeros((5,))
    for i in range(50):
        a += i
        a *= 1 if i % 2 else 1          # read-modify-write chain on one variable
        b -= 1
    np.testing.assert_array_equal(a.asnumpy(), sum(range(50)))
    np.testing.assert_array_equal(b.asnumpy(), -50)


def test_chained_expression_on_large_arrays():
    rng = np.random.default_rng(6)
    x, y, z = (rng.standard_normal((150, 150)).astype(np.float32) for _ in range(3))
    a, b, c = mx.nd.array(x), mx.nd.array(y), mx.nd.array(z)
    got = ((a + b) * c - a / (abs(b) + 1)) ** 2
    expected = ((x + y) * z - x / (np.abs(y) + 1)) ** 2
    np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- float16 fallback
def test_float16_binary_and_unary_go_through_the_numpy_reference(monkeypatch):
    calls = []
    real_binary, real_unary = _reference.binary_np, _reference.unary_np

    def spy_binary(*args):
        calls.append('binary')
        return real_binary(*args)

    def spy_unary(*args):
        calls.append('unary')
        return real_unary(*args)
    monkeypatch.setattr(_reference, 'binary_np', spy_binary)
    monkeypatch.setattr(_reference, 'unary_np', spy_unary)
    a = mx.nd.array([1, 2], dtype='float16')
    np.testing.assert_array_equal((a + a).asnumpy(), [2, 4])
    np.testing.assert_array_equal((-a).asnumpy(), [-1, -2])
    assert calls == ['binary', 'unary']
    calls.clear()
    np.testing.assert_array_equal((mx.nd.array([1, 2]) + 1).asnumpy(), [2, 3])
    assert calls == []                          # float32 takes the C kernel


@pytest.mark.parametrize('n', SIZES)
def test_float16_fallback_covers_every_form(n):
    x, y = operands(np.float16, n, seed=7)
    a, b = mx.nd.array(x, dtype='float16'), mx.nd.array(y, dtype='float16')
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    for op in ('+', '-', '*', '/', '%'):
        check(OPS[op](a, b), OPS[op](x32, y32).astype(np.float16), np.float16)
        check(OPS[op](a, 2), OPS[op](x32, np.float32(2)).astype(np.float16), np.float16)
        check(OPS[op](2, b), OPS[op](np.float32(2), y32).astype(np.float16), np.float16)
    check(a ** 2, (x32 ** 2).astype(np.float16), np.float16)
    check(2 ** a, (2 ** x32).astype(np.float16), np.float16)
    check(a > b, (x > y).astype(np.float16), np.float16)
    check(abs(a), np.abs(x), np.float16)
    row = mx.nd.array(y[:1], dtype='float16')
    check(a.reshape(1, n) - row, (x32 - y32[:1]).astype(np.float16).reshape(1, n), np.float16)
    c = a.copy()
    c += b
    c %= 3
    check(c, ((x + y).astype(np.float32) % 3).astype(np.float16), np.float16)


def test_float16_round_halves_away_from_zero_like_the_c_kernel():
    # C's round (and MXNet's mshadow_op::round) rounds 0.5 to 1 and 2.5 to 3; numpy.round
    # rounds halves to even, which the float16 fallback used before.
    values = [0.5, 1.5, 2.5, -0.5, -2.5, 1.25]
    expected = [1, 2, 3, -1, -3, 1]
    for dtype in ('float16', 'float32', 'float64'):
        got = unary(mx.nd.array(values, dtype=dtype), UNARY_OPS['round'])
        np.testing.assert_array_equal(got.asnumpy(), expected)


def test_float16_integer_valued_results_are_exact():
    a = mx.nd.arange(0, 2048, dtype='float16')
    np.testing.assert_array_equal((a + 1).asnumpy(), np.arange(1, 2049, dtype=np.float16))
