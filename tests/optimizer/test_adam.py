"""mx.optimizer.Adam: the docstring rule (bias correction by update count, wd before
clipping), multi-step state, independent counts per index."""
import math

import numpy as np
import pytest

import mxcy as mx


def reference(w, g, state, t, lr, wd, opt):
    """The Adam docstring, transcribed."""
    m, v = state
    g = opt.rescale_grad * g + wd * w
    c = opt.clip_gradient
    if c:
        g = np.clip(g, -c, c)
    m = opt.beta1 * m + (1 - opt.beta1) * g
    v = opt.beta2 * v + (1 - opt.beta2) * g ** 2
    lr_t = lr * math.sqrt(1 - opt.beta2 ** t) / (1 - opt.beta1 ** t)
    return w - lr_t * m / (np.sqrt(v) + opt.epsilon), (m, v)


@pytest.mark.parametrize('config', ['plain', 'wd_rescale_clip', 'mults'])
def test_steps_match_docstring(check_rule, config):
    check_rule(lambda **kw: mx.optimizer.Adam(**kw), reference, config, steps=5)


def test_other_hyperparameters_and_float32(check_rule):
    check_rule(lambda **kw: mx.optimizer.Adam(beta1=0.5, beta2=0.9, epsilon=1e-3, **kw),
               reference, 'wd_rescale_clip', dtype='float32', rtol=2e-5, atol=1e-6)


def test_first_step_moves_every_coordinate_by_about_lr():
    """With bias correction the first step is lr * g / (|g| + eps) = +-lr."""
    opt = mx.optimizer.Adam(learning_rate=0.01)
    w = mx.nd.zeros((4,), dtype='float64')
    g = mx.nd.array([3.0, -0.5, 100.0, -1e-3], dtype='float64')
    opt.update(0, w, g, opt.create_state(0, w))
    np.testing.assert_allclose(w.asnumpy(), -0.01 * np.sign(g.asnumpy()), rtol=1e-3)


def test_bias_correction_uses_each_index_count():
    """A parameter first updated late still gets t=1 (MXNet's per-index count)."""
    opt = mx.optimizer.Adam(learning_rate=0.01)
    a, b = mx.nd.zeros((2,), dtype='float64'), mx.nd.zeros((2,), dtype='float64')
    sa = opt.create_state(0, a)
    for _ in range(5):
        opt.update(0, a, mx.nd.ones((2,), dtype='float64'), sa)
    opt.update(1, b, mx.nd.ones((2,), dtype='float64'), opt.create_state(1, b))
    assert opt._index_update_count == {0: 5, 1: 1} and opt.num_update == 5
    np.testing.assert_allclose(b.asnumpy(), -0.01, rtol=1e-6)


def test_defaults_are_mxnets():
    opt = mx.optimizer.Adam()
    assert (opt.lr, opt.beta1, opt.beta2, opt.epsilon) == (0.001, 0.9, 0.999, 1e-8)
