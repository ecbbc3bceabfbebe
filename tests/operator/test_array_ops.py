"""amp_cast (mxcy/operator/array_ops.py): one cast into the output, as Cast; the gradient
is cast back to the input's dtype; req 'add' accumulates."""
import numpy as np
import pytest

import mxcy as mx


@pytest.mark.parametrize('src, dst', [('float32', 'float16'), ('float16', 'float32'),
                                      ('float32', 'float64'), ('float32', 'float32')])
def test_amp_cast_forward_and_gradient(src, dst):
    x = np.random.default_rng(2).uniform(-70000, 70000, (3, 257)).astype(src)
    a = mx.nd.array(x, dtype=src)
    a.attach_grad()
    head = np.random.default_rng(3).uniform(-2, 2, x.shape).astype(dst)
    with mx.autograd.record():
        y = mx.nd.amp_cast(a, dtype=dst)
    y.backward(mx.nd.array(head, dtype=dst))
    assert y.dtype == np.dtype(dst) and a.grad.dtype == np.dtype(src)
    np.testing.assert_array_equal(y.asnumpy(), x.astype(dst))     # (float16: inf past 65504)
    np.testing.assert_array_equal(a.grad.asnumpy(), head.astype(src))
    out = mx.nd.ones(x.shape, dtype=dst)
    mx.nd.amp_cast(a, dtype=dst, out=out)
    np.testing.assert_array_equal(out.asnumpy(), x.astype(dst))
    assert mx.nd.amp_cast(mx.nd.zeros((0, 4), dtype=src), dtype=dst).shape == (0, 4)


def test_amp_cast_symbol_infers_the_dtype():
    s = mx.sym.amp_cast(mx.sym.var('x'), dtype='float16')
    _, out_types, _ = s.infer_type(x='float32')
    assert out_types == [np.float16]


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_multi_sum_sq_accumulates_in_float64(dtype):
    # 2^20 float32 values near 1: a float32 running sum would be off by ~1e-3 relative
    a = (1 + np.random.default_rng(4).uniform(0, 1e-3, (1024, 1024))).astype(dtype)
    b = np.arange(7).reshape(7, 1).astype(dtype)
    got = mx.nd.multi_sum_sq(mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype),
                             mx.nd.zeros((0, 3), dtype=dtype), num_arrays=3)
    assert got.dtype == np.float32
    want = [float((a.astype(np.float64) ** 2).sum()), 91.0, 0.0]
    np.testing.assert_allclose(got.asnumpy(), np.array(want, np.float32), rtol=1e-7)


@pytest.mark.parametrize('src', ['float64', 'int32', 'uint8', 'int64'])
def test_amp_cast_leaves_other_dtypes_unchanged(src):
    # MXNet 1.9.1 casts only float16/float32 data (float64 and integers pass through)
    x = np.arange(6).reshape(2, 3).astype(src)
    for dst in ('float16', 'float32', 'float64'):
        y = mx.nd.amp_cast(mx.nd.array(x, dtype=src), dtype=dst)
        assert y.dtype == np.dtype(src)
        np.testing.assert_array_equal(y.asnumpy(), x)
    _, out_types, _ = mx.sym.amp_cast(mx.sym.var('x'), dtype='float16').infer_type(x=src)
    assert out_types == [np.dtype(src)]
