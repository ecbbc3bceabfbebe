"""mx.npx beyond the golden cases: reshape's codes and errors, nonzero, constraint_check,
the samplers, save/load, errors naming the npx function, and mx.sym.npx."""
import inspect

import numpy as onp
import pytest

import mxcy as mx
from mxcy import autograd, npx
from mxcy.operator.npx_ops import npx_reshape_shape


@pytest.fixture(autouse=True)
def _np_mode():
    npx.set_np()
    yield
    npx.reset_np()


# every code, checked against MXNet 1.9.1's npx.reshape (shapes recorded by hand)
RESHAPES = [
    ((2, 3, 1, 4, 5), (-1,), False, (120,)),
    ((2, 3, 1, 4, 5), (-2, -1), False, (2, 60)),
    ((2, 3, 1, 4, 5), (-2, -2, -3, -2, -2), False, (2, 3, 4, 5)),
    ((2, 3, 1, 4, 5), (-2, -4), False, (2, 3, 1, 4, 5)),
    ((2, 3, 1, 4, 5), (-5, -3, -2, -2), False, (6, 4, 5)),
    ((2, 3, 1, 4, 5), (-6, 1, 2, -4), False, (1, 2, 3, 1, 4, 5)),
    ((2, 3, 1, 4, 5), (-2, -6, -1, 3, -4), False, (2, 1, 3, 1, 4, 5)),
    ((2, 3, 1, 4, 5), (-4, -1, 1), False, (2, 3, 1, 4, 5, 1, 1)),
    ((2, 3, 1, 4, 5), (-1, 5), True, (24, 5)),
    ((2, 3, 1, 4, 5), (-2, -1), True, (4, 30)),
]


@pytest.mark.parametrize('src, codes, reverse, want', RESHAPES)
def test_reshape_codes(src, codes, reverse, want):
    assert npx_reshape_shape(src, codes, reverse) == want
    a = mx.np.array(onp.arange(onp.prod(src), dtype='float32').reshape(src))
    out = npx.reshape(a, codes, reverse=reverse)
    assert isinstance(out, mx.np.ndarray) and out.shape == want
    onp.testing.assert_array_equal(out.asnumpy().ravel(), onp.arange(onp.prod(src)))


@pytest.mark.parametrize('codes, reverse, match', [
    ((6, -3, 20), False, '-3 at position 1 drops an input dim of size 1'),
    ((20, -4), True, '2400 elements'),
    ((2, -1, 0), False, 'cannot infer'),
    ((-6, -1, 5, -4), False, 'does not divide'),
    ((-1, -1), False, 'only one -1'),
    ((-7,), False, 'unknown code -7'),
])
def test_reshape_errors_name_the_code(codes, reverse, match):
    a = mx.np.zeros((2, 3, 1, 4, 5))
    with pytest.raises(ValueError, match=match):
        npx.reshape(a, codes, reverse=reverse)


def test_reshape_gradient_flows_back():
    a = mx.np.array(onp.arange(6, dtype='float32').reshape(2, 3))
    a.attach_grad()
    with autograd.record():
        b = npx.reshape(a, (-5,)) * mx.np.array(onp.arange(6, dtype='float32'))
    b.backward()
    onp.testing.assert_array_equal(a.grad.asnumpy(), onp.arange(6).reshape(2, 3))


def test_nonzero_and_constraint_check():
    a = mx.np.array([[0., 1.], [2., 0.]])
    idx = npx.nonzero(a)
    assert isinstance(idx, mx.np.ndarray) and idx.dtype == onp.int64
    onp.testing.assert_array_equal(idx.asnumpy(), [[0, 1], [1, 0]])
    ok = npx.constraint_check(a >= 0, "negative")
    assert ok.shape == () and bool(ok.asnumpy())
    with pytest.raises(ValueError, match='constraint_check: must be positive'):
        npx.constraint_check(a > 0, 'must be positive')
    with pytest.raises(TypeError, match='boolean'):
        npx.constraint_check(a, 'x')


def test_operator_errors_name_the_npx_function():
    with pytest.raises(Exception, match='fully_connected'):
        npx.fully_connected(mx.np.zeros((2, 3)), mx.np.zeros((4, 5)), mx.np.zeros(4),
                            num_hidden=4)
    with pytest.raises(TypeError, match='reshape: a must be'):
        npx.reshape([1, 2], (2,))


def test_signatures_are_mxnets():
    params = list(inspect.signature(npx.fully_connected).parameters)
    assert params[:6] == ['data', 'weight', 'bias', 'num_hidden', 'no_bias', 'flatten']
    assert list(inspect.signature(npx.reshape).parameters) == ['a', 'newshape', 'reverse',
                                                              'order']


def test_samplers_repeat_under_seed_and_have_their_moments():
    npx.random.seed(3)
    a = npx.random.uniform_n(mx.np.array([0., 10.]), 11., batch_shape=(4000,))
    npx.random.seed(3)
    b = npx.random.uniform_n(mx.np.array([0., 10.]), 11., batch_shape=(4000,))
    assert a.shape == (4000, 2)
    onp.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    onp.testing.assert_allclose(a.asnumpy().mean(axis=0), [5.5, 10.5], atol=0.2)
    n = npx.random.normal_n(2., mx.np.array([1., 3.]), batch_shape=5000)
    assert n.shape == (5000, 2)
    onp.testing.assert_allclose(n.asnumpy().std(axis=0), [1., 3.], rtol=0.1)
    bern = npx.random.bernoulli(0.25, size=(20000,))
    assert abs(float(bern.asnumpy().mean()) - 0.25) < 0.02
    logit = npx.random.bernoulli(logit=mx.np.array([-50., 50.]))
    onp.testing.assert_array_equal(logit.asnumpy(), [0., 1.])
    with pytest.raises(ValueError, match='exactly one of prob and logit'):
        npx.random.bernoulli()


def test_save_and_load_round_trip(tmp_path):
    path = str(tmp_path / 'arrays')
    npx.save(path, {'w': mx.np.array([[1., 2.]]), 's': mx.np.array(3.)})
    loaded = npx.load(path)
    assert isinstance(loaded['w'], mx.np.ndarray) and loaded['s'].shape == ()
    onp.testing.assert_array_equal(loaded['w'].asnumpy(), [[1., 2.]])
    npx.save(path, mx.np.array([5, 6], dtype='int64'))
    (one,) = npx.load(path)
    assert one.dtype == onp.int64 and one.asnumpy().tolist() == [5, 6]


def test_symbol_npx_traces_registry_ops():
    x = mx.sym.var('x')
    y = mx.sym.npx.reshape(mx.sym.npx.relu(mx.sym.npx.fully_connected(
        x, num_hidden=6, name='fc')), (-2, 2, 3))
    assert y.list_arguments() == ['x', 'fc_weight', 'fc_bias']
    _, out_shapes, _ = y.infer_shape(x=(4, 5))
    assert out_shapes == [(4, 2, 3)]
    assert '_npx_reshape' in y.tojson()
    assert mx.nd.npx is npx and mx.sym.npx.relu.__name__ == 'relu'


def test_device_helpers():
    assert npx.cpu() == mx.cpu() and npx.num_gpus() == 0
    assert npx.current_context() == mx.cpu()
    with pytest.raises(mx.MXNetError, match='CPUs'):
        npx.gpu_memory_info(0)
    npx.waitall()
