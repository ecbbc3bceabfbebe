"""mx.optimizer.AdaGrad: the docstring rule and its accumulated history."""
import numpy as np
import pytest

import mxcy as mx


def reference(w, g, h, t, lr, wd, opt):
    """The AdaGrad docstring, transcribed."""
    c = opt.clip_gradient
    g = np.clip(opt.rescale_grad * g, -c, c) if c else opt.rescale_grad * g
    h = h + g ** 2
    return w - lr * (g / np.sqrt(h + opt.float_stable_eps) + wd * w), h


@pytest.mark.parametrize('config', ['plain', 'wd_rescale_clip', 'mults'])
def test_steps_match_docstring(check_rule, config):
    check_rule(lambda **kw: mx.optimizer.AdaGrad(**kw), reference, config, steps=5)


def test_history_is_the_sum_of_squared_gradients():
    opt = mx.optimizer.AdaGrad(learning_rate=0.1, eps=0.0)
    w = mx.nd.zeros((3,), dtype='float64')
    h = opt.create_state(0, w)
    for g in ([1.0, 2.0, -2.0], [1.0, -2.0, 0.0]):
        opt.update(0, w, mx.nd.array(g, dtype='float64'), h)
    np.testing.assert_allclose(h.asnumpy(), [2.0, 8.0, 4.0])
    # step 1: -0.1 * sign(g); step 2: -0.1 * g / sqrt(h)
    np.testing.assert_allclose(w.asnumpy(), [-0.1 - 0.1 / np.sqrt(2), -0.1 + 0.1 / np.sqrt(2),
                                             0.1])


def test_defaults_are_mxnets():
    opt = mx.optimizer.AdaGrad()
    assert (opt.lr, opt.float_stable_eps) == (0.01, 1e-7)
