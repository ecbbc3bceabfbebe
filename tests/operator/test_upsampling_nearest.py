"""UpSampling 'nearest' written block by block into the output: values for one input,
concat and sum of inputs at different scales, req 'add', float16."""
import numpy as np
import pytest

import mxcy as mx

RNG = np.random.default_rng(8)


def _up(x, f):
    return x.repeat(f, axis=2).repeat(f, axis=3)


@pytest.mark.parametrize('mode', ['concat', 'sum'])
def test_nearest_inputs_at_different_scales(mode):
    a = RNG.standard_normal((2, 3, 4, 5))
    # output (8, 10): b repeated x4 and x10 (sum), or at scale 1 (concat)
    b = RNG.standard_normal((2, 3, 2, 1) if mode == 'sum' else (2, 1, 8, 10))
    y = mx.nd.UpSampling(mx.nd.array(a), mx.nd.array(b), scale=2, num_args=2,
                         multi_input_mode=mode).asnumpy()
    ub = np.repeat(np.repeat(b, 8 // b.shape[2], 2), 10 // b.shape[3], 3)
    want = _up(a, 2) + ub if mode == 'sum' else np.concatenate([_up(a, 2), ub], axis=1)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


def test_nearest_values_grad_req_add_and_float16():
    a = RNG.standard_normal((1, 2, 3, 3))
    exe = mx.sym.UpSampling(mx.sym.var('x'), scale=3, num_args=1).bind(
        mx.cpu(), {'x': mx.nd.array(a)})
    y = exe.forward()[0].asnumpy()
    np.testing.assert_array_equal(y, _up(a.astype(np.float32), 3))
    h = mx.nd.UpSampling(mx.nd.array(a, dtype='float16'), scale=3, num_args=1)
    assert h.dtype == np.float16
    np.testing.assert_array_equal(h.asnumpy(), _up(a.astype(np.float16), 3))
    x = mx.nd.array(a)
    x.attach_grad()
    exe = mx.sym.UpSampling(mx.sym.var('x'), scale=3, num_args=1).bind(
        mx.cpu(), {'x': x}, args_grad={'x': x.grad}, grad_req='add')
    x.grad[:] = 1
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((1, 2, 9, 9)))
    np.testing.assert_array_equal(x.grad.asnumpy(), 10)     # 1 + the 9 pixels of a block
