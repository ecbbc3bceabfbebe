"""mx.operator introspection and the legacy NumpyOp/NDArrayOp front ends (on CustomOp)."""
import numpy as np

import mxcy as mx


def test_introspection():
    ops = mx.operator.get_all_registered_operators()
    assert 'FullyConnected' in ops and '_linalg_gemm' in ops and ops == sorted(ops)
    args = mx.operator.get_operator_arguments('FullyConnected')
    assert args.narg == 6 and args.names[:3] == ['data', 'weight', 'bias']
    assert args.types[3] == 'int, required'
    assert mx.operator.get_operator_arguments('Concat').types[0] == 'NDArray-or-Symbol[]'


class _Square(mx.operator.NumpyOp):
    def __init__(self):
        super().__init__(True)

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] ** 2

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 2 * in_data[0] * out_grad[0]


class _Double(mx.operator.NDArrayOp):
    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] * 2

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0] * 2


def test_numpy_and_ndarray_ops_forward_and_backward():
    x = mx.sym.var('x')
    net = _Double().get_symbol(_Square().get_symbol(x, name='sq'), name='dbl')
    exe = net.bind(mx.cpu(), {'x': mx.nd.array([1.0, 2.0, 3.0])},
                   args_grad={'x': mx.nd.zeros(3)})
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones(3))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), [2, 8, 18])
    np.testing.assert_allclose(exe.grad_dict['x'].asnumpy(), [4, 8, 12])
