"""autograd.grad(create_graph=True): gradients recorded as a graph, differentiated again.

Each case checks the recorded gradient against the ordinary backward (the fused kernels)
and its derivative, a Hessian-vector product, against central differences of the
ordinary gradient, in float64. MXNet 1.9.1 raises for most of these (its backward
operators, e.g. _backward_power_scalar, have no gradient); mxcy differentiates every
operator whose gradient it declares as differentiable operators (OpSpec.grad_graph).
"""
import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd

RNG = np.random.default_rng(7)


def _first_grad(f, x_np, create_graph):
    x = mx.nd.array(x_np, dtype='float64')
    x.attach_grad()
    with autograd.record():
        y = f(x)
        g, = autograd.grad(y, [x], create_graph=create_graph)
    return x, g


def check_second_order(f, x_np, rtol=1e-5, atol=1e-7):
    x_np = np.asarray(x_np, dtype=np.float64)
    _, g_plain = _first_grad(f, x_np, False)
    x, g = _first_grad(f, x_np, True)
    np.testing.assert_allclose(g.asnumpy(), g_plain.asnumpy(), rtol=1e-10, atol=1e-12)
    v = RNG.standard_normal(x_np.shape)
    with autograd.record():
        s = (g * mx.nd.array(v, dtype='float64')).sum()
    s.backward()
    eps = 1e-6
    numeric = (_first_grad(f, x_np + eps * v, False)[1].asnumpy()
               - _first_grad(f, x_np - eps * v, False)[1].asnumpy()) / (2 * eps)
    np.testing.assert_allclose(x.grad.asnumpy(), numeric, rtol=rtol, atol=atol)
    return x.grad.asnumpy()


POSITIVE = RNG.uniform(0.2, 0.9, (3, 4))
ANY = RNG.uniform(-2, 2, (3, 4))

UNARY = [('sin', ANY), ('cos', ANY), ('tan', POSITIVE), ('exp', ANY), ('log', POSITIVE),
         ('log2', POSITIVE), ('log10', POSITIVE), ('log1p', POSITIVE), ('expm1', ANY),
         ('sqrt', POSITIVE), ('rsqrt', POSITIVE), ('cbrt', POSITIVE), ('square', ANY),
         ('sigmoid', ANY), ('tanh', ANY), ('softsign', ANY), ('reciprocal', POSITIVE),
         ('arctan', ANY), ('arcsin', POSITIVE), ('arccos', POSITIVE), ('sinh', ANY),
         ('cosh', ANY), ('arcsinh', ANY), ('arccosh', POSITIVE + 1.5),
         ('arctanh', POSITIVE), ('degrees', ANY), ('radians', ANY), ('abs', ANY),
         ('relu', ANY), ('negative', ANY)]


@pytest.mark.parametrize('name,x', UNARY, ids=[u[0] for u in UNARY])
def test_unary_second_derivative(name, x):
    op = getattr(mx.nd, name)
    check_second_order(lambda a: op(a) * op(a), x)


def test_cubic_second_derivative_is_exact():
    hv = check_second_order(lambda a: (a ** 3).sum(), [[1.0, -2.0, 0.5]])
    assert hv.shape == (1, 3)


@pytest.mark.parametrize('act', ['relu', 'sigmoid', 'tanh', 'softrelu', 'softsign'])
def test_activation_second_derivative(act):
    check_second_order(lambda a: mx.nd.Activation(a, act_type=act) ** 2, ANY)


@pytest.mark.parametrize('form', ['elemwise', 'broadcast', 'dunder'])
def test_binary_ops_second_derivative(form):
    c = mx.nd.array(RNG.uniform(0.5, 1.5, (1, 4)), dtype='float64')
    full = mx.nd.array(RNG.uniform(0.5, 1.5, (3, 4)), dtype='float64')
    if form == 'elemwise':
        f = lambda a: mx.nd.elemwise_mul(a, a) / (mx.nd.elemwise_add(a, full) + 3)
    elif form == 'broadcast':
        f = lambda a: mx.nd.broadcast_power(mx.nd.broadcast_add(a, c), c) * \
            mx.nd.broadcast_maximum(a, c) - mx.nd.broadcast_div(c, a + 3)
    else:
        f = lambda a: (2 ** a) * (a - 1) / (4 - a) + a.sum(axis=1, keepdims=True) ** 2
    check_second_order(f, POSITIVE)


def test_broadcast_operand_with_a_graph_sums_back():
    # the variable is the broadcast (1, 4) operand: its gradient sums over rows
    check_second_order(lambda a: mx.nd.broadcast_mul(a, mx.nd.ones((3, 4), dtype='float64'))
                       * mx.nd.broadcast_mul(a, a), POSITIVE[:1])


@pytest.mark.parametrize('ta,tb', [(False, False), (True, False), (False, True),
                                   (True, True)])
def test_dot_second_derivative(ta, tb):
    b = mx.nd.array(RNG.standard_normal((4, 5) if not tb else (5, 4)), dtype='float64')

    def f(a):
        lhs = a if not ta else a.T
        y = mx.nd.dot(lhs.T if ta else a, b, transpose_a=ta, transpose_b=tb)
        return mx.nd.tanh(y)
    check_second_order(f, ANY if not ta else ANY.T.copy())


def test_dot_with_itself_and_batch_dot():
    check_second_order(lambda a: mx.nd.dot(a, a, transpose_b=True) ** 2, ANY)
    check_second_order(lambda a: mx.nd.batch_dot(a, a, transpose_a=True).sin(),
                       RNG.standard_normal((2, 3, 4)))


def test_fully_connected_gradient_penalty():
    """WGAN-GP style: d/dW of ||d sum(net(x)) / dx||^2, against finite differences."""
    x_np, w_np, b_np = ANY[:2, :3], RNG.standard_normal((4, 3)), RNG.standard_normal(4)

    def penalty_and_grad(w_values):
        w = mx.nd.array(w_values, dtype='float64')
        w.attach_grad()
        x = mx.nd.array(x_np, dtype='float64')
        x.attach_grad()
        b = mx.nd.array(b_np, dtype='float64')
        with autograd.record():
            h = mx.nd.Activation(mx.nd.FullyConnected(x, w, b, num_hidden=4),
                                 act_type='tanh')
            gx, = autograd.grad(mx.nd.sum(h), [x], create_graph=True)
            pen = (gx * gx).sum()
        pen.backward()
        return pen.asscalar(), w.grad.asnumpy()
    _, got = penalty_and_grad(w_np)
    eps, numeric = 1e-6, np.zeros_like(w_np)
    for i in np.ndindex(*w_np.shape):
        d = np.zeros_like(w_np)
        d[i] = eps
        numeric[i] = (penalty_and_grad(w_np + d)[0] - penalty_and_grad(w_np - d)[0]) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize('case', ['sum', 'mean', 'softmax', 'log_softmax', 'reshape',
                                  'transpose', 'broadcast_to', 'flatten'])
def test_shape_and_reduction_ops_second_derivative(case):
    f = {
        'sum': lambda a: mx.nd.sum(a * a, axis=1) ** 2,
        'mean': lambda a: mx.nd.mean(a.exp(), axis=(0,), keepdims=True) ** 2,
        'softmax': lambda a: mx.nd.softmax(a, axis=0) * a,
        'log_softmax': lambda a: mx.nd.log_softmax(a, temperature=2.0) ** 2,
        'reshape': lambda a: mx.nd.reshape(a.sin(), shape=(4, 3)) ** 3,
        'transpose': lambda a: mx.nd.transpose(a * a) * mx.nd.ones((4, 3), dtype='float64'),
        'broadcast_to': lambda a: mx.nd.broadcast_to(mx.nd.sum(a, axis=0, keepdims=True),
                                                     shape=(2, 4)) ** 2,
        'flatten': lambda a: mx.nd.Flatten(a.reshape((3, 2, 2)).tanh()) ** 2,
    }[case]
    check_second_order(f, ANY)


def test_block_grad_stops_second_order_too():
    x, g = _first_grad(lambda a: mx.nd.BlockGrad(a * a) + a * a, ANY, True)
    np.testing.assert_allclose(g.asnumpy(), 2 * ANY)


def test_an_operator_without_a_differentiable_gradient_is_named():
    x = mx.nd.array(ANY, dtype='float64')
    x.attach_grad()
    with autograd.record():
        y = mx.nd.pick(x * x, mx.nd.array([0, 1, 2], dtype='float64'), axis=1)
        with pytest.raises(mx.MXNetError, match="operator 'pick'.*differentiated again"):
            autograd.grad(y, [x], create_graph=True)


def test_only_the_paths_to_the_variables_need_a_differentiable_gradient():
    x = mx.nd.array(ANY, dtype='float64')
    x.attach_grad()
    other = mx.nd.array(ANY, dtype='float64')
    other.attach_grad()
    with autograd.record():
        # pick's gradient has no graph form, but it lies only on the path to `other`
        y = (x * x).sum() + mx.nd.pick(other, mx.nd.array([0, 1, 2], dtype='float64'),
                                        axis=1).sum()
        g, = autograd.grad(y, [x], create_graph=True)
    np.testing.assert_allclose(g.asnumpy(), 2 * ANY)


def test_the_first_graph_is_kept_and_the_heads_gradient_is_used():
    x = mx.nd.array([1.0, 2.0], dtype='float64')
    x.attach_grad()
    with autograd.record():
        y = x * x * x
        g, = autograd.grad(y, [x], head_grads=mx.nd.array([1.0, 10.0], dtype='float64'),
                           create_graph=True)
    np.testing.assert_allclose(g.asnumpy(), [3.0, 120.0])
    # retain_graph defaulted to create_graph: the graph is still there; kept again here,
    # since g's graph runs through y's nodes
    y.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0, 12.0])
    g.backward()        # d/dx of 3 x^2 * head = 6 x * head
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, 120.0])


def test_a_variable_off_the_graph_gets_zeros():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    z = mx.nd.array([3.0])
    z.attach_grad()
    with autograd.record():
        y = x * 2
        gx, gz = autograd.grad(y, [x, z], create_graph=True)
    np.testing.assert_array_equal(gx.asnumpy(), [2, 2])
    np.testing.assert_array_equal(gz.asnumpy(), [0])
