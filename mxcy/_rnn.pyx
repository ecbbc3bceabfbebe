# cython: language_level=3
"""Fused RNN kernels (LSTM, GRU, vanilla tanh/relu): the whole sequence, every layer and
direction in one `noexcept nogil` kernel for the forward and one for the backward.

Layouts (row-major, contiguous; see mxcy/operator/rnn.py for the cell equations):
x (T, N, I); hx, cx, hy, cy (L·D, N, H); y (T, N, D·H); the flat weights in MXNet's
packing (every W_x, W_h per layer and direction, then every b_x, b_h); G gate blocks
(LSTM i f g o, GRU r z n, vanilla 1).

`reserve` keeps what backward needs, per layer l: y_l (T, N, D·H); per direction the
activated gates (T, N, G·H) and the cells (LSTM) or W_hn·h + b_hn (GRU); then, with
dropout between layers, the mask applied to y_l (T, N, D·H). Vanilla RNNs keep y only.

Forward per layer and direction: one GEMM projects every time step's input at once
((T·N) × I times I × G·H), then each step adds h·W_hᵀ (one N × H × G·H GEMM) and runs a
fused gate loop. Backward walks the steps in reverse, keeps the gate gradients of the
whole sequence and forms dW_x, dW_h and d(layer input) with one GEMM each.
float32 products: on AVX-512 the packed kernel of _gemm_packed.h for all of them; on AVX2
BLAS for the sequence-wide ones and, for the steps, W_h packed once per sequence and
_rnn_math.h's 6×16 kernel (BLAS would re-pack it every step). Big products are shared
with idle engine workers (run_parts).
`req` codes: 0 null (skip), 1 write, 2 add. Shapes are validated by the operator.
"""
cimport numpy as cnp
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcpy
from libc.math cimport exp, tanh
from scipy.linalg.cython_blas cimport sgemm, dgemm

from mxcy._engine cimport ERR_MEMORY, ERR_VALUE, run_parts
from mxcy._ops cimport DT_FLOAT32, DT_FLOAT64

import numpy as np

cnp.import_array()

cdef extern from "_rnn_math.h" nogil:
    void mxcy_vtanh(const float* x, float* y, int n)
    void mxcy_lstm_row_f32(float* g, const float* c_prev, float* c, float* h, int n)
    void mxcy_lstm_bwd_row_f32(const float* g, const float* c, const float* c_prev,
                               const float* dh, float* dc, float* dg, int n)
    void mxcy_gru_row_f32(float* gx, const float* gh, const float* bh, const float* h_prev,
                          float* hn, float* h, int n)
    void mxcy_rnn_gemm_avx2(int m, int c0, int c1, int k, const float* a, int lda,
                            const float* packed, float* c, int ldc, int accumulate)
    int64_t mxcy_rnn_pack16_len(int k, int n)
    void mxcy_rnn_pack16(const float* b, int ldb, int trans, int k, int n, float* packed)

from mxcy._gemm_packed cimport (mxcy_packed_len, mxcy_pack_b, mxcy_gemm_packed,
                                mxcy_gemm_isa, MXCY_NR)

ctypedef fused real_t:
    float
    double

include "_rnn_args.pxi"


# ---------------------------------------------------------------- layout
cdef inline int num_gates(int mode) noexcept nogil:
    return 4 if mode == MODE_LSTM else (3 if mode == MODE_GRU else 1)


cdef int64_t reserve_layout(int mode, int T, int N, int H, int L, int D, int masks, int l,
                            int64_t* y, int64_t* gates, int64_t* aux,
                            int64_t* mask) noexcept nogil:
    """Total length of `reserve`; fills the offsets of layer l's parts (l < 0: none)."""
    cdef int64_t tn = <int64_t>T * N, off = 0
    cdef int layer, d, G = num_gates(mode)
    for layer in range(L):
        if layer == l:
            y[0] = off
        off += tn * D * H
        if mode == MODE_LSTM or mode == MODE_GRU:
            for d in range(D):
                if layer == l:
                    gates[d] = off
                    aux[d] = off + tn * G * H
                off += tn * (G + 1) * H
        if masks and layer < L - 1:
            if layer == l:
                mask[0] = off
            off += tn * D * H
    return off


cdef void weight_offsets(RnnArgs* a, int l, int d, int64_t* wx, int64_t* wh, int64_t* bx,
                         int64_t* bh) noexcept nogil:
    """Offsets of W_x, W_h, b_x, b_h of layer l, direction d in the flat parameters."""
    cdef int64_t gh = <int64_t>num_gates(a.mode) * a.H, off = 0
    cdef int layer, dd, ni
    for layer in range(a.L):
        ni = a.ni if layer == 0 else a.D * a.H
        for dd in range(a.D):
            if layer == l and dd == d:
                wx[0] = off
                wh[0] = off + gh * ni
            off += gh * (ni + a.H)
    for layer in range(a.L):
        for dd in range(a.D):
            if layer == l and dd == d:
                bx[0] = off
                bh[0] = off + gh
            off += 2 * gh


# ---------------------------------------------------------------- small helpers
cdef inline void blas_gemm(bint ta, bint tb, int m, int n, int k, real_t* a, int lda,
                           real_t* b, int ldb, real_t beta, real_t* c, int ldc) noexcept nogil:
    """c := op(a)·op(b) + beta·c, row-major with leading dimensions (as column-major
    bᵀ·aᵀ)."""
    cdef char cta = b'T' if ta else b'N'
    cdef char ctb = b'T' if tb else b'N'
    cdef real_t one = 1
    cdef int i, j
    if m <= 0 or n <= 0:
        return
    if k <= 0:                      # an empty sum: c := beta·c
        for i in range(m):
            for j in range(n):
                c[<int64_t>i * ldc + j] = 0 if beta == 0 else beta * c[<int64_t>i * ldc + j]
        return
    if real_t is float:
        sgemm(&ctb, &cta, &n, &m, &k, &one, b, &ldb, a, &lda, &beta, c, &ldc)
    else:
        dgemm(&ctb, &cta, &n, &m, &k, &one, b, &ldb, a, &lda, &beta, c, &ldc)


cdef inline bint packed_kernel() noexcept nogil:
    """Whether float32 sequence-wide products take _gemm_packed.h's kernel rather than
    BLAS: on AVX-512 only. Its AVX2 blocks (3 rows × a 32-column panel, 32 KB at k = 256)
    stream the panel from L2 and ran at a third of SciPy's OpenBLAS on an AVX2 host (22-31
    against 62-82 GFLOP/s, one core, at the LSTM's 2×256 sizes). The step products use a
    packed weight on AVX2 too, through mxcy_rnn_gemm_avx2 (_rnn_math.h)."""
    return mxcy_gemm_isa() == 2


cdef real_t* pack_weight(real_t* b, int ldb, bint trans, int k, int n) noexcept nogil:
    """B (k × n; given transposed when `trans`) packed for step_gemm, or NULL: float64,
    no SIMD kernel for this CPU, or no memory (step_gemm then calls BLAS)."""
    cdef float* packed
    cdef int isa = mxcy_gemm_isa()
    if real_t is double or isa == 0:
        return NULL
    if isa == 1:                    # 16-column panels for mxcy_rnn_gemm_avx2
        packed = <float*>malloc(mxcy_rnn_pack16_len(k, n) * sizeof(float))
        if packed != NULL:
            mxcy_rnn_pack16(b, ldb, trans, k, n, packed)
        return packed
    packed = <float*>malloc(mxcy_packed_len(k, n) * sizeof(float))
    if packed != NULL:
        mxcy_pack_b(b, ldb, trans, k, n, packed)
    return packed


cdef void transpose(real_t* src, int lds, int rows, int cols, real_t* dst) noexcept nogil:
    """dst (cols × rows, contiguous) := srcᵀ; src rows × cols with row stride lds. In
    32 × 32 tiles, so both sides stay in cache."""
    cdef int i0, j0, i, j
    for i0 in range(0, rows, 32):
        for j0 in range(0, cols, 32):
            for i in range(i0, min(i0 + 32, rows)):
                for j in range(j0, min(j0 + 32, cols)):
                    dst[<int64_t>j * rows + i] = src[<int64_t>i * lds + j]


# A product against a packed B, cut into parts: each step's product by column panels of
# the packed weight (a worker that is free takes half of it; the caller never waits for a
# part nobody started), the sequence-wide GEMMs (input projection, dW, dx) by rows: all
# parts read the one packed B.
cdef struct PackedGemm:
    int m
    int n
    int k
    int lda
    int ldc
    int accumulate
    const float* a
    const float* packed
    float* c


cdef void packed_gemm_part(void* arg, int part, int nparts) noexcept nogil:
    cdef PackedGemm* g = <PackedGemm*>arg
    cdef int lo = (g.m * part // nparts) // 8 * 8          # whole 8-row register blocks
    cdef int hi = g.m if part == nparts - 1 else (g.m * (part + 1) // nparts) // 8 * 8
    if hi > lo:
        mxcy_gemm_packed(hi - lo, g.n, g.k, g.a + <int64_t>lo * g.lda, g.lda, 1, g.packed,
                         g.c + <int64_t>lo * g.ldc, g.ldc, g.accumulate)


cdef inline int shared_parts(int most, int64_t flops) noexcept nogil:
    """Parts for a shared product: 2 from 2M multiply-adds, 4 from 4M (at most `most`).
    More parts shorten the owner's wait for a helper still inside the last one."""
    cdef int parts = 4 if flops >= (1 << 22) else (2 if flops >= (1 << 21) else 1)
    return max(1, min(parts, most))


cdef int packed_gemm_shared(int m, int n, int k, const float* a, int lda, const float* packed,
                            float* c, int ldc, int accumulate) noexcept nogil:
    cdef PackedGemm g
    g.m, g.n, g.k, g.lda, g.ldc, g.accumulate = m, n, k, lda, ldc, accumulate
    g.a, g.packed, g.c = a, packed, c
    run_parts(packed_gemm_part, &g, shared_parts(m // 32, <int64_t>m * n * k))
    return 1


# The BLAS path cut into parts the same way: BLAS re-packs its operands in every part, so
# two parts (one per core) rather than four.
cdef struct BlasGemm:
    int m
    int n
    int k
    int lda
    int ldb
    int ldc
    int ta
    int tb
    int by_cols
    int dtype
    double beta
    void* a
    void* b
    void* c


cdef void blas_part_typed(BlasGemm* g, int part, int nparts, real_t* a, real_t* b,
                          real_t* c) noexcept nogil:
    cdef int lo, hi, step
    if g.by_cols:               # columns of C: rows of b when transposed, else columns
        step = ((g.n + nparts - 1) // nparts + 15) // 16 * 16
        lo, hi = min(g.n, part * step), min(g.n, (part + 1) * step)
        if part == nparts - 1:
            hi = g.n
        blas_gemm(g.ta, g.tb, g.m, hi - lo, g.k, a, g.lda,
                  b + (<int64_t>lo * g.ldb if g.tb else lo), g.ldb, <real_t>g.beta,
                  c + lo, g.ldc)
    else:                       # rows of C: columns of a when transposed, else rows
        lo = <int>(<int64_t>g.m * part // nparts)
        hi = <int>(<int64_t>g.m * (part + 1) // nparts)
        blas_gemm(g.ta, g.tb, hi - lo, g.n, g.k, a + (lo if g.ta else <int64_t>lo * g.lda),
                  g.lda, b, g.ldb, <real_t>g.beta, c + <int64_t>lo * g.ldc, g.ldc)


cdef void blas_part(void* arg, int part, int nparts) noexcept nogil:
    cdef BlasGemm* g = <BlasGemm*>arg
    if g.dtype == DT_FLOAT32:
        blas_part_typed(g, part, nparts, <float*>g.a, <float*>g.b, <float*>g.c)
    else:
        blas_part_typed(g, part, nparts, <double*>g.a, <double*>g.b, <double*>g.c)


cdef void blas_shared(bint ta, bint tb, int m, int n, int k, real_t* a, int lda, real_t* b,
                      int ldb, real_t beta, real_t* c, int ldc, bint by_cols) noexcept nogil:
    """blas_gemm, shared with an idle worker in two parts (by rows of C, or by columns
    when `by_cols`: a step's product has only N rows) from 2M multiply-adds."""
    cdef BlasGemm g
    cdef int64_t macs = <int64_t>m * n * k
    if macs < (1 << 21) or (n if by_cols else m) < 64 or k <= 0:
        blas_gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
        return
    g.m, g.n, g.k, g.lda, g.ldb, g.ldc = m, n, k, lda, ldb, ldc
    g.ta, g.tb, g.by_cols, g.beta = ta, tb, by_cols, beta
    g.dtype = DT_FLOAT32 if real_t is float else DT_FLOAT64
    g.a, g.b, g.c = a, b, c
    run_parts(blas_part, &g, 2)


cdef void gemm(bint ta, bint tb, int m, int n, int k, real_t* a, int lda, real_t* b, int ldb,
               real_t beta, real_t* c, int ldc) noexcept nogil:
    """c := op(a)·op(b) + beta·c (beta 0 or 1): float32 on AVX-512 packs op(b) and runs
    the SIMD kernel, else BLAS (see packed_kernel)."""
    cdef real_t* packed
    cdef real_t* at = NULL
    cdef int done = 0
    if real_t is float:
        if k > 0 and (beta == 0 or beta == 1) and packed_kernel():
            packed = pack_weight(b, ldb, tb, k, n)
            if packed != NULL and ta:
                # a transposed A read in place strides a whole row per k: 2x slower than
                # transposing it first (measured for the dW GEMMs)
                at = <real_t*>malloc(<int64_t>m * k * sizeof(real_t))
                if at != NULL:
                    transpose(a, lda, k, m, at)
            if packed != NULL and (at != NULL or not ta):
                done = packed_gemm_shared(m, n, k, at if ta else a, k if ta else lda,
                                          packed, c, ldc, beta != 0)
            free(packed)
            free(at)
    if not done:
        blas_shared(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc, False)


cdef void step_gemm_part(void* arg, int part, int nparts) noexcept nogil:
    """Columns of a step's product: whole 32-column panels (AVX-512) or 16-column halves
    of them (AVX2, mxcy_rnn_gemm_avx2)."""
    cdef PackedGemm* g = <PackedGemm*>arg
    cdef int width = MXCY_NR if mxcy_gemm_isa() == 2 else 16
    cdef int units = (g.n + width - 1) // width
    cdef int p0 = units * part // nparts, p1 = units * (part + 1) // nparts
    cdef int c0 = p0 * width, c1 = min(g.n, p1 * width)
    if p1 <= p0:
        return
    if width == MXCY_NR:
        mxcy_gemm_packed(g.m, c1 - c0, g.k, g.a, g.lda, 1,
                         g.packed + <int64_t>p0 * MXCY_NR * g.k, g.c + c0, g.ldc, g.accumulate)
    else:
        mxcy_rnn_gemm_avx2(g.m, c0, c1, g.k, g.a, g.lda, g.packed, g.c, g.ldc, g.accumulate)


cdef void step_gemm(int m, int n, int k, real_t* a, int lda, real_t* packed, bint tb,
                    real_t* b, int ldb, real_t beta, real_t* c, int ldc) noexcept nogil:
    """c := a·op(b) + beta·c (beta 0 or 1) for a small m: on the packed copy of op(b)
    when there is one (the per-step GEMM of the recurrence), else through BLAS."""
    cdef PackedGemm g
    if real_t is float:
        if packed != NULL and mxcy_gemm_isa() != 0 and k > 0:
            g.m, g.n, g.k, g.lda, g.ldc, g.accumulate = m, n, k, lda, ldc, beta != 0
            g.a, g.packed, g.c = a, packed, c
            run_parts(step_gemm_part, &g, shared_parts(n // MXCY_NR, <int64_t>m * n * k))
            return
    blas_shared(False, tb, m, n, k, a, lda, b, ldb, beta, c, ldc, True)




cdef void store_rows(real_t* dst, real_t* src, int rows, int cols, int ld_src,
                     int req) noexcept nogil:
    """dst (rows × cols, contiguous) := / += src (rows with stride ld_src)."""
    cdef int r, j
    cdef real_t* s
    cdef real_t* t
    if req == 0 or dst == NULL:
        return
    for r in range(rows):
        s = src + <int64_t>r * ld_src
        t = dst + <int64_t>r * cols
        if req == 2:
            for j in range(cols):
                t[j] += s[j]
        else:
            memcpy(t, s, cols * sizeof(real_t))


cdef void column_sums(real_t* m, int64_t rows, int cols, real_t* out, int req) noexcept nogil:
    """out := / += Σ_rows m (rows × cols)."""
    cdef int64_t r
    cdef int j
    cdef real_t* row
    if req == 1:
        memset(out, 0, cols * sizeof(real_t))
    for r in range(rows):
        row = m + r * cols
        for j in range(cols):
            out[j] += row[j]


cdef inline real_t sigmoid(real_t v) noexcept nogil:
    return 1 / (1 + exp(-v))


# ---------------------------------------------------------------- one step, one batch row
cdef void lstm_row(real_t* g, real_t* c_prev, real_t* c, real_t* h, int n) noexcept nogil:
    """[i, f, g, o] := [σ, σ, tanh, σ](g); c := f·c_prev + i·g; h := o·tanh(c)."""
    cdef int j
    cdef real_t i, f, gg, o
    if real_t is float:
        mxcy_lstm_row_f32(g, c_prev, c, h, n)
        return
    for j in range(n):
        i, f = sigmoid(g[j]), sigmoid(g[n + j])
        gg, o = tanh(g[2 * n + j]), sigmoid(g[3 * n + j])
        g[j], g[n + j], g[2 * n + j], g[3 * n + j] = i, f, gg, o
        c[j] = f * c_prev[j] + i * gg
        h[j] = o * tanh(c[j])


cdef void lstm_bwd_row(real_t* g, real_t* c, real_t* c_prev, real_t* dh, real_t* dc,
                       real_t* dg, int n) noexcept nogil:
    """dc += dh·o·tanh′(c); dg := pre-activation gradients of [i, f, g, o];
    dc := dc·f (the gradient reaching c_prev)."""
    cdef int j
    cdef real_t i, f, gg, o, tc, d
    if real_t is float:
        mxcy_lstm_bwd_row_f32(g, c, c_prev, dh, dc, dg, n)
        return
    for j in range(n):
        i, f, gg, o = g[j], g[n + j], g[2 * n + j], g[3 * n + j]
        tc = tanh(c[j])
        d = dc[j] + dh[j] * o * (1 - tc * tc)
        dg[j] = d * gg * i * (1 - i)
        dg[n + j] = d * c_prev[j] * f * (1 - f)
        dg[2 * n + j] = d * i * (1 - gg * gg)
        dg[3 * n + j] = dh[j] * tc * o * (1 - o)
        dc[j] = d * f


cdef void gru_row(real_t* gx, real_t* gh, real_t* bh, real_t* h_prev, real_t* hn, real_t* h,
                  int n) noexcept nogil:
    """r, z := σ(gx + gh + bh); hn := gh_n + bh_n; n := tanh(gx_n + r·hn);
    h := n + z·(h_prev − n); gx := [r, z, n]."""
    cdef int j
    cdef real_t r, z, nn
    if real_t is float:
        mxcy_gru_row_f32(gx, gh, bh, h_prev, hn, h, n)
        return
    for j in range(n):
        r = sigmoid(gx[j] + gh[j] + bh[j])
        z = sigmoid(gx[n + j] + gh[n + j] + bh[n + j])
        hn[j] = gh[2 * n + j] + bh[2 * n + j]
        nn = tanh(gx[2 * n + j] + r * hn[j])
        gx[j], gx[n + j], gx[2 * n + j] = r, z, nn
        h[j] = nn + z * (h_prev[j] - nn)


cdef void gru_bwd_row(real_t* g, real_t* hn, real_t* h_prev, real_t* dh, real_t* dgx,
                      real_t* dgh, int n) noexcept nogil:
    """Pre-activation gradients for the W_x side (dgx) and the W_h side (dgh, whose n
    block is scaled by r); dh := dh·z (the direct path to h_prev)."""
    cdef int j
    cdef real_t r, z, nn, dn, d
    for j in range(n):
        r, z, nn, d = g[j], g[n + j], g[2 * n + j], dh[j]
        dn = d * (1 - z) * (1 - nn * nn)
        dgx[j] = dgh[j] = dn * hn[j] * r * (1 - r)
        dgx[n + j] = dgh[n + j] = d * (h_prev[j] - nn) * z * (1 - z)
        dgx[2 * n + j] = dn
        dgh[2 * n + j] = dn * r
        dh[j] = d * z


cdef void vanilla_row(real_t* pre, real_t* h, int n, bint relu) noexcept nogil:
    """h := relu(pre) or tanh(pre)."""
    cdef int j
    if relu:
        for j in range(n):
            h[j] = pre[j] if pre[j] > 0 else 0
    elif real_t is float:
        mxcy_vtanh(pre, h, n)
    else:
        for j in range(n):
            h[j] = tanh(pre[j])


include "_rnn_kernels.pxi"
include "_rnn_push.pxi"
