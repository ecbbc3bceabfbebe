"""Module on several contexts, the rest of MXNet's API: states, parameters and
checkpoints with optimizer states, prepare, borrow_optimizer, group2ctxs, the monitor on
every executor, and the method signatures recorded from MXNet 1.9.1."""
import inspect
import os

import numpy as np
import pytest

import mxcy as mx
from mxcy.module.executor_group import _prepare_group2ctxs
from tests.module._nets import GOLD, TWO, mlp


def batches(n, batch=8, seed=0):
    rng = np.random.RandomState(seed)
    return [mx.io.DataBatch([mx.nd.array(rng.randn(batch, 5).astype(np.float32))],
                            [mx.nd.array(rng.randint(0, 3, batch).astype(np.float32))])
            for _ in range(n)]


def ready(context=TWO, optimizer='adam', **kwargs):
    mod = mx.mod.Module(mlp(), context=context, **kwargs)
    mod.bind([('data', (8, 5))], [('softmax_label', (8,))])
    mx.random.seed(4)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer=optimizer, optimizer_params={'learning_rate': 0.05})
    return mod


def steps(mod, bs):
    for b in bs:
        mod.forward_backward(b)
        mod.update()


def weights(mod):
    return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


def test_states_per_context():
    data, st = mx.sym.Variable('data'), mx.sym.Variable('st')
    net = mx.sym.FullyConnected(data + st, num_hidden=3, name='fc')
    mod = mx.mod.Module(net, label_names=None, state_names=['st'], context=TWO,
                        work_load_list=[1, 2])
    mod.bind([('data', (6, 4))])
    mod.init_params(mx.init.One())
    with pytest.raises(mx.MXNetError, match='merge_multi_context=True is not supported'):
        mod.get_states()
    states = mod.get_states(merge_multi_context=False)
    assert [[a.shape for a in s] for s in states] == [[(2, 4), (4, 4)]]
    mod.set_states(value=2.0)
    assert all((a.asnumpy() == 2).all() for a in mod.get_states(False)[0])
    mod.set_states(states=[[mx.nd.ones((2, 4)), mx.nd.ones((4, 4)) * 3]])
    assert [a.asnumpy()[0, 0] for a in mod.get_states(False)[0]] == [1, 3]
    # one array of the whole batch is sliced over the contexts
    mod.set_states(states=[mx.nd.array(np.arange(6 * 4).reshape(6, 4))])
    np.testing.assert_array_equal(mod.get_states(False)[0][1].asnumpy(),
                                  np.arange(8, 24).reshape(4, 4))
    mod.forward(mx.io.DataBatch([mx.nd.zeros((6, 4))]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy()[:, 0],
                               np.arange(24).reshape(6, 4).sum(1))   # bias 0
    with pytest.raises(ValueError, match='exactly one of states and value'):
        mod.set_states(states=[mx.nd.ones((6, 4))], value=1.0)
    with pytest.raises(ValueError, match="state 'st' needs 2 arrays"):
        mod.set_states(states=[[mx.nd.ones((2, 4))]])
    with pytest.raises(ValueError, match="state name 'nope'"):
        mx.mod.Module(net, label_names=None, state_names=['nope'])


def test_save_params_load_params_round_trip(tmp_path):
    mod = ready()
    steps(mod, batches(2))
    fname = str(tmp_path / 'm.params')
    mod.save_params(fname)
    saved = mx.nd.load(fname)
    assert sorted(saved) == ['arg:fc1_bias', 'arg:fc1_weight', 'arg:fc2_bias',
                             'arg:fc2_weight']
    other = ready(context=[mx.cpu(0), mx.cpu(1), mx.cpu(2)])
    other.load_params(fname)
    for name, value in weights(mod).items():
        np.testing.assert_array_equal(weights(other)[name], value)
        for arr in other._exec_group.param_arrays[other._param_names.index(name)]:
            np.testing.assert_array_equal(arr.asnumpy(), value)
    mx.nd.save(fname, {'bogus': mx.nd.ones(1)})
    with pytest.raises(mx.MXNetError, match="'bogus'.*'arg:' or 'aux:'"):
        other.load_params(fname)


@pytest.mark.parametrize('optimizer', ['sgd', 'adam'])
def test_checkpoint_with_optimizer_states_resumes_exactly(tmp_path, optimizer):
    bs = batches(6)
    straight = ready(optimizer=optimizer)
    steps(straight, bs)
    first = ready(optimizer=optimizer)
    steps(first, bs[:3])
    prefix = str(tmp_path / 'ck')
    first.save_checkpoint(prefix, 3, save_optimizer_states=True)
    assert os.path.exists(prefix + '-0003.states')
    # resumed on ONE context: optimizer states are keyed by parameter, not by context
    for context in (TWO, mx.cpu()):
        resumed = mx.mod.Module.load(prefix, 3, load_optimizer_states=True, context=context)
        resumed.bind([('data', (8, 5))], [('softmax_label', (8,))])
        resumed.init_optimizer(optimizer=optimizer,
                               optimizer_params={'learning_rate': 0.05})
        steps(resumed, bs[3:])
        for name, value in weights(straight).items():
            np.testing.assert_allclose(weights(resumed)[name], value, rtol=1e-5, atol=1e-6)
    if optimizer == 'adam':         # without the states the run differs (the test can fail)
        cold = mx.mod.Module.load(prefix, 3, context=TWO)
        cold.bind([('data', (8, 5))], [('softmax_label', (8,))])
        cold.init_optimizer(optimizer='adam', optimizer_params={'learning_rate': 0.05})
        steps(cold, bs[3:])
        assert np.abs(weights(cold)['fc1_weight'] - weights(straight)['fc1_weight']).max() \
            > 1e-4


def test_prepare_reshapes_ahead_and_warns_on_sparse_row_id_fn():
    mod = ready()
    small = batches(1, batch=3)[0]
    mod.prepare(small)
    assert [e.arg_dict['data'].shape for e in mod._exec_group.execs] == [(2, 5), (1, 5)]
    with pytest.warns(UserWarning, match='sparse_row_id_fn is not used'):
        mod.prepare(small, sparse_row_id_fn=lambda b: {})
    with pytest.raises(mx.MXNetError, match='prepare: call bind first'):
        mx.mod.Module(mlp()).prepare(small)


def test_borrow_optimizer_shares_state_over_contexts():
    owner = ready()
    other = mx.mod.Module(mlp(), context=TWO)
    other.bind([('data', (8, 5))], [('softmax_label', (8,))], shared_module=owner)
    other.init_params(arg_params=owner.get_params()[0])
    other.borrow_optimizer(owner)
    assert other._updater is owner._updater and other._kvstore is owner._kvstore
    for a, b in zip(owner._exec_group.param_arrays, other._exec_group.param_arrays):
        assert all(x is y for x, y in zip(a, b))
    steps(other, batches(1))
    for name, value in weights(other).items():
        np.testing.assert_array_equal(weights(owner)[name], value)
    lone = mx.mod.Module(mlp(), context=[mx.cpu(0), mx.cpu(1), mx.cpu(2)])
    with pytest.raises(mx.MXNetError, match='shared_module runs on 2 contexts'):
        lone.bind([('data', (8, 5))], [('softmax_label', (8,))], shared_module=owner)


def test_bucketing_module_on_two_contexts_equals_one():
    def sym_gen(key):
        return mlp(), ('data',), ('softmax_label',)
    results = []
    for ctx in (mx.cpu(), TWO):
        mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=8, context=ctx)
        mod.bind([('data', (8, 5))], [('softmax_label', (8,))])
        mx.random.seed(4)
        mod.init_params(mx.init.Xavier())
        mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1,
                                                              'momentum': 0.9})
        for b in batches(3) + batches(1, batch=4, seed=5):
            b.bucket_key = b.data[0].shape[0]
            b.provide_data = [('data', b.data[0].shape)]
            b.provide_label = [('softmax_label', b.label[0].shape)]
            mod.forward_backward(b)
            mod.update()
        results.append(mod.get_params()[0])
    for name, value in results[0].items():
        np.testing.assert_allclose(results[1][name].asnumpy(), value.asnumpy(), rtol=1e-5,
                                   atol=1e-6)


def test_group2ctxs_forms():
    c0, c1 = mx.cpu(0), mx.cpu(1)
    assert _prepare_group2ctxs(None, 2) == [None, None]
    assert _prepare_group2ctxs({'a': c1, 'b': [c0, c1]}, 2) == [{'a': c1, 'b': c0},
                                                               {'a': c1, 'b': c1}]
    assert _prepare_group2ctxs({'a': [c1]}, 2) == [{'a': c1}, {'a': c1}]
    with pytest.raises(ValueError, match=r"group2ctxs\['a'\]: needs one context or 2"):
        _prepare_group2ctxs({'a': [c0, c1, c0]}, 2)
    with pytest.raises(ValueError, match='one dict per context'):
        _prepare_group2ctxs([{}], 2)
    # a module with ctx_group attributes trains as without them
    data = mx.sym.Variable('data')
    with mx.AttrScope(ctx_group='dev1'):
        h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=4, name='fc1'),
                              act_type='relu')
    with mx.AttrScope(ctx_group='dev2'):
        out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=3, name='fc2'),
                                   name='softmax')
    mod = mx.mod.Module(out, context=TWO, group2ctxs={'dev1': c0, 'dev2': [c0, c1]})
    mod.bind([('data', (8, 5))], [('softmax_label', (8,))])
    assert mod._exec_group.group2ctxs == [{'dev1': c0, 'dev2': c0}, {'dev1': c0, 'dev2': c1}]


def test_monitor_is_installed_on_every_executor_and_follows_reshape():
    mod = ready()
    mon = mx.monitor.Monitor(1, pattern='.*fc2.*output.*')
    mod.install_monitor(mon)
    assert mon.exes == mod._exec_group.execs and len(mon.exes) == 2
    mon.tic()
    mod.forward(batches(1)[0], is_train=False)
    names = [name for _, name, _ in mon.toc()]
    assert len(names) == 2 and all('fc2' in n for n in names)
    mod.forward(batches(1, batch=4)[0], is_train=False)        # reshapes both executors
    assert mon.exes == mod._exec_group.execs
    mon.tic()
    mod.forward(batches(1, batch=4)[0], is_train=False)
    assert len(mon.toc()) == 2


def _params(sig):
    out = []
    for p in sig.parameters.values():
        default = p.default
        if default is inspect.Parameter.empty:
            default = '<required>'
        elif isinstance(default, tuple):
            default = [list(v) if isinstance(v, tuple) else v for v in default]
        elif not isinstance(default, (int, float, str, bool, type(None))):
            default = f'<{type(default).__name__}>'
        out.append([p.name, default])
    return out


# MXNet's abstract methods (they raise NotImplementedError there); mxcy's BaseModule and
# PythonModule leave them to the subclasses
_ABSTRACT = {'BaseModule': {'backward', 'bind', 'forward', 'get_input_grads', 'get_outputs',
                            'get_params', 'init_optimizer', 'init_params', 'install_monitor',
                            'update', 'update_metric'},
             'PythonModule': {'backward', 'forward', 'get_input_grads', 'get_outputs',
                              'install_monitor'}}


def _mxcy_default(param):
    # mxcy's initializer defaults are None, meaning Uniform(0.01) as MXNet's default object
    return ['initializer', None] if param == ['initializer', '<Uniform>'] else param


@pytest.mark.parametrize('cls_name', sorted(GOLD['signatures']))
def test_signatures_match_mxnet(cls_name):
    cls = getattr(mx.mod, cls_name)
    for method, expected in GOLD['signatures'][cls_name].items():
        if not hasattr(cls, method):
            assert method in _ABSTRACT.get(cls_name, ()), f"{cls_name}.{method} is missing"
            continue
        got = _params(inspect.signature(getattr(cls, method)))
        expected = [_mxcy_default(p) for p in expected]
        if method == 'fit':     # mxcy's fit takes epoch_size too (as MXNet's FeedForward)
            got = [p for p in got if p[0] != 'epoch_size']
        assert got == expected, f"{cls_name}.{method}"
