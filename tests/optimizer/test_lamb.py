"""mx.optimizer.LAMB: the docstring rule, trust-ratio bounds, bias correction."""
import numpy as np
import pytest

import mxcy as mx


def reference(w, g, state, t, lr, wd, opt):
    """The LAMB docstring, transcribed."""
    m, v = state
    c = opt.clip_gradient
    g = np.clip(opt.rescale_grad * g, -c, c) if c else opt.rescale_grad * g
    m = opt.beta1 * m + (1 - opt.beta1) * g
    v = opt.beta2 * v + (1 - opt.beta2) * g ** 2
    if opt.bias_correction:
        m_hat, v_hat = m / (1 - opt.beta1 ** t), v / (1 - opt.beta2 ** t)
    else:
        m_hat, v_hat = m, v
    r = m_hat / (np.sqrt(v_hat) + opt.epsilon) + wd * w
    r1 = np.linalg.norm(w)
    if opt.lower_bound:
        r1 = max(r1, opt.lower_bound)
    if opt.upper_bound:
        r1 = min(r1, opt.upper_bound)
    r2 = np.linalg.norm(r)
    ratio = r1 / r2 if r1 != 0 and r2 != 0 else 1.0
    return w - lr * ratio * r, (m, v)


@pytest.mark.parametrize('config', ['plain', 'wd_rescale_clip', 'mults'])
@pytest.mark.parametrize('extra', [{}, {'bias_correction': False},
                                   {'lower_bound': 3.0, 'upper_bound': 3.5}],
                         ids=['default', 'no_bias_correction', 'bounds'])
def test_steps_match_docstring(check_rule, config, extra):
    check_rule(lambda **kw: mx.optimizer.LAMB(**extra, **kw), reference, config, steps=5)


def test_zero_weight_uses_ratio_one():
    opt = mx.optimizer.LAMB(learning_rate=0.1)
    w = mx.nd.zeros((2,), dtype='float64')
    opt.update(0, w, mx.nd.array([1.0, -1.0], dtype='float64'), opt.create_state(0, w))
    np.testing.assert_allclose(w.asnumpy(), [-0.1, 0.1], rtol=1e-5)


def test_defaults_are_mxnets():
    opt = mx.optimizer.LAMB()
    assert (opt.lr, opt.beta1, opt.beta2, opt.epsilon, opt.lower_bound, opt.upper_bound,
            opt.bias_correction) == (0.001, 0.9, 0.999, 1e-6, None, None, True)
