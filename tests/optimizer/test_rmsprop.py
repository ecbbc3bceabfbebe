"""mx.optimizer.RMSProp: plain and centered rules, clip_weights."""
import numpy as np
import pytest

import mxcy as mx


def reference(w, g, state, t, lr, wd, opt):
    """The RMSProp docstring, transcribed."""
    g = opt.rescale_grad * g + wd * w
    c = opt.clip_gradient
    if c:
        g = np.clip(g, -c, c)
    n = (1 - opt.gamma1) * g ** 2 + opt.gamma1 * state[0]
    if not opt.centered:
        w, state = w - lr * g / np.sqrt(n + opt.epsilon), (n,)
    else:
        s = (1 - opt.gamma1) * g + opt.gamma1 * state[1]
        delta = opt.gamma2 * state[2] - lr * g / np.sqrt(n - s ** 2 + opt.epsilon)
        w, state = w + delta, (n, s, delta)
    if opt.clip_weights:
        w = np.clip(w, -opt.clip_weights, opt.clip_weights)
    return w, state


@pytest.mark.parametrize('config', ['plain', 'wd_rescale_clip', 'mults'])
@pytest.mark.parametrize('centered', [False, True])
def test_steps_match_docstring(check_rule, config, centered):
    _, _, states = check_rule(lambda **kw: mx.optimizer.RMSProp(centered=centered, **kw),
                              reference, config, steps=5, lr=0.01)
    assert len(states[0]) == (3 if centered else 1)


def test_clip_weights(check_rule):
    opt, weights, _ = check_rule(
        lambda **kw: mx.optimizer.RMSProp(clip_weights=0.8, gamma1=0.5, **kw), reference,
        'wd_rescale_clip', lr=0.5)
    assert all(np.abs(w.asnumpy()).max() <= 0.8 for w in weights.values())


def test_defaults_are_mxnets():
    opt = mx.optimizer.RMSProp()
    assert (opt.lr, opt.gamma1, opt.gamma2, opt.epsilon, opt.centered, opt.clip_weights) \
        == (0.001, 0.9, 0.9, 1e-8, False, None)
