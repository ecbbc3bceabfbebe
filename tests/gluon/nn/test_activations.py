"""gluon.nn activation layers: names, repr, forward vs NumPy and MXNet 1.9.1, gradients vs
analytic derivatives and finite differences, hybridized == imperative.

Values marked "MXNet 1.9.1" were recorded from MXNet 1.9.1 running the same code.
"""
import numpy as np
import pytest
from scipy.special import erf

import mxcy as mx
from mxcy import autograd
from mxcy.gluon import nn
from mxcy.test_utils import finite_difference as numeric_grad

SELU_ALPHA = 1.6732632423543772
SELU_LAMBDA = 1.0507009873554805
X = [-2.0, -0.75, -0.1, 0.0, 0.3, 1.5]


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


REFERENCES = {
    'relu': lambda x: np.maximum(x, 0),
    'sigmoid': _sigmoid,
    'tanh': np.tanh,
    'softrelu': lambda x: np.log1p(np.exp(x)),
    'softsign': lambda x: x / (1 + np.abs(x)),
    'leaky': lambda x: np.where(x > 0, x, 0.2 * x),
    'elu': lambda x: np.where(x > 0, x, 0.5 * np.expm1(np.minimum(x, 0))),
    'selu': lambda x: SELU_LAMBDA * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0))),
    'gelu': lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2))),
    'swish': lambda x: x * _sigmoid(2.0 * x),
}

LAYERS = {
    'relu': lambda: nn.Activation('relu'),
    'sigmoid': lambda: nn.Activation('sigmoid'),
    'tanh': lambda: nn.Activation('tanh'),
    'softrelu': lambda: nn.Activation('softrelu'),
    'softsign': lambda: nn.Activation('softsign'),
    'leaky': lambda: nn.LeakyReLU(0.2),
    'elu': lambda: nn.ELU(0.5),
    'selu': nn.SELU,
    'gelu': nn.GELU,
    'swish': lambda: nn.Swish(2.0),
}


def _fresh(make):
    with mx.name.NameManager():
        return make()


def _forward_backward(block, x, head):
    x = mx.nd.array(x)
    x.attach_grad()
    with autograd.record():
        y = block(x)
    y.backward(mx.nd.array(head))
    return y.asnumpy(), x.grad.asnumpy()


def _both_ways(make, x, head):
    """(output, input gradient) imperative and hybridized, checked equal."""
    results = []
    for hybrid in (False, True):
        block = _fresh(make)
        block.initialize()
        if hybrid:
            block.hybridize()
        results.append(_forward_backward(block, x, head) + (block,))
    (y0, g0, b0), (y1, g1, _) = results
    np.testing.assert_allclose(y1, y0, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(g1, g0, rtol=1e-6, atol=1e-7)
    return y0, g0, b0


@pytest.mark.parametrize('kind', sorted(LAYERS))
def test_forward_and_gradient_vs_numpy(kind):
    rng = np.random.default_rng(0)
    # keep away from the kink at 0, where finite differences are meaningless
    x = rng.uniform(0.05, 2.5, (3, 4, 2)) * rng.choice([-1, 1], (3, 4, 2))
    head = rng.standard_normal(x.shape)
    y, gx, _ = _both_ways(LAYERS[kind], x, head)
    ref = REFERENCES[kind]
    np.testing.assert_allclose(y, ref(x), rtol=1e-5, atol=1e-6)
    xd = x.copy()
    expected = numeric_grad(lambda: float((head * ref(xd)).sum()), xd, eps=1e-6)
    np.testing.assert_allclose(gx, expected, rtol=1e-4, atol=1e-5)


# recorded from MXNet 1.9.1: outputs and input gradients (head 1) at X
MXNET = {
    'elu': ([-0.43233237, -0.26381671, -0.04758132, 0.0, 0.3, 1.5],
            [0.06766764, 0.23618327, 0.45241868, 0.5, 1.0, 1.0]),
    'selu': ([-1.5201665, -0.92763197, -0.16730528, 0.0, 0.31521031, 1.5760515], None),
    'gelu': ([-0.0455001, -0.16997045, -0.04601721, 0.0, 0.18537343, 1.399789],
             [-0.08523187, 0.0007742, 0.42047682, 0.5, 0.73232776, 1.1274692]),
    'swish': ([-0.03597242, -0.13681915, -0.04501660, 0.0, 0.1936969, 1.4288611],
              [-0.05266462, -0.04129417, 0.40066269, 0.5, 0.78292686, 1.0881041]),
    'leaky': ([-0.4, -0.15, -0.02, 0.0, 0.3, 1.5], [0.2, 0.2, 0.2, 0.2, 1.0, 1.0]),
    'softrelu': ([0.12692809, 0.3868711, 0.6443966, 0.69314724, 0.85435534, 1.7014132],
                 [0.11920292, 0.32082129, 0.47502080, 0.5, 0.57444251, 0.8175745]),
    'softsign': ([-0.66666669, -0.42857143, -0.09090909, 0.0, 0.23076925, 0.6],
                 [0.11111111, 0.32653061, 0.82644624, 1.0, 0.59171605, 0.16]),
}


@pytest.mark.parametrize('kind', sorted(MXNET))
def test_values_match_mxnet(kind):
    y, gx, _ = _both_ways(LAYERS[kind], np.array([X]), np.ones((1, 6)))
    want_y, want_g = MXNET[kind]
    np.testing.assert_allclose(y[0], want_y, rtol=1e-5, atol=1e-6)
    if want_g is not None:
        np.testing.assert_allclose(gx[0], want_g, rtol=1e-5, atol=1e-6)


def test_selu_gradient_is_the_derivative():
    """NOTE: MXNet 1.9.1's SELU backward returns λ·(y + α) for x <= 0 (e.g. 0.16085884 at
    x = -2, 1.7580993 at x = 0); the derivative, which mxcy returns, is λ·α·eˣ."""
    x = np.array([X])
    _, gx, _ = _both_ways(nn.SELU, x, np.ones((1, 6)))
    want = np.where(x > 0, SELU_LAMBDA, SELU_LAMBDA * SELU_ALPHA * np.exp(x))
    np.testing.assert_allclose(gx, want, rtol=1e-5)
    assert gx[0, 3] == pytest.approx(1.7580993, rel=1e-6)        # as MXNet 1.9.1 at x = 0


def test_names_and_repr():
    with mx.name.NameManager():
        a, b = nn.Activation('relu'), nn.Activation('relu')
        t = nn.Activation('tanh')
        p = nn.PReLU()
        p3 = nn.PReLU(in_channels=3)
        leaky = nn.LeakyReLU(0)
    # MXNet 1.9.1
    assert (a.prefix, b.prefix, t.prefix, p.prefix, p3.prefix, leaky.prefix) == (
        'relu0_', 'relu1_', 'tanh0_', 'prelu0_', 'prelu1_', 'leakyrelu0_')
    assert [(q.name, q.shape) for q in p.collect_params().values()] == [('prelu0_alpha', (1,))]
    assert p3.alpha.shape == (3,)
    assert repr(a) == 'Activation(relu)' and repr(leaky) == 'LeakyReLU(0)'
    assert repr(nn.LeakyReLU(0.1)) == 'LeakyReLU(0.1)'
    for block in (p, nn.ELU(), nn.SELU(), nn.GELU(), nn.Swish()):
        assert repr(block) == f'{type(block).__name__}(\n\n)'
    with pytest.raises(AssertionError, match='Slope coefficient for LeakyReLU must be no '
                                             'less than 0.'):
        nn.LeakyReLU(-0.1)


def test_prelu_shared_slope():
    y, gx, block = _both_ways(nn.PReLU, np.array([X]), np.ones((1, 6)))
    # MXNet 1.9.1
    np.testing.assert_allclose(y[0], [-0.5, -0.1875, -0.025, 0.0, 0.3, 1.5], rtol=1e-6)
    np.testing.assert_allclose(gx[0], [0.25, 0.25, 0.25, 0.25, 1.0, 1.0])
    np.testing.assert_allclose(block.alpha.grad().asnumpy(), [-2.85], rtol=1e-6)
    np.testing.assert_array_equal(block.alpha.data().asnumpy(), [0.25])


def test_prelu_per_channel_gradients():
    rng = np.random.default_rng(2)
    x = rng.uniform(0.1, 2, (2, 3, 4)) * rng.choice([-1, 1], (2, 3, 4))
    head = rng.standard_normal(x.shape)
    alpha = np.array([0.1, 0.3, 0.6])
    grads = []
    for hybrid in (False, True):
        block = _fresh(lambda: nn.PReLU(alpha_initializer=mx.init.Constant(0.1),
                                        in_channels=3))
        block.initialize()
        np.testing.assert_allclose(block.alpha.data().asnumpy(), 0.1)
        block.alpha.set_data(mx.nd.array(alpha))
        if hybrid:
            block.hybridize()
        y, gx = _forward_backward(block, x, head)
        a3 = alpha.reshape(1, 3, 1)
        np.testing.assert_allclose(y, np.where(x > 0, x, a3 * x), rtol=1e-5)
        np.testing.assert_allclose(gx, head * np.where(x > 0, 1, a3), rtol=1e-5)
        np.testing.assert_allclose(block.alpha.grad().asnumpy(),
                                   (head * np.where(x > 0, 0, x)).sum(axis=(0, 2)),
                                   rtol=1e-5)
        grads.append(block.alpha.grad().asnumpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def test_dense_activation_child_names():
    with mx.name.NameManager():
        d = nn.Dense(3, activation='softrelu', in_units=2)
    # MXNet 1.9.1
    assert (d.act.prefix, d.act.name) == ('dense0_softrelu_', 'dense0_softrelu')
    assert repr(d) == 'Dense(2 -> 3, Activation(softrelu))'
