"""FeedForward (the classic model API) and the checkpoint helpers of mx.model."""
import numpy as np
import pytest

import mxcy as mx
from tests.module._nets import mlp


def net():
    return mlp(hidden=16, classes=2, act_type='tanh')


def data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (n, 4)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.float32)
    return x, y


def test_feedforward_fit_predict_score_without_declared_shapes(tmp_path):
    x, y = data()
    model = mx.model.FeedForward(net(), num_epoch=10, numpy_batch_size=20,
                                 learning_rate=0.2, momentum=0.9,
                                 initializer=mx.init.Xavier())
    model.fit(x, y)
    probs = model.predict(x)
    assert probs.shape == (200, 2)
    assert model.score(mx.io.NDArrayIter(x, y, batch_size=20)) > 0.9
    model.save(str(tmp_path / 'ff'), 10)
    again = mx.model.FeedForward.load(str(tmp_path / 'ff'), 10)
    np.testing.assert_allclose(again.predict(x), probs, rtol=1e-6)


def test_feedforward_create_and_return_data():
    x, y = data(60)
    model = mx.model.FeedForward.create(net(), x, y, num_epoch=2, learning_rate=0.1)
    out, xs, ys = model.predict(mx.io.NDArrayIter(x, y, batch_size=25), return_data=True)
    assert out.shape == (60, 2) and xs.shape == (60, 4) and ys.shape == (60,)
    np.testing.assert_array_equal(xs, x)


def test_save_and_load_checkpoint_layout(tmp_path):
    sym = net()
    args = {'fc1_weight': mx.nd.ones((16, 4)), 'fc1_bias': mx.nd.zeros((16,))}
    aux = {'bn_moving_mean': mx.nd.ones((3,))}
    prefix = str(tmp_path / 'ck')
    mx.model.save_checkpoint(prefix, 7, sym, args, aux)
    assert (tmp_path / 'ck-symbol.json').exists() and (tmp_path / 'ck-0007.params').exists()
    raw = mx.nd.load(prefix + '-0007.params')
    assert sorted(raw) == ['arg:fc1_bias', 'arg:fc1_weight', 'aux:bn_moving_mean']
    sym2, args2, aux2 = mx.model.load_checkpoint(prefix, 7)
    assert sym2.tojson() == sym.tojson()
    np.testing.assert_array_equal(args2['fc1_weight'].asnumpy(), np.ones((16, 4)))
    assert list(aux2) == ['bn_moving_mean']


def test_checkpoint_without_prefixes_is_rejected(tmp_path):
    mx.nd.save(str(tmp_path / 'x-0001.params'), {'weight': mx.nd.ones((2,))})
    with pytest.raises(mx.MXNetError, match="neither the 'arg:' nor the 'aux:'"):
        mx.model.load_params(str(tmp_path / 'x'), 1)


def test_feedforward_needs_num_epoch():
    x, y = data(10)
    with pytest.raises(mx.MXNetError, match='num_epoch'):
        mx.model.FeedForward(net()).fit(x, y)


def test_mxnet_model_namespace_names():
    import mxcy as mx
    assert mx.model.LogValidationMetricsCallback is mx.callback.LogValidationMetricsCallback
    assert mx.model.Uniform is mx.init.Uniform and mx.model.cpu is mx.cpu
    assert mx.model.DataDesc is mx.io.DataDesc and mx.model.get_updater is mx.optimizer.get_updater
    assert mx.model.mx_real_t is mx.base.mx_real_t and mx.model.Context is mx.Context
    assert isinstance(mx.model.SKLEARN_INSTALLED, bool)
    assert mx.model.BASE_ESTIMATOR is object or mx.model.SKLEARN_INSTALLED
    with pytest.raises(AttributeError, match='no attribute'):
        mx.model.no_such_name
