"""Sampling operators in the registry: mx.sym.random and the generated mx.nd names draw
from mx.random's generator (same seed, same values as mx.nd.random), with MXNet's
parameter forms, moments, multinomial's log-probability gradient, and eager errors."""
import numpy as np
import pytest

import mxcy as mx


def test_sym_random_matches_nd_random_for_a_seed():
    mx.random.seed(4)
    a = mx.nd.random.uniform(2, 3, shape=(4,)).asnumpy()
    mx.random.seed(4)
    b = mx.sym.random.uniform(2, 3, shape=(4,)).eval()[0].asnumpy()
    np.testing.assert_array_equal(a, b)
    mx.random.seed(4)
    c = mx.nd.random.normal(1, 2, shape=(3,)).asnumpy()
    mx.random.seed(4)
    np.testing.assert_array_equal(c, mx.nd.random_normal(1, 2, shape=(3,)).asnumpy())


@pytest.mark.parametrize('dist,params,mean', [
    ('normal', {'loc': 2.0, 'scale': 0.5}, 2.0), ('gamma', {'alpha': 3.0, 'beta': 2.0}, 6.0),
    ('exponential', {'scale': 0.5}, 0.5), ('poisson', {'lam': 4.0}, 4.0),
    ('negative_binomial', {'k': 3, 'p': 0.5}, 3.0),
    ('generalized_negative_binomial', {'mu': 2.0, 'alpha': 0.3}, 2.0)])
def test_symbol_samplers_first_moment(dist, params, mean):
    out = getattr(mx.sym.random, dist)(shape=(20000,), **params).eval()[0].asnumpy()
    assert abs(out.mean() - mean) < 0.05 * mean + 0.02


def test_array_parameters_and_like_forms():
    mu = mx.sym.Variable('mu')
    out = mx.sym.random.normal(mu, mu * 0 + 0.01, shape=(50,)).eval(
        mu=mx.nd.array([1.0, 5.0]))[0]
    assert out.shape == (2, 50)
    np.testing.assert_allclose(out.asnumpy().mean(1), [1, 5], atol=0.01)
    like = mx.nd.random.gamma_like(mx.nd.ones((3, 2), dtype='float64'), alpha=2.0)
    assert like.shape == (3, 2) and like.dtype == np.float64
    s = mx.sym.random.poisson_like(mx.sym.Variable('d'), lam=2.0)
    assert s.eval(d=mx.nd.ones((4,)))[0].shape == (4,)
    assert mx.nd.sample_exponential(mx.nd.array([1.0, 2.0]), shape=3).shape == (2, 3)


def test_multinomial_and_its_log_probability_gradient():
    probs = mx.nd.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]], dtype='float64')
    probs.attach_grad()
    with mx.autograd.record():
        idx, logp = mx.nd.random.multinomial(probs, shape=4, get_prob=True)
    logp.backward(mx.nd.ones(logp.shape, dtype='float64'))
    i = idx.asnumpy()
    assert (i[0] == 1).all() and set(i[1]) <= {0, 2}
    expected = np.zeros((2, 3))
    for r in range(2):
        for k in i[r]:
            expected[r, k] += 1 / probs.asnumpy()[r, k]
    np.testing.assert_allclose(probs.grad.asnumpy(), expected)
    np.testing.assert_allclose(logp.asnumpy()[1], np.log(0.5))


def test_shuffle_and_errors():
    x = mx.nd.arange(10)
    y = mx.nd.shuffle(x).asnumpy()
    assert sorted(y.tolist()) == list(range(10))
    sy = mx.sym.random.shuffle(mx.sym.Variable('x')).eval(x=x)[0].asnumpy()
    assert sorted(sy.tolist()) == list(range(10))
    with pytest.raises(mx.base.MXNetError, match="_random_gamma: alpha must be positive"):
        mx.sym.random.gamma(alpha=-1.0, shape=(2,)).eval()
    with pytest.raises(ValueError, match="random_exponential: lam must be positive"):
        mx.nd.random_exponential(lam=0)
    with pytest.raises(TypeError, match=r"random.normal: parameters .* must all be numbers or all "
                                        "Symbols"):
        mx.sym.random.normal(mx.sym.Variable('a'), 1.0)
