"""gluon.Block / HybridBlock / SymbolBlock: names, parameters, files, hooks, hybridize.

Names and file keys marked "MXNet 1.9.1" were recorded from MXNet 1.9.1 running the same
structure; tests/gluon/mxnet_files/ was written by MXNet 1.9.1 (tools/mxnet_gluon_fixtures.py).
"""
import os

import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd, gluon

FILES = os.path.join(os.path.dirname(__file__), 'mxnet_files')


class Dense(gluon.HybridBlock):
    """A minimal dense layer written against the core API only."""

    def __init__(self, units, in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._units = units
        with self.name_scope():
            self.weight = self.params.get('weight', shape=(units, in_units),
                                          allow_deferred_init=True)
            self.bias = self.params.get('bias', shape=(units,), init='zeros',
                                        allow_deferred_init=True)

    def hybrid_forward(self, F, x, weight, bias):
        return F.FullyConnected(x, weight, bias, num_hidden=self._units, name='fwd')


class Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.d1 = Dense(4)
            self.inner = Pair()
            self.w = self.params.get('extra', shape=(1,), init='zeros')

    def hybrid_forward(self, F, x, w):
        return F.broadcast_add(self.inner(F.relu(self.d1(x))), w)


class Pair(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.a = Dense(3)
            self.b = Dense(2, in_units=3)

    def hybrid_forward(self, F, x):
        return self.b(F.tanh(self.a(x)))


def fresh():
    with mx.name.NameManager():
        return Net()


# ---------------------------------------------------------------- names
def test_names_as_mxnet():
    with mx.name.NameManager():
        n1, n2 = Net(), Net()
        top = Dense(3)
    assert (n1.prefix, n2.prefix, n1.name, top.prefix) == ('net0_', 'net1_', 'net0',
                                                           'dense0_')
    # MXNet 1.9.1: own parameters first, then the children's in order
    assert list(n1.collect_params().keys()) == [
        'net0_extra', 'net0_dense0_weight', 'net0_dense0_bias', 'net0_pair0_dense0_weight',
        'net0_pair0_dense0_bias', 'net0_pair0_dense1_weight', 'net0_pair0_dense1_bias']
    assert list(n1.collect_params('.*weight').keys()) == [
        'net0_dense0_weight', 'net0_pair0_dense0_weight', 'net0_pair0_dense1_weight']
    assert list(n1._collect_params_with_prefix()) == [
        'w', 'd1.weight', 'd1.bias', 'inner.a.weight', 'inner.a.bias', 'inner.b.weight',
        'inner.b.bias']


def test_parameter_dict_get_checks_attributes():
    d = gluon.ParameterDict('net_')
    p = d.get('w', shape=(0, 3))
    assert d.get('w', shape=(2, 3)) is p and p.shape == (2, 3)
    with pytest.raises(AssertionError, match="attribute 'lr_mult'"):
        d.get('w', lr_mult=2.0)
    with pytest.raises(ValueError, match='incompatible'):
        d.get('w', shape=(4, 3))


# ---------------------------------------------------------------- parameters
def test_deferred_initialization_and_messages():
    net = fresh()
    net.initialize()
    with pytest.raises(gluon.DeferredInitializationError, match='first forward pass'):
        net.d1.weight.data()
    net(mx.nd.ones((2, 5)))
    assert net.d1.weight.shape == (4, 5) and net.inner.a.weight.shape == (3, 4)
    p = gluon.Parameter('q', shape=(2, 3))
    with pytest.raises(RuntimeError, match='collect_params'):
        p.data()
    with pytest.raises(ValueError, match='invalid shape'):
        gluon.Parameter('w', shape=(0, 3)).initialize()


def test_parameter_data_grad_and_contexts():
    p = gluon.Parameter('q', shape=(2, 3))
    p.initialize(init=mx.init.One(), ctx=[mx.cpu(0), mx.cpu(1)])
    assert p.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    np.testing.assert_array_equal(p.data(mx.cpu(1)).asnumpy(), np.ones((2, 3)))
    p.set_data(mx.nd.full((2, 3), 5))
    assert all((d.asnumpy() == 5).all() for d in p.list_data())
    assert all((g.asnumpy() == 0).all() for g in p.list_grad())
    p.grad_req = 'null'
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad(mx.cpu(0))
    c = gluon.Constant('c', [1, 2])
    c.initialize()
    assert c.grad_req == 'null'
    np.testing.assert_array_equal(c.data().asnumpy(), [1, 2])
    assert p.var().list_attr()['__shape__'] == '(2, 3)'


# ---------------------------------------------------------------- files
def test_save_and_load_parameters_round_trip(tmp_path):
    net = fresh()
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.default_rng(0).random((2, 5)))
    y = net(x).asnumpy()
    path = str(tmp_path / 'net.params')
    net.save_parameters(path)
    assert sorted(mx.nd.load(path)) == sorted(net._collect_params_with_prefix())
    other = fresh()
    other.load_parameters(path)
    np.testing.assert_allclose(other(x).asnumpy(), y, rtol=1e-6)
    legacy = str(tmp_path / 'legacy.params')
    net.collect_params().save(legacy, strip_prefix=net.prefix)
    third = fresh()
    third.load_parameters(legacy)
    np.testing.assert_allclose(third(x).asnumpy(), y, rtol=1e-6)
    mx.nd.save(path, {'w': mx.nd.ones((1,)), 'd1.bias': mx.nd.ones((4,))})
    with pytest.raises(AssertionError, match="'d1.weight' is missing"):
        fresh().load_parameters(path)
    mx.nd.save(path, {k: v._reduce() for k, v in net._collect_params_with_prefix().items()}
               | {'d9.bias': mx.nd.ones((1,))})
    with pytest.raises(ValueError, match="'d9.bias' loaded from file"):
        fresh().load_parameters(path)
    fresh().load_parameters(path, ignore_extra=True)


def test_files_written_by_mxnet_load_and_predict_the_same():
    x = mx.nd.array(np.load(os.path.join(FILES, 'x.npy')))
    expected = np.load(os.path.join(FILES, 'y.npy'))
    net = gluon.SymbolBlock.imports(os.path.join(FILES, 'net-symbol.json'), ['data'],
                                    os.path.join(FILES, 'net-0000.params'))
    np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    assert sorted(net.collect_params()) == [
        'batchnorm0_beta', 'batchnorm0_gamma', 'batchnorm0_running_mean',
        'batchnorm0_running_var', 'dense0_bias', 'dense0_weight', 'dense1_bias',
        'dense1_weight']
    assert net.collect_params()['batchnorm0_running_mean'].grad_req == 'null'
    # MXNet 1.9.1's save_parameters keys for the same network
    assert sorted(mx.nd.load(os.path.join(FILES, 'net.params'))) == [
        '0.bias', '0.weight', '1.beta', '1.gamma', '1.running_mean', '1.running_var',
        '2.bias', '2.weight']


# ---------------------------------------------------------------- hybridize
def test_hybridized_equals_imperative_and_exports(tmp_path):
    net = fresh()
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.default_rng(1).random((3, 5)))
    head = mx.nd.array(np.random.default_rng(2).random((3, 2)))

    def run():
        with autograd.record():
            y = net(x)
        y.backward(head)
        return y.asnumpy(), {k: p.grad().asnumpy().copy()
                             for k, p in net.collect_params().items()}
    y0, g0 = run()
    net.hybridize()
    y1, g1 = run()
    np.testing.assert_allclose(y1, y0, rtol=1e-5, atol=1e-6)
    for k in g0:
        np.testing.assert_allclose(g1[k], g0[k], rtol=1e-5, atol=1e-6, err_msg=k)
    sym_file, params_file = net.export(str(tmp_path / 'net'), epoch=3)
    assert params_file.endswith('net-0003.params')
    assert sorted(mx.nd.load(params_file)) == sorted(
        f'arg:{k}' for k in net.collect_params())
    back = gluon.SymbolBlock.imports(sym_file, ['data'], params_file)
    np.testing.assert_allclose(back(x).asnumpy(), y0, rtol=1e-5, atol=1e-6)


def test_export_needs_a_hybridized_forward_first(tmp_path):
    with pytest.raises(RuntimeError, match='hybridize'):
        fresh().export(str(tmp_path / 'x'))


def test_a_hybridized_block_called_twice_in_one_recorded_pass():
    """Each recorded call keeps its own executor until its backward: the second call
    must not overwrite what the first one's backward reads."""
    net = fresh()
    net.initialize(mx.init.Xavier())
    a = mx.nd.array(np.random.default_rng(3).random((2, 5)))
    b = mx.nd.array(np.random.default_rng(4).random((2, 5)))

    def grads():
        with autograd.record():
            loss = (net(a) * net(b)).sum()
        loss.backward()
        return {k: p.grad().asnumpy().copy() for k, p in net.collect_params().items()}
    g0 = grads()
    net.hybridize()
    g1 = grads()
    for k in g0:
        np.testing.assert_allclose(g1[k], g0[k], rtol=1e-5, atol=1e-6, err_msg=k)


# ---------------------------------------------------------------- hooks and tree ops
def test_hooks_apply_and_cast():
    net = fresh()
    net.initialize()
    seen = []
    pre = net.register_forward_pre_hook(lambda blk, inputs: seen.append(('pre', blk.name)))
    post = net.register_forward_hook(
        lambda blk, inputs, out: seen.append(('post', out.shape)))
    net(mx.nd.ones((1, 5)))
    assert seen == [('pre', 'net0'), ('post', (1, 2))]
    pre.detach()
    post.detach()
    net(mx.nd.ones((1, 5)))
    assert len(seen) == 2
    names = []
    net.apply(lambda blk: names.append(blk.name))
    assert names == ['net0_dense0', 'net0_pair0_dense0', 'net0_pair0_dense1', 'net0_pair0',
                     'net0']
    net.cast('float64')
    assert net(mx.nd.ones((1, 5), dtype='float64')).dtype == np.float64


# ---------------------------------------------------------------- tracing details
class Gated(gluon.HybridBlock):
    """Takes (x, [a, b], optional scale) and returns (y, [y, a]): nesting, None, a
    repeated output."""

    def hybrid_forward(self, F, x, pair, scale=None):
        y = x * pair[0] + pair[1]
        if scale is not None:
            y = y * scale
        return y, [y, pair[0]]


def test_nested_inputs_none_and_repeated_outputs_hybridized():
    x, a, b = (mx.nd.array([1., 2.]), mx.nd.array([3., 4.]), mx.nd.array([5., 6.]))
    results = []
    for hybrid in (False, True):
        blk = Gated()
        if hybrid:
            blk.hybridize()
        for arr in (x, a, b):
            arr.attach_grad()
        with autograd.record():
            y, (y2, a2) = blk(x, [a, b], None)
            loss = (y * 2 + y2 * 3 + a2).sum()
        loss.backward()
        results.append((y.asnumpy(), x.grad.asnumpy(), a.grad.asnumpy(), b.grad.asnumpy()))
    for imperative, hybrid in zip(*results):
        np.testing.assert_allclose(hybrid, imperative)
    # both uses of y count: d/dx = 5 * a, d/da = 5 * x + 1, d/db = 5
    np.testing.assert_allclose(results[1][1], [15, 20])
    np.testing.assert_allclose(results[1][2], [6, 11])
    np.testing.assert_allclose(results[1][3], [5, 5])


def test_parameter_dict_get_merges_unknown_dimensions():
    d = gluon.ParameterDict('cell_')
    p = d.get('i2h_weight', shape=(12, 4))
    assert d.get('i2h_weight', shape=(12, 0)) is p and p.shape == (12, 4)
    q = d.get('h2h_weight', shape=(0, 3))
    assert d.get('h2h_weight', shape=(5, 3)) is q and q.shape == (5, 3)


SUMMARY_MXNET = """\
--------------------------------------------------------------------------------
        Layer (type)                                Output Shape         Param #
================================================================================
               Input                                      (3, 5)               0
        Activation-1                                      (3, 4)               0
             Dense-2                                      (3, 4)              24
         BatchNorm-3                                      (3, 4)              16
             Dense-4                                      (3, 2)              10
================================================================================
Parameters in forward computation graph, duplicate included
   Total params: 50
   Trainable params: 42
   Non-trainable params: 8
Shared params in forward computation graph: 0
Unique parameters in model: 50
--------------------------------------------------------------------------------
"""


def test_summary_prints_mxnets_table(capsys):
    from mxcy.gluon import nn
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation='relu', in_units=5), nn.BatchNorm(), nn.Dense(2))
    net.initialize()
    net.summary(mx.nd.ones((3, 5)))
    assert capsys.readouterr().out == SUMMARY_MXNET       # MXNet 1.9.1's output
    assert not net[0]._forward_hooks                      # the hooks are gone after
