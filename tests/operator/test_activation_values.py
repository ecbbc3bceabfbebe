"""LeakyReLU's leaky and gelu forms (mxcy/operator/activation.py, rewritten for speed)
against their plain NumPy definitions on awkward values: NaN, infinities, signed zeros,
huge and tiny numbers, zero, negative and > 1 slopes, float16/32/64."""
import numpy as np
import pytest
from scipy.special import erf

import mxcy as mx

X = np.array([3.0, -2.0, 0.0, -0.0, np.nan, np.inf, -np.inf, 1e-30, -1e-30, 3e38, -3e38,
              0.5, -0.7])


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
@pytest.mark.parametrize('slope', [0.0, 0.1, 0.25, 1.0, 1.5, -0.5, 1e30])
def test_leaky_equals_where(dtype, slope):
    with np.errstate(all='ignore'):
        x = X.astype(dtype)
        want = np.where(x > 0, x, slope * x).astype(dtype)
        got = mx.nd.LeakyReLU(mx.nd.array(x, dtype=dtype), slope=slope).asnumpy()
    np.testing.assert_array_equal(got, want)
    finite = ~np.isnan(got)
    np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(want[finite]))


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_gelu_equals_definition(dtype):
    x = np.linspace(-6, 6, 101).astype(dtype)
    want = (0.5 * x.astype(np.float64) * (1 + erf(x.astype(np.float64) / np.sqrt(2))))
    got = mx.nd.LeakyReLU(mx.nd.array(x, dtype=dtype), act_type='gelu').asnumpy()
    assert got.dtype == np.dtype(dtype)
    tol = {'float16': 2e-3, 'float32': 1e-6, 'float64': 1e-12}[dtype]
    np.testing.assert_allclose(got, want.astype(dtype), rtol=tol, atol=tol)
