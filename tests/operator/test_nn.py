"""FullyConnected and Activation through the operator harness."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(0)


@pytest.mark.parametrize('flatten', [True, False])
@pytest.mark.parametrize('no_bias', [True, False])
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_fully_connected_forward(flatten, no_bias, dtype):
    x = RNG.standard_normal((4, 3, 5)).astype(dtype)
    k = 15 if flatten else 5
    w = RNG.standard_normal((6, k)).astype(dtype)
    b = RNG.standard_normal(6).astype(dtype)
    x2 = x.reshape(4, 15) if flatten else x
    expected = x2 @ w.T + (0 if no_bias else b)
    inputs = [x, w] if no_bias else [x, w, b]
    check_op_forward('FullyConnected', dict(num_hidden=6, no_bias=no_bias, flatten=flatten),
                     inputs, [expected], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('flatten', [True, False])
def test_fully_connected_backward(flatten):
    x = RNG.standard_normal((3, 2, 4))
    w = RNG.standard_normal((5, 8 if flatten else 4))
    check_op_backward('FullyConnected', dict(num_hidden=5, flatten=flatten),
                      [x, w, RNG.standard_normal(5)])


def test_fully_connected_arguments_and_errors():
    fc = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3, no_bias=True, name='f')
    assert fc.list_arguments() == ['data', 'f_weight']
    with pytest.raises(mx.MXNetError, match=r"weight.*expected \(3, 4\), given \(3, 5\)"):
        fc.infer_shape(data=(2, 4), f_weight=(3, 5))
    with pytest.raises(TypeError, match="required parameter 'num_hidden'"):
        mx.nd.FullyConnected(mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), mx.nd.ones((2,)))
    with pytest.raises(ValueError, match="num_hidden.*expects an integer"):
        mx.nd.FullyConnected(mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), num_hidden='x',
                             no_bias=True)


def test_params_accept_mxnet_strings():
    y = mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)), num_hidden='4',
                             no_bias='True')
    np.testing.assert_array_equal(y.asnumpy(), np.full((2, 4), 3.0))


ACTS = {'relu': lambda x: np.maximum(x, 0), 'sigmoid': lambda x: 1 / (1 + np.exp(-x)),
        'tanh': np.tanh, 'softrelu': lambda x: np.log1p(np.exp(x)),
        'softsign': lambda x: x / (1 + np.abs(x))}


@pytest.mark.parametrize('act', sorted(ACTS))
def test_activation_forward_backward(act):
    x = RNG.standard_normal((3, 5))
    check_op_forward('Activation', dict(act_type=act), [x], [ACTS[act](x)])
    check_op_backward('Activation', dict(act_type=act), [x + 0.05])   # avoid relu's kink


def test_activation_rejects_unknown_type():
    with pytest.raises(ValueError, match="act_type.*one of"):
        mx.sym.Activation(mx.sym.Variable('x'), act_type='swish')
