"""mx.optimizer.Ftrl: the docstring rule and L1 sparsity."""
import numpy as np
import pytest

import mxcy as mx


def reference(w, g, state, t, lr, wd, opt):
    """The Ftrl docstring, transcribed."""
    z, n = state
    c = opt.clip_gradient
    g = np.clip(opt.rescale_grad * g, -c, c) if c else opt.rescale_grad * g
    z = z + g - (np.sqrt(n + g ** 2) - np.sqrt(n)) * w / lr
    n = n + g ** 2
    w = (np.sign(z) * opt.lamda1 - z) / ((opt.beta + np.sqrt(n)) / lr + wd) * \
        (np.abs(z) > opt.lamda1)
    return w, (z, n)


@pytest.mark.parametrize('config', ['plain', 'wd_rescale_clip', 'mults'])
def test_steps_match_docstring(check_rule, config):
    check_rule(lambda **kw: mx.optimizer.Ftrl(lamda1=0.5, **kw), reference, config,
               steps=5)


def test_l1_zeroes_weights_with_small_accumulated_gradients():
    opt = mx.optimizer.Ftrl(lamda1=1.0, learning_rate=0.1)
    w = mx.nd.zeros((3,), dtype='float64')
    state = opt.create_state(0, w)
    opt.update(0, w, mx.nd.array([0.5, -3.0, 2.0], dtype='float64'), state)
    out = w.asnumpy()
    assert out[0] == 0.0 and out[1] > 0 and out[2] < 0


def test_defaults_are_mxnets():
    opt = mx.optimizer.Ftrl()
    assert (opt.lamda1, opt.lr, opt.beta) == (0.01, 0.1, 1.0)
