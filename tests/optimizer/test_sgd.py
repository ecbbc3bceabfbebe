"""mx.optimizer.SGD: the docstring rule, momentum state, multi_precision."""
import warnings

import numpy as np
import pytest

import mxcy as mx

CONFIGS = ['plain', 'wd_rescale_clip', 'mults']


def reference(w, g, m, t, lr, wd, opt):
    """The SGD docstring, transcribed."""
    c = opt.clip_gradient
    g = (np.clip(opt.rescale_grad * g, -c, c) if c else opt.rescale_grad * g) + wd * w
    if opt.momentum == 0:
        return w - lr * g, m
    m = opt.momentum * m - lr * g
    return w + m, m


@pytest.mark.parametrize('config', CONFIGS)
@pytest.mark.parametrize('momentum', [0.0, 0.9])
def test_steps_match_docstring(check_rule, config, momentum):
    opt, _, states = check_rule(lambda **kw: mx.optimizer.SGD(momentum=momentum, **kw),
                                reference, config)
    assert (states[0] is None) == (momentum == 0.0)


def test_float32_matches_docstring(check_rule):
    check_rule(lambda **kw: mx.optimizer.SGD(momentum=0.9, **kw), reference,
               'wd_rescale_clip', dtype='float32', rtol=1e-5, atol=1e-6)


def test_defaults_are_mxnets():
    opt = mx.optimizer.SGD()
    assert (opt.momentum, opt.lr, opt.wd, opt.rescale_grad, opt.clip_gradient) == \
        (0.0, 0.01, 0.0, 1.0, None)
    assert opt.lazy_update is True and opt.multi_precision is False


def test_multi_precision_keeps_a_float32_master_copy():
    rng = np.random.RandomState(1)
    w0 = rng.randn(4, 5).astype(np.float16)
    grads = [rng.randn(4, 5).astype(np.float16) for _ in range(3)]
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, multi_precision=True)
    weight = mx.nd.array(w0, dtype='float16')
    state = opt.create_state_multi_precision(0, weight)
    weight32, mom = state
    assert weight32.dtype == np.float32 and mom.dtype == np.float32
    ref_w, ref_m = w0.astype(np.float32), np.zeros((4, 5), np.float32)
    for g in grads:
        opt.update_multi_precision(0, weight, mx.nd.array(g, dtype='float16'), state)
        ref_m = 0.9 * ref_m - 0.1 * g.astype(np.float32)
        ref_w = ref_w + ref_m
    assert weight.dtype == np.float16
    np.testing.assert_allclose(weight32.asnumpy(), ref_w, rtol=1e-5, atol=1e-6)
    assert np.array_equal(weight.asnumpy(), weight32.asnumpy().astype(np.float16))


def test_float16_without_multi_precision_warns_and_updates_in_float16():
    opt = mx.optimizer.SGD(learning_rate=0.5)
    weight = mx.nd.ones((3,), dtype='float16')
    with pytest.warns(UserWarning, match='multi_precision=True'):
        state = opt.create_state_multi_precision(0, weight)
    opt.update_multi_precision(0, weight, mx.nd.ones((3,), dtype='float16'), state)
    assert np.array_equal(weight.asnumpy(), np.full(3, 0.5, np.float16))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        mx.optimizer.SGD(multi_precision=True).create_state_multi_precision(0, weight)


def test_bad_hyperparameters_name_the_argument():
    with pytest.raises(TypeError, match="SGD: momentum must be a number, got str"):
        mx.optimizer.SGD(momentum='0.9')
    with pytest.raises(TypeError, match="SGD: learning_rate must be a number"):
        mx.optimizer.SGD(learning_rate=None)
