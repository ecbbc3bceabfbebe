"""GroupNorm (MXNet 1.x): forward vs NumPy and MXNet 1.9.1, backward vs finite differences,
shape inference, names and errors."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.test_utils import check_op_backward, check_op_forward


def _reference(x, gamma, beta, groups, eps):
    n = x.shape[0]
    xg = x.reshape(n, groups, -1)
    mean = xg.mean(axis=2, keepdims=True)
    std = np.sqrt(xg.var(axis=2, keepdims=True) + eps)
    out = (xg - mean) / std * gamma.reshape(1, groups, 1) + beta.reshape(1, groups, 1)
    return out.reshape(x.shape), mean.reshape(n, groups), std.reshape(n, groups)


def _inputs(shape=(2, 6, 3, 2), groups=3, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 2 + 1, rng.uniform(0.5, 1.5, groups),
            rng.standard_normal(groups))


@pytest.mark.parametrize('shape,groups', [((2, 6, 3, 2), 3), ((3, 4, 5), 1), ((2, 4, 2), 4)])
def test_group_norm_forward_matches_numpy(shape, groups):
    x, gamma, beta = _inputs(shape, groups)
    out, mean, std = _reference(x, gamma, beta, groups, 1e-5)
    check_op_forward('GroupNorm', {'num_groups': groups, 'output_mean_var': True},
                     [x, gamma, beta], [out, mean, std], rtol=1e-5, atol=1e-6)


def test_group_norm_matches_mxnet():
    x = np.arange(16, dtype=np.float32).reshape(2, 4, 2) ** 1.5
    out, mean, std = mx.nd.GroupNorm(mx.nd.array(x), mx.nd.array([1.0, 2.0]),
                                     mx.nd.array([0.5, -1.0]), num_groups=2,
                                     output_mean_var=True)
    # recorded from MXNet 1.9.1
    np.testing.assert_allclose(mean.asnumpy(), [[2.2561448, 13.099384], [29.433266, 49.729836]],
                               rtol=1e-6)
    np.testing.assert_allclose(std.asnumpy(), [[1.9773264, 3.9250658], [5.165542, 6.1598325]],
                               rtol=1e-6)
    np.testing.assert_allclose(out.asnumpy()[0], [[-0.6410078, -0.13527435],
                                                  [0.7894223, 1.9868599],
                                                  [-3.598369, -1.9778407],
                                                  [-0.18597329, 1.7621832]], rtol=1e-5)


@pytest.mark.parametrize('shape,groups', [((2, 4, 3), 2), ((1, 3, 2, 2), 3), ((2, 2, 3), 1)])
def test_group_norm_backward(shape, groups):
    x, gamma, beta = _inputs(shape, groups, seed=1)
    check_op_backward('GroupNorm', {'num_groups': groups}, [x, gamma, beta],
                      rtol=1e-5, atol=1e-7)


def test_group_norm_symbol_names_and_shapes():
    gn = mx.sym.GroupNorm(mx.sym.var('data'), num_groups=2, name='gn')
    assert gn.list_arguments() == ['data', 'gn_gamma', 'gn_beta']
    assert gn.list_outputs() == ['gn_output'] and gn.list_auxiliary_states() == []
    # MXNet 1.9.1: gamma and beta have one value per group
    assert gn.infer_shape(data=(2, 4, 3, 5)) == ([(2, 4, 3, 5), (2,), (2,)],
                                                 [(2, 4, 3, 5)], [])
    both = mx.sym.GroupNorm(mx.sym.var('data'), num_groups=2, output_mean_var=True,
                            name='gn')
    assert both.list_outputs() == ['gn_output', 'gn_mean', 'gn_std']
    assert both.infer_shape(data=(2, 4, 3, 5))[1] == [(2, 4, 3, 5), (2, 2), (2, 2)]


def test_group_norm_in_executor():
    x, gamma, beta = _inputs((2, 6, 3), 3, seed=2)
    net = mx.sym.GroupNorm(mx.sym.var('data'), num_groups=3, eps=1e-3, name='gn')
    exe = net.simple_bind(mx.cpu(), data=x.shape)
    exe.arg_dict['gn_gamma'][:] = gamma.astype(np.float32)
    exe.arg_dict['gn_beta'][:] = beta.astype(np.float32)
    y = exe.forward(is_train=True, data=x.astype(np.float32))[0].asnumpy()
    np.testing.assert_allclose(y, _reference(x, gamma, beta, 3, 1e-3)[0], rtol=1e-4,
                               atol=1e-5)
    head = np.ones(x.shape, np.float32)
    exe.backward([mx.nd.array(head)])
    np.testing.assert_allclose(exe.grad_dict['gn_beta'].asnumpy(), [12, 12, 12])
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), 0, atol=1e-5)


def test_group_norm_errors():
    with pytest.raises(ValueError, match=r"GroupNorm.*'data'.*3 or more axes.*\(2, 4\)"):
        mx.nd.GroupNorm(mx.nd.ones((2, 4)), mx.nd.ones((2,)), mx.nd.ones((2,)), num_groups=2)
    with pytest.raises(ValueError, match=r"GroupNorm.*divisible by num_groups=2"):
        mx.nd.GroupNorm(mx.nd.ones((2, 3, 2)), mx.nd.ones((2,)), mx.nd.ones((2,)),
                        num_groups=2)
    with pytest.raises(ValueError, match=r"GroupNorm.*'gamma'.*expected \(2,\), given \(4,\)"):
        mx.nd.GroupNorm(mx.nd.ones((2, 4, 2)), mx.nd.ones((4,)), mx.nd.ones((2,)),
                        num_groups=2)
