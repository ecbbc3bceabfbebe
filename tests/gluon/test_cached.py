"""A hybridized block's cached executors (gluon/_cached.py) run with no copies: on the
caller's inputs, into fresh outputs, with gradients written straight into their targets.
These tests press where that could go wrong: outputs kept across calls, inputs with and
without gradients through one signature, accumulated gradients, a block used twice in
one pass, autograd.grad next to the parameters' own gradients, graphs that return an
input or a parameter."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd, gluon

RNG = np.random.default_rng(11)


def mlp(hybrid=True):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(5, activation='tanh', in_units=6),
                gluon.nn.Dense(3, in_units=5))
    net.initialize(mx.init.Xavier())
    if hybrid:
        net.hybridize()
    return net


def twin_nets():
    """The same network hybridized and imperative, same weights."""
    a, b = mlp(True), mlp(False)
    for pa, pb in zip(a.collect_params().values(), b.collect_params().values()):
        pb.set_data(pa.data())
    return a, b


def data(*shape):
    return mx.nd.array(RNG.standard_normal(shape))


def grads_of(net):
    """The parameters' gradients, in order, as NumPy arrays."""
    return [p.grad().asnumpy() for p in net.collect_params().values()]


def assert_twins_agree(hybrid, imperative, atol):
    """Two lists of arrays (the hybridized and the imperative twin's) agree."""
    assert len(hybrid) == len(imperative)
    for g_h, g_i in zip(hybrid, imperative):
        np.testing.assert_allclose(g_h, g_i, rtol=1e-5, atol=atol)


def test_outputs_kept_across_calls_are_not_overwritten():
    net = mlp()
    xs = [data(4, 6) for _ in range(3)]
    outs = [net(x) for x in xs]
    with autograd.record():
        recorded = [net(x) for x in xs]
    want = [mlp_reference(net, x) for x in xs]
    for got in (outs, recorded):
        for o, w in zip(got, want):
            np.testing.assert_allclose(o.asnumpy(), w, rtol=1e-5, atol=1e-6)
    assert len({id(o) for o in outs}) == 3


def mlp_reference(net, x):
    w1, b1, w2, b2 = [p.data().asnumpy() for p in net.collect_params().values()]
    return np.tanh(x.asnumpy() @ w1.T + b1) @ w2.T + b2


def test_the_input_is_read_in_place_and_later_writes_do_not_reach_back():
    net = mlp()
    x = data(4, 6)
    before = mlp_reference(net, x)
    y = net(x)
    x[:] = 0            # pushed after the forward that reads x: y keeps the old input
    np.testing.assert_allclose(y.asnumpy(), before, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net(x).asnumpy(), mlp_reference(net, x), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize('input_grad', [False, True])
def test_gradients_equal_the_imperative_block(input_grad):
    hyb, imp = twin_nets()
    x = data(4, 6)
    grads = []
    for net in (hyb, imp):
        xi = x.copy()
        if input_grad:
            xi.attach_grad()
        with autograd.record():
            loss = (net(xi) ** 2).sum()
        loss.backward()
        grads.append(grads_of(net) + ([xi.grad.asnumpy()] if input_grad else []))
    assert_twins_agree(*grads, atol=1e-6)


def test_one_signature_with_and_without_an_input_gradient():
    net = mlp()
    x = data(4, 6)
    x.attach_grad()
    plain = data(4, 6)
    for _ in range(2):
        with autograd.record():
            loss = (net(plain) * net(x)).sum()
        loss.backward()
    # d/dx of sum(f(plain) * f(x)) through the imperative twin
    _, imp = twin_nets()
    for pi, ph in zip(imp.collect_params().values(), net.collect_params().values()):
        pi.set_data(ph.data())
    x2 = x.copy()
    x2.attach_grad()
    with autograd.record():
        loss = (imp(plain) * imp(x2)).sum()
    loss.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), x2.grad.asnumpy(), rtol=1e-5, atol=1e-6)


def test_accumulated_and_shared_parameter_gradients():
    hyb, imp = twin_nets()
    for net in (hyb, imp):
        net.collect_params().setattr('grad_req', 'add')
    x1, x2 = data(4, 6), data(4, 6)
    results = []
    for net in (hyb, imp):
        for _ in range(2):                  # accumulates over two backward passes
            with autograd.record():
                loss = (net(x1) * net(x2)).sum()     # the block used twice in one pass
            loss.backward()
        results.append(grads_of(net))
    assert_twins_agree(*results, atol=1e-5)


def test_autograd_grad_leaves_the_parameters_gradients_alone():
    net = mlp()
    x = data(4, 6)
    x.attach_grad()
    with autograd.record():
        (net(x) ** 2).sum().backward()
    kept = [g.copy() for g in grads_of(net)]
    with autograd.record():
        y = (net(x) ** 2).sum()
    gx, = autograd.grad(y, [x])
    np.testing.assert_allclose(gx.asnumpy(), x.grad.asnumpy(), rtol=1e-5, atol=1e-6)
    for g, k in zip(grads_of(net), kept):
        np.testing.assert_array_equal(g, k)


class PassThrough(gluon.HybridBlock):
    """Returns its input, a parameter and a computed value."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.w = self.params.get('w', shape=(3,), init=mx.init.One())

    def hybrid_forward(self, F, x, w):
        return x, w, F.broadcast_mul(x, w)


def test_a_graph_returning_its_input_and_a_parameter_copies_them_out():
    block = PassThrough()
    block.initialize()
    block.hybridize()
    x = data(2, 3)
    x_out, w_out, prod = block(x)
    x_out[:] = 5
    w_out[:] = 7
    np.testing.assert_array_equal(block.w.data().asnumpy(), [1, 1, 1])
    assert x.asnumpy().max() < 5
    np.testing.assert_allclose(prod.asnumpy(), x.asnumpy())


class Difference(gluon.HybridBlock):
    def hybrid_forward(self, F, a, b):
        return F.broadcast_sub(a, b) * 2


def test_one_array_as_two_inputs_then_two_arrays():
    """The executor's argument places are tracked by graph entry: after f(x, x), a call
    f(y0, y1) must read y0 and y1, not one of them twice."""
    block = Difference()
    block.hybridize()
    x, y0, y1 = data(2, 3), data(2, 3), data(2, 3)
    np.testing.assert_array_equal(block(x, x).asnumpy(), np.zeros((2, 3)))
    for _ in range(2):      # twice: the second call runs on programs already built
        np.testing.assert_allclose(block(y0, y1).asnumpy(),
                                   2 * (y0.asnumpy() - y1.asnumpy()), rtol=1e-6)


def test_an_output_fed_back_as_the_next_input():
    square = gluon.nn.HybridLambda(lambda F, v: F.tanh(v) * 3)
    square.hybridize()
    v = data(2, 3)
    want = v.asnumpy()
    for _ in range(3):
        v = square(v)
        want = np.tanh(want) * 3
    np.testing.assert_allclose(v.asnumpy(), want, rtol=1e-5)


def train_step(net, x, label, trainer=None, retain=False):
    """One recorded step with the fused sparse cross-entropy loss (the bench's step)."""
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    with autograd.record():
        loss = loss_fn(net(x), label)
    loss.backward(retain_graph=retain)
    if trainer is not None:
        trainer.step(x.shape[0])
    return loss


def test_shapes_alternating_each_keep_their_executor_and_gradients():
    """Batch sizes 4, 7, 4, 7: each signature binds once, and every call's values and
    gradients equal the imperative twin's (the rebinding slots are per executor)."""
    hyb, imp = twin_nets()
    for step, n in enumerate((4, 7, 4, 7)):
        x, label = data(n, 6), mx.nd.array(RNG.integers(0, 3, n))
        results = []
        for net in (hyb, imp):
            loss = train_step(net, x, label)
            results.append([loss.asnumpy()] + grads_of(net))
        assert_twins_agree(*results, atol=1e-5)
    assert sorted(len(v) for v in hyb._cached.free.values()) == [1, 1]


def test_retain_graph_backward_twice_through_the_executor():
    hyb, imp = twin_nets()
    x, label = data(5, 6), mx.nd.array([0, 1, 2, 1, 0])
    results = []
    for net in (hyb, imp):
        net.collect_params().setattr('grad_req', 'add')
        loss = train_step(net, x, label, retain=True)
        loss.backward()                     # the same graph again: gradients doubled
        results.append(grads_of(net))
        with pytest.raises(mx.base.MXNetError, match='retain_graph'):
            loss.backward()                 # freed by the second (not retained) pass
    assert_twins_agree(*results, atol=1e-5)
    once = twin_nets()[0]
    for pa, pb in zip(once.collect_params().values(), hyb.collect_params().values()):
        pa.set_data(pb.data())
    train_step(once, x, label)
    assert_twins_agree(grads_of(hyb), [2 * g for g in grads_of(once)], atol=1e-5)


def test_two_threads_train_hybridized_blocks_at_once():
    """Each thread its own network and tape; both end where one thread alone ends."""
    import threading
    x, label = data(8, 6), mx.nd.array(RNG.integers(0, 3, 8))
    first = mlp()
    start = [p.data().copy() for p in first.collect_params().values()]

    def fresh_net():
        net = mlp()
        for p, v in zip(net.collect_params().values(), start):
            p.set_data(v)
        return net, gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    alone, trainer = fresh_net()
    for _ in range(20):
        train_step(alone, x, label, trainer)
    want = [p.data().asnumpy() for p in alone.collect_params().values()]
    results, errors = {}, []

    def work(k):
        try:
            net, tr = fresh_net()
            for _ in range(20):
                train_step(net, x, label, tr)
            results[k] = [p.data().asnumpy() for p in net.collect_params().values()]
        except Exception as exc:           # noqa: BLE001
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == [] and not any(t.is_alive() for t in threads)
    for k in range(2):
        assert_twins_agree(results[k], want, atol=1e-6)


class _FailingBackward(autograd.Function):
    def forward(self, x):
        return x * 1

    def backward(self, dy):
        raise ValueError('backward failed on purpose')


def test_an_error_in_the_middle_of_backward_leaves_block_and_engine_usable():
    hyb, imp = twin_nets()
    x = data(4, 6)
    with autograd.record():
        loss = _FailingBackward()(hyb(x)).sum()
    with pytest.raises(ValueError, match='on purpose'):
        loss.backward()
    mx.nd.waitall()                         # nothing left failed in the engine
    del loss
    label = mx.nd.array([0, 1, 2, 0])
    results = []
    for net in (hyb, imp):
        loss = train_step(net, x, label)
        results.append([loss.asnumpy()] + grads_of(net))
    assert_twins_agree(*results, atol=1e-5)


def test_a_recorded_call_without_backward_frees_its_executor_at_once():
    """The recorded node holds the executor and the executor only detached twins of the
    outputs: dropping the outputs returns the executor with no garbage collection."""
    import gc
    net = mlp()
    x = data(4, 6)
    gc.disable()
    try:
        for _ in range(5):
            with autograd.record():
                out = net(x)
            del out
        assert sorted(len(v) for v in net._cached.free.values()) == [1]
    finally:
        gc.enable()
