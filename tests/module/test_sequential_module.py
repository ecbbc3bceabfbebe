"""SequentialModule, PythonModule and PythonLossModule: a two-part MLP trains exactly as
the single Module (and as MXNet 1.9.1's SequentialModule, tests/mxnet_files/module)."""
import json
import logging
import os

import numpy as np
import pytest

import mxcy as mx

FIXTURE = os.path.join(os.path.dirname(__file__), '..', 'mxnet_files', 'module',
                       'module.json')
with open(FIXTURE) as _f:
    GOLD = json.load(_f)


def part1():
    return mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=4,
                                                   name='fc1'), act_type='relu')


def scores():
    return mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3, name='fc2')


def whole():
    h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=4,
                                                name='fc1'), act_type='relu')
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=3, name='fc2'),
                                name='softmax')


def sequential(context=mx.cpu()):
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(part1(), label_names=None, context=context))
    seq.add(mx.mod.Module(mx.sym.SoftmaxOutput(scores(), name='softmax'), context=context),
            take_labels=True, auto_wiring=True)
    return seq


def start():
    return {k: mx.nd.array(np.array(v, np.float32)) for k, v in GOLD['start_weights'].items()}


def gold_batches():
    x, y = np.array(GOLD['x'], np.float32), np.array(GOLD['y'], np.float32)
    return [mx.io.DataBatch([mx.nd.array(x[i:i + 6])], [mx.nd.array(y[i:i + 6])])
            for i in range(0, len(x), 6)]


def train(mod, batches, optimizer='sgd', params=None, metric=None):
    mod.bind([('data', (6, 5))], [('softmax_label', (6,))])
    mod.init_params(arg_params=start())
    mod.init_optimizer(optimizer=optimizer,
                       optimizer_params=params or {'learning_rate': 0.5, 'momentum': 0.9})
    for b in batches:
        mod.forward_backward(b)
        mod.update()
        if metric is not None:
            mod.update_metric(metric, b.label)
    return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


def test_sequential_matches_mxnet_and_the_single_module():
    got = train(sequential(), gold_batches())
    single = train(mx.mod.Module(whole()), gold_batches())
    for name, value in GOLD['sequential']['weights'].items():
        np.testing.assert_allclose(got[name], np.array(value), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[name], single[name], rtol=1e-6, atol=1e-7)
        assert np.abs(got[name] - start()[name].asnumpy()).max() > 1e-3


@pytest.mark.parametrize('optimizer,params', [('adam', {'learning_rate': 0.05}),
                                              ('sgd', {'learning_rate': 0.3,
                                                       'momentum': 0.9})])
def test_sequential_on_two_contexts_equals_single_module(optimizer, params):
    m1, m2 = mx.metric.Accuracy(), mx.metric.Accuracy()
    got = train(sequential([mx.cpu(0), mx.cpu(1)]), gold_batches(), optimizer, params, m1)
    single = train(mx.mod.Module(whole()), gold_batches(), optimizer, params, m2)
    for name in single:
        np.testing.assert_allclose(got[name], single[name], rtol=1e-5, atol=1e-6)
    assert m1.get() == m2.get()


def test_sequential_shapes_names_and_metric_labels():
    seq = sequential()
    assert seq.data_names == ['data'] and seq.output_names == ['softmax_output']
    seq.bind([('data', (6, 5))], [('softmax_label', (6,))])
    assert seq.output_shapes == [('softmax_output', (6, 3))]
    assert [tuple(d.shape) for d in seq.data_shapes] == [(6, 5)]
    assert [tuple(s[1]) for s in seq.label_shapes] == [(6,)]
    # the second module gets its data from the first and must give input gradients
    assert seq._modules[1].inputs_need_grad and not seq._modules[0].inputs_need_grad
    # a chain whose modules take no labels has none
    lone = mx.mod.SequentialModule().add(mx.mod.Module(part1(), label_names=None))
    lone.bind([('data', (6, 5))], [('softmax_label', (6,))])
    assert lone.label_shapes is None


def test_sequential_fit_predict_and_score():
    rng = np.random.RandomState(0)
    centers = rng.randn(3, 5) * 3
    y = rng.randint(0, 3, 120)
    x = (centers[y] + rng.randn(120, 5) * 0.3).astype(np.float32)
    it = mx.io.NDArrayIter(x, y.astype(np.float32), batch_size=12, shuffle=False)
    seq = sequential()
    seq.fit(it, num_epoch=4, optimizer_params={'learning_rate': 0.3, 'momentum': 0.9},
            arg_params=start())
    single = mx.mod.Module(whole())
    single.fit(it, num_epoch=4, optimizer_params={'learning_rate': 0.3, 'momentum': 0.9},
               arg_params=start())
    a, b = seq.get_params()[0], single.get_params()[0]
    for name in b:
        np.testing.assert_allclose(a[name].asnumpy(), b[name].asnumpy(), rtol=1e-5,
                                   atol=1e-6)
    acc = dict(seq.score(it, 'acc'))['accuracy']
    assert acc == dict(single.score(it, 'acc'))['accuracy'] and acc > 0.5   # chance: 1/3
    assert seq.predict(mx.io.NDArrayIter(x, batch_size=12)).shape == (120, 3)


def test_sequential_errors_are_clear():
    seq = mx.mod.SequentialModule()
    with pytest.raises(mx.MXNetError, match=r"unknown meta \['take_label'\]"):
        seq.add(mx.mod.Module(part1(), label_names=None), take_label=True)
    with pytest.raises(mx.MXNetError, match='add a module first'):
        seq.bind([('data', (6, 5))])
    twice = mx.mod.SequentialModule()
    twice.add(mx.mod.Module(scores(), label_names=None))
    twice.add(mx.mod.Module(scores(), label_names=None), auto_wiring=True)
    twice.bind([('data', (6, 3))])
    with pytest.raises(mx.MXNetError, match="duplicated parameter name 'fc2_bias'|"
                                            "duplicated parameter name 'fc2_weight'"):
        twice.init_params()
    seq = sequential()
    seq.bind([('data', (6, 5))], [('softmax_label', (6,))])
    with pytest.raises(mx.MXNetError, match=r"\['typo_weight'\] are not parameters"):
        seq.init_params(arg_params=dict(start(), typo_weight=mx.nd.ones(1)))
    with pytest.raises(mx.MXNetError, match='call bind and init_params first'):
        seq.forward(gold_batches()[0])
    # adding a module resets the chain
    seq.init_params(arg_params=start())
    seq.add(mx.mod.Module(part1(), label_names=None))
    assert not seq.binded and not seq.params_initialized


def softmax_ce_grad(x, label):
    """d(cross-entropy of softmax(x))/dx = softmax(x) - onehot(label)."""
    x = x.asnumpy()
    e = np.exp(x - x.max(axis=1, keepdims=True))
    grad = e / e.sum(axis=1, keepdims=True)
    grad[np.arange(len(x)), label.asnumpy().astype(int)] -= 1
    return grad


def test_python_loss_module_ends_a_chain_like_softmax_output():
    seq = mx.mod.SequentialModule()
    h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=4,
                                                name='fc1'), act_type='relu')
    seq.add(mx.mod.Module(mx.sym.FullyConnected(h, num_hidden=3, name='fc2'),
                          label_names=None))
    loss = mx.mod.PythonLossModule(grad_func=softmax_ce_grad)
    seq.add(loss, take_labels=True, auto_wiring=True)
    got = train(seq, gold_batches())
    for name, value in GOLD['sequential']['weights'].items():
        np.testing.assert_allclose(got[name], np.array(value), rtol=1e-5, atol=1e-6)
    assert loss.output_shapes == [('pyloss_output', (6, 3))]
    assert loss.get_params() == ({}, {}) and not loss.params_initialized
    assert isinstance(loss.get_input_grads()[0], mx.nd.NDArray)


def test_python_loss_module_checks():
    loss = mx.mod.PythonLossModule()
    with pytest.raises(mx.MXNetError, match=r"data shapes are for \['x'\]"):
        loss.bind([('x', (4, 3))])
    loss.bind([('data', (4, 3))], [('softmax_label', (4,))])
    loss.forward(mx.io.DataBatch([mx.nd.ones((4, 3))], [mx.nd.zeros((4,))]))
    with pytest.raises(mx.MXNetError, match='no grad_func was given'):
        loss.backward()
    with pytest.raises(mx.MXNetError, match='takes no out_grads'):
        loss.backward(out_grads=[mx.nd.ones((4, 3))])
    with pytest.raises(mx.MXNetError, match='nothing to monitor'):
        loss.install_monitor(mx.monitor.Monitor(1))
    with pytest.raises(TypeError, match='grad_func must be callable'):
        mx.mod.PythonLossModule(grad_func=3)
    metric = mx.metric.Accuracy()
    loss.update_metric(metric, [mx.nd.array([0, 1, 2, 0])])
    assert metric.get()[1] == pytest.approx(0.5)          # argmax of ones: class 0


class Doubler(mx.mod.PythonModule):
    """A PythonModule subclass: output = 2 * data."""

    def __init__(self):
        super().__init__(['data'], None, ['double_output'], logger=logging)

    def _compute_output_shapes(self):
        return [('double_output', self._data_shapes[0][1])]

    def forward(self, data_batch, is_train=None):
        self._out = data_batch.data[0] * 2

    def backward(self, out_grads=None):
        self._grad = out_grads[0] * 2

    def get_outputs(self, merge_multi_context=True):
        return [self._out]

    def get_input_grads(self, merge_multi_context=True):
        return [self._grad]


def test_python_module_subclass_in_a_chain():
    seq = mx.mod.SequentialModule()
    seq.add(Doubler())
    seq.add(mx.mod.Module(scores(), label_names=None), auto_wiring=True)
    seq.bind([('data', (2, 5))], inputs_need_grad=True)
    seq.init_params(mx.init.One())
    seq.init_optimizer()
    seq.forward(mx.io.DataBatch([mx.nd.ones((2, 5))]), is_train=True)
    np.testing.assert_allclose(seq.get_outputs()[0].asnumpy(), np.full((2, 3), 10.0))
    seq.backward(out_grads=[mx.nd.ones((2, 3))])
    np.testing.assert_allclose(seq.get_input_grads()[0].asnumpy(), np.full((2, 5), 6.0))
    with pytest.raises(mx.MXNetError, match='only grad_req=.write. is supported'):
        Doubler().bind([('data', (2, 5))], grad_req='add')
