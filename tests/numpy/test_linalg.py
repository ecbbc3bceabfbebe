"""mx.np.linalg: norm through the registry (with gradients), the rest from NumPy."""
import numpy as onp
import pytest

from mxcy import autograd
from mxcy import numpy as np

M = onp.array([[4.0, 1.0], [1.0, 3.0]], dtype=onp.float32)


@pytest.mark.parametrize('ord,axis', [(None, None), ('fro', None), (2, 0), (1, 1),
                                      (onp.inf, 0), (None, 1), ('nuc', None)])
def test_norm(ord, axis):
    got = np.linalg.norm(np.array(M), ord, axis)
    onp.testing.assert_allclose(got.asnumpy(), onp.linalg.norm(M, ord, axis), rtol=1e-5)


def test_norm_gradient():
    x = np.array([3.0, 4.0])
    x.attach_grad()
    with autograd.record():
        y = np.linalg.norm(x)
    y.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), [0.6, 0.8], rtol=1e-6)


@pytest.mark.parametrize('name', ['inv', 'det', 'cholesky', 'eigvalsh', 'pinv',
                                  'matrix_rank'])
def test_numpy_backed(name):
    got = getattr(np.linalg, name)(np.array(M))
    want = getattr(onp.linalg, name)(M)
    onp.testing.assert_allclose(onp.asarray(got.asnumpy() if hasattr(got, 'asnumpy')
                                            else got), want, rtol=1e-4)


def test_tuple_results_and_solve():
    q, r = np.linalg.qr(np.array(M))
    onp.testing.assert_allclose((q @ r).asnumpy(), M, rtol=1e-5)
    sign, logdet = np.linalg.slogdet(np.array(M))
    assert float(sign) == 1.0 and float(logdet) == pytest.approx(onp.log(11.0), 1e-5)
    x = np.linalg.solve(np.array(M), np.array([1.0, 2.0]))
    onp.testing.assert_allclose(M @ x.asnumpy(), [1, 2], rtol=1e-5)
