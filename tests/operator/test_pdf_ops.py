"""random_pdf_*: densities against SciPy / MXNet 1.9.1's values (checked once against it)
and gradients against finite differences."""
import numpy as np
import pytest
from scipy import stats

import mxcy as mx
from mxcy.test_utils import check_op_backward, check_op_forward

S = np.array([[1., 2., 3.], [0.5, 1.5, 2.5]])
A, B = np.array([2., 3.]), np.array([1.5, 0.5])


@pytest.mark.parametrize('dist,params,ref', [
    ('normal', [A, B], lambda x, a, b: stats.norm.pdf(x, a, b)),
    ('gamma', [A, B], lambda x, a, b: stats.gamma.pdf(x, a, scale=1 / b)),
    ('exponential', [A], lambda x, lam: stats.expon.pdf(x, scale=1 / lam)),
    ('poisson', [A], lambda x, lam: stats.poisson.pmf(x, lam)),
    ('negative_binomial', [A, np.array([0.4, 0.7])], lambda x, k, p: stats.nbinom.pmf(x, k, p)),
    ('generalized_negative_binomial', [A, np.array([0.4, 0.7])],
     lambda x, m, a: stats.nbinom.pmf(x, 1 / a, 1 / (1 + a * m))),
    ('uniform', [np.array([0., 1.]), np.array([4., 2.])],
     lambda x, lo, hi: stats.uniform.pdf(x, lo, hi - lo))])
def test_density_and_gradients(dist, params, ref):
    sample = np.round(S) if dist in ('poisson', 'negative_binomial',
                                     'generalized_negative_binomial') else S
    expected = ref(sample, *[q[:, None] for q in params])
    check_op_forward(f'_random_pdf_{dist}', {}, [sample] + params, [expected], rtol=1e-6)
    with np.errstate(divide='ignore'):      # log 0 = -inf outside the uniform's support
        log_expected = np.log(expected)
    check_op_forward(f'_random_pdf_{dist}', {'is_log': True}, [sample] + params,
                     [log_expected], rtol=1e-6)
    if dist == 'uniform':
        sample = np.array([[1., 2., 3.], [1.2, 1.5, 1.7]])
    # discrete distributions: no gradient for the sample (MXNet's definition)
    nodes = None if dist in ('normal', 'gamma', 'exponential', 'uniform') else \
        mx.operator.get_operator_arguments(f'_random_pdf_{dist}').names[1:1 + len(params)]
    check_op_backward(f'_random_pdf_{dist}', {}, [sample] + params, grad_nodes=nodes,
                      rtol=1e-4)


def test_matches_mxnet_and_dirichlet():
    g = mx.nd.random_pdf_gamma(mx.nd.array(S), mx.nd.array(A), mx.nd.array(B)).asnumpy()
    np.testing.assert_allclose(g[1], [0.01216876, 0.06642655, 0.11191594], rtol=1e-6)
    d = np.array([[[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]])
    alpha = np.array([[1., 2., 3.]])
    check_op_forward('_random_pdf_dirichlet', {}, [d, alpha], [[[4.5, 3.84]]], rtol=1e-6)
    check_op_backward('_random_pdf_dirichlet', {}, [d, alpha], rtol=1e-4)
    s = mx.sym.random_pdf_normal(mx.sym.var('x'), mx.sym.var('m'), mx.sym.var('s'))
    out = s.eval(x=mx.nd.array([[0.0]]), m=mx.nd.array([0.0]), s=mx.nd.array([1.0]))[0]
    np.testing.assert_allclose(out.asnumpy(), [[1 / np.sqrt(2 * np.pi)]], rtol=1e-6)
    with pytest.raises(ValueError, match=r"random_pdf_normal: .*'sample': expected a shape "
                                         r"starting with \(2,\)"):
        mx.nd.random_pdf_normal(mx.nd.ones((3, 2)), mx.nd.ones(2), mx.nd.ones(2))


@pytest.mark.parametrize('dtype', [np.float16, np.float32, np.float64])
@pytest.mark.parametrize('is_log', [False, True])
def test_uniform_density_edges_and_dtypes(dtype, is_log):
    # closed support [low, high]; high < low has no support; 2-D parameters, odd sizes
    low = np.array([[0.0, 1.0, 2.0], [-1.0, 3.0, 0.5]])
    high = np.array([[4.0, 2.0, 1.0], [1.0, 3.5, 0.5]])
    sample = np.random.default_rng(0).uniform(-2, 5, (2, 3, 7))
    sample[0, 0, :2] = [0.0, 4.0]                   # on both bounds
    sample[1, 2, 0] = 0.5                           # low == high: an infinite density
    sample = sample.astype(dtype)
    got = mx.nd.random_pdf_uniform(mx.nd.array(sample, dtype=dtype),
                                   mx.nd.array(low, dtype=dtype),
                                   mx.nd.array(high, dtype=dtype), is_log=is_log)
    assert got.dtype == dtype
    s, lo, hi = sample.astype(np.float64), low[..., None], high[..., None]
    inside = (s >= lo) & (s <= hi)
    with np.errstate(divide='ignore'):
        want = np.where(inside, 1 / (hi - lo), 0.0)
        want = np.log(want) if is_log else want
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), want,
                               rtol=1e-3 if dtype == np.float16 else 1e-6)
    assert np.isinf(got.asnumpy()[1, 2, 0]) and got.asnumpy()[0, 0, 0] == got.asnumpy()[0, 0, 1]


def test_uniform_density_multiplies_only_finite_densities():
    # float32 output written straight by one multiply of the mask; a zero-width pair (an
    # infinite density) and a reversed pair (no support) give inf / +0, never NaN or -0
    low = np.array([0.0, 1.0, 2.0, 0.5])
    high = np.array([4.0, 2.0, 1.0, 0.5])
    sample = np.random.default_rng(1).uniform(-1, 5, (4, 33)).astype(np.float32)
    sample[3, 0] = 0.5
    s = sample.astype(np.float64)
    with np.errstate(divide='ignore'):
        want = np.where((s >= low[:, None]) & (s <= high[:, None]),
                        1 / (high - low)[:, None], 0.0)
    for lows, highs in ((low[:2], high[:2]), (low, high)):
        n = lows.size
        out = mx.nd.full((n, 33), 2.0)
        mx.nd.random_pdf_uniform(mx.nd.array(sample[:n]), mx.nd.array(lows),
                                 mx.nd.array(highs), out=out)
        got = out.asnumpy()
        assert not np.isnan(got).any() and not np.signbit(got).any()
        np.testing.assert_allclose(got, want[:n], rtol=1e-6)
