"""An executor after a failed pass: the next pass over the same memory plan succeeds.

The plan keeps values as views of shared buffers, and a write to part of a buffer keeps
the error stored on it (a view's write says nothing about the rest). A pass that failed
left errors on the buffers; the next forward discards them before it runs, since every
planned value is written before it is read. Without that, the graph below (a small value
and then a large one in the same buffer) failed on every pass after the first failure.
"""
import numpy as np
import pytest

import mxcy as mx

FAIL = {'on': False}


class Flaky(mx.operator.CustomOp):
    """Identity that raises while FAIL['on'] is set."""

    def forward(self, is_train, req, in_data, out_data, aux):
        if FAIL['on']:
            raise ValueError('flaky forward')
        self.assign(out_data[0], req[0], in_data[0] * 1)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0])


@mx.operator.register('test_flaky_identity')
class FlakyProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ['data']

    def list_outputs(self):
        return ['output']

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return Flaky()


def flaky_graph():
    data = mx.sym.Variable('data')
    small = mx.sym.sum(data, axis=1) * 2                      # (4,), dies early
    big = mx.sym.broadcast_mul(data, mx.sym.reshape(small, shape=(4, 1)))    # (4, 8)
    out = mx.sym.Custom(big, op_type='test_flaky_identity')
    return mx.sym.sum(out, axis=1) + 1


@pytest.mark.parametrize('grad_req', ['null', 'write'])
def test_a_failed_pass_does_not_poison_the_next(engine_config, grad_req):
    exe = flaky_graph().simple_bind(mx.cpu(), data=(4, 8), grad_req=grad_req)
    plan = exe._plan
    assert len(plan.buffers) < len(plan.entry_arrays) + len(plan.grad_arrays)   # shared
    exe.arg_dict['data'][:] = np.arange(32, dtype=np.float32).reshape(4, 8) / 32
    x = exe.arg_dict['data'].asnumpy()
    expect = (x * (x.sum(1, keepdims=True) * 2)).sum(1) + 1
    FAIL['on'] = True
    try:
        exe.forward(is_train=grad_req != 'null')
        with pytest.raises(ValueError, match='flaky'):
            exe.outputs[0].asnumpy()
        if grad_req != 'null':
            exe.backward()
    finally:
        FAIL['on'] = False
    for _ in range(2):
        try:
            mx.nd.waitall()
        except ValueError:
            pass
    for _ in range(3):
        exe.forward(is_train=grad_req != 'null')
        np.testing.assert_allclose(exe.outputs[0].asnumpy(), expect, rtol=1e-5)
        if grad_req != 'null':
            exe.backward()
            grad = exe.grad_dict['data'].asnumpy()
            assert np.isfinite(grad).all() and np.abs(grad).sum() > 0
