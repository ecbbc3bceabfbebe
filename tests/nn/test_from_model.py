"""FeedForward.from_model: the trailing softmax becomes SoftmaxOutput('softmax')."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import nn


class Classifier:
    def __init__(self):
        self.hidden = nn.Dense(16, activation='relu')
        self.out = nn.Dense(2)

    def __call__(self, x):
        return nn.softmax(self.out(self.hidden(x)))


def blobs(n=200):
    rng = np.random.RandomState(0)
    y = rng.randint(0, 2, n)
    x = rng.randn(n, 4).astype(np.float32) + 2.5 * y[:, None]
    return x, y.astype(np.float32)


def test_softmax_is_rewritten_into_softmax_output():
    model = Classifier()
    ff = mx.model.FeedForward.from_model(model, num_epoch=1)
    sym = ff.symbol
    assert sym.name == 'softmax'
    assert sym._outputs[0][0].op.name == 'SoftmaxOutput'
    assert sym.list_arguments() == ['data', 'dense0_weight', 'dense0_bias', 'dense1_weight',
                                    'dense1_bias', 'softmax_label']
    assert ff.arg_params is None                          # nothing initialized yet


def test_other_endings_are_refused():
    with pytest.raises(mx.MXNetError, match=r"must end with softmax.*FullyConnected "
                                            r"\(node 'dense0_fwd'\)"):
        mx.model.FeedForward.from_model(nn.Chain(nn.Dense(3)))
    with pytest.raises(mx.MXNetError, match='must end with softmax.*input variable'):
        mx.model.FeedForward.from_model(lambda x: x)
    dense = nn.Dense(3)
    with pytest.raises(mx.MXNetError, match='must use the defaults'):
        mx.model.FeedForward.from_model(lambda x: nn.softmax(dense(x), axis=0))


def test_fit_and_predict_match_the_compiled_model():
    x, y = blobs()
    model = Classifier()
    mx.random.seed(0)
    ff = mx.model.FeedForward.from_model(model, num_epoch=6, learning_rate=0.1,
                                         numpy_batch_size=20, initializer=mx.init.Xavier())
    ff.fit(x, y)
    assert ff.score(mx.io.NDArrayIter(x, y, 20)) > 0.95     # (a NumPy X has no labels)
    # the trained values back into the layers, then the compiled model agrees
    nn.collect_params(model).load_dict(ff.arg_params)
    cm = nn.compile(model, (20, 4))
    np.testing.assert_allclose(cm.predict(x[:20]).asnumpy(), ff.predict(x[:20]),
                               rtol=1e-5, atol=1e-6)
    # and a model with values passes them on
    again = mx.model.FeedForward.from_model(model)
    np.testing.assert_allclose(again.predict(x[:20]), ff.predict(x[:20]), rtol=1e-5,
                               atol=1e-6)
