"""The symbol-level helpers of mx.test_utils (MXNet's names and signatures):
check_numeric_gradient, check_symbolic_forward, check_symbolic_backward, simple_forward
-- on a few operators, and each one fails when it should."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.test_utils import (
    check_numeric_gradient,
    check_symbolic_backward,
    check_symbolic_forward,
    simple_forward,
)


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.name.NameManager():
        yield


RNG = np.random.default_rng(7)


def fc_case():
    sym = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')
    x, w, b = RNG.standard_normal((4, 5)), RNG.standard_normal((3, 5)), RNG.standard_normal(3)
    return sym, [x, w, b], x @ w.T + b


def test_simple_forward():
    sym, (x, w, b), want = fc_case()
    out = simple_forward(sym, data=x, fc_weight=w, fc_bias=b)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    a = mx.sym.var('a')
    both = simple_forward(mx.sym.Group([a * 2, a + 1]), a=np.array([1., 2.]))
    assert isinstance(both, list) and len(both) == 2
    np.testing.assert_allclose(both[1], [2., 3.])


def test_check_symbolic_forward():
    sym, location, want = fc_case()
    outs = check_symbolic_forward(sym, location, [want], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[0].asnumpy(), want, rtol=1e-5, atol=1e-5)
    named = dict(zip(sym.list_arguments(), location))
    check_symbolic_forward(sym, named, {'fc_output': want}, rtol=1e-5, atol=1e-5)
    check_symbolic_forward(sym, location, [want], rtol=1e-12, atol=1e-12, dtype=np.float64)
    act = mx.sym.Activation(mx.sym.var('x'), act_type='sigmoid')
    x = RNG.standard_normal((2, 3))
    check_symbolic_forward(act, [x], [1 / (1 + np.exp(-x))], atol=1e-6)
    with pytest.raises(AssertionError, match='EXPECTED_fc_output'):
        check_symbolic_forward(sym, location, [want + 0.1])
    with pytest.raises(ValueError, match='do not match'):
        check_symbolic_forward(sym, {'data': location[0]}, [want])
    with pytest.raises(ValueError, match='3 arguments'):
        check_symbolic_forward(sym, location[:2], [want])


def test_check_symbolic_backward_all_grad_reqs():
    sym, location, _ = fc_case()
    x, w, _ = location
    dy = RNG.standard_normal((4, 3))
    want = [dy @ w, dy.T @ x, dy.sum(0)]
    for req in ('write', 'add', 'null'):
        grads = check_symbolic_backward(sym, location, [dy], want, rtol=1e-4, atol=1e-5,
                                        grad_req=req)
        assert set(grads) == {'data', 'fc_weight', 'fc_bias'}
    # only some expected gradients, head gradients by name, float64
    check_symbolic_backward(sym, location, {'fc_output': dy}, {'fc_weight': want[1]},
                            rtol=1e-10, atol=1e-12, dtype=np.float64)
    with pytest.raises(AssertionError, match='EXPECTED_fc_bias'):
        check_symbolic_backward(sym, location, [dy], [want[0], want[1], want[2] * 2],
                                rtol=1e-4, atol=1e-5)
    # mixed requests per argument
    check_symbolic_backward(sym, location, [dy], want, rtol=1e-4, atol=1e-5,
                            grad_req={'data': 'null', 'fc_weight': 'add', 'fc_bias': 'write'})
    with pytest.raises(ValueError, match="grad_req for 'data' must be one of"):
        check_symbolic_backward(sym, location, [dy], want, grad_req='sometimes')


def test_check_numeric_gradient_on_ops():
    sym, location, _ = fc_case()
    check_numeric_gradient(sym, location)                                   # float32
    check_numeric_gradient(sym, location, numeric_eps=1e-6, rtol=1e-6, atol=1e-8,
                           dtype=np.float64)
    check_numeric_gradient(sym, location, grad_nodes=['fc_weight'], dtype=np.float64,
                           numeric_eps=1e-6, rtol=1e-6, atol=1e-8)
    check_numeric_gradient(sym, location, grad_nodes={'data': 'add', 'fc_weight': 'null'},
                           dtype=np.float64, numeric_eps=1e-6, rtol=1e-6, atol=1e-8)
    x, y = mx.sym.var('x'), mx.sym.var('y')
    expr = mx.sym.tanh(x) * y + x / (y * y + 1)
    check_numeric_gradient(expr, [RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2))],
                           numeric_eps=1e-6, rtol=1e-6, atol=1e-8, dtype=np.float64)
    conv = mx.sym.Convolution(mx.sym.var('data'), kernel=(2, 2), num_filter=2, name='c')
    check_numeric_gradient(conv, [RNG.standard_normal((1, 2, 3, 3)),
                                  RNG.standard_normal((2, 2, 2, 2)), RNG.standard_normal(2)],
                           numeric_eps=1e-6, rtol=1e-6, atol=1e-8, dtype=np.float64)
    with pytest.raises(ValueError, match=r"\['nope'\] are not arguments"):
        check_numeric_gradient(sym, location, grad_nodes=['nope'])


def test_check_numeric_gradient_with_aux_states():
    bn = mx.sym.BatchNorm(mx.sym.var('data'), fix_gamma=False, name='bn')
    x = RNG.standard_normal((5, 3))
    gamma, beta = RNG.uniform(0.5, 1.5, 3), RNG.standard_normal(3)
    check_numeric_gradient(bn, [x, gamma, beta], aux_states=[np.zeros(3), np.ones(3)],
                           numeric_eps=1e-6, rtol=1e-5, atol=1e-7, dtype=np.float64)


class _WrongGrad(mx.operator.CustomOp):
    """y = x², with the gradient off by a factor 3."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * in_data[0] * 6)


@mx.operator.register('test_check_utils_wrong_grad')
class _WrongGradProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _WrongGrad()


def test_check_numeric_gradient_catches_a_wrong_gradient():
    sym = mx.sym.Custom(mx.sym.var('x'), op_type='test_check_utils_wrong_grad')
    with pytest.raises(AssertionError, match='NUMERICAL_x'):
        check_numeric_gradient(sym, [RNG.standard_normal((2, 3))], dtype=np.float64,
                               numeric_eps=1e-6, rtol=1e-4)
