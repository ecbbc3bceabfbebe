"""FullyConnected at a small batch through mxcy/_gemv.h (issue 16): the twin and the
operator against NumPy, odd and even batches (input rows in pairs), output counts around
the 4-row blocks and the 16-row part bounds, odd feature counts, float64, bias, req='add',
and the batch size where BLAS takes over."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _gemv
from mxcy.operator._spec import get_op


@pytest.mark.parametrize('m,n,k', [(1, 1, 1), (1, 5, 7), (2, 33, 19), (3, 4096, 37),
                                   (4, 70, 1000), (1, 257, 4099), (7, 45, 300),
                                   (16, 131, 257)])
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_twin_matches_numpy(m, n, k, dtype):
    rng = np.random.default_rng(m * 1000 + n + k)
    x = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    tol = 1e-4 * np.sqrt(k) if dtype == np.float32 else 1e-11 * np.sqrt(k)
    np.testing.assert_allclose(_gemv.fc_forward_np(x, w), x @ w.T, rtol=0, atol=tol)
    np.testing.assert_allclose(_gemv.fc_forward_np(x, w, b), x @ w.T + b, rtol=0, atol=tol)
    y0 = rng.standard_normal((m, n)).astype(dtype)
    np.testing.assert_allclose(_gemv.fc_forward_np(x, w, b, y0), y0 + x @ w.T + b, rtol=0,
                               atol=tol)


def test_twin_rejects_bad_shapes():
    with pytest.raises(ValueError, match='fc_forward_np'):
        _gemv.fc_forward_np(np.zeros((17, 3), np.float32), np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match='fc_forward_np'):
        _gemv.fc_forward_np(np.zeros((1, 3), np.float32), np.zeros((2, 4), np.float32))


@pytest.mark.parametrize('batch', [1, 2, 5, 16, 17])
@pytest.mark.parametrize('no_bias', [False, True])
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_fully_connected_small_batch(batch, no_bias, dtype):
    """Batches up to 16 take the GEMV path (one row alone, pairs of rows), 17 BLAS: all
    equal NumPy; 'add' adds."""
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, 3, 7, 5)).astype(dtype)       # flattened to 105
    w = rng.standard_normal((300, 105)).astype(dtype)
    b = rng.standard_normal(300).astype(dtype)
    args = [mx.nd.array(x, dtype=dtype), mx.nd.array(w, dtype=dtype)]
    if not no_bias:
        args.append(mx.nd.array(b, dtype=dtype))
    y = mx.nd.FullyConnected(*args, num_hidden=300, no_bias=no_bias).asnumpy()
    ref = x.reshape(batch, -1) @ w.T + (0 if no_bias else b)
    atol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(y, ref, rtol=0, atol=atol)
    assert y.dtype == dtype
    out = mx.nd.ones((batch, 300), dtype=dtype)
    spec = get_op('FullyConnected')
    p = spec.params.parse('FullyConnected', {'num_hidden': 300, 'no_bias': no_bias})
    spec.forward(p, False, ['add'], args, [out], [])
    np.testing.assert_allclose(out.asnumpy(), 1 + ref, rtol=0, atol=atol)


def test_fully_connected_batch1_gradient_unchanged():
    """The forward path changes at batch 1; the gradients (BLAS) still match NumPy."""
    rng = np.random.default_rng(7)
    x = mx.nd.array(rng.standard_normal((1, 40)))
    w = mx.nd.array(rng.standard_normal((70, 40)))
    b = mx.nd.array(rng.standard_normal(70))
    for a in (x, w, b):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.FullyConnected(x, w, b, num_hidden=70)
    y.backward(mx.nd.ones((1, 70)))
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() @ w.asnumpy().T + b.asnumpy(),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), w.asnumpy().sum(0, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(w.grad.asnumpy(), np.repeat(x.asnumpy(), 70, 0), rtol=1e-6)
