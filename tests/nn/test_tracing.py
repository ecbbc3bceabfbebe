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


def test_names_are_mxnets_name_manager_counters():
    """MXNet's scheme: a layer is named when it is made, by the thread's mx.name counters;
    a fresh NameManager restarts them (the suite gives each test a fresh one)."""
    for _ in range(2):
        with mx.name.NameManager():
            traced = nn.trace(BlockNet())
        assert list(traced.params) == ['conv0_weight', 'conv0_bias', 'dense0_weight',
                                       'dense0_bias']
        names = [n.name for n in traced.symbol._nodes() if not n.is_variable]
        assert names == ['conv0_fwd', 'pool0_fwd', 'dense0_fwd', 'dense0_relu_fwd',
                         'softmax0']
    first, second = Net(), Net()                # no fresh scope: the counters go on
    assert (first.hidden.prefix, second.hidden.prefix) == ('dense0_', 'dense2_')
    assert list(nn.collect_params(second)) == ['dense2_weight', 'dense2_bias',
                                               'dense3_weight', 'dense3_bias']


def test_user_class_and_chain_get_the_same_names():
    with mx.name.NameManager():
        chain = nn.Chain(nn.Dense(8), nn.relu, nn.Dense(2))
        chain_json = chain(mx.sym.var('data')).tojson()
    with mx.name.NameManager():
        net = Net()
        net_json = net(mx.sym.var('data')).tojson()
    assert list(nn.collect_params(net)) == list(chain.collect_params())
    assert chain_json == net_json


def test_explicit_prefixes_and_clashing_names():
    other = nn.Chain(nn.Dense(8, prefix='fc_'), nn.Dense(4))
    assert list(nn.collect_params(other)) == ['fc_weight', 'fc_bias', 'dense0_weight',
                                              'dense0_bias']
    with pytest.raises(mx.MXNetError, match=r"several different variables named "
                                            r"\['fc_bias', 'fc_weight'\]"):
        nn.trace(nn.Chain(nn.Dense(2, prefix='fc_'), nn.Dense(2, prefix='fc_')))


def test_a_layer_called_twice_shares_its_parameters():
    dense = nn.Dense(5, in_units=5)
    out = nn.trace(lambda x: dense(nn.tanh(dense(x)))).symbol
    assert out.list_arguments() == ['data', 'dense0_weight', 'dense0_bias']
    names = [n.name for n in out._nodes() if not n.is_variable]
    assert names == ['dense0_fwd', 'tanh0', 'dense0_fwd']       # MXNet names both calls alike
    cm = nn.compile(lambda x: dense(nn.tanh(dense(x))), (2, 5))
    x = np.random.RandomState(0).randn(2, 5).astype(np.float32)
    w, b = dense.weight.data().asnumpy(), dense.bias.data().asnumpy()
    ref = np.tanh(x @ w.T + b) @ w.T + b
    np.testing.assert_allclose(cm(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_layers_called_on_symbols_outside_a_trace():
    x = mx.sym.var('data')
    a, b = nn.Dense(4), nn.Dense(4)
    y = b(nn.relu(a(x)))
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


def test_trace_needs_a_callable_returning_a_symbol():
    with pytest.raises(TypeError, match='must return a Symbol'):
        nn.trace(lambda x: 3)
    with pytest.raises(TypeError, match='must be callable'):
        nn.trace(42)
    with pytest.raises(NotImplementedError, match='must define forward'):
        nn.trace(nn.Block())


def test_block_children_and_parameter_dict():
    net = BlockNet()
    assert list(net._children.values()) == [net.conv, net.pool, net.fc]
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
    # gluon's collect_params: a block's own parameters, then its children's
    assert list(params) == ['scale0_scale', 'residual0_gate', 'dense0_weight', 'dense0_bias']
    assert list(nn.collect_params(net)) == ['scale0_scale', 'dense0_weight', 'dense0_bias',
                                            'residual0_gate']              # graph order
    assert list(net[0].params) == ['scale0_scale'] and len(net[1].params) == 1
    assert net[0].params.get('scale', shape=(3,)) is net[0].scale
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
    layers = [nn.Conv2D(4, 3), nn.BatchNorm(), nn.MaxPool2D(1), nn.AvgPool2D(),
              nn.Dropout(0.1), nn.Flatten(), nn.Activation('sigmoid'),
              nn.Dense(6, flatten=False), nn.Embedding(10, 3)]
    lstm = nn.LSTM(4)

    def model(x):
        for layer in layers:
            x = layer(x)
        x = lstm(mx.sym.expand_dims(x, axis=0))
        return nn.softmax(nn.sigmoid(nn.tanh(nn.relu(x))))
    nodes = [n for n in nn.trace(model).symbol._nodes() if not n.is_variable]
    assert all(get_op(n.op.name) is n.op for n in nodes)
    layer_ops = [n.op.name for n in nodes if n.op.name not in
                 ('Reshape', 'Concat', '_full_batch_like')]
    assert layer_ops == ['Convolution', 'BatchNorm', 'Pooling', 'Pooling', 'Dropout',
                         'Flatten', 'Activation', 'FullyConnected', 'Embedding',
                         'expand_dims', 'RNN', 'Activation', 'Activation', 'Activation',
                         'softmax']


def test_a_shared_layer_called_outside_a_trace_reuses_its_variables():
    dense = nn.Dense(4, in_units=4)
    y = dense(nn.relu(dense(mx.sym.var('data'))))       # two short traces
    assert y.list_inputs() == ['data', 'dense0_weight', 'dense0_bias']
