"""LeakyReLU and Dropout: forward vs NumPy, backward vs finite differences, shapes, errors,
randomness under mx.random.seed."""
import math

import numpy as np
import pytest
from scipy.special import ndtr

import mxcy as mx
from mxcy.operator import get_op
from mxcy.test_utils import check_op_backward, check_op_forward

ALPHA, LAMBDA = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_erf = np.vectorize(math.erf)


def _x(shape=(2, 3, 4), seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _reference(act, x, slope):
    if act == 'leaky':
        return np.where(x > 0, x, slope * x)
    if act == 'elu':
        return np.where(x > 0, x, slope * (np.exp(x) - 1))
    if act == 'selu':
        return LAMBDA * np.where(x > 0, x, ALPHA * (np.exp(x) - 1))
    if act == 'gelu':
        return 0.5 * x * (1 + _erf(x / np.sqrt(2)))
    raise AssertionError(act)


# ---------------------------------------------------------------- LeakyReLU
@pytest.mark.parametrize('act', ['leaky', 'elu', 'selu', 'gelu'])
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_leaky_forward(act, dtype):
    x = _x().astype(dtype)
    out = check_op_forward('LeakyReLU', {'act_type': act, 'slope': 0.3}, [x],
                           [_reference(act, x.astype(np.float64), 0.3)], rtol=1e-5, atol=1e-6)
    assert out[0].dtype == dtype


def test_leaky_default_is_leaky_with_slope_quarter():
    x = _x()
    y = mx.nd.LeakyReLU(mx.nd.array(x, dtype=np.float64))
    np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, x, 0.25 * x))


@pytest.mark.parametrize('act', ['leaky', 'elu', 'selu', 'gelu'])
def test_leaky_backward(act):
    check_op_backward('LeakyReLU', {'act_type': act, 'slope': 0.3}, [_x() + 0.01])


def _gelu(x):
    return x * ndtr(x)          # not ½x(1 + erf(x/√2)): that cancels for x << 0


def _gelu_prime(x):
    return ndtr(x) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)


@pytest.mark.parametrize('dtype, rtol', [(np.float16, 1e-3), (np.float32, 1e-6),
                                         (np.float64, 1e-13)])
@pytest.mark.parametrize('req', ['write', 'add'])
def test_gelu_forward_and_backward_reqs_dtypes_odd_sizes(dtype, rtol, req):
    # the vector kernels (float32/float64; float16 forward via the float64 reference)
    spec = get_op('LeakyReLU')
    p = spec.params.parse('LeakyReLU', {'act_type': 'gelu'})
    x = (_x((7, 37), seed=3) * 4).astype(dtype)
    xd = x.astype(np.float64)
    base = _x((7, 37), seed=4).astype(dtype) if req == 'add' else np.zeros_like(x)
    y = mx.nd.array(base, dtype=dtype)
    spec.forward(p, True, [req], [mx.nd.array(x, dtype=dtype)], [y], [])
    assert y.dtype == dtype
    atol = 4e-3 if dtype == np.float16 else rtol * 1e-3    # float16: the sum's rounding
    # (gelu's own error is relative to gelu, not to the sum with base)
    err = np.abs(y.asnumpy() - (base + _gelu(xd)))
    assert (err <= atol + rtol * (np.abs(base) + np.abs(_gelu(xd)))).all()
    dy = _x((7, 37), seed=5).astype(dtype)
    dx = mx.nd.array(base, dtype=dtype)
    spec.backward(p, [req], [mx.nd.array(dy, dtype=dtype)], [mx.nd.array(x, dtype=dtype)],
                  [y], [dx], [])
    np.testing.assert_allclose(dx.asnumpy(), base + dy.astype(np.float64) * _gelu_prime(xd),
                               rtol=rtol * 10, atol=max(atol, rtol))


def test_gelu_in_place_and_0_size():
    x = _x((3, 5, 7), seed=6).astype(np.float32)
    a = mx.nd.array(x)
    mx.nd.LeakyReLU(a, act_type='gelu', out=a)
    np.testing.assert_allclose(a.asnumpy(), _gelu(x.astype(np.float64)), rtol=1e-6, atol=1e-7)
    empty = mx.nd.LeakyReLU(mx.nd.zeros((0, 4)), act_type='gelu')
    assert empty.shape == (0, 4)


def test_gelu_autograd_float32_large():
    # 2^18 + odd elements: the kernels' parallel parts, forward and backward
    x = mx.nd.array(_x((1 << 18) + 5, seed=7).astype(np.float32) * 3)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(x, act_type='gelu')
    y.backward()
    xd = x.asnumpy().astype(np.float64)
    np.testing.assert_allclose(y.asnumpy(), _gelu(xd), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(x.grad.asnumpy(), _gelu_prime(xd), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('req', ['write', 'add', 'inplace'])
@pytest.mark.parametrize('dtype', [np.float16, np.float32, np.float64])
def test_leaky_backward_reqs_and_gradient_over_its_head_gradient(req, dtype):
    spec = get_op('LeakyReLU')
    p = spec.params.parse('LeakyReLU', {'act_type': 'leaky', 'slope': 0.3})
    x = _x((5, 33), seed=8).astype(dtype)
    x[0, :3] = [0, -0.0, np.nan]
    dy = _x((5, 33), seed=9).astype(dtype)
    base = _x((5, 33), seed=10).astype(dtype) if req == 'add' else np.zeros_like(x)
    factor = np.where(x > 0, 1, dtype(0.3)).astype(dtype)
    expected = base + dy * factor
    dy_nd = mx.nd.array(dy, dtype=dtype)
    dx = dy_nd if req == 'inplace' else mx.nd.array(base, dtype=dtype)  # dx over dy
    spec.backward(p, [req], [dy_nd], [mx.nd.array(x, dtype=dtype)], [None], [dx], [])
    np.testing.assert_allclose(dx.asnumpy(), expected, rtol=1e-3 if dtype == np.float16
                               else 1e-6)


def test_prelu_per_channel_forward_backward():
    x, gamma = _x(), np.array([0.1, 0.2, 0.5])
    expected = np.where(x > 0, x, gamma.reshape(1, 3, 1) * x)
    check_op_forward('LeakyReLU', {'act_type': 'prelu'}, [x, gamma], [expected])
    check_op_backward('LeakyReLU', {'act_type': 'prelu'}, [x, gamma])


def test_prelu_shared_slope_forward_backward():
    x, gamma = _x(), np.array([0.2])
    check_op_forward('LeakyReLU', {'act_type': 'prelu'}, [x, gamma],
                     [np.where(x > 0, x, 0.2 * x)])
    check_op_backward('LeakyReLU', {'act_type': 'prelu'}, [x, gamma])


def test_prelu_gamma_shape_inferred_and_checked():
    spec = get_op('LeakyReLU')
    p = spec.params.parse('LeakyReLU', {'act_type': 'prelu'})
    assert spec.arguments(p) == ['data', 'gamma']
    ins, outs, _ = spec.infer_shape(p, [(2, 3, 4), None])
    assert ins[1] == (3,) and outs == [(2, 3, 4)]
    assert spec.infer_shape(p, [(2, 3, 4), (1,)])[0][1] == (1,)
    with pytest.raises(ValueError, match=r"LeakyReLU.*'gamma'.*\(3,\) or \(1,\).*\(5,\)"):
        spec.infer_shape(p, [(2, 3, 4), (5,)])
    sym = mx.sym.LeakyReLU(mx.sym.var('data'), act_type='prelu', name='act')
    assert sym.list_arguments() == ['data', 'act_gamma']
    assert sym.infer_shape(data=(2, 3))[0] == [(2, 3), (3,)]


def test_rrelu_inference_uses_mean_slope():
    x = _x()
    slope = (0.1 + 0.3) / 2
    check_op_forward('LeakyReLU', {'act_type': 'rrelu', 'lower_bound': 0.1,
                                   'upper_bound': 0.3}, [x],
                     [np.where(x > 0, x, slope * x), np.full(x.shape, slope)])
    check_op_backward('LeakyReLU', {'act_type': 'rrelu'}, [x], is_train=False)


def test_rrelu_training_draws_slopes_in_bounds_reproducibly():
    x = mx.nd.array(-np.ones((50, 40)))
    spec = get_op('LeakyReLU')
    p = spec.params.parse('LeakyReLU', {'act_type': 'rrelu', 'lower_bound': 0.1,
                                        'upper_bound': 0.4})

    def run():
        y, mask = mx.nd.zeros(x.shape), mx.nd.zeros(x.shape)
        spec.forward(p, True, ['write', 'write'], [x], [y, mask], [])
        return y.asnumpy(), mask.asnumpy()
    mx.random.seed(7)
    y1, m1 = run()
    mx.random.seed(7)
    y2, m2 = run()
    assert np.array_equal(m1, m2) and np.array_equal(y1, y2)
    assert m1.min() >= 0.1 and m1.max() <= 0.4 and m1.std() > 0.05
    np.testing.assert_allclose(y1, -m1)
    # backward uses the drawn slopes
    dx = mx.nd.zeros(x.shape)
    dy = mx.nd.ones(x.shape)
    spec.backward(p, ['write'], [dy, None], [x], [mx.nd.array(y1), mx.nd.array(m1)], [dx], [])
    np.testing.assert_allclose(dx.asnumpy(), m1)


def test_rrelu_has_two_visible_outputs_as_mxnet():
    sym = mx.sym.LeakyReLU(mx.sym.var('data'), act_type='rrelu', name='r')
    assert sym.list_outputs() == ['r_output', 'r_mask']


def test_leaky_bad_params():
    with pytest.raises(ValueError, match="act_type.*must be one of"):
        mx.nd.LeakyReLU(mx.nd.ones((2,)), act_type='swish')
    with pytest.raises(ValueError, match="lower_bound <= upper_bound"):
        mx.nd.LeakyReLU(mx.nd.ones((2,)), act_type='rrelu', lower_bound=0.5, upper_bound=0.1)


# ---------------------------------------------------------------- Dropout
def _dropout(x, is_train, **params):
    spec = get_op('Dropout')
    p = spec.params.parse('Dropout', params)
    y, mask = mx.nd.zeros(x.shape), mx.nd.zeros(x.shape)
    spec.forward(p, is_train, ['write', 'write'], [x], [y, mask], [])
    return y.asnumpy(), mask.asnumpy()


def test_dropout_inference_is_identity():
    x = _x()
    y = mx.nd.Dropout(mx.nd.array(x), p=0.5)
    np.testing.assert_array_equal(y.asnumpy(), x.astype(np.float32))
    y, mask = _dropout(mx.nd.array(x), False, p=0.5)
    np.testing.assert_array_equal(mask, 1)


def test_dropout_training_zeroes_and_scales():
    x = mx.nd.ones((100, 100))
    y, mask = _dropout(x, True, p=0.3)
    values = np.unique(y)
    assert len(values) == 2 and values[0] == 0
    np.testing.assert_allclose(values[1], 1 / 0.7, rtol=1e-6)
    np.testing.assert_array_equal(y, mask)
    kept = (y != 0).mean()
    assert abs(kept - 0.7) < 4 * math.sqrt(0.7 * 0.3 / y.size)


def test_dropout_reproducible_under_seed():
    x = mx.nd.array(_x((20, 30)))
    mx.random.seed(3)
    a = _dropout(x, True, p=0.5)
    mx.random.seed(3)
    b = _dropout(x, True, p=0.5)
    c = _dropout(x, True, p=0.5)
    assert np.array_equal(a[1], b[1]) and not np.array_equal(b[1], c[1])


def test_dropout_always_mode_drops_in_inference():
    y, _ = _dropout(mx.nd.ones((50, 50)), False, p=0.5, mode='always')
    assert 0.3 < (y == 0).mean() < 0.7


def test_dropout_axes_share_the_draw():
    _, mask = _dropout(mx.nd.ones((6, 40, 3)), True, p=0.5, axes=(1,))
    assert np.all(mask == mask[:, :1, :])          # one draw along axis 1
    assert 0 < (mask == 0).mean() < 1


def test_dropout_p_zero_and_one():
    x = mx.nd.array(_x())
    y, _ = _dropout(x, True, p=0.0)
    np.testing.assert_array_equal(y, x.asnumpy())
    y, mask = _dropout(x, True, p=1.0)
    np.testing.assert_array_equal(y, 0)
    np.testing.assert_array_equal(mask, 0)


@pytest.mark.parametrize('req', ['write', 'add'])
def test_dropout_backward_uses_mask(req):
    spec = get_op('Dropout')
    p = spec.params.parse('Dropout', {'p': 0.5})
    x = mx.nd.array(_x((10, 10)))
    y, mask = mx.nd.zeros(x.shape), mx.nd.zeros(x.shape)
    spec.forward(p, True, ['write', 'write'], [x], [y, mask], [])
    dy = _x((10, 10), seed=1)
    base = _x((10, 10), seed=2) if req == 'add' else np.zeros((10, 10))
    dx = mx.nd.array(base)
    spec.backward(p, [req], [mx.nd.array(dy), None], [x], [y, mask], [dx], [])
    np.testing.assert_allclose(dx.asnumpy(), base + dy * mask.asnumpy(), rtol=1e-6)


def test_dropout_in_executor_train_and_predict():
    net = mx.sym.Dropout(mx.sym.var('data'), p=0.5, name='drop')
    assert net.list_outputs() == ['drop_output']
    exe = net.simple_bind(mx.cpu(), data=(40, 50))
    x = np.random.default_rng(0).uniform(1, 2, (40, 50)).astype(np.float32)
    out = exe.forward(is_train=False, data=x)[0].asnumpy()
    np.testing.assert_array_equal(out, x)
    out = exe.forward(is_train=True, data=x)[0].asnumpy()
    assert 0.3 < (out == 0).mean() < 0.7
    exe.backward([mx.nd.ones((40, 50))])
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), np.where(out == 0, 0, 2.0))


def test_dropout_bad_params():
    with pytest.raises(ValueError, match=r"Dropout: p must be in \[0, 1\], got p=1.5"):
        mx.nd.Dropout(mx.nd.ones((2, 2)), p=1.5)
    with pytest.raises(ValueError, match="Dropout.*'data'.*axes=\\(3,\\)"):
        mx.nd.Dropout(mx.nd.ones((2, 2)), axes=(3,))
    with pytest.raises(ValueError, match="mode.*must be one of"):
        mx.nd.Dropout(mx.nd.ones((2, 2)), mode='sometimes')


def test_dropout_on_an_intermediate_value_in_a_graph():
    # FC -> Dropout -> FC(identity): the executor may run Dropout in place over fc1's output
    net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=6, name='fc1')
    net = mx.sym.Dropout(net, p=0.5)
    net = mx.sym.FullyConnected(net, num_hidden=6, no_bias=True, name='fc2')
    exe = net.simple_bind(mx.cpu(), data=(5, 4))
    rng = np.random.default_rng(0)
    x = rng.uniform(1, 2, (5, 4)).astype(np.float32)
    w1 = rng.uniform(0.5, 1, (6, 4)).astype(np.float32)
    exe.arg_dict['fc1_weight'][:] = w1
    exe.arg_dict['fc1_bias'][:] = 0
    exe.arg_dict['fc2_weight'][:] = np.eye(6, dtype=np.float32)
    hidden = x @ w1.T
    np.testing.assert_allclose(exe.forward(is_train=False, data=x)[0].asnumpy(), hidden,
                               rtol=1e-5)
    out = exe.forward(is_train=True, data=x)[0].asnumpy()
    mask = out / hidden
    assert set(np.unique(mask.round(4))) <= {0.0, 2.0} and 0 < (mask == 0).sum() < mask.size
    exe.backward([mx.nd.ones((5, 6))])
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), mask @ w1, rtol=1e-5)


@pytest.mark.parametrize('slope', [0.25, 1.0, 3.0, -0.5])
@pytest.mark.parametrize('dtype', [np.float16, np.float32, np.float64])
def test_leaky_forward_in_its_output_in_place_and_specials(slope, dtype):
    x = _x((3, 37), seed=11).astype(dtype)
    x[0, :5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
    with np.errstate(invalid='ignore', over='ignore'):
        want = np.where(x > 0, x, dtype(slope) * x)
    got = mx.nd.LeakyReLU(mx.nd.array(x, dtype=dtype), slope=slope).asnumpy()
    np.testing.assert_array_equal(got, want)
    assert np.signbit(got[0, 1]) == np.signbit(want[0, 1])
    a = mx.nd.array(x, dtype=dtype)
    mx.nd.LeakyReLU(a, slope=slope, out=a)                     # in place
    np.testing.assert_array_equal(a.asnumpy(), want)
