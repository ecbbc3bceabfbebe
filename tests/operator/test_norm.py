"""BatchNorm, LayerNorm, InstanceNorm: forward vs NumPy, backward vs finite differences,
moving statistics, shape inference and errors."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.operator import get_op
from mxcy.test_utils import check_op_backward, check_op_forward


def _rng(seed=0):
    return np.random.default_rng(seed)


def _bn_reference(x, gamma, beta, mean, var, eps, axis=1):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    r = lambda v: v.reshape(shape)
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(gamma) + r(beta)


def _bn_inputs(shape=(4, 3, 5), axis=1, seed=0):
    rng = _rng(seed)
    c = shape[axis]
    return (rng.standard_normal(shape) * 2 + 1, rng.uniform(0.5, 1.5, c),
            rng.standard_normal(c), rng.standard_normal(c), rng.uniform(0.5, 2, c))


# ---------------------------------------------------------------- BatchNorm
def test_batchnorm_training_forward_and_moving_update():
    x, gamma, beta, mm, mv = _bn_inputs()
    mean, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    spec = get_op('BatchNorm')
    p = spec.params.parse('BatchNorm', {'fix_gamma': False, 'momentum': 0.8})
    ins = [mx.nd.array(a, dtype=np.float64) for a in (x, gamma, beta)]
    aux = [mx.nd.array(a, dtype=np.float64) for a in (mm, mv)]
    outs = [mx.nd.zeros(s, dtype=np.float64) for s in (x.shape, (3,), (3,))]
    spec.forward(p, True, ['write'] * 3, ins, outs, aux)
    np.testing.assert_allclose(outs[0].asnumpy(),
                               _bn_reference(x, gamma, beta, mean, var, 1e-3), rtol=1e-10)
    np.testing.assert_allclose(outs[1].asnumpy(), mean, rtol=1e-12)
    # MXNet's 'var' output is the inverse standard deviation
    np.testing.assert_allclose(outs[2].asnumpy(), 1 / np.sqrt(var + 1e-3), rtol=1e-12)
    np.testing.assert_allclose(aux[0].asnumpy(), mm * 0.8 + mean * 0.2, rtol=1e-12)
    np.testing.assert_allclose(aux[1].asnumpy(), mv * 0.8 + var * 0.2, rtol=1e-12)


def test_batchnorm_inference_uses_moving_stats_and_keeps_them():
    x, gamma, beta, mm, mv = _bn_inputs()
    expected = _bn_reference(x, np.ones(3), beta, mm, mv, 1e-3)       # fix_gamma default
    check_op_forward('BatchNorm', {}, [x, gamma, beta], [expected], aux=[mm, mv])
    aux = [mx.nd.array(mm), mx.nd.array(mv)]
    mx.nd.BatchNorm(mx.nd.array(x), mx.nd.array(gamma), mx.nd.array(beta), *aux)
    np.testing.assert_allclose(aux[0].asnumpy(), mm.astype(np.float32))


def test_batchnorm_use_global_stats_in_training():
    x, gamma, beta, mm, mv = _bn_inputs()
    check_op_forward('BatchNorm', {'use_global_stats': True, 'fix_gamma': False},
                     [x, gamma, beta], [_bn_reference(x, gamma, beta, mm, mv, 1e-3)],
                     aux=[mm, mv], is_train=True)


@pytest.mark.parametrize('axis,shape', [(1, (4, 3, 5)), (-1, (4, 5, 3)), (0, (3, 4)),
                                        (1, (2, 3, 2, 2))])
def test_batchnorm_axis_forward(axis, shape):
    x, gamma, beta, mm, mv = _bn_inputs(shape, axis)
    red = tuple(i for i in range(len(shape)) if i != axis % len(shape))
    mean, var = x.mean(axis=red), x.var(axis=red)
    check_op_forward('BatchNorm', {'axis': axis, 'fix_gamma': False, 'eps': 1e-5},
                     [x, gamma, beta],
                     [_bn_reference(x, gamma, beta, mean, var, 1e-5, axis % len(shape))],
                     aux=[mm, mv], is_train=True)


@pytest.mark.parametrize('fix_gamma', [False, True])
@pytest.mark.parametrize('use_global_stats', [False, True])
def test_batchnorm_backward(fix_gamma, use_global_stats):
    x, gamma, beta, mm, mv = _bn_inputs()
    check_op_backward('BatchNorm', {'fix_gamma': fix_gamma,
                                    'use_global_stats': use_global_stats},
                      [x, gamma, beta], aux=[mm, mv], rtol=1e-5, atol=1e-7)


def test_batchnorm_backward_last_axis():
    x, gamma, beta, mm, mv = _bn_inputs((3, 2, 4), axis=-1)
    check_op_backward('BatchNorm', {'fix_gamma': False, 'axis': -1}, [x, gamma, beta],
                      aux=[mm, mv], rtol=1e-5, atol=1e-7)


def test_batchnorm_fix_gamma_gradient_is_zero():
    x, gamma, beta, mm, mv = _bn_inputs()
    spec = get_op('BatchNorm')
    p = spec.params.parse('BatchNorm', {})
    ins = [mx.nd.array(a) for a in (x, gamma, beta)]
    aux = [mx.nd.array(a) for a in (mm, mv)]
    outs = [mx.nd.zeros(s) for s in (x.shape, (3,), (3,))]
    spec.forward(p, True, ['write'] * 3, ins, outs, aux)
    grads = [mx.nd.ones(a.shape) for a in ins]
    spec.backward(p, ['write'] * 3, [mx.nd.ones(x.shape), None, None], ins, outs, grads, aux)
    np.testing.assert_array_equal(grads[1].asnumpy(), 0)
    np.testing.assert_allclose(grads[2].asnumpy(), x.size / 3)


def test_batchnorm_shapes_names_and_visible_outputs():
    bn = mx.sym.BatchNorm(mx.sym.var('data'), name='bn')
    assert bn.list_arguments() == ['data', 'bn_gamma', 'bn_beta']
    assert bn.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert bn.list_outputs() == ['bn_output']
    args, outs, aux = bn.infer_shape(data=(2, 5, 3))
    assert args == [(2, 5, 3), (5,), (5,)] and outs == [(2, 5, 3)] and aux == [(5,), (5,)]
    both = mx.sym.BatchNorm(mx.sym.var('data'), output_mean_var=True, name='bn')
    assert both.list_outputs() == ['bn_output', 'bn_mean', 'bn_var']
    assert both.infer_shape(data=(2, 5, 3))[1] == [(2, 5, 3), (5,), (5,)]


def test_batchnorm_errors():
    with pytest.raises(ValueError, match=r"BatchNorm: axis=3 is out of range .* 3 dim"):
        mx.nd.BatchNorm(mx.nd.ones((2, 3, 4)), mx.nd.ones((4,)), mx.nd.ones((4,)),
                        mx.nd.ones((4,)), mx.nd.ones((4,)), axis=3)
    with pytest.raises(ValueError, match=r"BatchNorm.*'gamma'.*expected \(3,\), given \(4,\)"):
        mx.nd.BatchNorm(mx.nd.ones((2, 3, 4)), mx.nd.ones((4,)), mx.nd.ones((3,)),
                        mx.nd.ones((3,)), mx.nd.ones((3,)))
    with pytest.raises(ValueError, match=r"BatchNorm.*'moving_var'.*\(3,\).*\(2,\)"):
        mx.nd.BatchNorm(mx.nd.ones((2, 3, 4)), mx.nd.ones((3,)), mx.nd.ones((3,)),
                        mx.nd.ones((3,)), mx.nd.ones((2,)))


def test_batchnorm_in_executor_updates_moving_stats():
    net = mx.sym.BatchNorm(mx.sym.var('data'), fix_gamma=False, name='bn')
    exe = net.simple_bind(mx.cpu(), data=(8, 2, 3))
    exe.arg_dict['bn_gamma'][:] = 1
    exe.aux_dict['bn_moving_var'][:] = 1
    x = _rng().standard_normal((8, 2, 3)).astype(np.float32) + 3
    y = exe.forward(is_train=True, data=x)[0].asnumpy()
    np.testing.assert_allclose(y.mean(axis=(0, 2)), 0, atol=1e-5)
    np.testing.assert_allclose(exe.aux_dict['bn_moving_mean'].asnumpy(),
                               0.1 * x.mean(axis=(0, 2)), rtol=1e-5)
    exe.backward([mx.nd.array(x)])
    g = exe.grad_dict['bn_beta'].asnumpy()
    np.testing.assert_allclose(g, x.sum(axis=(0, 2)), rtol=1e-5)
    before = exe.aux_dict['bn_moving_mean'].asnumpy()
    exe.forward(is_train=False, data=x)
    np.testing.assert_array_equal(exe.aux_dict['bn_moving_mean'].asnumpy(), before)


def test_batchnorm_float16_data():
    # as MXNet: float16 data takes float32 gamma, beta and moving statistics
    x, gamma, beta, mm, mv = _bn_inputs()
    y = mx.nd.BatchNorm(mx.nd.array(x, dtype=np.float16),
                        *[mx.nd.array(a, dtype=np.float32) for a in (gamma, beta, mm, mv)],
                        fix_gamma=False)
    assert y.dtype == np.float16
    with pytest.raises(mx.MXNetError, match="'gamma' has dtype float16, expected float32"):
        mx.nd.BatchNorm(*[mx.nd.array(a, dtype=np.float16) for a in (x, gamma, beta, mm, mv)])
    np.testing.assert_allclose(y.asnumpy(), _bn_reference(x, gamma, beta, mm, mv, 1e-3),
                               rtol=2e-2, atol=2e-2)


# ---------------------------------------------------------------- LayerNorm
def _ln_reference(x, gamma, beta, axis, eps):
    mean = x.mean(axis=axis, keepdims=True)
    std = np.sqrt(x.var(axis=axis, keepdims=True) + eps)
    shape = [1] * x.ndim
    shape[axis] = -1
    return (x - mean) / std * gamma.reshape(shape) + beta.reshape(shape), mean, std


@pytest.mark.parametrize('axis', [-1, 1, 0])
def test_layernorm_forward_backward(axis):
    rng = _rng(1)
    x = rng.standard_normal((3, 4, 5))
    c = x.shape[axis]
    gamma, beta = rng.uniform(0.5, 1.5, c), rng.standard_normal(c)
    y, mean, std = _ln_reference(x, gamma, beta, axis, 1e-5)
    check_op_forward('LayerNorm', {'axis': axis}, [x, gamma, beta], [y, mean, std])
    check_op_backward('LayerNorm', {'axis': axis, 'eps': 1e-3}, [x, gamma, beta], rtol=1e-5,
                      atol=1e-7)


def test_layernorm_outputs_and_shapes():
    ln = mx.sym.LayerNorm(mx.sym.var('data'), name='ln')
    assert ln.list_arguments() == ['data', 'ln_gamma', 'ln_beta']
    assert ln.list_outputs() == ['ln_output']
    both = mx.sym.LayerNorm(mx.sym.var('data'), output_mean_var=True, name='ln')
    assert both.list_outputs() == ['ln_output', 'ln_mean', 'ln_std']
    args, outs, _ = both.infer_shape(data=(2, 3, 4))
    assert args == [(2, 3, 4), (4,), (4,)] and outs == [(2, 3, 4), (2, 3, 1), (2, 3, 1)]
    y = mx.nd.LayerNorm(mx.nd.ones((2, 3)), mx.nd.ones((3,)), mx.nd.zeros((3,)))
    np.testing.assert_array_equal(y.asnumpy(), 0)


def test_layernorm_errors():
    with pytest.raises(ValueError, match=r"LayerNorm.*'beta'.*expected \(3,\), given \(2,\)"):
        mx.nd.LayerNorm(mx.nd.ones((2, 3)), mx.nd.ones((3,)), mx.nd.ones((2,)))
    with pytest.raises(ValueError, match=r"LayerNorm: axis=2 is out of range"):
        mx.nd.LayerNorm(mx.nd.ones((2, 3)), mx.nd.ones((3,)), mx.nd.ones((3,)), axis=2)


# ---------------------------------------------------------------- InstanceNorm
def test_instancenorm_forward_backward():
    rng = _rng(2)
    x = rng.standard_normal((2, 3, 4, 2))
    gamma, beta = rng.uniform(0.5, 1.5, 3), rng.standard_normal(3)
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    y = (x - mean) / np.sqrt(var + 1e-3) * gamma.reshape(1, 3, 1, 1) + beta.reshape(1, 3, 1, 1)
    check_op_forward('InstanceNorm', {}, [x, gamma, beta],
                     [y, mean.reshape(2, 3), var.reshape(2, 3)])
    check_op_backward('InstanceNorm', {}, [x, gamma, beta], rtol=1e-5, atol=1e-7)


def test_instancenorm_shapes_and_errors():
    net = mx.sym.InstanceNorm(mx.sym.var('data'), name='inorm')
    assert net.list_outputs() == ['inorm_output']
    assert net.infer_shape(data=(2, 3, 4)) == ([(2, 3, 4), (3,), (3,)], [(2, 3, 4)], [])
    with pytest.raises(ValueError, match=r"InstanceNorm.*'data'.*3 or more axes.*\(2, 3\)"):
        mx.nd.InstanceNorm(mx.nd.ones((2, 3)), mx.nd.ones((3,)), mx.nd.ones((3,)))
