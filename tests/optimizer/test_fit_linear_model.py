"""Every registered optimizer fits a linearly separable problem (Chainer's
test_optimizers_by_linear_model): logistic regression written in NDArray math, trained
through an Updater, must classify every training point within a bounded number of steps;
and every optimizer's update returns without waiting for its inputs."""
import threading

import numpy as np
import pytest

import mxcy as mx
from mxcy import registry

# Hyperparameters per registered optimizer class; a newly registered optimizer must be
# added here (test_every_registered_optimizer_is_covered).
FIT_KWARGS = {
    'SGD': dict(learning_rate=0.5, momentum=0.9),
    'ccSGD': dict(learning_rate=0.5, momentum=0.9),
    'NAG': dict(learning_rate=0.5, momentum=0.9),
    'Adam': dict(learning_rate=0.1),
    'AdaGrad': dict(learning_rate=0.5),
    'RMSProp': dict(learning_rate=0.05),
    'AdaDelta': dict(epsilon=1e-3),
    'Ftrl': dict(learning_rate=2.0, lamda1=0.001),
    'Signum': dict(learning_rate=0.05),
    'LAMB': dict(learning_rate=0.1),
    'Adamax': dict(learning_rate=0.1),
    'Nadam': dict(learning_rate=0.1),
    'FTML': dict(learning_rate=0.1),
    'GroupAdaGrad': dict(learning_rate=0.5),
    'DCASGD': dict(learning_rate=0.5, momentum=0.9),
    'LARS': dict(learning_rate=0.5, momentum=0.9, eta=0.1),
    'LBSGD': dict(learning_rate=0.5, momentum=0.9),
    'SGLD': dict(learning_rate=0.002),
    'Test': dict(rescale_grad=-0.5),      # Test adds the gradient: descend by negating it
}
MAX_STEPS = 400
RANDOM = ('SGLD',)            # draws noise: compared against itself only statistically


def _wd(name):
    return 0.0 if name == 'GroupAdaGrad' else 0.01      # GroupAdaGrad refuses wd


def separable_data(n=200, seed=0):
    """Two features of very different scales, a boundary mostly along the small one and
    a bias: the first gradient step does not separate it."""
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 2) * np.array([3.0, 0.5])
    w_true, b_true = np.array([0.3, -2.0]), 1.0
    margin = x @ w_true + b_true
    x = x[np.abs(margin) > 0.2][:64]                 # keep a margin
    y = (x @ w_true + b_true > 0).astype(np.float32)
    return x.astype(np.float32), y.reshape(-1, 1)


def registered_classes():
    return {type(mx.optimizer.create(name)) for name in
            registry.list_registered(mx.optimizer.Optimizer, 'optimizer')}


def test_every_registered_optimizer_is_covered():
    assert {k.__name__ for k in registered_classes()} == set(FIT_KWARGS)


@pytest.mark.parametrize('name', sorted(FIT_KWARGS))
def test_fits_a_linearly_separable_problem(name):
    if name in RANDOM:
        pytest.skip('noise of variance lr keeps SGLD from a bounded step count')
    x_np, y_np = separable_data()
    x, y = mx.nd.array(x_np), mx.nd.array(y_np)
    n = x_np.shape[0]
    w, b = mx.nd.array([[-1.0], [1.0]]), mx.nd.zeros((1,))   # starts pointing wrong
    updater = mx.optimizer.get_updater(mx.optimizer.create(name, **FIT_KWARGS[name]))
    losses = []
    for step in range(MAX_STEPS):
        p = mx.nd.sigmoid(mx.nd.dot(x, w) + b)
        err = p - y                                   # d(mean log-loss)/d(logit) * n
        grad_w = mx.nd.dot(x, err, transpose_a=True) / n
        grad_b = err.sum(axis=0) / n
        updater(0, grad_w, w)
        updater(1, grad_b, b)
        if step % 10 == 0:
            pn = p.asnumpy()
            losses.append(-np.mean(y_np * np.log(pn + 1e-9) + (1 - y_np) *
                                   np.log(1 - pn + 1e-9)))
            pred = (x_np @ w.asnumpy() + b.asnumpy()) > 0
            if np.array_equal(pred, y_np > 0.5):
                break
    else:
        pytest.fail(f"{name} did not separate the data in {MAX_STEPS} steps; losses "
                    f"{losses}")
    assert step >= 10, f"{name} separated the data at step {step}: the test is too easy"
    assert losses[-1] < losses[0]


@pytest.mark.parametrize('name', sorted(FIT_KWARGS))
def test_update_returns_before_its_inputs_are_ready(name):
    if name in RANDOM:
        pytest.skip('random updates')
    """The update only pushes engine ops: it must not wait for a pending writer."""
    if mx.engine.engine_type() != 'ThreadedEngine':
        pytest.skip("NaiveEngine runs every op at the push")
    opt = mx.optimizer.create(name, wd=_wd(name), clip_gradient=1.0)
    weight, grad = mx.nd.ones((3, 4)), mx.nd.zeros((3, 4))
    state = opt.create_state(0, weight)
    weight.wait_to_read()
    grad.wait_to_read()
    release, timed_out = threading.Event(), []

    def slow_writer(g):
        if not release.wait(10):
            timed_out.append(True)
        g[...] = 0.5
    mx.engine.push(lambda: slow_writer(grad._np_view()), (), [grad], name='slow_writer')
    opt.update(0, weight, grad, state)
    returned_before_release = not release.is_set()
    release.set()
    weight.wait_to_read()
    assert returned_before_release and not timed_out
    # the update saw the written gradient: compare with a fresh, synchronous run
    opt2 = mx.optimizer.create(name, wd=_wd(name), clip_gradient=1.0)
    w2 = mx.nd.ones((3, 4))
    opt2.update(0, w2, mx.nd.full((3, 4), 0.5), opt2.create_state(0, w2))
    assert np.array_equal(weight.asnumpy(), w2.asnumpy())


@pytest.mark.parametrize('name', sorted(FIT_KWARGS))
def test_bad_grad_shape_or_dtype_raises_at_the_call(name):
    opt = mx.optimizer.create(name)
    weight = mx.nd.ones((3, 4))
    state = opt.create_state(0, weight)
    with pytest.raises(ValueError, match=r"update: index 0: grad has shape \(4,\), but the "
                                         r"weight has shape \(3, 4\)"):
        opt.update(0, weight, mx.nd.ones((4,)), state)
    with pytest.raises(TypeError, match="grad has dtype float64, but the weight has dtype "
                                        "float32"):
        opt.update(0, weight, mx.nd.ones((3, 4), dtype='float64'), state)
    assert np.array_equal(weight.asnumpy(), np.ones((3, 4)))


@pytest.mark.parametrize('name', sorted(FIT_KWARGS))
def test_naive_and_threaded_engines_give_identical_updates(name):
    if name in RANDOM:
        pytest.skip('random updates')
    results = []
    old = mx.engine.engine_type()
    try:
        for engine in ('NaiveEngine', 'ThreadedEngine'):
            mx.engine.set_engine_type(engine)
            rng = np.random.RandomState(3)
            opt = mx.optimizer.create(name, wd=_wd(name), clip_gradient=1.0)
            weight = mx.nd.array(rng.randn(5, 4))
            state = opt.create_state(0, weight)
            for _ in range(4):
                opt.update(0, weight, mx.nd.array(rng.randn(5, 4)), state)
            results.append(weight.asnumpy())
    finally:
        mx.engine.set_engine_type(old)
    assert np.array_equal(results[0], results[1])
