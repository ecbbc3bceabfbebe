"""contrib.BatchNormWithReLU (operator/norm.py): BatchNorm then ReLU in one operator, values
and gradients recorded from MXNet 1.9.1's CPU build, finite differences, names, errors."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.test_utils import check_op_backward

X = np.random.RandomState(0).randn(2, 3, 2, 2).astype(np.float32)


def _inputs():
    return (mx.nd.array(X), mx.nd.array([1, 2, -1]), mx.nd.array([0.1, -0.5, 0.2]),
            mx.nd.zeros(3), mx.nd.ones(3))


def test_inference_uses_moving_statistics():
    x, g, b, mm, mv = _inputs()
    y = mx.nd.contrib.BatchNormWithReLU(x, g, b, mm, mv, fix_gamma=False).asnumpy()
    # MXNet 1.9.1
    np.testing.assert_allclose(y.ravel()[:6], [1.8631711, 0.4999573, 1.078249, 2.3397734,
                                               3.23325, 0.], rtol=1e-5)
    ref = mx.nd.relu(mx.nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False)).asnumpy()
    np.testing.assert_array_equal(y, ref)


def test_training_values_gradients_and_moving_update_match_mxnet():
    x, g, b, mm, mv = _inputs()
    for a in (x, g, b):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.BatchNormWithReLU(x, g, b, mm, mv, fix_gamma=False, momentum=0.8)
    y.backward(mx.nd.array(np.arange(24).reshape(2, 3, 2, 2) / 10.0))
    # all recorded from MXNet 1.9.1
    np.testing.assert_allclose(y.asnumpy().ravel()[:8], [1.3558944, 0, 0.23962256, 2.0336916,
                                                         2.6787875, 0, 0.8127967, 0],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy().ravel()[:8],
                               [-0.22451961, -0.01507448, 0.18036298, 0.12868479,
                                -1.0455155, 0.32161632, 0.06452709, -0.31148177],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g.grad.asnumpy(), [0.608032, 2.9649482, -5.960672], rtol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), [0.5, 2.6, 6.1], rtol=1e-5)
    np.testing.assert_allclose(mm.asnumpy(), [0.17610227, 0.0609226, 0.00321492], rtol=1e-5)
    np.testing.assert_allclose(mv.asnumpy(), [0.8987868, 0.9931991, 1.0638968], rtol=1e-5)


@pytest.mark.parametrize('params', [{'fix_gamma': False}, {'fix_gamma': True, 'axis': -1},
                                    {'fix_gamma': False, 'use_global_stats': True}])
def test_gradient_by_finite_differences(params):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 5))
    c = x.shape[params.get('axis', 1)]
    gamma, beta = rng.uniform(0.5, 1.5, c), rng.standard_normal(c) * 0.3
    aux = [rng.standard_normal(c) * 0.1, rng.uniform(0.5, 1.5, c)]
    check_op_backward('_contrib_BatchNormWithReLU', params, [x, gamma, beta], aux=aux,
                      rtol=1e-4, atol=1e-6)


def test_outputs_names_and_gluon_layer():
    s = mx.sym.contrib.BatchNormWithReLU(mx.sym.var('d'))
    assert s.list_arguments() == ['d', 'batchnormwithrelu0_gamma', 'batchnormwithrelu0_beta']
    assert s.list_outputs() == ['batchnormwithrelu0_output']
    assert s.list_auxiliary_states() == ['batchnormwithrelu0_moving_mean',
                                         'batchnormwithrelu0_moving_var']
    x, g, b, mm, mv = _inputs()
    out, mean, invstd = mx.nd.contrib.BatchNormWithReLU(x, g, b, mm, mv,
                                                        output_mean_var=True)
    assert out.asnumpy().min() >= 0 and mean.shape == invstd.shape == (3,)
    net = mx.gluon.nn.BatchNormReLU(in_channels=3)
    net.initialize()
    np.testing.assert_allclose(net(x).asnumpy(), np.maximum(
        mx.nd.BatchNorm(x, mx.nd.ones(3), mx.nd.zeros(3), mm, mv, eps=1e-5).asnumpy(), 0),
        rtol=1e-6)
    sym = net(mx.sym.var('data'))
    assert '"op": "_contrib_BatchNormWithReLU"' in sym.tojson().replace("'", '"')


def test_bad_input():
    x, g, b, mm, mv = _inputs()
    with pytest.raises(ValueError, match="BatchNormWithReLU: eps must be positive, got eps=0.0"):
        mx.nd.contrib.BatchNormWithReLU(x, g, b, mm, mv, eps=0)
    with pytest.raises(ValueError, match=r"BatchNormWithReLU: shape mismatch for argument "
                                         r"'gamma': expected \(3,\), given \(4,\)"):
        mx.nd.contrib.BatchNormWithReLU(x, mx.nd.ones(4), b, mm, mv)
