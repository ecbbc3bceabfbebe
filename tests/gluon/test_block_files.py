"""Block.save / Block.load (gluon/_block_files.py) against files MXNet 1.9.1 wrote
(tools/mxnet_block_save_fixtures.py), and the other Block/HybridBlock API of MXNet 1.9.1:
register_op_hook, hybridize's arguments, optimize_for, infer_type."""
import json
import os

import numpy as np
import pytest

import mxcy as mx
from mxcy import gluon

FILES = os.path.join(os.path.dirname(__file__), 'mxnet_files')


def model(prefix='other_'):
    """The fixture's model, built with other names than the saved ones."""
    net = gluon.nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        inner = gluon.nn.HybridSequential()
        with inner.name_scope():
            inner.add(gluon.nn.Dense(3, in_units=4), gluon.nn.Activation('relu'))
        net.add(inner, gluon.nn.Dense(2, in_units=3))
    net.initialize()
    return net


def expected():
    with open(os.path.join(FILES, 'block_save.json')) as f:
        case = json.load(f)
    return mx.nd.array(case['input']), np.array(case['output'])


@pytest.mark.parametrize('name', ['block_save', 'block_save_hybrid'])
def test_loads_mxnets_files(name):
    net = model()
    net.load(os.path.join(FILES, name))
    x, want = expected()
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    # the saved names come back, with the parameters' names that follow from them
    assert net.name == 'model'
    assert [c.name for c in net._children.values()] == ['model_hybridsequential0',
                                                        'model_dense0']
    assert sorted(net.collect_params()) == sorted([
        'model_hybridsequential0_dense0_weight', 'model_hybridsequential0_dense0_bias',
        'model_dense0_weight', 'model_dense0_bias'])
    assert net._active == (name == 'block_save_hybrid')


def test_writes_mxnets_json(tmp_path):
    net = model('model_')
    net.save(str(tmp_path / 'm'))
    with open(os.path.join(FILES, 'block_save-model.json')) as f:
        mxnet_json = f.read()
    assert (tmp_path / 'm-model.json').read_text() == mxnet_json
    assert sorted(mx.nd.load(str(tmp_path / 'm-model.params'))) == \
        ['0.0.bias', '0.0.weight', '1.bias', '1.weight']


def test_hybridized_round_trip_restores_the_graph(tmp_path):
    net = model('model_')
    net.hybridize()
    x, _ = expected()
    want = net(x).asnumpy()
    net.save(str(tmp_path / 'h'))
    saved = json.loads((tmp_path / 'h-model.json').read_text())['hybridsequential0']
    assert saved['hybridized'] and 'FullyConnected' in saved['symbol']
    again = model()
    again.load(str(tmp_path / 'h'))
    assert again._cached_graph is not None
    np.testing.assert_allclose(again(x).asnumpy(), want, rtol=1e-6)


def test_load_refuses_another_structure(tmp_path):
    net = model('model_')
    net.save(str(tmp_path / 'm'))
    other = gluon.nn.HybridSequential()
    other.add(gluon.nn.Dense(2, in_units=4))
    with pytest.raises(mx.MXNetError, match='had 2 children when saved'):
        other.load(str(tmp_path / 'm'))


def test_register_op_hook_sees_every_operator_output():
    net = model()
    net.hybridize()
    calls = []
    net.register_op_hook(lambda name, op, arr: calls.append((name, op, arr.shape)))
    x, _ = expected()
    net(x)
    assert calls == [(b'other_hybridsequential0_dense0_fwd_output', b'FullyConnected', (2, 3)),
                     (b'other_hybridsequential0_relu0_fwd_output', b'Activation', (2, 3)),
                     (b'other_dense0_fwd_output', b'FullyConnected', (2, 2))]
    calls.clear()
    net.register_op_hook(lambda name, op, arr: calls.append(name), monitor_all=True)
    net(x)
    assert b'other_hybridsequential0_dense0_fwd_weight' in calls


def test_hybridize_arguments_optimize_for_and_infer_type():
    net = model()
    with pytest.raises(mx.MXNetError, match="backend 'MKLDNN' is not registered"):
        net.hybridize(backend='MKLDNN')
    net.hybridize(static_alloc=True, static_shape=True, forward_bulk_size=8)
    x, want = expected()
    fresh = model()
    fresh.optimize_for(x, static_alloc=True)
    assert fresh._cached is not None and fresh._active     # bound, nothing run yet
    for p, q in zip(net.collect_params().values(), fresh.collect_params().values()):
        q.set_data(p.data())
    np.testing.assert_allclose(fresh(x).asnumpy(), net(x).asnumpy(), rtol=1e-6)
    typed = gluon.nn.Dense(2, in_units=4, dtype='float64')
    typed.infer_type(mx.nd.ones((1, 4), dtype='float64'))
    assert {np.dtype(p.dtype) for p in typed.collect_params().values()} == \
        {np.dtype(np.float64)}
    # float32 parameters do not take a float64 input (MXNet 1.9.1 raises too)
    with pytest.raises(mx.MXNetError, match="argument 'weight' has dtype float32"):
        gluon.nn.Dense(2, in_units=4).infer_type(mx.nd.ones((1, 4), dtype='float64'))


def test_parameter_dict_load_dict_restore_prefix_and_executor_symbol():
    params = gluon.ParameterDict('net_')
    w = params.get('w', shape=(2,))
    params.initialize()
    params.load_dict({'w': mx.nd.array([3.0, 4.0])}, restore_prefix='net_')
    np.testing.assert_array_equal(w.data().asnumpy(), [3, 4])
    sym = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2)
    exe = sym.simple_bind(mx.cpu(), x=(1, 3))
    assert exe.get_optimized_symbol().tojson() == sym.tojson()
