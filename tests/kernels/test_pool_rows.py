"""The pooling row loops (mxcy/_pool_rows.h, issue 16) against a per-window NumPy
reference: max/avg/sum, odd sizes, kernels, strides and pads, 'valid' and 'full' output
sizes, count_include_pad, global windows, windows of padding alone, NaN, float64, req='add'
and the plane split; through the kernel twins and through mx.nd.Pooling."""
import itertools

import numpy as np
import pytest

import mxcy as mx
from mxcy import _conv


def out_size(n, k, s, p, full):
    span = n + 2 * p - k
    return (-(-span // s) if full else span // s) + 1


def windows(n, k, s, p, o):
    """[(start, end, full size)] of each output position along one axis."""
    res = []
    for i in range(o):
        a = i * s - p
        e = min(a + k, n + p)
        res.append((max(a, 0), min(e, n), e - a))
    return res


def pool_ref(x, k, s, p, oh, ow, ptype, include=True):
    """y and, for dy = ones-like weights g, dx (gradient to each window's first maximum)."""
    n, c, h, w = x.shape
    y = np.zeros((n, c, oh, ow), x.dtype)
    lowest = np.finfo(x.dtype).min
    for i, (hs, he, hf) in enumerate(windows(h, k[0], s[0], p[0], oh)):
        for j, (ws, we, wf) in enumerate(windows(w, k[1], s[1], p[1], ow)):
            win = x[:, :, hs:he, ws:we]
            if ptype == 0:
                y[:, :, i, j] = win.max(axis=(2, 3)) if win.size else lowest
            else:
                total = win.sum(axis=(2, 3), dtype=np.float64)
                cnt = hf * wf if include else (he - hs) * (we - ws)
                y[:, :, i, j] = total / cnt if ptype == 1 and cnt else \
                    (0 if ptype == 1 else total)
    return y


def pool_bwd_ref(x, dy, k, s, p, ptype, include=True):
    n, c, h, w = x.shape
    oh, ow = dy.shape[2:]
    dx = np.zeros(x.shape, np.float64)
    for i, (hs, he, hf) in enumerate(windows(h, k[0], s[0], p[0], oh)):
        for j, (ws, we, wf) in enumerate(windows(w, k[1], s[1], p[1], ow)):
            if he <= hs or we <= ws:
                continue
            win = x[:, :, hs:he, ws:we].reshape(n, c, -1)
            if ptype == 0:
                first = win.argmax(axis=2)
                for a in range(n):
                    for b in range(c):
                        r, q = divmod(first[a, b], we - ws)
                        dx[a, b, hs + r, ws + q] += dy[a, b, i, j]
            else:
                cnt = hf * wf if include else (he - hs) * (we - ws)
                g = dy[:, :, i, j] / cnt if ptype == 1 else dy[:, :, i, j]
                dx[:, :, hs:he, ws:we] += g[:, :, None, None]
    return dx.astype(x.dtype)


GEOMS = [((3, 3), (2, 2), (1, 1)), ((3, 3), (2, 2), (0, 0)), ((3, 3), (1, 1), (1, 1)),
         ((2, 2), (2, 2), (0, 0)), ((2, 2), (2, 2), (1, 1)), ((5, 3), (3, 2), (2, 1)),
         ((1, 1), (2, 2), (0, 0)), ((4, 4), (1, 3), (3, 0)), ((3, 2), (1, 1), (0, 1))]


@pytest.mark.parametrize('geom', GEOMS)
@pytest.mark.parametrize('ptype', [0, 1, 2])
@pytest.mark.parametrize('full', [False, True])
def test_forward_backward_match_reference(geom, ptype, full):
    k, s, p = geom
    rng = np.random.default_rng(hash((geom, ptype, full)) % 2**32)
    for (h, w), dtype in (((13, 17), np.float32), ((8, 9), np.float64), ((1, 1 + 2 * p[1] + k[1]),
                                                                          np.float32)):
        if h + 2 * p[0] < k[0] or w + 2 * p[1] < k[1]:
            continue
        x = rng.standard_normal((2, 3, h, w)).astype(dtype)
        oh, ow = out_size(h, k[0], s[0], p[0], full), out_size(w, k[1], s[1], p[1], full)
        for include in ((True, False) if ptype == 1 else (True,)):
            y = _conv.pool_fwd_np(x, k, s, p, oh, ow, ptype, include)
            ref = pool_ref(x, k, s, p, oh, ow, ptype, include)
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(y, ref, rtol=tol, atol=tol)
            dy = rng.standard_normal(y.shape).astype(dtype)
            dx = _conv.pool_bwd_np(x, dy, k, s, p, ptype, include)
            np.testing.assert_allclose(dx, pool_bwd_ref(x, dy, k, s, p, ptype, include),
                                       rtol=tol, atol=tol)


def test_max_ties_nan_and_padding_only_windows():
    x = np.zeros((1, 1, 4, 6), np.float32)               # all ties: the first of each window
    dy = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
    dx = _conv.pool_bwd_np(x, dy, (2, 2), (2, 2), (1, 1), 0)
    np.testing.assert_array_equal(dx, pool_bwd_ref(x, dy, (2, 2), (2, 2), (1, 1), 0))
    x = np.arange(24, dtype=np.float32).reshape(1, 1, 4, 6)
    x[0, 0, 1, 1] = np.nan
    y = _conv.pool_fwd_np(x, (3, 3), (2, 2), (1, 1), 2, 3, 0)
    assert np.isnan(y[0, 0, 0, 0]) and np.isnan(y[0, 0, 0, 1]) and np.isnan(y[0, 0, 1, 0])
    assert y[0, 0, 1, 2] == 23
    x[0, 0, 1, 1] = 5
    x[0, 0, 0, 0] = np.nan                              # NaN first in its window: it takes dy
    dx = _conv.pool_bwd_np(x, np.ones((1, 1, 2, 3), np.float32), (3, 3), (2, 2), (1, 1), 0)
    assert dx[0, 0, 0, 0] == 1 and dx[0, 0, 1, 1] == 0
    # pad >= kernel: windows of padding alone give the lowest finite value (max), 0 (avg)
    x = np.ones((1, 2, 3, 3), np.float64)
    y = _conv.pool_fwd_np(x, (2, 2), (2, 2), (2, 2), 4, 4, 0)
    assert y[0, 0, 0, 0] == np.finfo(np.float64).min and y[0, 0, 1, 1] == 1
    y = _conv.pool_fwd_np(x, (2, 2), (2, 2), (2, 2), 4, 4, 1, False)
    assert y[0, 0, 0, 0] == 0 and y[0, 0, 1, 1] == 1


@pytest.mark.parametrize('pool_type', ['max', 'avg', 'sum'])
@pytest.mark.parametrize('shape', [(1, 64, 112, 112), (16, 5, 13, 13), (3, 7, 1, 9)])
def test_operator_global_and_split_planes(pool_type, shape):
    """Global windows and inputs big enough to be cut into plane ranges (run_parts)."""
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    xn = mx.nd.array(x)
    y = mx.nd.Pooling(xn, global_pool=True, pool_type=pool_type).asnumpy()
    ref = {'max': x.max(axis=(2, 3)), 'avg': x.mean(axis=(2, 3)),
           'sum': x.sum(axis=(2, 3))}[pool_type][:, :, None, None]
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-4)
    if shape[2] >= 3:
        y = mx.nd.Pooling(xn, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type=pool_type,
                          pooling_convention='full').asnumpy()
        oh, ow = out_size(shape[2], 3, 2, 1, True), out_size(shape[3], 3, 2, 1, True)
        ptype = {'max': 0, 'avg': 1, 'sum': 2}[pool_type]
        np.testing.assert_allclose(y, pool_ref(x, (3, 3), (2, 2), (1, 1), oh, ow, ptype),
                                   rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize('pool_type', ['max', 'avg'])
def test_operator_backward_add_accumulates(pool_type):
    x = np.random.default_rng(5).standard_normal((2, 3, 11, 10)).astype(np.float32)
    xn = mx.nd.array(x)
    xn.attach_grad(grad_req='add')
    xn.grad[:] = 1
    for _ in range(2):
        with mx.autograd.record():
            y = mx.nd.Pooling(xn, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                              pool_type=pool_type)
        y.backward(mx.nd.ones(y.shape))
    ptype = 0 if pool_type == 'max' else 1
    ref = pool_bwd_ref(x, np.ones(y.shape, np.float32), (3, 3), (2, 2), (1, 1), ptype)
    np.testing.assert_allclose(xn.grad.asnumpy(), 1 + 2 * ref, rtol=1e-5, atol=1e-5)


def test_all_geometries_once_through_isa_paths():
    """Every (kernel, stride, pad) pair above at one odd size, both element types: the
    forward and backward agree with the reference (a broad sweep of the phase offsets)."""
    rng = np.random.default_rng(11)
    for (k, s, p), dtype in itertools.product(GEOMS, (np.float32, np.float64)):
        x = rng.standard_normal((1, 2, 10, 15)).astype(dtype)
        oh, ow = out_size(10, k[0], s[0], p[0], False), out_size(15, k[1], s[1], p[1], False)
        y = _conv.pool_fwd_np(x, k, s, p, oh, ow, 0)
        np.testing.assert_array_equal(y, pool_ref(x, k, s, p, oh, ow, 0))
        dy = rng.standard_normal(y.shape).astype(dtype)
        np.testing.assert_allclose(_conv.pool_bwd_np(x, dy, k, s, p, 0),
                                   pool_bwd_ref(x, dy, k, s, p, 0), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('pool_type', ['avg', 'sum', 'max'])
@pytest.mark.parametrize('grad_req', ['write', 'add'])
def test_global_pooling_gradient(pool_type, grad_req):
    """Global avg/sum spread each plane's dy over the plane (÷ h·w for avg); max sends it
    to the plane's maximum."""
    x = np.random.default_rng(8).standard_normal((3, 5, 7, 6))
    dy = np.random.default_rng(9).standard_normal((3, 5, 1, 1))
    held = np.random.default_rng(10).standard_normal(x.shape)
    xn = mx.nd.array(x, dtype=np.float64)
    xn.attach_grad(grad_req=grad_req)
    xn.grad[:] = held
    with mx.autograd.record():
        y = mx.nd.Pooling(xn, global_pool=True, pool_type=pool_type)
    y.backward(mx.nd.array(dy, dtype=np.float64))
    if pool_type == 'max':
        ref = (x == x.max(axis=(2, 3), keepdims=True)) * dy
    else:
        ref = np.broadcast_to(dy / (42 if pool_type == 'avg' else 1), x.shape)
    np.testing.assert_allclose(xn.grad.asnumpy(), ref + (held if grad_req == 'add' else 0),
                               rtol=1e-12, atol=1e-12)
