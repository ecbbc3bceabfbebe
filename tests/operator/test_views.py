"""reshape_like and diag as registry operators: forward against NumPy, backward against
finite differences, mx.sym and autograd (gradients reach lhs / data)."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(0)


@pytest.mark.parametrize('params, rhs_shape, out_shape', [
    ({}, (6, 4), (6, 4)),
    ({'lhs_begin': 1, 'lhs_end': 3, 'rhs_begin': 0, 'rhs_end': 1}, (12, 5), (2, 12)),
    ({'lhs_begin': -2, 'rhs_begin': 1}, (7, 3, 2, 2), (2, 3, 2, 2)),
    ({'lhs_begin': 0, 'lhs_end': 2, 'rhs_begin': 1, 'rhs_end': 2}, (1, 6, 9), (6, 4)),
])
def test_reshape_like_forward_backward(params, rhs_shape, out_shape):
    x = RNG.standard_normal((2, 3, 4))
    rhs = np.zeros(rhs_shape, np.float32)      # only its shape is read; any dtype
    check_op_forward('reshape_like', params, [x, rhs], [x.reshape(out_shape)])
    check_op_backward('reshape_like', params, [x, rhs.astype(np.float64)],
                      grad_nodes=['lhs'])


def test_reshape_like_symbol_autograd_and_errors():
    out = mx.sym.reshape_like(mx.sym.var('a'), mx.sym.var('b'))
    assert out.infer_shape(a=(2, 6), b=(3, 4))[1] == [(3, 4)]
    a = mx.nd.array(RNG.standard_normal(6))
    a.attach_grad()
    with autograd.record():
        y = (mx.nd.reshape_like(a, mx.nd.ones((2, 3))) * mx.nd.array([[1, 2, 3]])).sum()
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [1, 2, 3, 1, 2, 3])
    with pytest.raises(ValueError, match=r"reshape_like: lhs \(2, 3\) has 6 elements"):
        mx.nd.reshape_like(mx.nd.ones((2, 3)), mx.nd.ones((5,)))
    with pytest.raises(ValueError, match="not a valid range of dims of rhs"):
        mx.nd.reshape_like(mx.nd.ones((2, 3)), mx.nd.ones((6,)), rhs_begin=2)


@pytest.mark.parametrize('shape, params', [
    ((4,), {}), ((3,), {'k': 2}), ((3,), {'k': -1}),
    ((3, 4), {}), ((3, 4), {'k': 1}), ((3, 4), {'k': -2}),
    ((2, 3, 4), {'axis1': 1, 'axis2': 2}), ((2, 3, 4), {'k': 1, 'axis1': -1, 'axis2': 0}),
    ((2, 5, 3), {'k': -2, 'axis1': 2, 'axis2': 1}), ((4, 2, 3), {'k': 1, 'axis1': 0, 'axis2': 2}),
    ((3, 2, 6, 1), {'k': -1, 'axis1': 2, 'axis2': 0}),
])
def test_diag_forward_backward(shape, params):
    x = RNG.standard_normal(shape)
    k = params.get('k', 0)
    want = np.diag(x, k) if len(shape) == 1 else \
        np.diagonal(x, k, params.get('axis1', 0), params.get('axis2', 1))
    check_op_forward('diag', params, [x], [want])
    check_op_backward('diag', params, [x])


def test_diag_symbol_and_autograd():
    out = mx.sym.diag(mx.sym.var('v'))
    assert out.infer_shape(v=(5,))[1] == [(5, 5)]
    m = mx.nd.array(RNG.standard_normal((3, 3)))
    m.attach_grad()
    with autograd.record():
        y = mx.nd.diag(m).sum()
    y.backward()
    np.testing.assert_array_equal(m.grad.asnumpy(), np.eye(3))
    with pytest.raises(ValueError, match="diag: diagonal k=5 does not exist"):
        mx.nd.diag(mx.nd.ones((2, 2)), k=5)
