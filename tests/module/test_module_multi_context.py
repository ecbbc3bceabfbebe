"""Module on several contexts: the batch split as MXNet splits it, gradients summed through
the KVStore, and training equal to one context with the whole batch (and to MXNet 1.9.1's
own two-context run, tests/mxnet_files/module/module.json)."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.module.executor_group import _split_input_slice
from tests.module._nets import GOLD, TWO, mlp as two_layers


def mlp():
    return two_layers(act_name='relu1')


def gold_batches(batch=6):
    x, y = np.array(GOLD['x'], np.float32), np.array(GOLD['y'], np.float32)
    return [mx.io.DataBatch([mx.nd.array(x[i:i + batch])], [mx.nd.array(y[i:i + batch])])
            for i in range(0, len(x), batch)]


def gold_weights():
    return {k: mx.nd.array(np.array(v, np.float32)) for k, v in GOLD['start_weights'].items()}


def trained(context, optimizer, params, batches, work_load_list=None, kvstore='local',
            batch=6, metric=None):
    mod = mx.mod.Module(mlp(), context=context, work_load_list=work_load_list)
    mod.bind([('data', (batch, 5))], [('softmax_label', (batch,))])
    mod.init_params(arg_params=gold_weights())
    mod.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=params)
    for b in batches:
        mod.forward_backward(b)
        mod.update()
        if metric is not None:
            mod.update_metric(metric, b.label)
    return mod


def weights_of(mod):
    return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


@pytest.mark.parametrize('batch,loads,expected', GOLD['slices'])
def test_slices_are_mxnets(batch, loads, expected):
    assert [[s.start, s.stop] for s in _split_input_slice(batch, loads)] == expected


def test_empty_slice_and_bad_work_loads_raise():
    with pytest.raises(ValueError, match='batch of 2 .* leaves slice 2 empty'):
        _split_input_slice(2, [1, 1, 1])
    mod = mx.mod.Module(mlp(), context=[mx.cpu(0), mx.cpu(1), mx.cpu(2)])
    with pytest.raises(ValueError, match='leaves slice 2 empty'):
        mod.bind([('data', (2, 5))], [('softmax_label', (2,))])
    with pytest.raises(ValueError, match='work_load_list has 3 entries for 2 contexts'):
        mx.mod.Module(mlp(), context=TWO, work_load_list=[1, 1, 1])
    with pytest.raises(TypeError, match='context must be a Context'):
        mx.mod.Module(mlp(), context=['cpu'])


@pytest.mark.parametrize('case', GOLD['training'], ids=lambda c: c['optimizer'])
def test_two_contexts_match_mxnet(case):
    metric = mx.metric.Accuracy()
    mod = trained(TWO, case['optimizer'], case['params'], gold_batches(), [1, 2],
                  metric=metric)
    for name, value in weights_of(mod).items():
        np.testing.assert_allclose(value, np.array(case['weights'][name]), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    outs = mod.get_outputs(merge_multi_context=False)
    assert [[list(o.shape) for o in per] for per in outs] == case['output_shapes']
    assert metric.get()[1] == pytest.approx(case['accuracy'])


def random_batches(n_batches, batch, seed=0):
    rng = np.random.RandomState(seed)
    return [mx.io.DataBatch([mx.nd.array(rng.randn(batch, 5).astype(np.float32))],
                            [mx.nd.array(rng.randint(0, 3, batch).astype(np.float32))])
            for _ in range(n_batches)]


@pytest.mark.parametrize('optimizer,params', [
    ('sgd', {'learning_rate': 0.3, 'momentum': 0.9, 'wd': 1e-3}),
    ('adam', {'learning_rate': 0.05})], ids=['sgd-momentum', 'adam'])
@pytest.mark.parametrize('contexts,loads,kvstore', [
    (TWO, None, 'local'), (TWO, [1, 2], 'device'),
    ([mx.cpu(0), mx.cpu(1), mx.cpu(2)], [2, 1, 1], 'local')], ids=['2-local', '2-device-12',
                                                                  '3-local-211'])
def test_several_contexts_equal_one_context(optimizer, params, contexts, loads, kvstore):
    batches = random_batches(8, 12)
    m1, mn = mx.metric.Accuracy(), mx.metric.Accuracy()
    one = trained(mx.cpu(), optimizer, params, batches, batch=12, metric=m1)
    many = trained(contexts, optimizer, params, batches, loads, kvstore, batch=12,
                   metric=mn)
    a, b = weights_of(one), weights_of(many)
    for name in a:
        np.testing.assert_allclose(b[name], a[name], rtol=1e-5, atol=1e-6, err_msg=name)
        assert np.abs(a[name] - gold_weights()[name].asnumpy()).max() > 1e-3   # it trained
    # every context holds the same weights
    for block in many._exec_group.param_arrays:
        for other in block[1:]:
            np.testing.assert_array_equal(other.asnumpy(), block[0].asnumpy())
    assert m1.get() == mn.get()
    np.testing.assert_allclose(many.get_outputs()[0].asnumpy(),
                               one.get_outputs()[0].asnumpy(), rtol=1e-5, atol=1e-6)


def test_without_kvstore_each_context_updates_its_own_copy():
    """kvstore=None (MXNet): no summing; context k steps on its own slice's gradient."""
    batches = random_batches(2, 12)
    mod = trained(TWO, 'sgd', {'learning_rate': 0.5}, batches, kvstore=None, batch=12)
    assert mod._kvstore is None
    w0, w1 = (a.asnumpy() for a in mod._exec_group.param_arrays[0])
    assert np.abs(w0 - w1).max() > 1e-4
    # get_params is the mean of the copies, as MXNet's
    np.testing.assert_allclose(mod.get_params()[0]['fc1_weight'].asnumpy(), (w0 + w1) / 2,
                               rtol=1e-6)
    # context 0 equals a one-context module trained on the first halves alone
    halves = [mx.io.DataBatch([b.data[0][0:6]], [b.label[0][0:6]]) for b in batches]
    alone = trained(mx.cpu(), 'sgd', {'learning_rate': 0.5, 'rescale_grad': 1 / 12},
                    halves, batch=6)
    np.testing.assert_allclose(w0, alone.get_params()[0]['fc1_weight'].asnumpy(), rtol=1e-5,
                               atol=1e-6)


def test_one_rank_dist_sync_with_two_contexts_equals_one_context():
    batches = random_batches(4, 12)
    params = {'learning_rate': 0.3, 'momentum': 0.9}
    one = trained(mx.cpu(), 'sgd', params, batches, batch=12)
    many = trained(TWO, 'sgd', params, batches, kvstore='dist_sync', batch=12)
    assert many._kvstore.type == 'dist_sync'
    for name, value in weights_of(one).items():
        np.testing.assert_allclose(weights_of(many)[name], value, rtol=1e-5, atol=1e-6)


def test_outputs_and_input_gradients_merge_over_contexts():
    batch = random_batches(1, 7)[0]
    mods = []
    for ctx in (mx.cpu(), TWO):
        mod = mx.mod.Module(mlp(), context=ctx, work_load_list=None)
        mod.bind([('data', (7, 5))], [('softmax_label', (7,))], inputs_need_grad=True)
        mod.init_params(arg_params=gold_weights())
        mod.forward_backward(batch)
        mods.append(mod)
    one, two = mods
    assert [[o.shape for o in per] for per in two.get_outputs(False)] == [[(4, 3), (3, 3)]]   # round(3.5) = 4
    assert [[o.shape for o in per] for per in one.get_outputs(False)] == [[(7, 3)]]
    assert two.output_shapes == [('softmax_output', (7, 3))]
    np.testing.assert_allclose(two.get_outputs()[0].asnumpy(),
                               one.get_outputs()[0].asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(two.get_input_grads()[0].asnumpy(),
                               one.get_input_grads()[0].asnumpy(), rtol=1e-5, atol=1e-7)
    assert [g.shape for g in two.get_input_grads(False)[0]] == [(4, 5), (3, 5)]


def test_backward_with_out_grads_is_sliced():
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=2, name='fc')
    grads = []
    head = mx.nd.array(np.arange(12, dtype=np.float32).reshape(6, 2))
    for ctx in (mx.cpu(), TWO):
        mod = mx.mod.Module(net, label_names=None, context=ctx)
        mod.bind([('data', (6, 3))])
        mod.init_params(mx.init.One())
        mod.forward(mx.io.DataBatch([mx.nd.ones((6, 3))]), is_train=True)
        mod.backward(out_grads=[head])
        mod.init_optimizer(kvstore='local', optimizer='sgd',
                           optimizer_params={'learning_rate': 1.0, 'rescale_grad': 1.0})
        mod.update()
        grads.append(mod.get_params()[0]['fc_weight'].asnumpy())
    np.testing.assert_allclose(grads[1], grads[0])
    np.testing.assert_allclose(grads[0], 1 - np.tile(head.asnumpy().sum(0)[:, None], 3))


def test_metric_counts_each_slice_once_and_skips_padding():
    rng = np.random.RandomState(3)
    x = rng.randn(26, 5).astype(np.float32)
    y = rng.randint(0, 3, 26).astype(np.float32)
    scores = []
    for ctx in (mx.cpu(), TWO, [mx.cpu(0), mx.cpu(1), mx.cpu(2)]):
        mod = mx.mod.Module(mlp(), context=ctx)
        it = mx.io.NDArrayIter(x, y, batch_size=10)         # last batch: pad 4
        mod.bind(it.provide_data, it.provide_label, for_training=False)
        mod.init_params(arg_params=gold_weights())
        scores.append(dict(mod.score(it, 'acc'))['accuracy'])
        metric = mx.metric.Accuracy()
        it.reset()
        for b in it:
            mod.forward(b, is_train=False)
            mod.update_metric(metric, b.label)
        assert metric.get()[1] == pytest.approx(scores[-1])
        assert metric.num_inst == 26
    assert scores[0] == scores[1] == scores[2]
    pred = mod.predict(mx.io.NDArrayIter(x, batch_size=10))
    assert pred.shape == (26, 3)


def test_smaller_last_batch_reshapes_every_context():
    batches = random_batches(3, 12) + random_batches(1, 5, seed=9)
    params = {'learning_rate': 0.3, 'momentum': 0.9}
    one = trained(mx.cpu(), 'sgd', params, batches, batch=12)
    two = trained(TWO, 'sgd', params, batches, [1, 2], batch=12)
    assert [e.arg_dict['data'].shape for e in two._exec_group.execs] == [(2, 5), (3, 5)]
    assert two.data_shapes[0].shape == (5, 5)
    for name, value in weights_of(one).items():
        np.testing.assert_allclose(weights_of(two)[name], value, rtol=1e-5, atol=1e-6)
    two.reshape([('data', (12, 5))], [('softmax_label', (12,))])
    assert [e.arg_dict['data'].shape for e in two._exec_group.execs] == [(4, 5), (8, 5)]
