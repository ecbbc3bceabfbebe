"""mx.optimizer.NAG: the docstring rule with and without momentum."""
import numpy as np
import pytest

import mxcy as mx


def reference(w, g, m, t, lr, wd, opt):
    """The NAG docstring, transcribed."""
    c = opt.clip_gradient
    clipped = np.clip(opt.rescale_grad * g, -c, c) if c else opt.rescale_grad * g
    g = clipped + wd * w
    if opt.momentum == 0:
        return w - lr * g, m
    w = w + opt.momentum * (opt.momentum * m - lr * g) - lr * g
    return w, opt.momentum * m - lr * (clipped + wd * w)    # decay from the new weight


@pytest.mark.parametrize('config', ['plain', 'wd_rescale_clip', 'mults'])
@pytest.mark.parametrize('momentum', [0.0, 0.9])
def test_steps_match_docstring(check_rule, config, momentum):
    _, _, states = check_rule(lambda **kw: mx.optimizer.NAG(momentum=momentum, **kw),
                              reference, config)
    assert (states[0] is None) == (momentum == 0.0)


def test_differs_from_plain_momentum_sgd():
    """Nesterov looks ahead: after two steps it is not heavy-ball momentum."""
    results = []
    for opt in (mx.optimizer.NAG(momentum=0.9, learning_rate=0.1),
                mx.optimizer.SGD(momentum=0.9, learning_rate=0.1)):
        w = mx.nd.zeros((2,))
        state = opt.create_state(0, w)
        for _ in range(2):
            opt.update(0, w, mx.nd.ones((2,)), state)
        results.append(w.asnumpy())
    # NAG: m=1, w=-0.19; m=1.9, w=-0.19-0.1*(1+1.71) = -0.461; SGD: -0.1, -0.29
    np.testing.assert_allclose(results[0], -0.461, rtol=1e-6)
    np.testing.assert_allclose(results[1], -0.29, rtol=1e-6)


def test_defaults_are_mxnets():
    opt = mx.optimizer.NAG()
    assert (opt.momentum, opt.lr) == (0.0, 0.01)
