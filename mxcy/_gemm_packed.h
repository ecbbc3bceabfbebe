/* float32 GEMM against a pre-packed B, for the RNN (mxcy/_rnn.pyx) and convolution
 * (mxcy/_conv_packed.pxi) kernels.
 *
 * Each time step multiplies the (N × H) state by the same (H × G·H) weight. A BLAS call
 * re-packs that weight every step and, with only N = 32 rows, runs at a third of its
 * large-matrix speed. Here B is packed once per sequence into column panels of NR = 32
 * (k × 32, contiguous, zero-padded), and a register-blocked kernel streams them:
 * AVX-512 (8 rows × 32 columns of accumulators) or AVX2+FMA (3 rows × 32), chosen at run
 * time with __builtin_cpu_supports so the wheel stays portable. Without either, the
 * functions return 0 and the caller uses BLAS. The same kernel serves the RNN's large
 * GEMMs (input projection, dW, dx): measured there it beat SciPy's single-threaded
 * OpenBLAS sgemm, whose packing dominates at these sizes.
 */
#ifndef MXCY_GEMM_PACKED_H
#define MXCY_GEMM_PACKED_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_isa.h"

#define MXCY_NR 32

/* Floats needed to pack a k × n matrix. */
static inline int64_t mxcy_packed_len(int k, int n) {
    return (int64_t)((n + MXCY_NR - 1) / MXCY_NR) * MXCY_NR * k;
}

/* packed := B (k × n) in panels; element (kk, j) of B is b[kk·ldb + j], or b[j·ldb + kk]
 * when `trans` (B given as its transpose, n × k). */
static void mxcy_pack_b(const float* b, int ldb, int trans, int k, int n, float* packed) {
    int panels = (n + MXCY_NR - 1) / MXCY_NR;
    for (int p = 0; p < panels; p++) {
        float* dst = packed + (int64_t)p * MXCY_NR * k;
        int j0 = p * MXCY_NR, nj = n - j0 < MXCY_NR ? n - j0 : MXCY_NR;
        for (int kk = 0; kk < k; kk++) {
            float* row = dst + (int64_t)kk * MXCY_NR;
            for (int j = 0; j < nj; j++)
                row[j] = trans ? b[(int64_t)(j0 + j) * ldb + kk] : b[(int64_t)kk * ldb + j0 + j];
            for (int j = nj; j < MXCY_NR; j++)
                row[j] = 0.0f;
        }
    }
}

/* Element (i, kk) of A is rows[i][koff[kk]]: a plain matrix (rows a + i·lda, koff kk·inc)
 * or an indirect one, where each row and column offset points into an image, so a
 * convolution's columns are read where they lie instead of being copied out first.
 * C[i, j] is c[i·rs + j·cs]: row-major (cs 1, vector stores) or transposed. */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define MXCY_HAVE_X86 1

static inline void mxcy_store_tile(int i, int nj, const float* tmp, float* c, int64_t rs,
                                   int64_t cs, int accumulate) {
    float* ci = c + (int64_t)i * rs;
    for (int j = 0; j < nj; j++)
        ci[j * cs] = accumulate ? ci[j * cs] + tmp[j] : tmp[j];
}

/* C[0:mr, 0:nj] (+)= A[0:mr, :k] · panel (k × 32); rows[] holds 8 row pointers (the
 * caller repeats the last beyond mr). */
__attribute__((target("avx512f")))
static void mxcy_block_avx512(int mr, int nj, int k, const float* const* rows,
                              const int64_t* koff, const float* panel, float* c, int64_t rs,
                              int64_t cs, int accumulate) {
    __m512 acc0[8], acc1[8];
    for (int i = 0; i < 8; i++) {
        acc0[i] = _mm512_setzero_ps();
        acc1[i] = _mm512_setzero_ps();
    }
    for (int kk = 0; kk < k; kk++) {
        __m512 b0 = _mm512_loadu_ps(panel + (int64_t)kk * MXCY_NR);
        __m512 b1 = _mm512_loadu_ps(panel + (int64_t)kk * MXCY_NR + 16);
        int64_t off = koff[kk];
        for (int i = 0; i < 8; i++) {
            __m512 av = _mm512_set1_ps(rows[i][off]);
            acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
            acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
        }
    }
    for (int i = 0; i < mr; i++) {
        float* crow = c + (int64_t)i * rs;
        if (nj == MXCY_NR && cs == 1) {
            if (accumulate) {
                acc0[i] = _mm512_add_ps(acc0[i], _mm512_loadu_ps(crow));
                acc1[i] = _mm512_add_ps(acc1[i], _mm512_loadu_ps(crow + 16));
            }
            _mm512_storeu_ps(crow, acc0[i]);
            _mm512_storeu_ps(crow + 16, acc1[i]);
        } else {
            float tmp[MXCY_NR];
            _mm512_storeu_ps(tmp, acc0[i]);
            _mm512_storeu_ps(tmp + 16, acc1[i]);
            mxcy_store_tile(i, nj, tmp, c, rs, cs, accumulate);
        }
    }
}

__attribute__((target("avx2,fma")))
static void mxcy_block_avx2(int mr, int nj, int k, const float* const* rows,
                            const int64_t* koff, const float* panel, float* c, int64_t rs,
                            int64_t cs, int accumulate) {
    __m256 acc[3][4];
    for (int i = 0; i < 3; i++)
        for (int v = 0; v < 4; v++)
            acc[i][v] = _mm256_setzero_ps();
    for (int kk = 0; kk < k; kk++) {
        const float* bp = panel + (int64_t)kk * MXCY_NR;
        __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        __m256 b2 = _mm256_loadu_ps(bp + 16), b3 = _mm256_loadu_ps(bp + 24);
        int64_t off = koff[kk];
        for (int i = 0; i < 3; i++) {
            __m256 av = _mm256_broadcast_ss(rows[i] + off);
            acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
            acc[i][2] = _mm256_fmadd_ps(av, b2, acc[i][2]);
            acc[i][3] = _mm256_fmadd_ps(av, b3, acc[i][3]);
        }
    }
    for (int i = 0; i < mr; i++) {
        float tmp[MXCY_NR];
        for (int v = 0; v < 4; v++)
            _mm256_storeu_ps(tmp + 8 * v, acc[i][v]);
        mxcy_store_tile(i, nj, tmp, c, rs, cs, accumulate);
    }
}

/* 2: AVX-512, 1: AVX2+FMA, 0: neither (use BLAS); see _isa.h */
static int mxcy_gemm_isa(void) { return mxcy_isa(); }
#else
static int mxcy_gemm_isa(void) { return 0; }
#endif

/* C (m × n) := A·B, or += A·B when `accumulate`, with A[i, kk] = a[row_off[i] + koff[kk]]
 * (see above) and B packed by mxcy_pack_b. Returns 0 (nothing done) when the CPU has no
 * kernel. */
static int mxcy_gemm_indirect(int m, int n, int k, const float* a, const int64_t* row_off,
                              const int64_t* koff, const float* packed, float* c, int64_t rs,
                              int64_t cs, int accumulate) {
#ifdef MXCY_HAVE_X86
    int isa = mxcy_gemm_isa(), mr = isa == 2 ? 8 : 3;
    const float* rows[8];
    if (isa == 0)
        return 0;
    for (int p = 0; p * MXCY_NR < n; p++) {
        const float* panel = packed + (int64_t)p * MXCY_NR * k;
        int j0 = p * MXCY_NR, nj = n - j0 < MXCY_NR ? n - j0 : MXCY_NR;
        for (int i0 = 0; i0 < m; i0 += mr) {
            int nr = m - i0 < mr ? m - i0 : mr;
            for (int i = 0; i < mr; i++)
                rows[i] = a + row_off[i0 + (i < nr ? i : nr - 1)];
            if (isa == 2)
                mxcy_block_avx512(nr, nj, k, rows, koff, panel,
                                  c + (int64_t)i0 * rs + (int64_t)j0 * cs, rs, cs, accumulate);
            else
                mxcy_block_avx2(nr, nj, k, rows, koff, panel,
                                c + (int64_t)i0 * rs + (int64_t)j0 * cs, rs, cs, accumulate);
        }
    }
    return 1;
#else
    (void)m; (void)n; (void)k; (void)a; (void)row_off; (void)koff; (void)packed; (void)c;
    (void)rs; (void)cs; (void)accumulate;
    return 0;
#endif
}

/* C (m × n, row stride ldc) := A·B, or += A·B when `accumulate`; A is m × k with
 * A[i, kk] = a[i·lda + kk·inc], B packed by mxcy_pack_b. Returns 0 (nothing done) when the
 * CPU has no kernel. */
static int mxcy_gemm_packed(int m, int n, int k, const float* a, int lda, int inc,
                            const float* packed, float* c, int ldc, int accumulate) {
    int64_t stack_offs[1024];
    int64_t* offs = stack_offs;
    int done;
    if (mxcy_gemm_isa() == 0)
        return 0;
    if ((int64_t)m + k > 1024)
        offs = (int64_t*)malloc(((size_t)m + k) * sizeof(int64_t));
    if (offs == NULL) {         /* no memory for the offsets: the plain loops, same result */
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                const float* panel = packed + (int64_t)(j / MXCY_NR) * MXCY_NR * k + j % MXCY_NR;
                float acc = 0.0f;
                for (int kk = 0; kk < k; kk++)
                    acc += a[(int64_t)i * lda + (int64_t)kk * inc] * panel[(int64_t)kk * MXCY_NR];
                c[(int64_t)i * ldc + j] = accumulate ? c[(int64_t)i * ldc + j] + acc : acc;
            }
        return 1;
    }
    for (int i = 0; i < m; i++)
        offs[i] = (int64_t)i * lda;
    for (int kk = 0; kk < k; kk++)
        offs[m + kk] = (int64_t)kk * inc;
    done = mxcy_gemm_indirect(m, n, k, a, offs, offs + m, packed, c, ldc, 1, accumulate);
    if (offs != stack_offs)
        free(offs);
    return done;
}

#endif
