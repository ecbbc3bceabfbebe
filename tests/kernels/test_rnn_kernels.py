"""The fused RNN kernels of `mxcy._rnn`, reached without the engine through their `*_np`
twins, against the one-cell-at-a-time NumPy reference in `mxcy._reference`.

Each check runs on both implementations ([reference, cython]); float64 backward is checked
against central finite differences, float32 (the vectorised sigmoid/tanh and the packed
SIMD GEMM) against the float64 reference. The SIMD GEMM is also checked on its own,
at sizes that are not multiples of its 32-column panels or its row blocks.
"""
import numpy as np
import pytest

from mxcy import _reference, _rnn
from mxcy.test_utils import finite_difference as numeric_grad

IMPLS = [pytest.param(_reference, id='reference'), pytest.param(_rnn, id='cython')]
GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}
MODES = list(GATES)
# (num_layers, bidirectional, dropout masks between layers)
CONFIGS = [(1, False, False), (2, True, False), (3, True, True), (2, False, True)]


def param_size(mode, layers, dirs, input_size, hidden):
    return sum(dirs * GATES[mode] * hidden * ((input_size if layer == 0 else dirs * hidden)
                                              + hidden + 2) for layer in range(layers))


def make_case(mode, layers, bidirectional, masks, dtype=np.float64, t=4, n=3, i=5, h=6,
              seed=0, scale=0.5):
    rng = np.random.default_rng(seed)
    d = 2 if bidirectional else 1
    x = rng.standard_normal((t, n, i))
    w = rng.standard_normal(param_size(mode, layers, d, i, h)) * scale
    hx = rng.standard_normal((layers * d, n, h))
    cx = rng.standard_normal((layers * d, n, h)) if mode == 'lstm' else None
    mask_list = None
    if masks:
        mask_list = [(rng.random((t, n, d * h)) < 0.7) / 0.7 for _ in range(layers - 1)]
        mask_list = [m.astype(dtype) for m in mask_list]
    arrays = [None if a is None else np.ascontiguousarray(a, dtype=dtype)
              for a in (x, w, hx, cx)]
    return arrays, mask_list


def run(impl, mode, arrays, layers, bidirectional, masks, heads):
    x, w, hx, cx = arrays
    y, hy, cy, saved = impl.rnn_fwd_np(mode, x, w, hx, cx, layers, bidirectional, masks)
    dy, dhy, dcy = heads
    grads = impl.rnn_bwd_np(mode, x, w, hx, cx, saved, dy, dhy, dcy, layers, bidirectional,
                            masks is not None)
    return (y, hy, cy), grads


def make_heads(mode, arrays, layers, bidirectional, dtype=np.float64, seed=1):
    rng = np.random.default_rng(seed)
    x, _, hx, _ = arrays
    d = 2 if bidirectional else 1
    dy = rng.standard_normal((x.shape[0], x.shape[1], d * hx.shape[2])).astype(dtype)
    dhy = rng.standard_normal(hx.shape).astype(dtype)
    dcy = rng.standard_normal(hx.shape).astype(dtype) if mode == 'lstm' else None
    return dy, dhy, dcy


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('layers,bidirectional,masks', CONFIGS)
def test_cython_matches_reference_float64(mode, layers, bidirectional, masks):
    arrays, mask_list = make_case(mode, layers, bidirectional, masks)
    heads = make_heads(mode, arrays, layers, bidirectional)
    ref_out, ref_grads = run(_reference, mode, arrays, layers, bidirectional, mask_list, heads)
    out, grads = run(_rnn, mode, arrays, layers, bidirectional, mask_list, heads)
    for got, want in zip(out + grads, ref_out + ref_grads):
        if want is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('layers,bidirectional,masks', [(1, False, False), (2, True, True)])
def test_backward_finite_differences(impl, mode, layers, bidirectional, masks):
    arrays, mask_list = make_case(mode, layers, bidirectional, masks, t=3, n=2, i=3, h=2,
                                  seed=2)
    heads = make_heads(mode, arrays, layers, bidirectional, seed=3)
    _, grads = run(impl, mode, arrays, layers, bidirectional, mask_list, heads)

    def loss():
        y, hy, cy, _ = impl.rnn_fwd_np(mode, *arrays, layers, bidirectional, mask_list)
        total = (heads[0] * y).sum() + (heads[1] * hy).sum()
        return total + ((heads[2] * cy).sum() if cy is not None else 0.0)
    for idx, name in enumerate(['x', 'w', 'hx', 'cx']):
        if arrays[idx] is None:
            assert grads[idx] is None
            continue
        np.testing.assert_allclose(grads[idx], numeric_grad(loss, arrays[idx]), rtol=1e-5,
                                   atol=1e-7, err_msg=f"{mode} d{name}")


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('layers,bidirectional,masks', [(1, False, False), (2, True, True)])
def test_float32_close_to_float64(mode, layers, bidirectional, masks):
    # sizes past one SIMD panel (32 columns) with ragged edges; large weights saturate the
    # gates, so the fast sigmoid/tanh are exercised over their whole range
    arrays, mask_list = make_case(mode, layers, bidirectional, masks, t=5, n=9, i=37, h=35,
                                  seed=4, scale=0.4)
    heads = make_heads(mode, arrays, layers, bidirectional, seed=5)
    ref_out, ref_grads = run(_reference, mode, arrays, layers, bidirectional, mask_list, heads)
    as32 = [None if a is None else a.astype(np.float32) for a in arrays]
    m32 = None if mask_list is None else [m.astype(np.float32) for m in mask_list]
    h32 = [None if a is None else a.astype(np.float32) for a in heads]
    out, grads = run(_rnn, mode, as32, layers, bidirectional, m32, h32)
    for got, want in zip(out + grads, ref_out + ref_grads):
        if want is None:
            continue
        assert got.dtype == np.float32 and np.isfinite(got).all()
        scale = max(1.0, np.abs(want).max())
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=2e-4 * scale)


def test_reserve_layout():
    # y per layer, per direction gates + cells (LSTM), masks between layers
    t, n, h = 4, 3, 6
    assert _rnn.reserve_size('lstm', t, n, h, 1, False, False) == t * n * h * (1 + 4 + 1)
    assert _rnn.reserve_size('rnn_tanh', t, n, h, 2, True, False) == 2 * t * n * 2 * h
    with_masks = _rnn.reserve_size('gru', t, n, h, 2, True, True)
    assert with_masks == _rnn.reserve_size('gru', t, n, h, 2, True, False) + t * n * 2 * h
    off = _rnn.mask_offsets('gru', t, n, h, 2, True)
    assert off == [t * n * 2 * h + 2 * t * n * 4 * h]


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('m,k,n', [(1, 1, 1), (7, 5, 33), (32, 256, 1024), (9, 70, 31),
                                   (100, 3, 64)])
@pytest.mark.parametrize('trans_a,trans_b', [(False, False), (False, True), (True, False)])
def test_gemm(dtype, m, k, n, trans_a, trans_b):
    rng = np.random.default_rng(m * 1000 + n)
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    want = (a.T if trans_a else a).astype(np.float64) @ (b.T if trans_b else b)
    got = _rnn.gemm_np(a, b, trans_a, trans_b)
    tol = 1e-4 * np.sqrt(k) if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_gemm_isa_reported():
    assert _rnn.gemm_isa() in ('avx512', 'avx2', None)


# ---------------------------------------------------------------- the step product
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('m,k,n', [(1, 1, 1), (1, 67, 268), (32, 256, 1024), (32, 1024, 256),
                                   (7, 5, 33), (33, 257, 70), (9, 300, 17), (8, 16, 16),
                                   (14, 600, 40)])
@pytest.mark.parametrize('trans_b', [False, True])
def test_step_gemm(dtype, m, k, n, trans_b):
    # row blocks of 6 and 4 with ragged tails, 16-column panels with a partial last one,
    # k past one 256-long chunk; `c` given: the product is added to it
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    c = rng.standard_normal((m, n)).astype(dtype)
    want = a.astype(np.float64) @ (b.T if trans_b else b).astype(np.float64)
    tol = 1e-4 * np.sqrt(k) if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(_rnn.step_gemm_np(a, b, trans_b), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(_rnn.step_gemm_np(a, b, trans_b, c), want + c, rtol=tol,
                               atol=tol)


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('n,h,layers,bidirectional', [(32, 256, 2, False), (1, 67, 2, True),
                                                      (5, 33, 1, True)])
def test_float32_at_the_char_lstm_sizes(mode, n, h, layers, bidirectional):
    # the bench's shapes (batch 32, hidden 256: products shared in parts with the engine's
    # workers, the step kernel's full blocks), batch 1 and odd hidden sizes, against the
    # float64 reference: outputs, states and every gradient
    arrays, _ = make_case(mode, layers, bidirectional, False, t=3, n=n, i=40, h=h, seed=6,
                          scale=0.1)
    heads = make_heads(mode, arrays, layers, bidirectional, seed=7)
    ref_out, ref_grads = run(_reference, mode, arrays, layers, bidirectional, None, heads)
    as32 = [None if a is None else a.astype(np.float32) for a in arrays]
    h32 = [None if a is None else a.astype(np.float32) for a in heads]
    out, grads = run(_rnn, mode, as32, layers, bidirectional, None, h32)
    for name, got, want in zip(['y', 'hy', 'cy', 'dx', 'dw', 'dhx', 'dcx'], out + grads,
                               ref_out + ref_grads):
        if want is None:
            assert got is None
            continue
        scale = max(1.0, np.abs(want).max())
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * scale, err_msg=name)
