"""mx.nn.compile: forward/backward/update/reshape against NumPy, the hand-built symbol and
finite differences; parameters shared both ways with the layers."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import nn


class MLP:
    """A user model: plain Python, layers composed by ordinary code."""

    def __init__(self, dtype='float32'):
        self.hidden = nn.Dense(6, dtype=dtype)
        self.out = nn.Dense(3, dtype=dtype)

    def __call__(self, x):
        return nn.softmax(self.out(nn.tanh(self.hidden(x))))


def sequential(dtype='float32'):
    return nn.Chain(nn.Dense(6, dtype=dtype), nn.tanh, nn.Dense(3, dtype=dtype), nn.softmax)


def hand_symbol():
    data = mx.sym.var('data')
    h = mx.sym.FullyConnected(data, num_hidden=6, name='dense0')
    h = mx.sym.Activation(h, act_type='tanh')
    o = mx.sym.FullyConnected(h, num_hidden=3, name='dense1')
    return mx.sym.softmax(o)


def np_softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_forward(p, x):
    h = np.tanh(x @ p['dense0_weight'].T + p['dense0_bias'])
    return np_softmax(h @ p['dense1_weight'].T + p['dense1_bias']), h


def np_backward(p, x, dy):
    y, h = np_forward(p, x)
    dz = y * (dy - (dy * y).sum(axis=1, keepdims=True))
    dh = dz @ p['dense1_weight']
    da = dh * (1 - h ** 2)
    grads = {'dense1_weight': dz.T @ h, 'dense1_bias': dz.sum(0),
             'dense0_weight': da.T @ x, 'dense0_bias': da.sum(0)}
    return da @ p['dense0_weight'], grads


def values(cm):
    return {n: p.data().asnumpy().astype(np.float64) for n, p in cm.params.items()}


def copy_values(src, dst):
    for name, param in src.params.items():
        dst.params[name].set_data(param.data())


@pytest.fixture
def batch():
    rng = np.random.RandomState(0)
    return rng.randn(4, 5).astype(np.float32), rng.randn(4, 3).astype(np.float32)


def test_user_class_sequential_symbol_and_numpy_agree(batch):
    x, dy = batch
    mx.random.seed(1)
    user = nn.compile(MLP(), (4, 5))
    with mx.name.NameManager():         # MXNet's names: fresh counters, the same names
        seq = nn.compile(sequential(), (4, 5))
    assert list(user.params) == list(seq.params) == \
        ['dense0_weight', 'dense0_bias', 'dense1_weight', 'dense1_bias']
    copy_values(user, seq)
    p = values(user)
    exe = hand_symbol().simple_bind(mx.cpu(), grad_req='write', data=(4, 5))
    exe.copy_params_from({n: a.data() for n, a in user.params.items()})
    y_ref, _ = np_forward(p, x.astype(np.float64))
    dx_ref, _ = np_backward(p, x.astype(np.float64), dy.astype(np.float64))
    exe.forward(is_train=True, data=x)
    exe.backward(mx.nd.array(dy))
    for cm in (user, seq):
        np.testing.assert_allclose(cm(x).asnumpy(), y_ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(cm.backward(dy).asnumpy(), dx_ref, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), y_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), dx_ref, rtol=1e-4, atol=1e-6)


def test_backward_matches_finite_differences():
    rng = np.random.RandomState(3)
    cm = nn.compile(MLP('float64'), (3, 5))
    assert cm.executor.arg_dict['data'].dtype == np.float64
    x, dy = rng.randn(3, 5), rng.randn(3, 3)
    cm(x)
    dx = cm.backward(dy).asnumpy()
    eps, numeric = 1e-6, np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        numeric[idx] = ((cm(xp).asnumpy() - cm(xm).asnumpy()) * dy).sum() / (2 * eps)
    np.testing.assert_allclose(dx, numeric, rtol=1e-6, atol=1e-9)


def test_backward_zeroes_the_input_gradient_but_accumulates_parameter_gradients(batch):
    x, dy = batch
    cm = nn.compile(MLP('float64'), (4, 5))
    p = values(cm)
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    dx_ref, g_ref = np_backward(p, x64, dy64)
    cm(x)
    cm.backward(dy)
    cm(x)
    dx = cm.backward(dy).asnumpy()
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-10)          # not 2 * dx_ref
    for name, g in g_ref.items():                                # grad_req 'add': twice
        np.testing.assert_allclose(cm.params[name].grad().asnumpy(), 2 * g, rtol=1e-10)


def test_returned_values_are_not_overwritten_by_later_calls(batch):
    """Each cm(x) / cm.backward(dy) returns its own arrays: later steps, also with
    another batch size (whose executor shares memory with the first), leave them alone."""
    x, dy = batch
    cm = nn.compile(MLP('float64'), (4, 5))
    p = values(cm)
    y, dx = cm(x), cm.backward(dy)
    y_ref, (dx_ref, _) = np_forward(p, x)[0], np_backward(p, x, dy)
    rng = np.random.RandomState(7)
    for n in (4, 2, 4, 3):
        cm(rng.randn(n, 5))
        dx_n = cm.backward(rng.randn(n, 3))
        assert dx_n is not dx and dx_n.shape == (n, 5)
    np.testing.assert_allclose(y.asnumpy(), y_ref, rtol=1e-12)
    np.testing.assert_allclose(dx.asnumpy(), dx_ref, rtol=1e-10, atol=1e-14)


def test_dropped_results_are_reused_but_views_keep_them(batch):
    x, dy = batch
    cm = nn.compile(MLP('float64'), (4, 5))
    p = values(cm)
    y_ref, (dx_ref, _) = np_forward(p, x)[0], np_backward(p, x, dy)
    first_y, first_dx = id(cm(x)), id(cm.backward(dy))          # dropped at once
    assert id(cm(x)) == first_y and id(cm.backward(dy)) == first_dx
    y_view, dx_view = cm(x)[1:3], cm.backward(dy).reshape((20,))  # only views held
    y_mid, dx_mid = cm(x + 1), cm.backward(dy * 2)
    assert id(y_mid) != first_y and id(dx_mid) != first_dx
    cm(x - 1)
    cm.backward(-dy)
    np.testing.assert_allclose(y_view.asnumpy(), y_ref[1:3], rtol=1e-12)
    np.testing.assert_allclose(dx_view.asnumpy(), dx_ref.reshape(-1), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(y_mid.asnumpy(), np_forward(p, x + 1)[0], rtol=1e-12)


def test_update_is_exactly_one_sgd_step(batch):
    x, dy = batch
    cm = nn.compile(MLP('float64'), (4, 5))
    p = values(cm)
    _, g_ref = np_backward(p, x.astype(np.float64), dy.astype(np.float64))
    cm(x)
    cm.backward(dy)
    cm.update(0.25)
    for name, param in cm.params.items():
        np.testing.assert_allclose(param.data().asnumpy(), p[name] - 0.25 * g_ref[name],
                                   rtol=1e-12, atol=1e-14)
        assert not param.grad().asnumpy().any()                  # zeroed for the next step
    # the next step starts from the updated weights and fresh gradients
    p2 = values(cm)
    _, g2 = np_backward(p2, x.astype(np.float64), dy.astype(np.float64))
    cm(x)
    cm.backward(dy)
    cm.update(0.5)
    for name, param in cm.params.items():
        np.testing.assert_allclose(param.data().asnumpy(), p2[name] - 0.5 * g2[name],
                                   rtol=1e-12, atol=1e-14)


def test_lr_mult_and_frozen_parameters(batch):
    x, dy = batch
    model = MLP('float64')
    model.hidden.weight.grad_req = 'null'
    model.out.bias.lr_mult = 0.0
    cm = nn.compile(model, (4, 5))
    before = values(cm)
    cm(x)
    cm.backward(dy)
    cm.update(1.0)
    after = values(cm)
    np.testing.assert_array_equal(after['dense0_weight'], before['dense0_weight'])
    np.testing.assert_array_equal(after['dense1_bias'], before['dense1_bias'])
    assert not np.allclose(after['dense1_weight'], before['dense1_weight'])


def test_batch_size_change_reshapes_and_keeps_parameters():
    rng = np.random.RandomState(5)
    cm = nn.compile(MLP('float64'), (4, 5))
    base = cm.executor
    for n in (7, 2, 4, 7):
        x, dy = rng.randn(n, 5), rng.randn(n, 3)
        p = values(cm)
        y = cm(x)
        assert y.shape == (n, 3)
        np.testing.assert_allclose(y.asnumpy(), np_forward(p, x)[0], rtol=1e-10)
        dx_ref, g_ref = np_backward(p, x, dy)
        np.testing.assert_allclose(cm.backward(dy).asnumpy(), dx_ref, rtol=1e-9, atol=1e-12)
        cm.update(0.1)
        for name, g in g_ref.items():
            np.testing.assert_allclose(cm.params[name].data().asnumpy(), p[name] - 0.1 * g,
                                       rtol=1e-10, atol=1e-13)
    assert cm.executor.arg_dict['dense0_weight'] is base.arg_dict['dense0_weight']
    assert cm.input_shape == (4, 5)


def test_parameters_flow_both_ways(batch):
    x, _ = batch
    model = MLP()
    cm = nn.compile(model, (4, 5))
    assert model.hidden.weight.shape == (6, 5)                  # deferred shape filled
    w = model.hidden.weight.data()
    assert cm.executor.arg_dict['dense0_weight'] is w
    w_out = np.random.RandomState(1).randn(3, 6).astype(np.float32)
    model.out.weight.set_data(w_out)                             # layer -> executor
    model.out.bias.set_data(np.array([0, 3, 0], np.float32))
    p = values(cm)
    np.testing.assert_array_equal(p['dense1_weight'], w_out)
    np.testing.assert_allclose(cm(x).asnumpy(), np_forward(p, x)[0], rtol=1e-5)
    cm(x)
    cm.backward(np.random.RandomState(0).randn(4, 3))
    old = w.asnumpy()
    cm.update(1.0)                                               # executor -> layer
    assert not np.allclose(model.hidden.weight.data().asnumpy(), old)


def test_predict_uses_inference_mode_and_backward_needs_training_forward(batch):
    x, dy = batch
    net = nn.Chain(nn.Dense(8), nn.Dropout(0.5), nn.Dense(3))
    cm = nn.compile(net, (4, 5))
    a, b = cm.predict(x).asnumpy(), cm.predict(x).asnumpy()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(mx.MXNetError, match='training forward'):
        cm.backward(dy)
    with pytest.raises(ValueError, match=r'dy has shape \(4, 2\).*\(4, 3\)'):
        cm(x)
        cm.backward(np.zeros((4, 2)))


def test_compile_errors_are_clear():
    with pytest.raises(mx.MXNetError, match='dense0_fwd.*weight'):
        nn.compile(nn.Chain(nn.Dense(3, in_units=4)), (2, 5))
    cm = nn.compile(nn.Chain(nn.Dense(3)), (2, 5))
    with pytest.raises(mx.MXNetError, match=r'input shape \(2, 6\).*\(2, 5\)'):
        cm(np.zeros((2, 6)))
    dense = nn.Dense(2)
    with pytest.raises(mx.MXNetError, match=r"free variable\(s\) \['other'\]"):
        nn.compile(lambda x: dense(mx.sym.var('other')), (2, 5))
    with pytest.raises(mx.MXNetError, match=r"free variable.*'dense3_weight'.*reachable"):
        nn.compile(lambda x: nn.Dense(2)(x), (2, 5))     # a layer made inside the call
