"""mx.nd.linalg / mx.sym.linalg: forward against NumPy, gradients against finite
differences (float64), and MXNet 1.9.1's results for potrf/potri gradients."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(5)


def spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_gemm_family():
    a, b, c = (RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 5, 4)),
               RNG.standard_normal((2, 3, 5)))
    p = {'transpose_b': True, 'alpha': 0.5, 'beta': 2.0}
    check_op_forward('_linalg_gemm', p, [a, b, c], [0.5 * a @ np.swapaxes(b, 1, 2) + 2 * c])
    check_op_backward('_linalg_gemm', p, [a, b, c])
    p2 = {'transpose_a': True, 'alpha': 1.5}
    x, y = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 2))
    check_op_forward('_linalg_gemm2', p2, [x, y], [1.5 * x.T @ y])
    check_op_backward('_linalg_gemm2', p2, [x, y])
    check_op_forward('_linalg_syrk', {'alpha': 2.0}, [x], [2 * x @ x.T])
    check_op_backward('_linalg_syrk', {'transpose': True}, [x])
    with pytest.raises(ValueError, match=r"_linalg_gemm2: .*'B': expected 3 rows in op\(B\)"):
        mx.nd.linalg.gemm2(mx.nd.ones((2, 3)), mx.nd.ones((4, 2)))


@pytest.mark.parametrize('rightside', [False, True])
@pytest.mark.parametrize('transpose', [False, True])
@pytest.mark.parametrize('lower', [True, False])
def test_trmm_trsm(rightside, transpose, lower):
    a = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal((3, 2) if not rightside else (2, 3))
    m = np.tril(a) if lower else np.triu(a)
    m = m.T if transpose else m
    p = {'rightside': rightside, 'transpose': transpose, 'lower': lower, 'alpha': 0.7}
    check_op_forward('_linalg_trmm', p, [a, b], [0.7 * (b @ m if rightside else m @ b)])
    check_op_backward('_linalg_trmm', p, [a, b])
    inv = np.linalg.inv(m)
    check_op_forward('_linalg_trsm', p, [a, b], [0.7 * (b @ inv if rightside else inv @ b)])
    check_op_backward('_linalg_trsm', p, [a, b], rtol=1e-4)


def test_cholesky_family_matches_mxnet():
    a = np.array([[4., 1., 0.5], [1., 3., 0.2], [0.5, 0.2, 2.]])
    head = np.arange(9.).reshape(3, 3)
    x = mx.nd.array(a, dtype='float64')
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.linalg.potrf(x)
    y.backward(mx.nd.array(head, dtype='float64'))
    np.testing.assert_allclose(y.asnumpy(), np.linalg.cholesky(a), rtol=1e-12)
    # MXNet 1.9.1's gradient for this input (checked once against it): symmetric
    np.testing.assert_allclose(x.grad.asnumpy()[0], [-0.13115074, 0.20832373, 0.63255844],
                               rtol=1e-6)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.linalg.potri(x)
    y.backward(mx.nd.array(head, dtype='float64'))
    lo = np.tril(a)
    np.testing.assert_allclose(y.asnumpy(), np.linalg.inv(lo @ lo.T), rtol=1e-10)
    np.testing.assert_allclose(x.grad.asnumpy()[2], [-0.48333333, -0.75833333, -1.595],
                               rtol=1e-6)
    check_op_backward('_linalg_potri', {}, [np.tril(a)])
    with pytest.raises(ValueError, match="_linalg_potrf: A is not symmetric positive"):
        mx.nd.linalg.potrf(mx.nd.array(-np.eye(2))).asnumpy()


def test_potrf_gradient_along_symmetric_directions():
    a, head = spd(3), RNG.standard_normal((3, 3))
    x = mx.nd.array(a, dtype='float64')
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.linalg.potrf(x)
    y.backward(mx.nd.array(head, dtype='float64'))
    d = RNG.standard_normal((3, 3))
    d = d + d.T
    eps = 1e-6
    f = lambda m: (head * np.linalg.cholesky(m)).sum()
    fd = (f(a + eps * d) - f(a - eps * d)) / (2 * eps)
    np.testing.assert_allclose((x.grad.asnumpy() * d).sum(), fd, rtol=1e-5)


def test_inverse_det_slogdet_sumlogdiag():
    a = spd(3, (2,))
    check_op_forward('_linalg_inverse', {}, [a], [np.linalg.inv(a)])
    check_op_backward('_linalg_inverse', {}, [a], rtol=1e-4)
    check_op_forward('_linalg_det', {}, [a], [np.linalg.det(a)])
    check_op_backward('_linalg_det', {}, [a], rtol=1e-4)
    s, v = np.linalg.slogdet(a)
    check_op_forward('_linalg_slogdet', {}, [a], [s, v])
    check_op_backward('_linalg_slogdet', {}, [a], rtol=1e-4)
    check_op_forward('_linalg_sumlogdiag', {}, [a],
                     [np.log(np.diagonal(a, axis1=1, axis2=2)).sum(1)])
    check_op_backward('_linalg_sumlogdiag', {}, [a])


@pytest.mark.parametrize('offset', [0, 1, -1])
def test_diag_and_triangle_maps(offset):
    a = RNG.standard_normal((2, 4, 4))
    check_op_forward('_linalg_extractdiag', {'offset': offset}, [a],
                     [np.diagonal(a, offset, 1, 2)])
    check_op_backward('_linalg_extractdiag', {'offset': offset}, [a])
    v = RNG.standard_normal((2, 3))
    ref = np.stack([np.diag(r, offset) for r in v])
    check_op_forward('_linalg_makediag', {'offset': offset}, [v], [ref])
    check_op_backward('_linalg_makediag', {'offset': offset}, [v])
    tri = mx.nd.linalg.extracttrian(mx.nd.array(a, dtype='float64'), offset=offset)
    back = mx.nd.linalg.maketrian(tri, offset=offset)
    keep = np.tril(a, offset) if offset < 0 or offset == 0 else np.triu(a, offset)
    np.testing.assert_allclose(back.asnumpy(), keep, rtol=1e-12)
    check_op_backward('_linalg_extracttrian', {'offset': offset}, [a])
    check_op_backward('_linalg_maketrian', {'offset': offset}, [tri.asnumpy()])


def test_gelqf_syevd_and_symbols():
    a = RNG.standard_normal((2, 4))
    q, lo = mx.nd.linalg.gelqf(mx.nd.array(a, dtype='float64'))
    np.testing.assert_allclose(lo.asnumpy() @ q.asnumpy(), a, atol=1e-12)
    np.testing.assert_allclose(q.asnumpy() @ q.asnumpy().T, np.eye(2), atol=1e-12)
    s = spd(3)
    u, w = mx.nd.linalg.syevd(mx.nd.array(s, dtype='float64'))
    u, w = u.asnumpy(), w.asnumpy()
    np.testing.assert_allclose(u.T @ np.diag(w) @ u, s, atol=1e-10)
    assert list(w) == sorted(w)
    x = mx.sym.Variable('x')
    out = mx.sym.linalg.gemm2(x, x, transpose_b=True).eval(x=mx.nd.array(a))[0]
    np.testing.assert_allclose(out.asnumpy(), a @ a.T, rtol=1e-5)
    assert mx.nd.linalg_det is not None and mx.sym.linalg_potrf is not None
