"""The interleaved attention products as strided batched GEMMs (mxcy/operator/_att_gemm.py):
forward and every gradient against a NumPy reference written from the definitions (loops
over batch entries and heads), for several heads, odd sizes, float32/float64, req 'write',
'add' and 'null' per gradient, and the float16 path (NumPy, explicit fallback)."""
import numpy as np
import pytest

from mxcy.ndarray.utils import array
from mxcy.operator import get_op

RNG = np.random.default_rng(13)


def split(x, h, parts):
    """(L, B, parts·H·D) -> array (parts, B, H, L, D)."""
    n, b, w = x.shape
    d = w // (parts * h)
    return x.reshape(n, b, h, parts, d).transpose(3, 1, 2, 0, 4)


def merge(t):
    """(parts, B, H, L, D) -> (L, B, parts·H·D) (inverse of split)."""
    parts, b, h, n, d = t.shape
    return t.transpose(3, 1, 2, 0, 4).reshape(n, b, h * parts * d)


def ref_qk(q, k):
    """(q / sqrt(D)) · kᵀ for q (B, H, Lq, D), k (B, H, Lk, D) -> (B·H, Lq, Lk)."""
    b, h, lq, d = q.shape
    out = np.einsum('bhqd,bhkd->bhqk', q, k) / np.sqrt(d)
    return out.reshape(b * h, lq, k.shape[2])


def ref_grads_qk(dy, q, k):
    b, h, lq, d = q.shape
    dy = dy.reshape(b, h, lq, k.shape[2]) / np.sqrt(d)
    return np.einsum('bhqk,bhkd->bhqd', dy, k), np.einsum('bhqk,bhqd->bhkd', dy, q)


def ref_valatt(att, v):
    """attention (B·H, Lq, Lk) · v (B, H, Lk, D) -> (Lq, B, H·D)."""
    b, h, lk, d = v.shape
    out = np.einsum('bhqk,bhkd->bhqd', att.reshape(b, h, -1, lk), v)
    return merge(out[None])


def ref_grads_valatt(dy, att, v):
    b, h, lk, d = v.shape
    dout = split(dy, h, 1)[0]
    a = att.reshape(b, h, -1, lk)
    return np.einsum('bhqk,bhqd->bhkd', a, dout), \
        np.einsum('bhqd,bhkd->bhqk', dout, v).reshape(att.shape)


def make_case(op, h, lq, lk, b, d, dtype):
    """Inputs, forward reference and gradient reference (given dy) of one op."""
    u = lambda *s: RNG.standard_normal(s).astype(dtype)    # noqa: E731
    if op == 'selfatt_qk':
        x = u(lq, b, 3 * h * d)
        qkv = split(x, h, 3)
        want = ref_qk(qkv[0], qkv[1])

        def grads(dy):
            dq, dk = ref_grads_qk(dy, qkv[0], qkv[1])
            return [merge(np.stack([dq, dk, np.zeros_like(dq)]))]
        return [x], want, grads
    if op == 'selfatt_valatt':
        x, att = u(lq, b, 3 * h * d), u(b * h, lq, lq)
        qkv = split(x, h, 3)

        def grads(dy):
            dv, da = ref_grads_valatt(dy, att, qkv[2])
            return [merge(np.stack([np.zeros_like(dv), np.zeros_like(dv), dv])), da]
        return [x, att], ref_valatt(att, qkv[2]), grads
    if op == 'encdec_qk':
        q, kv = u(lq, b, h * d), u(lk, b, 2 * h * d)
        qs, kvs = split(q, h, 1)[0], split(kv, h, 2)

        def grads(dy):
            dq, dk = ref_grads_qk(dy, qs, kvs[0])
            return [merge(dq[None]), merge(np.stack([dk, np.zeros_like(dk)]))]
        return [q, kv], ref_qk(qs, kvs[0]), grads
    kv, att = u(lk, b, 2 * h * d), u(b * h, lq, lk)
    kvs = split(kv, h, 2)

    def grads(dy):
        dv, da = ref_grads_valatt(dy, att, kvs[1])
        return [merge(np.stack([np.zeros_like(dv), dv])), da]
    return [kv, att], ref_valatt(att, kvs[1]), grads


def run(op, h, inputs, reqs, start):
    """Forward and backward of the op on NDArrays; gradients begin as `start` values."""
    name = '_contrib_interleaved_matmul_' + op
    spec = get_op(name)
    p = spec.params.parse(name, {'heads': h})
    ins = [array(x, dtype=x.dtype) for x in inputs]
    _, out_shapes, _ = spec.infer_shape(p, [x.shape for x in inputs])
    y = array(np.full(out_shapes[0], np.nan, inputs[0].dtype), dtype=inputs[0].dtype)
    spec.forward(p, False, ['write'], ins, [y], [])
    dy = RNG.standard_normal(out_shapes[0]).astype(inputs[0].dtype)
    grads = [array(s.copy(), dtype=s.dtype) for s in start]
    spec.backward(p, reqs, [array(dy, dtype=dy.dtype)], ins, [y], grads, [])
    return y.asnumpy(), dy, [g.asnumpy() for g in grads]


OPS = ['selfatt_qk', 'selfatt_valatt', 'encdec_qk', 'encdec_valatt']
# heads, Lq, Lk, B, D; the last is big enough to be split between the workers
SIZES = [(1, 4, 4, 2, 8), (3, 5, 7, 3, 5), (2, 1, 9, 1, 3), (4, 64, 64, 4, 33)]


@pytest.mark.parametrize('op', OPS)
@pytest.mark.parametrize('size', SIZES, ids=str)
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('req', ['write', 'add'])
def test_products_and_gradients_match_reference(op, size, dtype, req):
    h, lq, lk, b, d = size
    inputs, want, grads = make_case(op, h, lq, lk, b, d, dtype)
    # 'write' must overwrite what the gradient held (NaN here); 'add' adds onto it
    start = [np.full(x.shape, np.nan if req == 'write' else 0.5, dtype) for x in inputs]
    y, dy, got = run(op, h, inputs, [req] * len(inputs), start)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y, want, **tol)
    for g, w, s in zip(got, grads(dy.astype(np.float64)), start):
        np.testing.assert_allclose(g, w + (s if req == 'add' else 0), **tol)


@pytest.mark.parametrize('op', ['selfatt_valatt', 'encdec_qk', 'encdec_valatt'])
def test_null_req_leaves_that_gradient_alone(op):
    inputs, _, grads = make_case(op, 2, 3, 4, 2, 3, np.float64)
    start = [np.full(x.shape, 7.0) for x in inputs]
    for live in range(2):
        reqs = ['null', 'null']
        reqs[live] = 'write'
        _, dy, got = run(op, 2, inputs, reqs, start)
        want = grads(dy)
        np.testing.assert_allclose(got[live], want[live], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(got[1 - live], 7.0)


@pytest.mark.parametrize('op', OPS)
def test_float16_runs_the_numpy_path(op):
    inputs, want, grads = make_case(op, 2, 3, 5, 2, 4, np.float32)
    inputs = [x.astype(np.float16) for x in inputs]
    start = [np.zeros(x.shape, np.float16) for x in inputs]
    y, dy, got = run(op, 2, inputs, ['write'] * len(inputs), start)
    assert y.dtype == np.float16
    np.testing.assert_allclose(y, want, rtol=2e-2, atol=2e-2)
    for g, w in zip(got, grads(dy.astype(np.float64))):
        np.testing.assert_allclose(g, w, rtol=5e-2, atol=5e-2)
