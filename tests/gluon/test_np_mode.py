"""Gluon and autograd under npx.set_np(): blocks take and return mx.np arrays, and a net
trained in NumPy mode follows the same losses as the same net in NDArray mode."""
import numpy as onp
import pytest

import mxcy as mx
from mxcy import autograd, gluon, npx
from mxcy.gluon import nn


@pytest.fixture
def np_mode():
    npx.set_np()
    yield
    npx.reset_np()


def _net(kind):
    net = nn.HybridSequential()
    if kind == 'conv':
        net.add(nn.Conv2D(4, kernel_size=3, padding=1, activation='relu'),
                nn.MaxPool2D(pool_size=2), nn.BatchNorm(), nn.Dense(10))
    else:
        net.add(nn.Dense(8, activation='relu'), nn.Dropout(0.0), nn.Dense(10))
    return net


def _data(kind):
    rng = onp.random.RandomState(0)
    shape = (6, 1, 6, 6) if kind == 'conv' else (6, 5)
    return rng.uniform(-1, 1, shape).astype('float32'), \
        rng.randint(0, 10, (6,)).astype('float32')


def _train(kind, np_mode_on, hybridize, steps=4):
    """Losses of `steps` SGD steps from the same initial weights (mx.random.seed)."""
    if np_mode_on:
        npx.set_np()
    try:
        mx.random.seed(7)
        net = _net(kind)
        net.initialize(mx.init.Xavier())
        if hybridize:
            net.hybridize()
        x_host, y_host = _data(kind)
        wrap = mx.np.array if np_mode_on else mx.nd.array
        x, y = wrap(x_host), wrap(y_host)
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
        losses, types = [], set()
        for _ in range(steps):
            with autograd.record():
                out = net(x)
                loss = loss_fn(out, y)
            loss.backward()
            trainer.step(x.shape[0])
            types.update({type(out), type(loss)})
            losses.append(loss.asnumpy())
        params = {k: type(p.data()) for k, p in net.collect_params().items()}
        return onp.array(losses), types, params
    finally:
        npx.reset_np()


@pytest.mark.parametrize('hybridize', [False, True], ids=['imperative', 'hybridized'])
@pytest.mark.parametrize('kind', ['dense', 'conv'])
def test_np_mode_trains_like_nd_mode(kind, hybridize):
    nd_losses, nd_types, nd_params = _train(kind, False, hybridize)
    np_losses, np_types, np_params = _train(kind, True, hybridize)
    assert nd_types == {mx.nd.NDArray}
    assert np_types == {mx.np.ndarray}, np_types
    assert set(np_params.values()) == {mx.np.ndarray}
    assert set(nd_params.values()) == {mx.nd.NDArray}
    onp.testing.assert_allclose(np_losses, nd_losses, rtol=1e-5, atol=1e-6)
    assert np_losses[-1].mean() < np_losses[0].mean()       # it learns


def test_parameter_dict_is_where_mxnet_keeps_it():
    assert gluon.parameter.ParameterDict is gluon.ParameterDict     # d2l looks there


def test_parameter_data_and_grad_follow_the_mode(np_mode):
    dense = nn.Dense(3, in_units=2)
    dense.initialize()
    w = dense.weight
    assert isinstance(w.data(), mx.np.ndarray) and isinstance(w.grad(), mx.np.ndarray)
    assert all(isinstance(a, mx.np.ndarray) for a in w.list_data() + w.list_grad())
    x = mx.np.array([[1., 2.]])
    with autograd.record():
        y = dense(x)
    y.backward()
    onp.testing.assert_allclose(w.grad().asnumpy(), onp.tile([[1., 2.]], (3, 1)))
    npx.reset_np()
    assert type(w.data()) is mx.nd.NDArray            # the same memory, either face
    onp.testing.assert_allclose(w.grad().asnumpy(), onp.tile([[1., 2.]], (3, 1)))


class _NpOps(gluon.HybridBlock):
    """A block written with F.np / F.npx, as MXNet 1.9.1 NumPy-mode code is."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get('weight', shape=(4, 3))

    def hybrid_forward(self, F, x, weight):
        h = F.npx.fully_connected(x, weight, num_hidden=4, no_bias=True)
        return F.npx.reshape(F.npx.relu(h), (-2, 2, -1))


@pytest.mark.parametrize('hybridize', [False, True])
def test_hybrid_forward_with_F_npx(np_mode, hybridize):
    block = _NpOps()
    block.initialize(mx.init.Constant(0.5))
    if hybridize:
        block.hybridize()
    x = mx.np.array(onp.arange(6, dtype='float32').reshape(2, 3) - 2)
    x.attach_grad()
    with autograd.record():
        out = block(x)
    out.backward()
    assert isinstance(out, mx.np.ndarray) and out.shape == (2, 2, 2)
    h = (onp.arange(6).reshape(2, 3) - 2) @ onp.full((3, 4), 0.5)
    onp.testing.assert_allclose(out.asnumpy(), onp.maximum(h, 0).reshape(2, 2, 2))
    onp.testing.assert_allclose(x.grad.asnumpy(), (h > 0) @ onp.full((4, 3), 0.5))


class _NpFunctions(gluon.HybridBlock):
    """F.np (mx.np's functions) in an imperative hybrid_forward."""

    def hybrid_forward(self, F, x):
        return F.np.dot(x, F.np.ones((3, 2))) + F.np.sum(x)


def test_hybrid_forward_with_F_np_imperative(np_mode):
    x = mx.np.array([[1., 2., 3.]])
    x.attach_grad()
    with autograd.record():
        out = _NpFunctions()(x)
    out.backward()
    assert isinstance(out, mx.np.ndarray)
    onp.testing.assert_allclose(out.asnumpy(), [[12., 12.]])
    onp.testing.assert_allclose(x.grad.asnumpy(), [[4., 4., 4.]])


def test_dataloader_and_split_and_load_give_np_arrays(np_mode):
    data = onp.arange(24, dtype='float32').reshape(6, 4)
    dataset = gluon.data.ArrayDataset(data, onp.arange(6))
    batches = list(gluon.data.DataLoader(dataset, batch_size=4))
    assert [type(a) for a in batches[0]] == [mx.np.ndarray, mx.np.ndarray]
    onp.testing.assert_array_equal(batches[1][0].asnumpy(), data[4:])
    parts = gluon.utils.split_and_load(batches[0][0], [mx.cpu(0), mx.cpu(1)])
    assert [type(p) for p in parts] == [mx.np.ndarray] * 2
    onp.testing.assert_array_equal(parts[1].asnumpy(), data[2:4])
    cols = gluon.utils.split_data(batches[0][0], 2, batch_axis=1)
    assert type(cols[0]) is mx.np.ndarray
    onp.testing.assert_array_equal(cols[1].asnumpy(), data[:4, 2:])
    for kwargs in ({'num_workers': 1}, {'num_workers': 1, 'thread_pool': True}):
        batch = next(iter(gluon.data.DataLoader(dataset, batch_size=4, **kwargs)))
        assert [type(a) for a in batch] == [mx.np.ndarray] * 2, kwargs
        onp.testing.assert_array_equal(batch[0].asnumpy(), data[:4])
    npx.reset_np()
    batch = next(iter(gluon.data.DataLoader(dataset, batch_size=4)))
    assert type(batch[0]) is mx.nd.NDArray


def test_export_in_np_mode_matches_nd_mode(np_mode, tmp_path):
    net = _net('conv')
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.np.array(_data('conv')[0])
    out = net(x)
    sym_file, params_file = net.export(str(tmp_path / 'np'))
    npx.reset_np()
    loaded = gluon.SymbolBlock.imports(sym_file, ['data'], params_file)
    again = loaded(mx.nd.array(_data('conv')[0]))
    onp.testing.assert_allclose(again.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)


def test_loads_a_net_mxnet_exported_in_np_mode(np_mode):
    """tools/mxnet_np_export_fixtures.py: MXNet 1.9.1's own export under npx.set_np()
    (NumPy-shape params, an _npx_reshape node, -1 for unknown dims)."""
    import pathlib
    files = pathlib.Path(__file__).resolve().parent / 'mxnet_files'
    net = gluon.SymbolBlock.imports(str(files / 'np_net-symbol.json'), ['data'],
                                    str(files / 'np_net-0000.params'))
    io = onp.load(files / 'np_net_io.npz')
    out = net(mx.np.array(io['x']))
    assert isinstance(out, mx.np.ndarray)
    onp.testing.assert_allclose(out.asnumpy(), io['y'], rtol=1e-5, atol=1e-5)


def test_export_in_np_mode_writes_numpy_shape_params(np_mode, tmp_path):
    """MXNet under npx.set_np() loads only params saved in NumPy-shape layout (V3 magic);
    checked against MXNet 1.9.1 by loading such an export there."""
    net = nn.HybridSequential()
    net.add(nn.Dense(3))
    net.initialize()
    net.hybridize()
    net(mx.np.ones((2, 4)))
    _, params_file = net.export(str(tmp_path / 'dense'))
    raw = pathlib_bytes(params_file)
    assert raw[24:28] == (0xF993FACA).to_bytes(4, 'little')      # V3, not V2
    npx.reset_np()
    net.export(str(tmp_path / 'dense_nd'))
    assert pathlib_bytes(str(tmp_path / 'dense_nd-0000.params'))[24:28] == \
        (0xF993FAC9).to_bytes(4, 'little')


def pathlib_bytes(path):
    with open(path, 'rb') as f:
        return f.read()
