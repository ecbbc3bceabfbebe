"""Linear regression from scratch in the style of *Dive into Deep Learning* (ch. 3.2):
mx.np arrays, np.random, np.dot, autograd and in-place SGD on mx.np parameters."""
import numpy as onp

import mxcy as mx
from mxcy import autograd
from mxcy import numpy as np


def test_linear_regression_from_scratch_converges():
    mx.random.seed(0)
    true_w, true_b = np.array([2, -3.4]), 4.2
    X = np.random.normal(0, 1, (200, 2))
    y = (np.dot(X, true_w) + true_b + np.random.normal(0, 0.01, (200,))).reshape((-1, 1))
    w = np.random.normal(0, 0.01, (2, 1))
    b = np.zeros(1)
    for p in (w, b):
        p.attach_grad()
    order = onp.random.RandomState(0).permutation(200)
    for _ in range(15):
        for i in range(0, 200, 10):
            idx = np.array(order[i:i + 10], dtype='int64')
            with autograd.record():
                loss = (np.dot(X[idx], w) + b - y[idx]) ** 2 / 2
            loss.backward()
            for p in (w, b):
                p[:] = p - 0.03 * p.grad / 10
    assert type(w.grad) is np.ndarray
    onp.testing.assert_allclose(w.asnumpy().ravel(), [2, -3.4], atol=0.02)
    onp.testing.assert_allclose(b.asnumpy(), [4.2], atol=0.02)
    final = ((np.dot(X, w) + b - y) ** 2 / 2).mean()
    assert final.shape == () and float(final) < 1e-3
