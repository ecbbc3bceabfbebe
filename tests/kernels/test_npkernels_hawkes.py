"""contrib.hawkesll's forward in C (mxcy._npkernels.hawkes_loglike) against the vectorised
NumPy recursion it replaced (hawkes_ops.hawkes, which still gives the gradients): many
sequences of different lengths, marks repeated and unused, lengths 0 and full."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.operator.hawkes_ops import hawkes


@pytest.mark.parametrize('n,k,t,seed', [(1, 1, 1, 0), (5, 3, 7, 1), (40, 4, 25, 2)])
def test_c_forward_equals_the_numpy_recursion(n, k, t, seed):
    rng = np.random.default_rng(seed)
    lda = rng.uniform(0.1, 1, (n, k))
    alpha, beta = rng.uniform(0.1, 0.9, k), rng.uniform(0.5, 2, k)
    state = rng.uniform(0, 1, (n, k))
    lags = rng.uniform(0.05, 1, (n, t))
    marks = rng.integers(0, k, (n, t)).astype(np.int32)
    length = rng.integers(0, t + 1, n).astype(np.float32)
    length[0] = t
    max_time = lags.sum(1) + rng.uniform(0, 1, n)
    ll_ref, state_ref, _ = hawkes(lda, alpha, beta, state, lags, marks, length, max_time)
    out = mx.nd.contrib.hawkesll(*[mx.nd.array(v, dtype=np.float64) for v in
                                   (lda, alpha, beta, state, lags)],
                                 mx.nd.array(marks, dtype=np.int32),
                                 mx.nd.array(length, dtype=np.float64),
                                 mx.nd.array(max_time, dtype=np.float64))
    np.testing.assert_allclose(out[0].asnumpy(), ll_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out[1].asnumpy(), state_ref, rtol=1e-12, atol=1e-12)
