"""mx.operator.NumpyOp / NDArrayOp: MXNet's deprecated Python operators, run through
Custom (MXNet 1.9.1 itself crashes on them, so values are checked against NumPy)."""
import numpy as np
import pytest

import mxcy as mx

X = np.array([[1, 2, 3], [0, 0, 1]], np.float32)
LABEL = np.array([2, 0], np.float32)


class NumpySoftmax(mx.operator.NumpyOp):
    """The MXNet example: a softmax loss layer computing its own gradient."""
    def __init__(self):
        super().__init__(False)

    def list_arguments(self):
        return ['data', 'label']

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]]

    def forward(self, in_data, out_data):
        assert all(isinstance(a, np.ndarray) for a in in_data + out_data)
        x, y = in_data[0], out_data[0]
        y[:] = np.exp(x - x.max(axis=1, keepdims=True))
        y /= y.sum(axis=1, keepdims=True)

    def backward(self, out_grad, in_data, out_data, in_grad):
        label = in_data[1].astype(int)
        in_grad[0][:] = out_data[0]
        in_grad[0][np.arange(len(label)), label] -= 1.0


class NDSquare(mx.operator.NDArrayOp):
    def forward(self, in_data, out_data):
        assert isinstance(in_data[0], mx.nd.NDArray)
        out_data[0][:] = in_data[0] * in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 2 * in_data[0] * out_grad[0]


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_numpy_op_forward_backward_and_shapes():
    with pytest.warns(DeprecationWarning, match='NumpySoftmax is deprecated'):
        op = NumpySoftmax()
    sym = op(data=mx.sym.Variable('data'), label=mx.sym.Variable('label'), name='softmax')
    assert sym.list_arguments() == ['data', 'label']
    assert sym.infer_shape(data=(2, 3))[:2] == ([(2, 3), (2,)], [(2, 3)])
    grad = mx.nd.ones((2, 3))
    ex = sym.bind(mx.cpu(), {'data': mx.nd.array(X), 'label': mx.nd.array(LABEL)},
                  args_grad={'data': grad}, grad_req={'data': 'add', 'label': 'null'})
    np.testing.assert_allclose(ex.forward(is_train=True)[0].asnumpy(), softmax(X), rtol=1e-6)
    ex.backward()
    expected = softmax(X)
    expected[[0, 1], [2, 0]] -= 1
    np.testing.assert_allclose(grad.asnumpy(), 1 + expected, rtol=1e-6)   # 'add' kept


def test_ndarray_op_uses_the_head_gradient():
    with pytest.warns(DeprecationWarning):
        op = NDSquare()
    sym = op(data=mx.sym.Variable('data'), name='sq')
    assert sym.infer_shape(data=(2, 3))[1] == [(2, 3)]
    grad = mx.nd.zeros((2, 3))
    ex = sym.bind(mx.cpu(), {'data': mx.nd.array(X)}, args_grad={'data': grad})
    np.testing.assert_array_equal(ex.forward(is_train=True)[0].asnumpy(), X * X)
    ex.backward([mx.nd.full((2, 3), 0.5)])
    np.testing.assert_array_equal(grad.asnumpy(), X)


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
