"""mx.optimizer.Signum: signSGD (no momentum) and Signum rules, wd_lh."""
import numpy as np
import pytest

import mxcy as mx


def reference(w, g, m, t, lr, wd, opt):
    """The Signum docstring, transcribed."""
    if opt.momentum == 0:
        return (1 - lr * wd) * w - lr * np.sign(g), m
    c = opt.clip_gradient
    g = (np.clip(opt.rescale_grad * g, -c, c) if c else opt.rescale_grad * g) + wd * w
    m = opt.momentum * m + (1 - opt.momentum) * g
    return (1 - lr * opt.wd_lh) * w - lr * np.sign(m), m


@pytest.mark.parametrize('config', ['plain', 'wd_rescale_clip', 'mults'])
@pytest.mark.parametrize('momentum, wd_lh', [(0.0, 0.0), (0.9, 0.0), (0.5, 0.1)])
def test_steps_match_docstring(check_rule, config, momentum, wd_lh):
    _, _, states = check_rule(
        lambda **kw: mx.optimizer.Signum(momentum=momentum, wd_lh=wd_lh, **kw), reference,
        config, steps=5)
    assert (states[0] is None) == (momentum == 0.0)


def test_steps_have_size_lr():
    opt = mx.optimizer.Signum(learning_rate=0.25, momentum=0.0)
    w = mx.nd.zeros((3,))
    opt.update(0, w, mx.nd.array([5.0, -1e-3, 0.0]), None)
    assert np.array_equal(w.asnumpy(), [-0.25, 0.25, 0.0])


def test_defaults_are_mxnets():
    opt = mx.optimizer.Signum()
    assert (opt.lr, opt.momentum, opt.wd_lh) == (0.01, 0.9, 0.0)
