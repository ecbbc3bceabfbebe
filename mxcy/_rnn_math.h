/* Vectorisable float32 sigmoid and tanh for the fused RNN kernels (mxcy/_rnn.pyx), and
 * (at the end) the AVX2 kernel of the recurrence's step product.
 *
 * libm's expf/tanhf are scalar calls (~20 ns each); an LSTM step needs five per hidden
 * unit, so they would cost more than the GEMMs. These are the Cephes polynomials written
 * branch-free so GCC vectorises the loops, compiled for AVX-512, AVX2 and a baseline and
 * picked at load time (target_clones: the wheel stays portable).
 * Accuracy: expf within 2 ulp; tanh within ~1e-7 absolute (polynomial below |x| < 0.625);
 * sigmoid within ~1e-7 absolute. float64 keeps libm (the gradient checks need it).
 */
#ifndef MXCY_RNN_MATH_H
#define MXCY_RNN_MATH_H

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define MXCY_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MXCY_CLONES
#endif

/* e^x for x clamped to [-87, 87] (Cephes expf: x = n·ln2 + r, e^r by a degree-6 poly).
 * n = round(x·log2 e) by the 1.5·2^23 trick, not a float->int conversion: that can trap
 * on the clamped-away values, which stops GCC from vectorising the loop. */
static inline float mxcy_expf(float x) {
    const float magic = 12582912.0f;
    float t, nf, r, z, y, p2;
    int32_t tb, bits;
    x = x > 87.0f ? 87.0f : x;
    x = x < -87.0f ? -87.0f : x;
    t = x * 1.44269504088896341f + magic;
    nf = t - magic;
    memcpy(&tb, &t, sizeof(tb));
    r = x - nf * 0.693359375f;
    r = r + nf * 2.12194440e-4f;
    z = r * r;
    y = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r
          + 4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f;
    y = y * z + r + 1.0f;
    bits = (tb - 0x4B400000 + 127) << 23;
    memcpy(&p2, &bits, sizeof(p2));
    return y * p2;
}

static inline float mxcy_sigmoidf(float x) {
    return 1.0f / (1.0f + mxcy_expf(-x));
}

static inline float mxcy_tanhf(float x) {
    float ax = __builtin_fabsf(x);
    float z = x * x;
    float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z
                    + 1.33314422036e-1f) * z - 3.33332819422e-1f) * z * x + x;
    float e = mxcy_expf(2.0f * (ax > 20.0f ? 20.0f : ax));
    float big = __builtin_copysignf(1.0f - 2.0f / (e + 1.0f), x);
    float use_small = (float)(ax < 0.625f);     /* a blend, not a branch: vectorises */
    return use_small * small + (1.0f - use_small) * big;
}

/* y[i] := tanh(x[i]) (y may be x) */
MXCY_CLONES static void mxcy_vtanh(const float* x, float* y, int n) {
    for (int64_t i = 0; i < n; i++)
        y[i] = mxcy_tanhf(x[i]);
}

/* The row loops count with int64_t: Python builds with -fwrapv, and with a wrapping int
 * index `g[n + j]` is not an affine address to GCC, which then leaves the loop scalar. */

/* One LSTM step for one batch row: g = [i, f, g, o] pre-activations (4n) become the
 * activations; c := f·c_prev + i·g; h := o·tanh(c). */
MXCY_CLONES static void mxcy_lstm_row_f32(float* __restrict g, const float* __restrict c_prev,
                                          float* __restrict c, float* __restrict h, int n) {
    for (int64_t j = 0; j < n; j++) {
        float i = mxcy_sigmoidf(g[j]);
        float f = mxcy_sigmoidf(g[n + j]);
        float u = mxcy_tanhf(g[2 * n + j]);
        float o = mxcy_sigmoidf(g[3 * n + j]);
        float cn = f * c_prev[j] + i * u;
        g[j] = i;
        g[n + j] = f;
        g[2 * n + j] = u;
        g[3 * n + j] = o;
        c[j] = cn;
        h[j] = o * mxcy_tanhf(cn);
    }
}

/* LSTM backward for one batch row (see _rnn.pyx lstm_bwd_row): from the activations g,
 * the cells c and c_prev, and dh, dc (dc updated to the gradient of c_prev), writes the
 * pre-activation gradients dg (4n). */
MXCY_CLONES static void mxcy_lstm_bwd_row_f32(const float* __restrict g,
                                              const float* __restrict c,
                                              const float* __restrict c_prev,
                                              const float* __restrict dh,
                                              float* __restrict dc, float* __restrict dg,
                                              int n) {
    for (int64_t j = 0; j < n; j++) {
        float i = g[j], f = g[n + j], u = g[2 * n + j], o = g[3 * n + j];
        float tc = mxcy_tanhf(c[j]);
        float dcj = dc[j] + dh[j] * o * (1.0f - tc * tc);
        dg[j] = dcj * u * i * (1.0f - i);
        dg[n + j] = dcj * c_prev[j] * f * (1.0f - f);
        dg[2 * n + j] = dcj * i * (1.0f - u * u);
        dg[3 * n + j] = dh[j] * tc * o * (1.0f - o);
        dc[j] = dcj * f;
    }
}

/* One GRU step for one batch row: gx = [x_r, x_z, x_n] (W_x x + b_x, 3n) becomes the
 * activations [r, z, n]; gh = W_h h (3n, without b_h); hn := W_hn h + b_hn;
 * h := n + z·(h_prev − n) with n = tanh(x_n + r·hn). */
MXCY_CLONES static void mxcy_gru_row_f32(float* __restrict gx, const float* __restrict gh,
                                         const float* __restrict bh,
                                         const float* __restrict h_prev,
                                         float* __restrict hn, float* __restrict h, int n) {
    for (int64_t j = 0; j < n; j++) {
        float r = mxcy_sigmoidf(gx[j] + gh[j] + bh[j]);
        float z = mxcy_sigmoidf(gx[n + j] + gh[n + j] + bh[n + j]);
        float hnj = gh[2 * n + j] + bh[2 * n + j];
        float nn = mxcy_tanhf(gx[2 * n + j] + r * hnj);
        gx[j] = r;
        gx[n + j] = z;
        gx[2 * n + j] = nn;
        hn[j] = hnj;
        h[j] = nn + z * (h_prev[j] - nn);
    }
}

/* ---- the recurrence's step product on AVX2 ---------------------------------------------
 * C (m × [c0, c1)) := / += A (m × k, row stride lda) · B, with B packed once per sequence in
 * 16-column panels (k × 16, contiguous, zero-padded) by mxcy_rnn_pack16. BLAS re-packs the
 * weight (1 MB at 2×256) in every step's call, which took a third of the GEMM time;
 * _gemm_packed.h's AVX2 blocks (3 rows × 32 columns) stream a 32 KB panel from L2. Here:
 * 6 (or 4) rows × 16 columns of accumulators, k in chunks of 256, so the 16 KB of panel a
 * chunk reads stays in L1 while every row block passes over it. c0 is a multiple of 16;
 * the padding columns past n may be loaded. */
#define MXCY_RNN_NR 16

static inline int64_t mxcy_rnn_pack16_len(int k, int n) {
    return (int64_t)((n + MXCY_RNN_NR - 1) / MXCY_RNN_NR) * MXCY_RNN_NR * k;
}

/* packed := B (k × n) in 16-column panels; element (kk, j) of B is b[kk·ldb + j], or
 * b[j·ldb + kk] when `trans` (B given as its transpose, n × k). */
static void mxcy_rnn_pack16(const float* b, int ldb, int trans, int k, int n, float* packed) {
    for (int j0 = 0; j0 < n; j0 += MXCY_RNN_NR) {
        float* dst = packed + (int64_t)j0 * k;
        int nj = n - j0 < MXCY_RNN_NR ? n - j0 : MXCY_RNN_NR;
        for (int64_t kk = 0; kk < k; kk++) {
            float* row = dst + kk * MXCY_RNN_NR;
            for (int j = 0; j < nj; j++)
                row[j] = trans ? b[(int64_t)(j0 + j) * ldb + kk] : b[kk * ldb + j0 + j];
            for (int j = nj; j < MXCY_RNN_NR; j++)
                row[j] = 0.0f;
        }
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define MXCY_RNN_KC 256

/* The accumulators are named variables, not arrays: an array indexed by the store loop's
 * `i` made GCC write every accumulator back to the stack in each k iteration (twelve
 * stores per twelve FMAs: half speed). */
#define MXCY_RNN_DECL(i) __m256 lo##i = _mm256_setzero_ps(), hi##i = _mm256_setzero_ps(); \
    const float* a##i = a + (int64_t)((i) < mr ? (i) : mr - 1) * lda;
#define MXCY_RNN_FMA(i) { __m256 x = _mm256_broadcast_ss(a##i + kk);                      \
    lo##i = _mm256_fmadd_ps(x, b0, lo##i); hi##i = _mm256_fmadd_ps(x, b1, hi##i); }
#define MXCY_RNN_SAVE(i) _mm256_storeu_ps(tmp + 16 * (i), lo##i);                          \
    _mm256_storeu_ps(tmp + 16 * (i) + 8, hi##i);
#define MXCY_RNN_R4(X) X(0) X(1) X(2) X(3)
#define MXCY_RNN_R6(X) X(0) X(1) X(2) X(3) X(4) X(5)

/* C[0:mr, 0:nj] (+)= A[0:mr, 0:kc] · bp (kc × 16); rows past mr repeat the last one. */
#define MXCY_RNN_BLOCK(name, ROWS)                                                         \
__attribute__((target("avx2,fma")))                                                        \
static void name(int mr, int nj, int kc, const float* a, int lda, const float* bp,         \
                 float* c, int ldc, int accumulate) {                                      \
    float tmp[6 * 16];                                                                     \
    ROWS(MXCY_RNN_DECL)                                                                    \
    for (int64_t kk = 0; kk < kc; kk++) {                                                  \
        __m256 b0 = _mm256_loadu_ps(bp + kk * 16), b1 = _mm256_loadu_ps(bp + kk * 16 + 8); \
        ROWS(MXCY_RNN_FMA)                                                                 \
    }                                                                                      \
    ROWS(MXCY_RNN_SAVE)                                                                    \
    for (int i = 0; i < mr; i++) {                                                         \
        float* ci = c + (int64_t)i * ldc;                                                  \
        const float* ti = tmp + 16 * i;                                                    \
        if (nj == 16) {                                                                    \
            __m256 v0 = _mm256_loadu_ps(ti), v1 = _mm256_loadu_ps(ti + 8);                 \
            if (accumulate) {                                                              \
                v0 = _mm256_add_ps(v0, _mm256_loadu_ps(ci));                               \
                v1 = _mm256_add_ps(v1, _mm256_loadu_ps(ci + 8));                           \
            }                                                                              \
            _mm256_storeu_ps(ci, v0);                                                      \
            _mm256_storeu_ps(ci + 8, v1);                                                  \
        } else {                                                                           \
            for (int j = 0; j < nj; j++)                                                   \
                ci[j] = accumulate ? ci[j] + ti[j] : ti[j];                                \
        }                                                                                  \
    }                                                                                      \
}

MXCY_RNN_BLOCK(mxcy_rnn_block6, MXCY_RNN_R6)
/* 4 rows: the tail of m (32 rows = 4 blocks of 6 + 2 of 4, none wasted) */
MXCY_RNN_BLOCK(mxcy_rnn_block4, MXCY_RNN_R4)

static void mxcy_rnn_gemm_avx2(int m, int c0, int c1, int k, const float* a, int lda,
                               const float* packed, float* c, int ldc, int accumulate) {
    for (int j0 = c0; j0 < c1; j0 += 16) {
        const float* panel = packed + (int64_t)j0 * k;
        int nj = c1 - j0 < 16 ? c1 - j0 : 16;
        for (int k0 = 0; k0 < k; k0 += MXCY_RNN_KC) {
            int kc = k - k0 < MXCY_RNN_KC ? k - k0 : MXCY_RNN_KC;
            int acc = accumulate || k0 > 0;
            int i0 = 0;
            while (i0 < m) {
                int left = m - i0, rows = (left <= 4 || left == 8) ? 4 : 6;
                int mr = left < rows ? left : rows;
                const float* ai = a + (int64_t)i0 * lda + k0;
                float* ci = c + (int64_t)i0 * ldc + j0;
                if (rows == 6)
                    mxcy_rnn_block6(mr, nj, kc, ai, lda, panel + (int64_t)k0 * 16, ci, ldc, acc);
                else
                    mxcy_rnn_block4(mr, nj, kc, ai, lda, panel + (int64_t)k0 * 16, ci, ldc, acc);
                i0 += mr;
            }
        }
    }
}
#else
static void mxcy_rnn_gemm_avx2(int m, int c0, int c1, int k, const float* a, int lda,
                               const float* packed, float* c, int ldc, int accumulate) {
    (void)m; (void)c0; (void)c1; (void)k; (void)a; (void)lda; (void)packed; (void)c;
    (void)ldc; (void)accumulate;        /* never called: pack_weight packs only on x86 */
}
#endif

#endif
