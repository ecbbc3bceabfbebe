"""Each layer against a NumPy reference, through mx.nn.compile (forward and gradients)."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import nn

RNG = np.random.RandomState(0)


def run(net, x, dy=None, train=True, **kwargs):
    cm = nn.compile(net, x.shape, **kwargs)
    y = (cm(x) if train else cm.predict(x)).asnumpy()
    dx = cm.backward(dy).asnumpy() if dy is not None else None
    return cm, y, dx


def p(cm, name):
    return cm.params[name].data().asnumpy().astype(np.float64)


def test_dense_without_flatten_bias_and_with_activation():
    x = RNG.randn(2, 3, 4)
    net = nn.Chain(nn.Dense(5, activation='sigmoid', use_bias=False, flatten=False,
                            dtype='float64'))
    cm, y, dx = run(net, x, dy=np.ones((2, 3, 5)))
    assert list(cm.params) == ['dense0_weight']
    w = p(cm, 'dense0_weight')
    ref = 1 / (1 + np.exp(-(x @ w.T)))
    np.testing.assert_allclose(y, ref, rtol=1e-12)
    np.testing.assert_allclose(dx, (ref * (1 - ref)) @ w, rtol=1e-10)
    flat = nn.compile(nn.Chain(nn.Dense(5, dtype='float64')), x.shape)
    np.testing.assert_allclose(flat(x).asnumpy(), x.reshape(2, 12) @ p(flat, 'dense1_weight').T
                               + p(flat, 'dense1_bias'), rtol=1e-12)


def np_conv(x, w, b, stride, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, f, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3])) + b
    return out


def test_conv_pool_flatten_stack():
    x = RNG.randn(2, 3, 7, 7)
    net = nn.Sequential()
    net.add(nn.Conv2D(4, kernel_size=3, strides=1, padding=1, activation='relu'),
            nn.MaxPool2D(pool_size=2), nn.Flatten())
    net.cast('float64')                 # gluon's Conv2D has no dtype argument (MXNet's)
    cm, y, _ = run(net, x)
    assert cm.params['conv0_weight'].shape == (4, 3, 3, 3)
    conv = np.maximum(np_conv(x, p(cm, 'conv0_weight'), p(cm, 'conv0_bias'), 1, 1), 0)
    pooled = conv[:, :, :6, :6].reshape(2, 4, 3, 2, 3, 2).max(axis=(3, 5))
    np.testing.assert_allclose(y, pooled.reshape(2, -1), rtol=1e-10)


def test_avg_and_global_pooling():
    x = RNG.randn(2, 3, 4, 4)
    _, y, dx = run(nn.Chain(nn.AvgPool2D(pool_size=2, strides=2)), x,
                   dy=np.ones((2, 3, 2, 2)), dtype='float64')
    np.testing.assert_allclose(y, x.reshape(2, 3, 2, 2, 2, 2).mean(axis=(3, 5)), rtol=1e-12)
    np.testing.assert_allclose(dx, np.full(x.shape, 0.25), rtol=1e-12)
    _, y, _ = run(nn.Chain(nn.GlobalMaxPool2D()), x, dtype='float64')
    np.testing.assert_allclose(y, x.max(axis=(2, 3), keepdims=True), rtol=1e-12)
    _, y, _ = run(nn.Chain(nn.GlobalAvgPool2D()), x, dtype='float64')
    np.testing.assert_allclose(y, x.mean(axis=(2, 3), keepdims=True), rtol=1e-12)


@pytest.mark.parametrize('act, ref', [('relu', lambda v: np.maximum(v, 0)),
                                      ('tanh', np.tanh),
                                      ('softrelu', lambda v: np.log1p(np.exp(v)))])
def test_activation_layer(act, ref):
    x = RNG.randn(3, 4)
    cm, y, _ = run(nn.Chain(nn.Activation(act)), x, dtype='float64')
    np.testing.assert_allclose(y, ref(x), rtol=1e-10)
    assert cm.symbol.name == f'{act}0_fwd'


def test_batchnorm_training_and_inference():
    x = RNG.randn(8, 3, 2, 2)
    bn = nn.BatchNorm(momentum=0.5)
    bn.cast('float64')
    cm = nn.compile(nn.Chain(bn), x.shape)
    assert list(cm.params) == ['batchnorm0_gamma', 'batchnorm0_beta',
                               'batchnorm0_running_mean', 'batchnorm0_running_var']
    assert cm.symbol.list_auxiliary_states() == ['batchnorm0_running_mean',
                                                 'batchnorm0_running_var']
    np.testing.assert_array_equal(bn.gamma.data().asnumpy(), 1)
    np.testing.assert_array_equal(bn.running_var.data().asnumpy(), 1)
    y = cm(x).asnumpy()
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    norm = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(y, norm, rtol=1e-8, atol=1e-10)
    running_mean = bn.running_mean.data().asnumpy()
    np.testing.assert_allclose(running_mean, 0.5 * mean, rtol=1e-8)
    running_var = bn.running_var.data().asnumpy()
    y = cm.predict(x).asnumpy()
    ref = (x - running_mean[None, :, None, None]) / \
        np.sqrt(running_var[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(y, ref, rtol=1e-8, atol=1e-10)
    frozen = nn.BatchNorm(center=False, scale=False)
    assert (frozen.beta.grad_req, frozen.gamma.grad_req) == ('null', 'null')


def test_dropout_masks_in_training_only():
    x = np.ones((200, 50))
    cm, y, _ = run(nn.Chain(nn.Dropout(0.5)), x, dtype='float64')
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert 0.4 < (y == 0).mean() < 0.6
    np.testing.assert_array_equal(cm.predict(x).asnumpy(), x)


def test_embedding():
    idx = np.array([[0, 3], [2, 2]], dtype=np.float32)
    cm, y, dx = run(nn.Chain(nn.Embedding(5, 4)), idx, dy=np.ones((2, 2, 4)))
    np.testing.assert_allclose(y, p(cm, 'embedding0_weight')[idx.astype(int)], rtol=1e-6)
    assert not dx.any()                      # indices get no gradient
    grad = cm.params['embedding0_weight'].grad().asnumpy()
    np.testing.assert_allclose(grad[:, 0], [1, 0, 2, 1, 0])


def np_lstm(x, weights, h0, c0):
    wx, wh, bx, bh = weights
    hs, h, c = [], h0, c0
    sig = lambda v: 1 / (1 + np.exp(-v))
    for t in range(x.shape[0]):
        i, f, g, o = np.split(x[t] @ wx.T + bx + h @ wh.T + bh, 4, axis=1)
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        hs.append(h)
    return np.stack(hs), h, c


def lstm_weights(cm, layer):
    return [p(cm, f'lstm0_{layer}_{k}') for k in ('i2h_weight', 'h2h_weight', 'i2h_bias',
                                                  'h2h_bias')]


def test_lstm_two_layers_deferred_input_size_and_batch_change():
    lstm = nn.LSTM(4, num_layers=2, dtype='float64')
    cm = nn.compile(nn.Chain(lstm), (5, 3, 6))
    assert list(cm.params)[:4] == ['lstm0_l0_i2h_weight', 'lstm0_l0_h2h_weight',
                                   'lstm0_l1_i2h_weight', 'lstm0_l1_h2h_weight']
    assert lstm.l0_i2h_weight.shape == (16, 6)
    assert lstm.l1_i2h_weight.shape == (16, 4)
    for n in (3, 2):                                  # the zero state follows the batch
        x = RNG.randn(5, n, 6)
        zeros = np.zeros((n, 4))
        h1, _, _ = np_lstm(x, lstm_weights(cm, 'l0'), zeros, zeros)
        h2, _, _ = np_lstm(h1, lstm_weights(cm, 'l1'), zeros, zeros)
        np.testing.assert_allclose(cm(x).asnumpy(), h2, rtol=1e-9, atol=1e-12)
    ops = {node.op.name for node in cm.symbol._nodes() if not node.is_variable}
    assert 'RNN' in ops


def test_lstm_ntc_with_states_and_input_gradient():
    lstm = nn.LSTM(3, layout='NTC', input_size=2, dtype='float64')

    class Model:
        def __call__(self, x):
            state = mx.sym.zeros_like(mx.sym.slice_axis(
                mx.sym.sum(x, axis=2), axis=1, begin=0, end=1))
            h0 = mx.sym.broadcast_axis(mx.sym.expand_dims(state, axis=0), axis=2, size=3)
            out, (h, c) = lstm(x, [h0 + 0.5, h0])
            return mx.sym.Concat(mx.sym.Reshape(out, shape=(0, -1)),
                                 mx.sym.Reshape(h, shape=(-1, 3)),
                                 mx.sym.Reshape(c, shape=(-1, 3)), dim=1)
    cm = nn.compile(Model(), (2, 4, 2))
    x = RNG.randn(2, 4, 2)
    w = lstm_weights(cm, 'l0')
    seq, h, c = np_lstm(x.transpose(1, 0, 2), w, np.full((2, 3), 0.5), np.zeros((2, 3)))
    ref = np.concatenate([seq.transpose(1, 0, 2).reshape(2, -1), h, c], axis=1)
    np.testing.assert_allclose(cm(x).asnumpy(), ref, rtol=1e-9, atol=1e-12)
    dy = RNG.randn(*ref.shape)
    dx = cm.backward(dy).asnumpy()
    eps, num = 1e-6, np.zeros_like(x)
    for idx in [(0, 0, 0), (1, 2, 1), (0, 3, 1)]:
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        num[idx] = ((cm(xp).asnumpy() - cm(xm).asnumpy()) * dy).sum() / (2 * eps)
        np.testing.assert_allclose(dx[idx], num[idx], rtol=1e-6, atol=1e-9)


def test_containers():
    net = nn.Chain(nn.Dense(3), nn.relu, nn.Dense(2))
    assert isinstance(net, nn.Sequential) and len(net) == 3
    assert isinstance(net[1], nn.Lambda) and 'Lambda(relu)' in repr(net)
    assert isinstance(net[:2], nn.Chain) and len(net[:2]) == 2
    with pytest.raises(TypeError, match='every part must be a Block or a callable'):
        nn.Chain(3)
