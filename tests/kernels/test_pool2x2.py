"""The float32 2×2/stride-2 max-pool loops (mxcy/_pool2x2.h) against NumPy: row lengths
around the 16-window vector width, uncovered edges, ties, NaN and req='add'."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _conv


def pool_ref(x):
    n, c, h, w = x.shape
    oh, ow = h // 2, w // 2
    win = x[:, :, :2 * oh, :2 * ow].reshape(n, c, oh, 2, ow, 2).transpose(0, 1, 2, 4, 3, 5)
    return win.reshape(n, c, oh, ow, 4)


def pool_bwd_ref(x, dy):
    """The gradient at each window's first maximum (row-major order within the window)."""
    win = pool_ref(x)
    first = win.argmax(axis=-1)
    dx = np.zeros_like(x)
    n, c, oh, ow = dy.shape
    for i in range(oh):
        for j in range(ow):
            k = first[:, :, i, j]
            rows, cols = 2 * i + k // 2, 2 * j + k % 2
            nn, cc = np.meshgrid(np.arange(n), np.arange(c), indexing='ij')
            dx[nn, cc, rows, cols] += dy[:, :, i, j]
    return dx


@pytest.mark.parametrize('h,w', [(24, 24), (8, 8), (6, 32), (4, 34), (5, 42), (7, 25),
                                 (2, 2), (3, 66)])
def test_max2x2_forward_and_backward_match_numpy(h, w):
    rng = np.random.default_rng(h * 100 + w)
    x = rng.standard_normal((3, 2, h, w)).astype(np.float32)
    oh, ow = h // 2, w // 2
    y = _conv.pool_fwd_np(x, (2, 2), (2, 2), (0, 0), oh, ow, 0)
    np.testing.assert_array_equal(y, pool_ref(x).max(axis=-1))
    dy = rng.standard_normal(y.shape).astype(np.float32)
    dx = _conv.pool_bwd_np(x, dy, (2, 2), (2, 2), (0, 0), 0)
    np.testing.assert_array_equal(dx, pool_bwd_ref(x, dy))


def test_max2x2_ties_give_the_gradient_to_the_first_maximum():
    x = np.ones((1, 1, 4, 36), np.float32)        # every window is a 4-way tie
    x[0, 0, 1, 3] = 2.0                           # one window with its maximum last
    dy = np.arange(1, 1 + 2 * 18, dtype=np.float32).reshape(1, 1, 2, 18)
    dx = _conv.pool_bwd_np(x, dy, (2, 2), (2, 2), (0, 0), 0)
    expect = np.zeros_like(x)
    expect[0, 0, 0::2, 0::2] = dy[0, 0]
    expect[0, 0, 0, 2], expect[0, 0, 1, 3] = 0, dy[0, 0, 0, 1]
    np.testing.assert_array_equal(dx, expect)


def test_max2x2_forward_keeps_nan():
    x = np.zeros((1, 1, 2, 40), np.float32)
    x[0, 0, 1, 7] = np.nan
    y = _conv.pool_fwd_np(x, (2, 2), (2, 2), (0, 0), 1, 20, 0)
    assert np.isnan(y[0, 0, 0, 3]) and np.isnan(y).sum() == 1


def test_max2x2_gradient_accumulates_with_req_add():
    data = mx.sym.Variable('data')
    net = mx.sym.Pooling(data, kernel=(2, 2), stride=(2, 2), pool_type='max')
    exe = net.simple_bind(mx.cpu(), data=(2, 3, 10, 36), grad_req='add')
    x = np.random.default_rng(1).standard_normal((2, 3, 10, 36)).astype(np.float32)
    exe.arg_dict['data'][:] = x
    exe.grad_dict['data'][:] = 1.0
    head = np.random.default_rng(2).standard_normal((2, 3, 5, 18)).astype(np.float32)
    exe.forward(is_train=True)
    exe.backward([mx.nd.array(head)])
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), 1.0 + pool_bwd_ref(x, head),
                               rtol=1e-6)
