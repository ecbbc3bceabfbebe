"""mx.contrib: the old autograd API over mx.autograd, DataLoaderIter, the contrib
operators, text utils/Vocabulary (values as MXNet 1.9.1 gives them), and features mxcy
lacks (AMP, ONNX, quantization, embeddings) raising by name when used."""
import collections
import importlib

import numpy as np
import pytest

import mxcy as mx
from mxcy.contrib import autograd as ag
from mxcy.contrib import text


def test_grad_and_loss_and_sections():
    x = mx.nd.array([1.0, 2.0, 3.0])
    y = mx.nd.array([1.0, 1.0, 1.0])
    grads, loss = ag.grad_and_loss(lambda a, b: (a * a * b).sum())(x, y)
    np.testing.assert_allclose(grads[0].asnumpy(), [2, 4, 6])
    np.testing.assert_allclose(grads[1].asnumpy(), [1, 4, 9])
    assert loss.asnumpy().tolist() == [14.0]
    only_b = ag.grad(lambda a, b: (a * b).sum(), argnum=1)(x, y)
    np.testing.assert_allclose(only_b[0].asnumpy(), [1, 2, 3])
    assert ag.set_is_training(True) is False
    assert mx.autograd.is_recording() and mx.autograd.is_training()
    assert ag.set_is_training(False) is True and not mx.autograd.is_recording()
    with ag.train_section():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        with ag.test_section():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    assert not mx.autograd.is_recording()
    with pytest.raises(TypeError, match='argument 0 to differentiate must be an NDArray'):
        ag.grad(lambda a: a)(3.0)


def test_mark_variables_and_backward():
    x = mx.nd.array([1.0, -2.0])
    dx = mx.nd.zeros((2,))
    ag.mark_variables(x, dx)
    with ag.train_section():
        y = x * x * x
    ag.backward(y, mx.nd.array([1.0, 0.5]))
    np.testing.assert_allclose(dx.asnumpy(), [3.0, 6.0])


def test_data_loader_iter_pads_the_last_batch_with_zeros():
    ds = mx.gluon.data.ArrayDataset(mx.nd.arange(10).reshape((5, 2)), mx.nd.arange(5))
    it = mx.contrib.io.DataLoaderIter(mx.gluon.data.DataLoader(ds, batch_size=2))
    assert [(d.name, d.shape) for d in it.provide_data] == [('data', (2, 2))]
    assert [(d.name, d.shape) for d in it.provide_label] == [('softmax_label', (2,))]
    got = [(b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad) for b in it]
    assert got == [([[0, 1], [2, 3]], [0, 1], 0), ([[4, 5], [6, 7]], [2, 3], 0),
                   ([[8, 9], [0, 0]], [4, 0], 1)]
    it.reset()
    assert len(list(it)) == 3


def test_contrib_operators_are_the_registered_ones():
    assert mx.contrib.nd.ctc_loss is mx.nd._contrib_ctc_loss
    assert mx.contrib.sym.CTCLoss is mx.sym._contrib_CTCLoss
    assert mx.contrib.ndarray is mx.contrib.nd and mx.contrib.quant is mx.contrib.quantization


def test_text_counts_and_vocabulary_as_mxnet():
    counter = text.utils.count_tokens_from_str('Life is great!\nlife is good . \n',
                                               to_lower=True)
    assert counter == collections.Counter({'life': 2, 'is': 2, 'great!': 1, 'good': 1,
                                           '.': 1})
    vocab = text.vocab.Vocabulary(counter, reserved_tokens=['<pad>'])
    assert vocab.idx_to_token == ['<unk>', '<pad>', 'is', 'life', '.', 'good', 'great!']
    assert len(vocab) == 7 and vocab.token_to_idx['life'] == 3
    assert vocab.to_indices(['is', 'zzz']) == [2, 0] and vocab.to_indices('life') == 3
    assert vocab.to_tokens([1, 2]) == ['<pad>', 'is'] and vocab.to_tokens(3) == 'life'
    assert text.vocab.Vocabulary(counter, most_freq_count=2).idx_to_token == \
        ['<unk>', 'is', 'life']
    assert text.vocab.Vocabulary(counter, min_freq=2).idx_to_token == ['<unk>', 'is', 'life']
    with pytest.raises(ValueError, match='token index 100 is invalid'):
        vocab.to_tokens(100)
    with pytest.raises(ValueError, match='must not contain the unknown_token'):
        text.vocab.Vocabulary(counter, reserved_tokens=['<unk>'])
    assert text.utils.count_tokens_from_str('a,b;c,a', token_delim=',', seq_delim=';') == \
        collections.Counter({'a': 2, 'b': 1, 'c': 1})


@pytest.mark.parametrize('module, name, feature', [
    ('amp', 'init', 'AMP'), ('amp', 'convert_model', 'AMP'),
    ('onnx', 'import_model', 'ONNX'), ('quantization', 'quantize_model', 'quantization'),
    ('text.embedding', 'GloVe', 'embeddings')])
def test_missing_features_import_and_raise_by_name_when_used(module, name, feature):
    fn = getattr(importlib.import_module(f'mxcy.contrib.{module}'), name)
    with pytest.raises(mx.MXNetError, match=f'mx.contrib.{module}.{name}: .*{feature}'):
        fn('model.onnx')


def test_tensorboard_callback_needs_a_writer(tmp_path, monkeypatch):
    from mxcy.contrib import tensorboard
    written = []

    class Writer:
        def __init__(self, logdir):
            self.logdir = logdir

        def add_scalar(self, name, value, global_step):
            written.append((name, value, global_step))
    monkeypatch.setattr(tensorboard, '_summary_writer', Writer)
    callback = tensorboard.LogMetricsCallback(str(tmp_path), prefix='train')
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array([1, 0])], [mx.nd.array([[0, 1], [0, 1]])])
    callback(mx.model.BatchEndParam(epoch=3, nbatch=0, eval_metric=metric, locals={}))
    assert written == [('train-accuracy', 0.5, 3)]
