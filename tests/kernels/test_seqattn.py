"""mxcy/_seqattn.pyx's kernels through their NumPy twins (the same C code run at once on
NumPy arrays): strided batched GEMM with a strided zero fill, the sequence step copies and
the batched triangular solve, each against plain NumPy."""
import numpy as np
import pytest

from mxcy import _seqattn

RNG = np.random.default_rng(3)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_strided_batched_gemm_reads_and_writes_in_place(dtype):
    # product (o, i) reads rows of x at x[:, o, i, :] (row stride 6·4) and writes C (o, i)
    n, outer, inner, d = 5, 2, 3, 4
    x = RNG.standard_normal((n, outer, inner, d)).astype(dtype)
    w = RNG.standard_normal((outer, inner, d, 3)).astype(dtype)
    c = np.full((n, outer, inner, 3 + 2), np.nan, dtype)        # two columns zeroed
    xv = (x, 0, outer * inner * d, inner * d, d)
    wv = (w, 0, 3, inner * d * 3, d * 3)
    cv = (c, 0, outer * inner * 5, inner * 5, 5)
    g = (xv, wv, cv, n, 3, d, 0, 0, 0.5, 0.0, outer * inner, inner)
    _seqattn.att_gemm_np([g], (c, 3, n * outer * inner, 2, 5))
    want = 0.5 * np.einsum('noid,oide->noie', x.astype(np.float64), w)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(c[..., :3], want, rtol=tol, atol=tol)
    np.testing.assert_array_equal(c[..., 3:], 0)
    # beta = 1 with trans_a: C += 0.5 · (xᵀ)ᵀ, x read as stored (d, n) transposed
    xt = np.ascontiguousarray(np.moveaxis(x, 0, 3))             # (outer, inner, d, n)
    xtv = (xt, 0, n, inner * d * n, d * n)
    g = (xtv, wv, cv, n, 3, d, 1, 0, 0.5, 1.0, outer * inner, inner)
    _seqattn.att_gemm_np([g])
    np.testing.assert_allclose(c[..., :3], 2 * want, rtol=tol, atol=tol)


@pytest.mark.parametrize('axis', [0, 1])
def test_sequence_step_copies(axis):
    t, b = 6, 4
    x = RNG.standard_normal((t, b, 3) if axis == 0 else (b, t, 3))
    lens = np.array([0, 6, 2, 9], np.int64)
    n = np.clip(lens, 0, t)
    xs = x if axis == 0 else np.swapaxes(x, 0, 1)               # (t, b, 3) view
    y = np.empty_like(x)
    _seqattn.seq_op_np('mask', x, y, lens, axis, np.float64(4.5).tobytes())
    ys = y if axis == 0 else np.swapaxes(y, 0, 1)
    for j in range(b):
        np.testing.assert_array_equal(ys[:n[j], j], xs[:n[j], j])
        np.testing.assert_array_equal(ys[n[j]:, j], 4.5)
    last = np.empty((b, 3))
    _seqattn.seq_op_np('last', x, last, lens, axis, low=1)
    np.testing.assert_array_equal(last, xs[np.maximum(n, 1) - 1, np.arange(b)])
    dx = np.full_like(x, np.nan)
    _seqattn.seq_op_np('last_backward', last, dx, lens, axis, low=1)
    dxs = dx if axis == 0 else np.swapaxes(dx, 0, 1)
    want = np.zeros_like(xs)
    want[np.maximum(n, 1) - 1, np.arange(b)] = last
    np.testing.assert_array_equal(dxs, want)
    if axis == 0:
        _seqattn.seq_op_np('reverse', x, y, lens, 0)
        for j in range(b):
            np.testing.assert_array_equal(y[:n[j], j], x[:n[j], j][::-1])
            np.testing.assert_array_equal(y[n[j]:, j], x[n[j]:, j])


def test_batched_trsm_every_form():
    a = RNG.standard_normal((3, 4, 4)) + 8 * np.eye(4)
    for rightside in (False, True):
        b = RNG.standard_normal((3, 5, 4) if rightside else (3, 4, 5))
        for lower in (False, True):
            for transpose in (False, True):
                m = np.tril(a) if lower else np.triu(a)
                m = np.swapaxes(m, 1, 2) if transpose else m
                inv = np.linalg.inv(m)
                want = 2.0 * (b @ inv if rightside else inv @ b)
                got = _seqattn.trsm_np(a, b, rightside, lower, transpose, 2.0)
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
