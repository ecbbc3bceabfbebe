"""Shared harness for the optimizer tests: run an optimizer and a NumPy transcription of
its docstring rule side by side and compare weights and states after every step."""
import numpy as np
import pytest

import mxcy as mx

# Three parameters with MXNet-style names: a weight, a bias (wd_mult 0 by default when
# names are given) and a BatchNorm gamma (keeps wd).
SHAPES = {0: (3, 4), 1: (4,), 2: (2, 3)}
NAMES = {0: 'fc_weight', 1: 'fc_bias', 2: 'bn_gamma'}

# name -> (optimizer kwargs, lr multiplier per index, wd multiplier per index)
CONFIGS = {
    'plain': ({}, {}, {}),
    'wd_rescale_clip': ({'wd': 0.1, 'rescale_grad': 0.5, 'clip_gradient': 0.3}, {}, {}),
    'mults': ({'wd': 0.2, 'param_idx2name': NAMES},
              {0: 0.5, 2: 3.0}, {0: 2.0, 1: 0.0}),
}


def _to_numpy(state):
    if state is None:
        return None
    if isinstance(state, (tuple, list)):
        return tuple(_to_numpy(s) for s in state)
    return state.asnumpy()


def _assert_tree_close(actual, expected, what, rtol, atol):
    if expected is None:
        assert actual is None, f"{what}: expected None, got {actual!r}"
        return
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), what
        for i, (a, e) in enumerate(zip(actual, expected)):
            _assert_tree_close(a, e, f"{what}[{i}]", rtol, atol)
        return
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def run_against_reference(make, reference, config, steps=4, lr=0.1, dtype='float64',
                          rtol=1e-9, atol=1e-12, seed=0):
    """Run `steps` updates of every parameter with ``make(**kwargs)`` and `reference`.

    ``reference(w, g, state, t, lr, wd, opt) -> (w, state)`` is the docstring's rule in
    NumPy for one parameter: `state` is the tree of NumPy arrays matching the
    optimizer's state, `t` the parameter's update count (1 first), `lr`/`wd` the
    effective rates (multipliers applied), `opt` the optimizer (its hyperparameters).
    """
    kwargs, lr_mult, wd_mult = CONFIGS[config]
    opt = make(learning_rate=lr, **kwargs)
    if config == 'mults':
        opt.set_lr_mult({'fc_weight': 0.5, 2: 3.0})
        opt.set_wd_mult({'fc_weight': 2.0})
    rng = np.random.RandomState(seed)
    weights = {i: mx.nd.array(rng.randn(*s), dtype=dtype) for i, s in SHAPES.items()}
    ref_w = {i: w.asnumpy() for i, w in weights.items()}
    states = {i: opt.create_state(i, w) for i, w in weights.items()}
    ref_s = {i: _to_numpy(s) for i, s in states.items()}
    for t in range(1, steps + 1):
        for i, w in weights.items():
            g = (rng.randn(*SHAPES[i]) * 2).astype(dtype)
            grad = mx.nd.array(g, dtype=dtype)
            opt.update(i, w, grad, states[i])
            eff_lr, eff_wd = lr * lr_mult.get(i, 1.0), opt.wd * wd_mult.get(i, 1.0)
            ref_w[i], ref_s[i] = reference(ref_w[i].copy(), g.copy(), ref_s[i], t, eff_lr,
                                           eff_wd, opt)
            assert np.array_equal(grad.asnumpy(), g), "update modified the gradient"
            what = f"{type(opt).__name__} config={config} step={t} index={i}"
            _assert_tree_close(w.asnumpy(), ref_w[i], f"{what} weight", rtol, atol)
            _assert_tree_close(_to_numpy(states[i]), ref_s[i], f"{what} state", rtol, atol)
    return opt, weights, states


def clip_grad(g, opt):
    """``clip(g, clip_gradient)`` with MXNet's convention (None or <= 0: off)."""
    c = opt.clip_gradient
    return np.clip(g, -c, c) if c is not None and c > 0 else g


@pytest.fixture
def check_rule():
    return run_against_reference


@pytest.fixture
def clip_fn():
    return clip_grad
