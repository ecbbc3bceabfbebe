"""Kernels whose output overlaps an input at another offset: NumPy's semantics.

Pinned down (under NaiveEngine and 1, 2 and 8 workers, `engine_config`): an op whose
output is a view that overlaps one of its inputs elsewhere than exactly in place reads
that input as it was before the op, whatever the kernel is split into (flat ops of 256K+
elements run as parts on several workers) and whichever way the views are shifted. In
place (the same window) stays in place. Every kernel family that reads arrays while it
writes another is covered: flat binary/unary, broadcast binary, copies, GEMM, convolution,
pooling, softmax, transpose, Embedding, activation gradients, the fused RNN.
"""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _ndarray, _ops

BIG = 1 << 20           # above the size from which flat kernels are cut into parts


@pytest.mark.parametrize('n', [17, BIG])
def test_shifted_add_reads_the_right_side_before_writing(engine_config, n):
    a = mx.nd.ones((n,))
    a[1:] += a[:-1]
    expect = np.ones(n, np.float32)
    expect[1:] += expect[:-1].copy()
    np.testing.assert_array_equal(a.asnumpy(), expect)       # NumPy: 2.0 at the end


@pytest.mark.parametrize('n', [17, BIG])
def test_shift_the_other_way(engine_config, n):
    base = np.arange(n, dtype=np.float32) % 7
    a = mx.nd.array(base)
    a[:-3] += a[3:]
    expect = base.copy()
    expect[:-3] += base[3:]
    np.testing.assert_array_equal(a.asnumpy(), expect)


def test_binary_into_an_overlapping_out(engine_config):
    base = np.arange(BIG + 64, dtype=np.float32)
    a = mx.nd.array(base)
    _ndarray.binary(a[0:BIG], a[32:BIG + 32], _ops.BINARY_OPS['multiply'],
                    out=a[16:BIG + 16])
    expect = base.copy()
    expect[16:BIG + 16] = base[0:BIG] * base[32:BIG + 32]
    np.testing.assert_array_equal(a.asnumpy(), expect)


def test_unary_into_a_shifted_out(engine_config):
    base = np.linspace(-2, 2, BIG + 8).astype(np.float32)
    a = mx.nd.array(base)
    _ndarray.unary(a[0:BIG], _ops.UNARY_OPS['tanh'], out=a[8:BIG + 8])
    expect = base.copy()
    expect[8:] = np.tanh(base[:BIG])
    np.testing.assert_allclose(a.asnumpy(), expect, rtol=1e-6, atol=1e-7)


def test_broadcast_operand_inside_the_output(engine_config):
    """x += x[0:1]: every element adds the old first element (the loop would add the new
    one from the second element on)."""
    base = np.arange(1, 10, dtype=np.float32)
    x = mx.nd.array(base)
    _ndarray.binary(x, x[0:1], _ops.BINARY_OPS['add'], out=x)
    np.testing.assert_array_equal(x.asnumpy(), base + base[0])


def test_rows_of_a_matrix(engine_config):
    base = np.arange(4 * 3, dtype=np.int32).reshape(4, 3)
    x = mx.nd.array(base, dtype='int32')
    x[1:] += x[:-1]
    expect = base.copy()
    expect[1:] += base[:-1]
    np.testing.assert_array_equal(x.asnumpy(), expect)


def test_in_place_stays_in_place(engine_config):
    a = mx.nd.arange(0, BIG)
    view = a[0:BIG]
    view += 1
    _ndarray.unary(a, _ops.UNARY_OPS['negative'], out=a)
    np.testing.assert_array_equal(a.asnumpy(), -(np.arange(BIG, dtype=np.float32) + 1))


def test_overlapping_copy(engine_config):
    base = np.arange(100, dtype=np.float32)
    a = mx.nd.array(base)
    a[10:60] = a[0:50]
    expect = base.copy()
    expect[10:60] = base[0:50]
    np.testing.assert_array_equal(a.asnumpy(), expect)


def test_gemm_output_over_its_input(engine_config):
    rng = np.random.default_rng(0)
    m = rng.standard_normal((64, 64)).astype(np.float32)
    b = rng.standard_normal((64, 64)).astype(np.float32)
    flat = mx.nd.array(np.concatenate([m.ravel(), np.zeros(64, np.float32)]))
    a_view = flat[0:64 * 64].reshape((64, 64))
    c_view = flat[64:64 * 65].reshape((64, 64))       # one row further: overlaps a
    _ndarray.gemm(a_view, mx.nd.array(b), c_view, 64, 64, 64)
    np.testing.assert_allclose(c_view.asnumpy(), m @ b, rtol=1e-4, atol=1e-4)


def test_dot_into_its_own_operand(engine_config):
    rng = np.random.default_rng(1)
    m = rng.standard_normal((32, 32)).astype(np.float32)
    b = rng.standard_normal((32, 32)).astype(np.float32)
    a = mx.nd.array(m)
    mx.nd.dot(a, mx.nd.array(b), out=a)
    np.testing.assert_allclose(a.asnumpy(), m @ b, rtol=1e-4, atol=1e-4)


def test_convolution_and_pooling_over_their_input(engine_config):
    """Image 0's output lands on image 1's input: image 1 must still see its own input."""
    base = np.arange(800, dtype=np.float32) / 50
    flat = mx.nd.array(base)
    x = flat[0:400].reshape((4, 1, 10, 10))
    w = mx.nd.array(np.linspace(-1, 1, 9, dtype=np.float32).reshape(1, 1, 3, 3))
    y = flat[100:356].reshape((4, 1, 8, 8))
    mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=1, no_bias=True, out=y)
    x_np = base[:400].reshape(4, 10, 10)
    w_np = w.asnumpy()[0, 0]
    expect = np.zeros((4, 8, 8), np.float32)
    for i in range(8):
        for j in range(8):
            expect[:, i, j] = (x_np[:, i:i + 3, j:j + 3] * w_np).sum(axis=(1, 2))
    np.testing.assert_allclose(y.asnumpy()[:, 0], expect, rtol=1e-5, atol=1e-5)
    now = flat.asnumpy()
    p = flat[0:400].reshape((4, 1, 10, 10))
    q = flat[100:200].reshape((4, 1, 5, 5))
    mx.nd.Pooling(p, kernel=(2, 2), stride=(2, 2), pool_type='max', out=q)
    expect = now[:400].reshape(4, 5, 2, 5, 2).max(axis=(2, 4))
    np.testing.assert_array_equal(q.asnumpy()[:, 0], expect)


def test_softmax_and_transpose_into_shifted_views(engine_config):
    base = np.random.default_rng(2).standard_normal(64).astype(np.float32)
    flat = mx.nd.array(base)
    mx.nd.softmax(flat[0:48].reshape((6, 8)), out=flat[8:56].reshape((6, 8)))
    e = np.exp(base[:48].reshape(6, 8) - base[:48].reshape(6, 8).max(1, keepdims=True))
    np.testing.assert_allclose(flat[8:56].asnumpy(), (e / e.sum(1, keepdims=True)).ravel(),
                               rtol=1e-5)
    now = flat.asnumpy()
    mx.nd.transpose(flat[0:48].reshape((6, 8)), out=flat[4:52].reshape((8, 6)))
    np.testing.assert_array_equal(flat[4:52].asnumpy(), now[:48].reshape(6, 8).T.ravel())


def test_embedding_rows_into_their_table(engine_config):
    table = np.arange(40, dtype=np.float32).reshape(10, 4)
    flat = mx.nd.array(np.concatenate([table.ravel(), np.zeros(8, np.float32)]))
    weight = flat[0:40].reshape((10, 4))
    rows = flat[4:12].reshape((2, 4))               # inside the table: rows 1 and 2
    mx.nd.Embedding(mx.nd.array([9, 1]), weight, input_dim=10, output_dim=4, out=rows)
    np.testing.assert_array_equal(rows.asnumpy(), table[[9, 1]])


def test_executor_gradients_unchanged_by_staging(engine_config):
    """The memory plan's in-place activation and softmax stay exact (and staging-free)."""
    data = mx.sym.Variable('data')
    net = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=8, name='fc'),
                            act_type='relu')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=3, name='out'),
                               name='softmax')
    exe = net.simple_bind(mx.cpu(), data=(4, 5))
    rng = np.random.default_rng(3)
    for name, arr in exe.arg_dict.items():
        arr[:] = rng.standard_normal(arr.shape).astype(np.float32) * 0.5
    exe.arg_dict['softmax_label'][:] = np.array([0, 1, 2, 1], np.float32)
    exe.forward(is_train=True)
    exe.backward()
    first = {k: v.asnumpy().copy() for k, v in exe.grad_dict.items() if v is not None}
    exe.forward(is_train=True)
    exe.backward()
    for k, v in first.items():
        np.testing.assert_array_equal(exe.grad_dict[k].asnumpy(), v)


def test_activation_gradient_into_a_shifted_view(engine_config):
    base = np.linspace(-1, 1, BIG + 16).astype(np.float32)
    flat = mx.nd.array(base)
    v = mx.nd.array(np.where(np.arange(BIG) % 3, 1.0, -1.0).astype(np.float32))
    _ops.push_grad(_ops.GRAD_OPS['relu'], v, flat[0:BIG], flat[16:BIG + 16])
    expect = base.copy()
    expect[16:] = base[:BIG] * (v.asnumpy() > 0)
    np.testing.assert_array_equal(flat.asnumpy(), expect)


def test_rnn_output_over_its_input(engine_config):
    """The LSTM's output for step t lands on the input of step t + 1."""
    steps, batch, hidden = 4, 2, 3
    rng = np.random.default_rng(4)
    x = rng.standard_normal((steps, batch, hidden)).astype(np.float32)
    nparams = 4 * hidden * (hidden + hidden + 2)
    params = mx.nd.array(rng.standard_normal(nparams).astype(np.float32) * 0.3)
    state = mx.nd.zeros((1, batch, hidden))
    kwargs = dict(state_size=hidden, num_layers=1, mode='lstm')
    expect = mx.nd.RNN(mx.nd.array(x), params, state, state, **kwargs).asnumpy()
    step = batch * hidden
    flat = mx.nd.array(np.concatenate([x.ravel(), np.zeros(step, np.float32)]))
    data = flat[0:steps * step].reshape((steps, batch, hidden))
    out = flat[step:(steps + 1) * step].reshape((steps, batch, hidden))
    mx.nd.RNN(data, params, state, state, out=out, **kwargs)
    np.testing.assert_allclose(out.asnumpy(), expect, rtol=1e-5, atol=1e-6)
