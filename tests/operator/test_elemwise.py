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
