"""Operators added for MXNet 1.9.1 parity: forward against NumPy/SciPy, backward against
finite differences (float64), and errors that name op, argument, expected and given."""
import numpy as np
import pytest
from scipy import special

import mxcy as mx
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(3)


@pytest.mark.parametrize('name,f,lo,hi', [
    ('erf', special.erf, -2, 2), ('erfinv', special.erfinv, -0.9, 0.9),
    ('gamma', special.gamma, 0.5, 3), ('gammaln', special.gammaln, 0.5, 3),
    ('rcbrt', lambda x: 1 / np.cbrt(x), 0.5, 3)])
def test_special_functions(name, f, lo, hi):
    x = RNG.uniform(lo, hi, (3, 4))
    check_op_forward(name, {}, [x], [f(x)], rtol=1e-5)
    check_op_backward(name, {}, [x], rtol=1e-4)


def test_hard_sigmoid_and_smooth_l1():
    x = RNG.uniform(-4, 4, (4, 5))
    check_op_forward('hard_sigmoid', {'alpha': 0.3, 'beta': 0.4}, [x],
                     [np.clip(0.3 * x + 0.4, 0, 1)])
    check_op_backward('hard_sigmoid', {'alpha': 0.3, 'beta': 0.4}, [x])
    s2 = 4.0
    ref = np.where(np.abs(x) < 1 / s2, 0.5 * s2 * x * x, np.abs(x) - 0.5 / s2)
    check_op_forward('smooth_l1', {'scalar': 2.0}, [x], [ref])
    check_op_backward('smooth_l1', {'scalar': 2.0}, [x])


def test_logical_ops_nd_and_sym():
    a = np.array([[0, 1, 2], [0, 0, 3]], np.float32)
    b = np.array([[1, 0, 2]], np.float32)
    A, B = mx.nd.array(a), mx.nd.array(b)
    assert (mx.nd.logical_and(A, B).asnumpy() == np.logical_and(a, b)).all()
    assert (mx.nd.logical_or(A, 0).asnumpy() == (a != 0)).all()
    assert (mx.nd.logical_xor(A, B).asnumpy() == np.logical_xor(a, b)).all()
    assert (mx.nd.logical_not(A).asnumpy() == (a == 0)).all()
    x, y = mx.sym.Variable('x'), mx.sym.Variable('y')
    out = mx.sym.broadcast_logical_or(x, y).eval(x=A, y=B)[0]
    assert (out.asnumpy() == np.logical_or(a, b)).all()
    assert mx.nd.logical_and(A, B).dtype == np.float32


def test_symbol_math_dispatchers():
    x, y = mx.sym.Variable('x'), mx.sym.Variable('y')
    a, b = RNG.uniform(1, 2, (2, 3)), RNG.uniform(1, 2, (2, 3))
    A, B = mx.nd.array(a), mx.nd.array(b)
    for fn, ref in ((mx.sym.maximum, np.maximum), (mx.sym.minimum, np.minimum),
                    (mx.sym.hypot, np.hypot), (mx.sym.power, np.power)):
        np.testing.assert_allclose(fn(x, y).eval(x=A, y=B)[0].asnumpy(), ref(a, b), rtol=1e-5)
        np.testing.assert_allclose(fn(x, 1.5).eval(x=A)[0].asnumpy(), ref(a, 1.5), rtol=1e-5)
        np.testing.assert_allclose(fn(1.5, x).eval(x=A)[0].asnumpy(), ref(1.5, a), rtol=1e-5)
    assert mx.sym.maximum(2, 3) == 3
    check_op_backward('_hypot_scalar', {'scalar': 1.5}, [a])
    with pytest.raises(TypeError, match="maximum: left and right must be Symbols or numbers"):
        mx.sym.maximum(x, 'a')


def test_add_n_and_moments():
    xs = [RNG.standard_normal((2, 3)) for _ in range(3)]
    check_op_forward('ElementWiseSum', {'num_args': 3}, xs, [sum(xs)])
    check_op_backward('ElementWiseSum', {'num_args': 3}, xs)
    assert mx.nd.add_n(*[mx.nd.array(x) for x in xs]).shape == (2, 3)
    with pytest.raises(ValueError, match=r"add_n: .*'arg1': expected \(2, 3\), "
                                         r"given \(3, 2\)"):
        mx.nd.add_n(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)))
    x = RNG.standard_normal((3, 4, 2))
    check_op_forward('moments', {'axes': (0, 2)}, [x], [x.mean((0, 2)), x.var((0, 2))])
    check_op_forward('moments', {'axes': (1,), 'keepdims': True}, [x],
                     [x.mean(1, keepdims=True), x.var(1, keepdims=True)])
    check_op_backward('moments', {'axes': (0, 2)}, [x])


def test_histogram_split_cumsum_khatri_rao():
    x = RNG.uniform(0, 10, (20,))
    hist, edges = mx.nd.histogram(mx.nd.array(x), bins=4, range=(0, 10))
    ref_h, ref_e = np.histogram(x, 4, (0, 10))
    assert hist.asnumpy().tolist() == ref_h.tolist() and hist.dtype == np.int64
    np.testing.assert_allclose(edges.asnumpy(), ref_e, rtol=1e-6)
    hist2, _ = mx.nd.histogram(mx.nd.array(x), bins=mx.nd.array([0, 2, 10]))
    assert hist2.asnumpy().tolist() == np.histogram(x, [0, 2, 10])[0].tolist()
    a = RNG.standard_normal((3, 6))
    parts = mx.nd.split_v2(mx.nd.array(a), (1, 4), axis=1)
    for got, ref in zip(parts, np.split(a, (1, 4), axis=1)):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-6)
    check_op_backward('_split_v2', {'indices': (0, 1, 4), 'axis': 1}, [a])
    check_op_forward('cumsum', {'axis': 1}, [a], [np.cumsum(a, 1)])
    check_op_backward('cumsum', {'axis': 1}, [a])
    check_op_backward('cumsum', {}, [a])
    m1, m2 = RNG.standard_normal((2, 3)), RNG.standard_normal((4, 3))
    ref = np.einsum('ik,jk->ijk', m1, m2).reshape(8, 3)
    check_op_forward('khatri_rao', {'num_args': 2}, [m1, m2], [ref])
    check_op_backward('khatri_rao', {'num_args': 2}, [m1, m2])


def test_gather_scatter_and_friends():
    data = RNG.standard_normal((3, 4, 2))
    idx = np.array([[0, 2, 1], [3, 0, 3]])
    check_op_forward('gather_nd', {}, [data, idx], [data[idx[0], idx[1]]])
    check_op_backward('gather_nd', {}, [data, idx], grad_nodes=['data'])
    vals = RNG.standard_normal((2, 2))
    sidx = np.array([[0, 2], [1, 3]])
    ref = np.zeros((3, 4, 2))
    ref[sidx[0], sidx[1]] = vals
    check_op_forward('scatter_nd', {'shape': (3, 4, 2)}, [vals, sidx], [ref])
    check_op_backward('scatter_nd', {'shape': (3, 4, 2)}, [vals, sidx], grad_nodes=['data'])
    a = RNG.standard_normal((3, 5))
    cols = np.array([4, 0, 2])
    check_op_forward('batch_take', {}, [a, cols], [a[np.arange(3), cols]])
    check_op_backward('batch_take', {}, [a, cols], grad_nodes=['a'])
    check_op_forward('choose_element_0index', {}, [a, cols], [a[np.arange(3), cols]])
    mhs = RNG.standard_normal(3)
    filled = a.copy()
    filled[np.arange(3), cols] = mhs
    check_op_forward('fill_element_0index', {}, [a, mhs, cols], [filled])
    check_op_backward('fill_element_0index', {}, [a, mhs, cols], grad_nodes=['lhs', 'mhs'])
    coords = np.array([[0, 1, 2], [3, 0, 1]])
    flat = np.ravel_multi_index(tuple(coords), (3, 4))
    check_op_forward('ravel_multi_index', {'shape': (3, 4)}, [coords.astype(float)], [flat])
    check_op_forward('unravel_index', {'shape': (3, 4)}, [flat.astype(float)], [coords])
    with pytest.raises(ValueError, match=r"batch_take: .*'indices': expected \(3,\), given "
                                         r"\(2,\)"):
        mx.nd.batch_take(mx.nd.ones((3, 5)), mx.nd.array([1, 2]))
    with pytest.raises(IndexError, match=r"gather_nd: indices\[0\] holds values outside"):
        mx.nd.gather_nd(mx.nd.ones((2, 2)), mx.nd.array([[5]])).asnumpy()


def test_shape_ops_are_operators_with_gradients():
    x = RNG.standard_normal((2, 8, 2, 3))
    check_op_backward('depth_to_space', {'block_size': 2}, [x])
    check_op_backward('space_to_depth', {'block_size': 2}, [RNG.standard_normal((1, 2, 4, 6))])
    check_op_backward('slice_like', {'axes': (1,)}, [x, np.zeros((1, 3))], grad_nodes=['data'])
    s = mx.sym.shape_array(mx.sym.Variable('x')).eval(x=mx.nd.ones((2, 5)))[0]
    assert s.asnumpy().tolist() == [2, 5] and s.dtype == np.int64


def test_range_constructors():
    np.testing.assert_allclose(mx.nd.linspace(0, 1, 5, endpoint=False).asnumpy(),
                               np.linspace(0, 1, 5, endpoint=False), rtol=1e-6)
    assert (mx.nd.eye(3, 4, k=-1).asnumpy() == np.eye(3, 4, -1)).all()
    assert mx.sym.arange(2, 8, 2, repeat=2).eval()[0].asnumpy().tolist() == [2, 2, 4, 4, 6, 6]
    assert mx.nd.moveaxis(mx.nd.ones((2, 3, 4)), 0, -1).shape == (3, 4, 2)
    assert mx.nd.from_numpy(np.arange(3)).asnumpy().tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="zeros: stype='csr' is not supported"):
        mx.nd.zeros((2, 2), stype='csr')


def test_amp_and_finite_checks():
    a = mx.nd.ones((2, 2), dtype='float16')
    assert mx.nd.amp_cast(a, dtype='float32').dtype == np.float32
    outs = mx.nd.amp_multicast(a, mx.nd.ones((2,)), num_outputs=2)
    assert [o.dtype for o in outs] == [np.float32, np.float32]
    assert mx.nd.all_finite(mx.nd.array([1, np.inf])).asnumpy().tolist() == [0.0]
    assert mx.nd.multi_all_finite(mx.nd.ones(2), mx.nd.ones(3), num_arrays=2
                                  ).asnumpy().tolist() == [1.0]
    sq = mx.nd.multi_sum_sq(mx.nd.ones(2) * 2, mx.nd.ones(3), num_arrays=2)
    assert sq.asnumpy().tolist() == [8.0, 3.0]


@pytest.mark.parametrize('call', [
    lambda x: mx.nd.erf(x), lambda x: mx.nd.smooth_l1(x, scalar=2.0),
    lambda x: mx.nd.add_n(x, x, x), lambda x: mx.nd.moments(x, axes=(1,))[1],
    lambda x: mx.nd.split_v2(x, 2, axis=1)[1], lambda x: mx.nd.cumsum(x, axis=1),
    lambda x: mx.nd.khatri_rao(x, x), lambda x: mx.nd.amp_cast(x, dtype='float64'),
    lambda x: mx.nd.slice_like(x, mx.nd.ones((1, 2)), axes=(1,)),
    lambda x: mx.nd.depth_to_space(x.reshape((1, 4, 1, 1)), 2),
    lambda x: mx.nd.gather_nd(x, mx.nd.array([[0, 1], [1, 0]])),
    lambda x: mx.nd.batch_take(x, mx.nd.array([0, 1])),
    lambda x: mx.nd.linalg.gemm2(x, x, transpose_b=True),
    lambda x: mx.nd.linalg.sumlogdiag(mx.nd.linalg.syrk(x) + mx.nd.array(np.eye(2), dtype="float64")),
    lambda x: mx.nd.contrib.div_sqrt_dim(x)])
def test_autograd_runs_each_new_gradient(call):
    """Autograd passes only what backward_needs declares: every backward must cope."""
    xv = RNG.uniform(0.5, 1.5, (2, 2))
    x = mx.nd.array(xv, dtype='float64')
    x.attach_grad()
    with mx.autograd.record():
        y = call(x)
    y.backward()
    eps = 1e-6
    fd = np.zeros_like(xv)
    for i in np.ndindex(*xv.shape):
        hi, lo = xv.copy(), xv.copy()
        hi[i] += eps
        lo[i] -= eps
        fd[i] = (call(mx.nd.array(hi, dtype='float64')).asnumpy().sum() -
                 call(mx.nd.array(lo, dtype='float64')).asnumpy().sum()) / (2 * eps)
    np.testing.assert_allclose(x.grad.asnumpy(), fd, rtol=1e-4, atol=1e-6)


def test_reset_arrays_and_gather_nd_shape_helper():
    a, b = mx.nd.ones((2, 2)), mx.nd.ones(3)
    mx.nd.reset_arrays(a, b, num_arrays=2)
    assert a.asnumpy().sum() == 0 and b.asnumpy().sum() == 0
    with pytest.raises(ValueError, match="reset_arrays: num_arrays=3 but 2 arrays given"):
        mx.nd.reset_arrays(a, b, num_arrays=3)
    assert mx.nd.get_oshape_of_gather_nd_op((3, 4, 5), (2, 7)) == (7, 5)
