"""Any object with a ``data`` attribute is a batch (MXNet's prediction tutorial:
``Batch = namedtuple('Batch', ['data']); mod.forward(Batch([x]))``); label, pad, index,
bucket_key and provide_* are optional, for Module and BucketingModule."""
from collections import namedtuple

import numpy as np
import pytest

import mxcy as mx
from tests.module._nets import mlp as two_layers

Batch = namedtuple('Batch', ['data'])
LabeledBatch = namedtuple('LabeledBatch', ['data', 'label'])


def mlp():
    return two_layers(hidden=6)


def params():
    rng = np.random.RandomState(0)
    shapes = {'fc1_weight': (6, 5), 'fc1_bias': (6,), 'fc2_weight': (3, 6), 'fc2_bias': (3,)}
    return {k: mx.nd.array(rng.uniform(-1, 1, s)) for k, s in shapes.items()}


def reference(x, p):
    p = {k: v.asnumpy() for k, v in p.items()}
    h = np.maximum(x @ p['fc1_weight'].T + p['fc1_bias'], 0)
    z = h @ p['fc2_weight'].T + p['fc2_bias']
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def x_of(n, seed=1):
    return np.random.RandomState(seed).uniform(-1, 1, (n, 5)).astype(np.float32)


def predictor(label_shapes=None, batch=1):
    mod = mx.mod.Module(mlp(), label_names=['softmax_label'] if label_shapes else None)
    mod.bind(for_training=False, data_shapes=[('data', (batch, 5))], label_shapes=label_shapes)
    mod.set_params(params(), {})
    return mod


def test_tutorial_prediction_with_namedtuple():
    mod = mx.mod.Module(mlp(), label_names=None)   # the tutorial: label_names=None
    mod.bind(for_training=False, data_shapes=[('data', (1, 5))])
    mod.set_params(params(), {}, allow_missing=True)
    x = x_of(1)
    mod.forward(Batch([mx.nd.array(x)]))
    prob = mod.get_outputs()[0].asnumpy()
    np.testing.assert_allclose(prob, reference(x, params()), rtol=1e-5, atol=1e-6)
    # set_params(allow_missing=True) left the label input (a "parameter" here) alone
    assert mod.get_params()[0]['softmax_label'].asnumpy().tolist() == [0.0]


def test_namedtuple_without_label_on_module_bound_with_labels():
    mod = predictor(label_shapes=[('softmax_label', (2,))], batch=2)
    x = x_of(2)
    mod.forward(Batch([mx.nd.array(x)]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), reference(x, params()),
                               rtol=1e-5, atol=1e-6)


def test_namedtuple_batch_of_another_size_reshapes():
    net = mx.sym.softmax(mlp().get_children()[0], name='prob')   # no label input
    mod = mx.mod.Module(net, label_names=None)
    mod.bind(for_training=False, data_shapes=[('data', (2, 5))])
    mod.set_params(params(), {})
    for n in (2, 4, 1):
        x = x_of(n, seed=n)
        mod.forward(Batch([mx.nd.array(x)]))
        np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), reference(x, params()),
                                   rtol=1e-5, atol=1e-6)


def test_predict_and_score_over_namedtuple_batches():
    mod = predictor(label_shapes=[('softmax_label', (4,))], batch=4)
    xs = [x_of(4, seed=s) for s in range(3)]
    ys = [np.argmax(reference(x, params()), 1).astype(np.float32) for x in xs]
    ys[2][:2] = (ys[2][:2] + 1) % 3                 # two wrong labels in 12
    out = mod.predict([Batch([mx.nd.array(x)]) for x in xs])   # a plain list: no reset
    np.testing.assert_allclose(out.asnumpy(), reference(np.concatenate(xs), params()),
                               rtol=1e-5, atol=1e-6)
    batches = [LabeledBatch([mx.nd.array(x)], [mx.nd.array(y)]) for x, y in zip(xs, ys)]
    assert dict(mod.score(batches, 'acc'))['accuracy'] == pytest.approx(10 / 12)
    with pytest.raises(mx.MXNetError, match=r'score: batch 0 \(Batch\) has no label'):
        mod.score([Batch([mx.nd.array(xs[0])])], 'acc')


def test_bucketing_module_takes_namedtuple_batches():
    def sym_gen(key):
        return mlp(), ('data',), ('softmax_label',)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=10)
    mod.bind(data_shapes=[('data', (2, 5))], label_shapes=[('softmax_label', (2,))],
             for_training=False)
    mod.set_params(params(), {})
    x = x_of(2)
    mod.forward(Batch([mx.nd.array(x)]))            # no bucket_key: the default bucket
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), reference(x, params()),
                               rtol=1e-5, atol=1e-6)
    Keyed = namedtuple('Keyed', ['data', 'bucket_key'])
    x3 = x_of(3, seed=4)
    mod.forward(Keyed([mx.nd.array(x3)], 7))        # a new bucket, shapes from the arrays
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), reference(x3, params()),
                               rtol=1e-5, atol=1e-6)
    assert sorted(mod._buckets) == [7, 10]
    mod.prepare(Batch([mx.nd.array(x)]))
