"""mx.optimizer.AdaDelta: the docstring rule (no learning rate, as in MXNet 1.x)."""
import numpy as np
import pytest

import mxcy as mx


def reference(w, g, state, t, lr, wd, opt):
    """The AdaDelta docstring, transcribed (lr is not part of the rule)."""
    acc_g, acc_delta = state
    c = opt.clip_gradient
    g = np.clip(opt.rescale_grad * g, -c, c) if c else opt.rescale_grad * g
    acc_g = opt.rho * acc_g + (1 - opt.rho) * g ** 2
    delta = np.sqrt(acc_delta + opt.epsilon) / np.sqrt(acc_g + opt.epsilon) * g
    acc_delta = opt.rho * acc_delta + (1 - opt.rho) * delta ** 2
    return w - (delta + wd * w), (acc_g, acc_delta)


@pytest.mark.parametrize('config', ['plain', 'wd_rescale_clip', 'mults'])
def test_steps_match_docstring(check_rule, config):
    check_rule(lambda **kw: mx.optimizer.AdaDelta(rho=0.8, epsilon=1e-3, **kw), reference,
               config, steps=5)


def test_learning_rate_does_not_change_the_step():
    ws = []
    for lr in (0.01, 10.0):
        opt = mx.optimizer.AdaDelta(learning_rate=lr)
        w = mx.nd.ones((3,), dtype='float64')
        state = opt.create_state(0, w)
        for _ in range(3):
            opt.update(0, w, mx.nd.array([1.0, -2.0, 0.5], dtype='float64'), state)
        ws.append(w.asnumpy())
    assert np.array_equal(ws[0], ws[1]) and not np.array_equal(ws[0], np.ones(3))


def test_defaults_are_mxnets():
    opt = mx.optimizer.AdaDelta()
    assert (opt.rho, opt.epsilon) == (0.9, 1e-5)
