"""Module: bind / init / optimizer / forward / backward / update, fit, score, predict,
checkpoints, reshape on a smaller last batch, early stopping through callbacks."""
import logging

import numpy as np
import pytest

import mxcy as mx
from tests.module._nets import mlp as two_layers


def mlp(hidden=16, classes=3):
    return two_layers(hidden, classes)


def blobs(n=300, classes=3, dim=5, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 4, (classes, dim))
    y = rng.integers(0, classes, n)
    x = centers[y] + rng.normal(0, 0.5, (n, dim))
    return x.astype(np.float32), y.astype(np.float32)


def fitted(num_epoch=5, **kwargs):
    x, y = blobs()
    it = mx.io.NDArrayIter(x, y, batch_size=32, shuffle=True)
    mod = mx.mod.Module(mlp())
    mod.fit(it, num_epoch=num_epoch, optimizer='sgd',
            optimizer_params={'learning_rate': 0.1, 'momentum': 0.9},
            initializer=mx.init.Xavier(), **kwargs)
    return mod, x, y


def test_fit_learns_separable_blobs_and_score_counts_every_sample():
    mod, x, y = fitted()
    it = mx.io.NDArrayIter(x, y, batch_size=32)        # 300 = 9 batches + pad 12
    acc = dict(mod.score(it, 'acc'))['accuracy']
    assert acc > 0.95
    preds = mod.predict(it)
    assert preds.shape == (300, 3)                      # padding removed
    np.testing.assert_allclose(preds.asnumpy().sum(axis=1), 1, rtol=1e-5)
    assert np.isclose((preds.asnumpy().argmax(1) == y).mean(), acc)


def test_padded_samples_are_not_counted_in_metrics():
    mod, x, y = fitted(num_epoch=1)
    it = mx.io.NDArrayIter(x[:40], y[:40], batch_size=32)   # second batch: 8 real + 24 pad
    metric = mx.metric.create('acc')
    mod.score(it, metric)
    assert metric.num_inst == 40


def test_manual_loop_matches_module_methods_and_reshapes_last_batch():
    x, y = blobs(n=70)
    mod = mx.mod.Module(mlp())
    mod.bind(data_shapes=[('data', (32, 5))], label_shapes=[('softmax_label', (32,))])
    mod.init_params(mx.init.Uniform(0.1))
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.05})
    before = mod.get_params()[0]['fc1_weight'].asnumpy()
    for i in range(0, 70, 32):
        xb, yb = x[i:i + 32], y[i:i + 32]
        batch = mx.io.DataBatch([mx.nd.array(xb)], [mx.nd.array(yb)])
        mod.forward(batch, is_train=True)
        assert mod.get_outputs()[0].shape == (len(xb), 3)    # 6-sample batch reshaped
        mod.backward()
        mod.update()
    after = mod.get_params()[0]['fc1_weight'].asnumpy()
    assert not np.allclose(before, after)


def test_one_sgd_step_equals_the_numpy_formula():
    x, y = blobs(n=8)
    mod = mx.mod.Module(mlp(hidden=4))
    mod.bind([('data', (8, 5))], [('softmax_label', (8,))])
    mod.init_params(mx.init.Uniform(0.3))
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5})
    args = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    mod.forward(batch, is_train=True)
    mod.backward()
    grads = {k: v.asnumpy() for k, v in mod._exec.grad_dict.items()}
    mod.update()
    new = mod.get_params()[0]
    for name in ('fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias'):
        # rescale_grad = 1 / batch size, set by init_optimizer as MXNet does
        np.testing.assert_allclose(new[name].asnumpy(), args[name] - 0.5 * grads[name] / 8,
                                   rtol=1e-5, atol=1e-6)


def test_checkpoint_round_trip_and_load(tmp_path):
    mod, x, y = fitted(num_epoch=2)
    prefix = str(tmp_path / 'net')
    mod.save_checkpoint(prefix, 2, save_optimizer_states=True)
    sym, args, aux = mx.model.load_checkpoint(prefix, 2)
    assert sym.list_arguments() == mod.symbol.list_arguments()
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(args[k].asnumpy(), v.asnumpy())
    raw = mx.nd.load(prefix + '-0002.params')
    assert sorted(raw) == sorted('arg:' + k for k in args)      # MXNet's key layout
    loaded = mx.mod.Module.load(prefix, 2, load_optimizer_states=True)
    it = mx.io.NDArrayIter(x, y, batch_size=32)
    loaded.bind(it.provide_data, it.provide_label, for_training=True)
    loaded.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1,
                                                             'momentum': 0.9})
    np.testing.assert_allclose(loaded.predict(it).asnumpy(), mod.predict(it).asnumpy(),
                               rtol=1e-6)


def test_batch_end_callback_returning_false_stops_training():
    seen = []

    def stop_after_three(param):
        seen.append((param.epoch, param.nbatch))
        return len(seen) < 3
    fitted(num_epoch=5, batch_end_callback=stop_after_three)
    assert seen == [(0, 0), (0, 1), (0, 2)]


def test_epoch_end_callback_returning_false_stops_training():
    epochs = []

    def stop(epoch, sym, args, aux):
        epochs.append(epoch)
        return epoch < 1
    fitted(num_epoch=6, epoch_end_callback=stop)
    assert epochs == [0, 1]


def test_early_stopping_on_a_validation_metric():
    x, y = blobs()
    train = mx.io.NDArrayIter(x, y, batch_size=32)
    # a validation set the model cannot improve on: random labels
    val = mx.io.NDArrayIter(x, np.random.default_rng(1).integers(0, 3, 300).astype(np.float32),
                            batch_size=32)
    stopper = mx.callback.EarlyStopping(patience=2, mode='max')
    epochs = []
    mod = mx.mod.Module(mlp())
    mod.fit(train, eval_data=val, num_epoch=30, optimizer='sgd',
            optimizer_params={'learning_rate': 0.1}, eval_end_callback=stopper,
            epoch_end_callback=lambda e, *a: epochs.append(e))
    assert stopper.stopped_epoch is not None
    assert len(epochs) < 30


def test_speedometer_and_fit_logging(caplog):
    with caplog.at_level(logging.INFO):
        fitted(num_epoch=1, batch_end_callback=mx.callback.Speedometer(32, frequent=2))
    text = caplog.text
    assert 'samples/sec' in text and 'accuracy=' in text
    assert 'Epoch[0] Train-accuracy=' in text and 'Epoch[0] Time cost=' in text


def test_errors_are_clear():
    mod = mx.mod.Module(mlp())
    with pytest.raises(ValueError, match="data name 'x' is not an argument"):
        mx.mod.Module(mlp(), data_names=('x',))
    with pytest.raises(ValueError, match='work_load_list has 1 entries for 2 contexts'):
        mx.mod.Module(mlp(), context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1])
    mod.bind([('data', (4, 5))], [('softmax_label', (4,))])
    with pytest.raises(mx.MXNetError, match="fc1_weight.*shape"):
        mod.init_params(arg_params={'fc1_weight': mx.nd.zeros((3, 3))}, allow_missing=True)
    with pytest.raises(ValueError, match='num_epoch'):
        mod.fit(mx.io.NDArrayIter(np.zeros((4, 5)), np.zeros(4), batch_size=4))


def test_inputs_need_grad_gives_input_gradients():
    mod = mx.mod.Module(mlp())
    mod.bind([('data', (4, 5))], [('softmax_label', (4,))], inputs_need_grad=True)
    mod.init_params(mx.init.Uniform(0.5))
    batch = mx.io.DataBatch([mx.nd.ones((4, 5))], [mx.nd.zeros((4,))])
    mod.forward(batch, is_train=True)
    mod.backward()
    (g,) = mod.get_input_grads()
    assert g.shape == (4, 5) and np.abs(g.asnumpy()).sum() > 0


def test_lr_mult_keyword_of_an_operator_freezes_its_weights():
    # MXNet stores FullyConnected(..., lr_mult=0) as __lr_mult__ on the node and on the
    # variables it creates; Module's optimizer honours it
    fc = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, lr_mult=0, name='fc')
    out = mx.sym.LinearRegressionOutput(fc, name='lro')
    mod = mx.mod.Module(out, label_names=['lro_label'])
    mod.bind(data_shapes=[('data', (4, 3))], label_shapes=[('lro_label', (4, 2))])
    mod.init_params(mx.init.Uniform(0.1))
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 1.0})
    before = {k: v.asnumpy().copy() for k, v in mod.get_params()[0].items()}
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((4, 3))], [mx.nd.ones((4, 2))]))
    mod.update()
    after = mod.get_params()[0]
    np.testing.assert_array_equal(after['fc_weight'].asnumpy(), before['fc_weight'])
    np.testing.assert_array_equal(after['fc_bias'].asnumpy(), before['fc_bias'])
