"""Pad's gradient (mxcy/operator/_conv_numpy.pad_backward) for edge/reflect padding: every
padded element adds into the element it copies; checked against np.add.at over NumPy's
own padding map, with asymmetric, zero and (edge) wider-than-the-axis widths."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.operator._conv_numpy import pad_backward


def reference(dy, pairs, mode):
    g = dy
    for axis, (b, a) in enumerate(pairs):
        n = g.shape[axis] - b - a
        src = np.pad(np.arange(n), (b, a), mode=mode)
        moved = np.moveaxis(g, axis, 0)
        acc = np.zeros((n,) + moved.shape[1:], dy.dtype)
        np.add.at(acc, src, moved)
        g = np.moveaxis(acc, 0, axis)
    return g


@pytest.mark.parametrize('mode,pairs', [
    ('edge', ((0, 0), (0, 0), (2, 0), (0, 3))), ('edge', ((0, 0), (0, 0), (7, 9), (1, 1))),
    ('reflect', ((0, 0), (0, 0), (1, 2), (3, 0))), ('reflect', ((0, 0), (0, 0), (3, 3), (4, 4))),
    ('reflect', ((0, 0), (0, 0), (0, 1), (1, 2), (2, 0)))])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_pad_backward_matches_add_at(mode, pairs, dtype):
    shape = tuple(s + b + a for s, (b, a) in zip((2, 3, 4, 5, 3), pairs))
    dy = np.random.RandomState(0).uniform(-1, 1, shape).astype(dtype)
    np.testing.assert_allclose(pad_backward(dy, pairs, mode), reference(dy, pairs, mode),
                               rtol=1e-6)


def test_nd_pad_reflect_gradient():
    x = mx.nd.array(np.arange(2 * 1 * 3 * 4, dtype=np.float32).reshape(2, 1, 3, 4))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.pad(x, mode='reflect', pad_width=(0, 0, 0, 0, 2, 1, 0, 3))
    y.backward(mx.nd.ones_like(y))
    want = reference(np.ones(y.shape, np.float32), ((0, 0), (0, 0), (2, 1), (0, 3)), 'reflect')
    np.testing.assert_array_equal(x.grad.asnumpy(), want)
