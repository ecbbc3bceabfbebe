"""The elementwise operator table: every row's forward and gradient."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.operator import get_op
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 2, (3, 4))
Y = RNG.uniform(0.5, 2, (3, 4))

BINARY = {'_Plus': np.add, '_Minus': np.subtract, '_Mul': np.multiply, '_Div': np.divide,
          '_Power': np.power, '_Maximum': np.maximum, '_Minimum': np.minimum,
          '_Hypot': np.hypot}


@pytest.mark.parametrize('name', sorted(BINARY))
def test_binary_rows(name):
    check_op_forward(name, {}, [X, Y], [BINARY[name](X, Y)])
    check_op_backward(name, {}, [X, Y])


@pytest.mark.parametrize('name,ufunc', [('broadcast_add', np.add), ('broadcast_sub', np.subtract),
                                        ('broadcast_mul', np.multiply),
                                        ('broadcast_div', np.divide),
                                        ('broadcast_power', np.power),
                                        ('broadcast_maximum', np.maximum)])
@pytest.mark.parametrize('shapes', [((3, 4), (1, 4)), ((2, 1, 4), (3, 1)), ((3, 4), (3, 4))])
def test_broadcast_rows_sum_gradients_back(name, ufunc, shapes):
    a = RNG.uniform(0.5, 2, shapes[0])
    b = RNG.uniform(0.5, 2, shapes[1])
    check_op_forward(name, {}, [a, b], [ufunc(a, b)])
    check_op_backward(name, {}, [a, b])


SCALAR = {'_PlusScalar': lambda x, s: x + s, '_MinusScalar': lambda x, s: x - s,
          '_RMinusScalar': lambda x, s: s - x, '_MulScalar': lambda x, s: x * s,
          '_DivScalar': lambda x, s: x / s, '_RDivScalar': lambda x, s: s / x,
          '_PowerScalar': lambda x, s: x ** s, '_RPowerScalar': lambda x, s: s ** x,
          '_MaximumScalar': np.maximum, '_MinimumScalar': np.minimum}


@pytest.mark.parametrize('name', sorted(SCALAR))
def test_scalar_rows(name):
    check_op_forward(name, dict(scalar=1.3), [X], [SCALAR[name](X, 1.3)])
    check_op_backward(name, dict(scalar=1.3), [X])


UNARY = {'negative': np.negative, 'abs': np.abs, 'square': np.square, 'sqrt': np.sqrt,
         'rsqrt': lambda x: 1 / np.sqrt(x), 'cbrt': np.cbrt, 'exp': np.exp, 'log': np.log,
         'log2': np.log2, 'log10': np.log10, 'log1p': np.log1p, 'expm1': np.expm1,
         'relu': lambda x: np.maximum(x, 0), 'sigmoid': lambda x: 1 / (1 + np.exp(-x)),
         'tanh': np.tanh, 'softsign': lambda x: x / (1 + np.abs(x)),
         'reciprocal': np.reciprocal, 'sin': np.sin, 'cos': np.cos, 'tan': np.tan,
         'arctan': np.arctan}


@pytest.mark.parametrize('name', sorted(UNARY))
def test_unary_rows(name):
    check_op_forward(name, {}, [X], [UNARY[name](X)])
    check_op_backward(name, {}, [X])


@pytest.mark.parametrize('name', ['floor', 'ceil', 'sign', '_equal', '_greater'])
def test_rows_without_gradient_give_zero(name):
    spec = get_op(name)
    ins = [X, Y][:len(spec.arguments(spec.params.parse(name, {})))]
    p = spec.params.parse(name, {})
    nd_in = [mx.nd.array(a, dtype=np.float64) for a in ins]
    out = mx.nd.empty(X.shape, dtype=np.float64)
    spec.forward(p, True, ['write'], nd_in, [out], [])
    grads = [mx.nd.ones(X.shape, dtype=np.float64) for _ in ins]
    spec.backward(p, ['write'] * len(ins), [mx.nd.ones(X.shape, dtype=np.float64)], nd_in,
                  [out], grads, [])
    for g in grads:
        np.testing.assert_array_equal(g.asnumpy(), 0)


def test_symbol_arithmetic_uses_the_rows():
    a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    expr = (a * b + 2) / (a - 0.2) ** 2
    exe = expr.bind(mx.cpu(), {'a': mx.nd.array(X), 'b': mx.nd.array(Y)},
                    args_grad={'a': mx.nd.zeros(X.shape), 'b': mx.nd.zeros(X.shape)})
    out = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out, (X * Y + 2) / (X - 0.2) ** 2, rtol=1e-4)
    exe.backward(mx.nd.ones(X.shape))
    np.testing.assert_allclose(exe.grad_dict['b'].asnumpy(), X / (X - 0.2) ** 2, rtol=1e-4)


# Modulo, with values from MXNet 1.9.1: the result takes the divisor's sign (Python's %), and
# d(a % b)/da = 1, d(a % b)/db = -floor(a / b), d(s % a)/da = -floor(s / a), d(a % s)/da = 1.
MOD_A = np.array([[5.5, -5.5, 7.0, -7.0], [3.2, -3.2, 0.5, -0.5], [9.0, -9.0, 2.0, 1.0]])
MOD_B = np.array([[2.0, 2.0, -3.0, -3.0], [1.5, -1.5, 0.3, 0.3], [4.0, 4.0, -0.7, 0.7]])


def _bind_grads(expr, args, dtype, head=None):
    arrays = {k: mx.nd.array(v, dtype=dtype) for k, v in args.items()}
    grads = {k: mx.nd.full(v.shape, 7, dtype=dtype) for k, v in args.items()}
    exe = expr.bind(mx.cpu(), arrays, args_grad=grads)
    out = exe.forward(is_train=True)[0]
    exe.backward(mx.nd.array(np.ones(out.shape) if head is None else head, dtype=dtype))
    return out.asnumpy(), [grads[k].asnumpy() for k in sorted(args)]


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_mod_gradients_match_mxnet(dtype):
    a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    out, (ga, gb) = _bind_grads(a % b, {'a': MOD_A, 'b': MOD_B}, dtype)
    np.testing.assert_allclose(out, [[1.5, 0.5, -2, -1], [0.2, -0.2, 0.2, 0.1],
                                     [1, 3, -0.1, 0.3]], rtol=1e-5, atol=1e-6)
    minus_floor_ab = np.array([[-2, 3, 3, -2], [-2, -2, -1, 2], [-2, 3, 3, -1]])
    np.testing.assert_array_equal(ga, np.ones((3, 4)))
    np.testing.assert_array_equal(gb, minus_floor_ab)
    head = np.linspace(-2, 2, 12).reshape(3, 4)
    _, (ga, gb) = _bind_grads(a % b, {'a': MOD_A, 'b': MOD_B}, dtype, head)
    np.testing.assert_allclose(ga, head, rtol=1e-6)
    np.testing.assert_allclose(gb, head * minus_floor_ab, rtol=1e-6)
    # broadcast_mod sums each gradient back to its operand's shape
    _, (ga, gb) = _bind_grads(mx.sym.broadcast_mod(a, b), {'a': MOD_A, 'b': MOD_B[:1]}, dtype)
    np.testing.assert_array_equal(ga, np.ones((3, 4)))
    np.testing.assert_array_equal(gb, [[-7, 10, 5, -1]])
    _, (ga, gb) = _bind_grads(mx.sym.broadcast_mod(a, b),
                              {'a': MOD_A[:, :1], 'b': MOD_B.reshape(3, 1, 4)}, dtype)
    np.testing.assert_array_equal(ga, [[12], [12], [12]])
    # float32: 9 / 0.3f floors to 29, so MXNet gives -57 where float64 gives -58
    np.testing.assert_array_equal(gb.reshape(3, 4), [[-7, -7, 7, 7], [-11, 13, -57, -57],
                                                     [-3, -3, 26, -23]]
                                  if dtype == 'float32' else
                                  [[-7, -7, 7, 7], [-11, 13, -58, -58], [-3, -3, 26, -23]])


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('s,rmod_grad', [
    (2.5, [[0, 1, 0, 1], [0, 1, -5, 5], [0, 1, -1, -2]]),
    (-2.5, [[1, 0, 1, 0], [1, 0, 5, -5], [1, 0, 2, 3]]),
    (0.7, [[0, 1, 0, 1], [0, 1, -1, 2], [0, 1, 0, 0]])])
def test_mod_scalar_gradients_match_mxnet(dtype, s, rmod_grad):
    a = mx.sym.Variable('a')
    _, (ga,) = _bind_grads(a % s, {'a': MOD_A}, dtype)
    np.testing.assert_array_equal(ga, np.ones((3, 4)))
    _, (ga,) = _bind_grads(s % a, {'a': MOD_A}, dtype)
    np.testing.assert_array_equal(ga, rmod_grad)
    head = np.linspace(-2, 2, 12).reshape(3, 4)
    _, (ga,) = _bind_grads(s % a, {'a': MOD_A}, dtype, head)
    np.testing.assert_allclose(ga, head * np.array(rmod_grad), rtol=1e-6)
    if s == -2.5:
        out, _ = _bind_grads(s % a, {'a': MOD_A}, dtype)
        np.testing.assert_allclose(out, [[3, -2.5, 4.5, -2.5], [0.7, -2.5, 0, 0],
                                         [6.5, -2.5, 1.5, 0.5]], rtol=1e-5, atol=1e-6)


def test_mod_gradient_is_zero_for_integers():
    # MXNet 1.9.1 gives modulo no gradient for integer dtypes (int32 here), lhs and rhs alike
    a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    args = {'a': np.array([[7, -7, 7, -7]]), 'b': np.array([[2, 2, -2, -2]])}
    out, grads = _bind_grads(a % b, args, 'int32')
    np.testing.assert_array_equal(out, [[1, 1, -1, -1]])
    for g in grads + _bind_grads(3 % a, {'a': args['b']}, 'int32')[1]:
        np.testing.assert_array_equal(g, 0)


# ---------------------------------------------------------------- the vector kernels' dtypes
@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
@pytest.mark.parametrize('name, ref, lo, hi', [('sin', np.sin, -50, 50),
                                               ('cos', np.cos, -50, 50),
                                               ('log', np.log, 0.01, 50),
                                               ('sqrt', np.sqrt, 0, 50)])
@pytest.mark.parametrize('n', [0, 1, 257, 1001])
def test_vector_unary_rows_every_dtype_and_size(dtype, name, ref, lo, hi, n):
    x = RNG.uniform(lo, hi, n).astype(dtype)
    want = ref(x.astype(np.float64)).astype(dtype)
    tol = {'float16': 1e-3, 'float32': 1.2e-7, 'float64': 1e-15}[dtype]
    a = mx.nd.array(x, dtype=dtype)
    np.testing.assert_allclose(getattr(mx.nd, name)(a).asnumpy(), want, rtol=tol, atol=0)
    getattr(mx.nd, name)(a, out=a)                                  # in place
    np.testing.assert_allclose(a.asnumpy(), want, rtol=tol, atol=0)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('name', ['broadcast_power', 'broadcast_hypot'])
def test_power_hypot_broadcast_over_rows(dtype, name):
    a = RNG.uniform(0.1, 3, (7, 33)).astype(dtype)
    b = RNG.uniform(-3, 3, (7, 1)).astype(dtype)
    ref = np.power if name == 'broadcast_power' else np.hypot
    got = getattr(mx.nd, name)(mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype))
    want = ref(a.astype(np.float64), b.astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1.2e-7 if dtype == 'float32'
                               else 1e-15)


@pytest.mark.parametrize('name, fn', [('degrees', np.degrees), ('radians', np.radians)])
@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64', 'int32'])
def test_degrees_radians_match_numpy_bit_for_bit(name, fn, dtype):
    # float32/float64 by the multiply kernel with NumPy's constant (MXNet gives the same
    # bits as np.degrees); float16 and integers through NumPy in float64, truncated back
    x = RNG.uniform(-400, 400, 1001).astype(dtype)
    got = getattr(mx.nd, name)(mx.nd.array(x, dtype=dtype)).asnumpy()
    want = fn(x) if dtype != 'int32' else fn(x.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(got, want)
    assert getattr(mx.nd, name)(mx.nd.array(x[:0], dtype=dtype)).shape == (0,)


@pytest.mark.parametrize('name, c', [('degrees', 180 / np.pi), ('radians', np.pi / 180)])
@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_degrees_radians_gradient(name, c, dtype):
    x = mx.nd.array(RNG.uniform(-2, 2, (5, 7)), dtype=dtype)
    x.attach_grad()
    head = RNG.uniform(-1, 1, (5, 7))
    with mx.autograd.record():
        y = getattr(mx.nd, name)(x)
    y.backward(mx.nd.array(head, dtype=dtype))
    np.testing.assert_allclose(x.grad.asnumpy(), (head.astype(dtype) * c).astype(dtype),
                               rtol=1e-3 if dtype == 'float16' else 1e-6)
    x.attach_grad(grad_req='add')                   # req 'add' accumulates
    x.grad[:] = 1
    with mx.autograd.record():
        y = getattr(mx.nd, name)(x)
    y.backward(mx.nd.array(head, dtype=dtype))
    np.testing.assert_allclose(x.grad.asnumpy(), (1 + head.astype(dtype) * c).astype(dtype),
                               rtol=1e-3 if dtype == 'float16' else 1e-6)
