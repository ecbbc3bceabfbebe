"""The fused optimizer kernels (sgd, sgd_mom, adam) against their NumPy reference, small
(run inline) and long (shared with idle workers), float32 and float64; bad input raises."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _ops, _reference

CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.05, wd=0.01, rescale_grad=0.5, clip_gradient=0.3),
]


@pytest.mark.parametrize('kind', ['sgd', 'sgd_mom', 'adam'])
@pytest.mark.parametrize('config', CONFIGS)
@pytest.mark.parametrize('n', [37, 300_001])
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_fused_update_matches_reference(kind, config, n, dtype):
    rng = np.random.default_rng(n)
    nstates = {'sgd': 0, 'sgd_mom': 1, 'adam': 2}[kind]
    w = rng.standard_normal(n).astype(dtype)
    states = [rng.random(n).astype(dtype) for _ in range(nstates)]
    extra = {'sgd_mom': dict(momentum=0.9), 'adam': dict(beta1=0.8, beta2=0.99,
                                                         epsilon=1e-6)}.get(kind, {})
    w_nd = mx.nd.array(w, dtype=dtype)
    s_nd = [mx.nd.array(s, dtype=dtype) for s in states]
    for step in range(3):
        g = rng.standard_normal(n).astype(dtype)
        _ops.push_optimizer_update(kind, w_nd, mx.nd.array(g, dtype=dtype), s_nd,
                                   **config, **extra)
        _reference.optimizer_update(kind, w, g, states, **config, **extra)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(w_nd.asnumpy(), w, rtol=tol, atol=tol)
    for s_got, s_ref in zip(s_nd, states):
        np.testing.assert_allclose(s_got.asnumpy(), s_ref, rtol=tol, atol=tol)


def test_fused_update_rejects_bad_input():
    w = mx.nd.zeros((4, 3))
    with pytest.raises(ValueError, match=r"sgd_mom_update: grad has float32\(4, 2\), the "
                                         r"weight float32\(4, 3\)"):
        _ops.push_optimizer_update('sgd_mom', w, mx.nd.zeros((4, 2)), [mx.nd.zeros((4, 3))],
                                   0.1)
    with pytest.raises(ValueError, match="adam_update: needs 2 state"):
        _ops.push_optimizer_update('adam', w, mx.nd.zeros((4, 3)), [mx.nd.zeros((4, 3))], 0.1)
    with pytest.raises(ValueError, match="state 0 has float64"):
        _ops.push_optimizer_update('sgd_mom', w, mx.nd.zeros((4, 3)),
                                   [mx.nd.zeros((4, 3), dtype='float64')], 0.1)
    with pytest.raises(TypeError, match="int32"):
        _ops.push_optimizer_update('sgd', mx.nd.zeros((2,), dtype='int32'),
                                   mx.nd.zeros((2,), dtype='int32'), [], 0.1)
    with pytest.raises(ValueError, match="kind must be"):
        _ops.push_optimizer_update('rmsprop', w, w, [], 0.1)
