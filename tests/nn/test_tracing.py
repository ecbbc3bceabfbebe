"""Tracing: models become Symbols of registered operators, with stable readable names."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import nn


class Net:
    def __init__(self):
        self.hidden = nn.Dense(8)
        self.out = nn.Dense(2)

    def __call__(self, x):
        return self.out(nn.relu(self.hidden(x)))


class BlockNet(nn.Block):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(4, 3)
        self.pool = nn.MaxPool2D()
        self.fc = nn.Dense(10, activation='relu')

    def forward(self, x):
        return nn.softmax(self.fc(self.pool(self.conv(x))))


def test_calling_a_model_on_a_placeholder_builds_a_symbol():
    out = Net()(mx.sym.var('data'))
    assert isinstance(out, mx.sym.Symbol)
    assert out.list_arguments() == ['data', 'dense0_weight', 'dense0_bias', 'dense1_weight',
                                    'dense1_bias']
    ops = [n.op.name for n in out._nodes() if not n.is_variable]
    assert ops == ['FullyConnected', 'Activation', 'FullyConnected']
    assert out.name == 'dense1_fwd'


def test_names_are_stable_across_models_and_follow_call_order():
    for _ in range(3):                  # no global counter: rebuilding gives the same names
        traced = nn.trace(BlockNet())
        assert list(traced.params) == ['conv0_weight', 'conv0_bias', 'dense0_weight',
                                       'dense0_bias']
        names = [n.name for n in traced.symbol._nodes() if not n.is_variable]
        assert names == ['conv0_fwd', 'pool0_fwd', 'dense0_fwd', 'dense0_relu_fwd',
                         'softmax0']


def test_user_class_and_sequential_get_the_same_names():
    seq = nn.Sequential()
    seq.add(nn.Dense(8), nn.relu, nn.Dense(2))
    assert list(nn.collect_params(Net())) == list(seq.collect_params())
    assert seq(mx.sym.var('data')).tojson() == Net()(mx.sym.var('data')).tojson()


def test_names_are_kept_once_given_and_explicit_prefixes_are_used():
    net = Net()
    assert net.hidden.prefix is None
    with pytest.raises(mx.MXNetError, match="no name yet"):
        _ = net.hidden.weight.name
    nn.trace(net)
    assert (net.hidden.prefix, net.out.prefix) == ('dense0_', 'dense1_')
    # a second model reusing net.out: the new layer avoids 'dense1'
    other = nn.Chain(nn.Dense(8, prefix='fc_'), nn.Dense(4), net.out)
    assert list(nn.collect_params(other)) == ['fc_weight', 'fc_bias', 'dense0_weight',
                                              'dense0_bias', 'dense1_weight', 'dense1_bias']
    # a pre-named layer met after a fresh name took its name: traced again, renamed
    late = nn.Chain(nn.Dense(8), nn.Dense(3), net.hidden)
    assert list(nn.collect_params(late)) == ['dense1_weight', 'dense1_bias', 'dense2_weight',
                                             'dense2_bias', 'dense0_weight', 'dense0_bias']
    with pytest.raises(mx.MXNetError, match="both named 'fc_'"):
        nn.trace(nn.Chain(nn.Dense(2, prefix='fc_'), nn.Dense(2, prefix='fc_')))


def test_a_layer_called_twice_shares_its_parameters():
    dense = nn.Dense(5, in_units=5)
    out = nn.trace(lambda x: dense(nn.tanh(dense(x)))).symbol
    assert out.list_arguments() == ['data', 'dense0_weight', 'dense0_bias']
    names = [n.name for n in out._nodes() if not n.is_variable]
    assert names == ['dense0_fwd', 'tanh0', 'dense0_fwd1']
    cm = nn.compile(lambda x: dense(nn.tanh(dense(x))), (2, 5))
    x = np.random.RandomState(0).randn(2, 5).astype(np.float32)
    w, b = dense.weight.data().asnumpy(), dense.bias.data().asnumpy()
    ref = np.tanh(x @ w.T + b) @ w.T + b
    np.testing.assert_allclose(cm(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_layers_called_outside_a_trace_avoid_names_in_the_input_graph():
    x = mx.sym.var('data')
    a, b = nn.Dense(4), nn.Dense(4)
    y = b(nn.relu(a(x)))                # three separate short traces
    assert y.list_arguments() == ['data', 'dense0_weight', 'dense0_bias', 'dense1_weight',
                                  'dense1_bias']


def test_functions_work_on_arrays_too():
    x = np.array([[-1.0, 0.5, 2.0]], dtype=np.float32)
    np.testing.assert_allclose(nn.relu(x).asnumpy(), np.maximum(x, 0))
    np.testing.assert_allclose(nn.sigmoid(mx.nd.array(x)).asnumpy(), 1 / (1 + np.exp(-x)),
                               rtol=1e-6)
    np.testing.assert_allclose(nn.tanh(x).asnumpy(), np.tanh(x), rtol=1e-6)
    e = np.exp(x - x.max())
    np.testing.assert_allclose(nn.softmax(x).asnumpy(), e / e.sum(), rtol=1e-6)
    with pytest.raises(TypeError, match='relu: expected a Symbol'):
        nn.relu([1, 2])


def test_layers_refuse_arrays_with_a_hint_and_trace_needs_a_symbol_result():
    with pytest.raises(TypeError, match=r'Dense: call it on a Symbol.*mx.nn.compile'):
        nn.Dense(3)(mx.nd.zeros((2, 3)))
    with pytest.raises(TypeError, match='must return a Symbol'):
        nn.trace(lambda x: 3)
    with pytest.raises(TypeError, match='must be callable'):
        nn.trace(42)
    with pytest.raises(NotImplementedError, match='must define forward'):
        nn.trace(nn.Block())


def test_a_failed_trace_leaves_no_half_given_names():
    dense = nn.Dense(3)

    def broken(x):
        dense(x)
        raise RuntimeError('boom')
    with pytest.raises(RuntimeError, match='boom'):
        nn.trace(broken)
    assert dense.prefix is None


def test_block_children_and_parameter_dict():
    net = BlockNet()
    assert net._children == [net.conv, net.pool, net.fc]
    params = net.collect_params()
    assert list(params.select('conv')) == ['conv0_weight', 'conv0_bias']
    assert params['conv0_weight'].shape == (4, 0, 3, 3)     # in_channels not known yet
    assert 'conv0_weight' in repr(params)


class Scale(nn.Block):
    """A user block with a parameter of its own, used through mx.sym operators."""

    def __init__(self, units):
        super().__init__()
        self.scale = self.params.get('scale', shape=(units,), init=mx.init.Constant(2.0))

    def forward(self, x):
        return mx.sym.broadcast_mul(x, mx.sym.Reshape(self.scale.var(), shape=(1, -1)))


class Residual(nn.Block):
    """Overrides __call__ (Flux style) and owns a parameter: named on first use."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, in_units=3)
        self.gate = self.params.get('gate', shape=(1,), init='ones')

    def __call__(self, x):
        return x + mx.sym.broadcast_mul(self.dense(x), self.gate.var())


def test_user_blocks_with_their_own_parameters():
    net = nn.Chain(Scale(3), Residual())
    params = net.collect_params()
    assert list(params) == ['scale0_scale', 'dense0_weight', 'dense0_bias', 'residual0_gate']
    assert list(net[0].params) == ['scale'] and len(net[1].params) == 1
    assert net[0].params.get('scale', shape=(3,)) is net[0].scale
    with pytest.raises(mx.MXNetError, match="'scale' defined twice"):
        net[0]._param('scale', (3,))
    cm = nn.compile(net, (2, 3))
    x = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    w, b = net[1].dense.weight.data().asnumpy(), net[1].dense.bias.data().asnumpy()
    h = 2 * x
    np.testing.assert_allclose(cm(x).asnumpy(), h + h @ w.T + b, rtol=1e-5, atol=1e-6)
    cm.backward(np.ones((2, 3)))
    np.testing.assert_allclose(params['residual0_gate'].grad().asnumpy(),
                               [(h @ w.T + b).sum()], rtol=1e-5)


def test_every_layer_maps_to_registered_operators():
    from mxcy.operator import get_op
    lstm = nn.LSTM(4)

    def model(x):
        x = nn.BatchNorm()(nn.Conv2D(4, 3)(x))
        x = nn.Dropout(0.1)(nn.AvgPool2D()(nn.MaxPool2D(1)(x)))
        x = nn.Dense(6, flatten=False)(nn.Activation('sigmoid')(nn.Flatten()(x)))
        x = lstm(mx.sym.expand_dims(nn.Embedding(10, 3)(x), axis=0))
        return nn.softmax(nn.sigmoid(nn.tanh(nn.relu(x))))
    nodes = [n for n in nn.trace(model).symbol._nodes() if not n.is_variable]
    assert all(get_op(n.op.name) is n.op for n in nodes)
    layer_ops = [n.op.name for n in nodes if n.op.name not in
                 ('Reshape', 'Concat', 'slice_axis', 'zeros_like', 'broadcast_axis')]
    assert layer_ops == ['Convolution', 'BatchNorm', 'Pooling', 'Pooling', 'Dropout',
                         'Flatten', 'Activation', 'FullyConnected', 'Embedding',
                         'expand_dims', 'RNN', 'Activation', 'Activation', 'Activation',
                         'softmax']


def test_a_shared_layer_called_outside_a_trace_reuses_its_variables():
    dense = nn.Dense(4, in_units=4)
    y = dense(nn.relu(dense(mx.sym.var('data'))))       # two short traces
    assert y.list_inputs() == ['data', 'dense0_weight', 'dense0_bias']
