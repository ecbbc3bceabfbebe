/* float32 GEMM against a pre-packed B, for the RNN kernels (mxcy/_rnn.pyx).
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
#ifndef MXCY_RNN_GEMM_H
#define MXCY_RNN_GEMM_H

#include <stdint.h>
#include <string.h>

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

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define MXCY_HAVE_X86 1

/* C[0:mr, 0:nj] (+)= A[0:mr, :k] · panel (k × 32); A[i, kk] = a[i·lda + kk·inc] (inc > 1
 * reads a transposed A); rows of A beyond mr repeat the last. */
__attribute__((target("avx512f")))
static void mxcy_block_avx512(int mr, int nj, int k, const float* a, int lda, int inc,
                              const float* panel, float* c, int ldc, int accumulate) {
    __m512 acc0[8], acc1[8];
    const float* rows[8];
    for (int i = 0; i < 8; i++) {
        acc0[i] = _mm512_setzero_ps();
        acc1[i] = _mm512_setzero_ps();
        rows[i] = a + (int64_t)(i < mr ? i : mr - 1) * lda;
    }
    for (int kk = 0; kk < k; kk++) {
        __m512 b0 = _mm512_loadu_ps(panel + (int64_t)kk * MXCY_NR);
        __m512 b1 = _mm512_loadu_ps(panel + (int64_t)kk * MXCY_NR + 16);
        for (int i = 0; i < 8; i++) {
            __m512 av = _mm512_set1_ps(rows[i][(int64_t)kk * inc]);
            acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
            acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
        }
    }
    for (int i = 0; i < mr; i++) {
        float* crow = c + (int64_t)i * ldc;
        if (nj == MXCY_NR) {
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
            for (int j = 0; j < nj; j++)
                crow[j] = accumulate ? crow[j] + tmp[j] : tmp[j];
        }
    }
}

__attribute__((target("avx2,fma")))
static void mxcy_block_avx2(int mr, int nj, int k, const float* a, int lda, int inc,
                            const float* panel, float* c, int ldc, int accumulate) {
    __m256 acc[3][4];
    const float* rows[3];
    for (int i = 0; i < 3; i++) {
        for (int v = 0; v < 4; v++)
            acc[i][v] = _mm256_setzero_ps();
        rows[i] = a + (int64_t)(i < mr ? i : mr - 1) * lda;
    }
    for (int kk = 0; kk < k; kk++) {
        const float* bp = panel + (int64_t)kk * MXCY_NR;
        __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        __m256 b2 = _mm256_loadu_ps(bp + 16), b3 = _mm256_loadu_ps(bp + 24);
        for (int i = 0; i < 3; i++) {
            __m256 av = _mm256_broadcast_ss(rows[i] + (int64_t)kk * inc);
            acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
            acc[i][2] = _mm256_fmadd_ps(av, b2, acc[i][2]);
            acc[i][3] = _mm256_fmadd_ps(av, b3, acc[i][3]);
        }
    }
    for (int i = 0; i < mr; i++) {
        float tmp[MXCY_NR];
        float* crow = c + (int64_t)i * ldc;
        for (int v = 0; v < 4; v++)
            _mm256_storeu_ps(tmp + 8 * v, acc[i][v]);
        for (int j = 0; j < nj; j++)
            crow[j] = accumulate ? crow[j] + tmp[j] : tmp[j];
    }
}

/* 2: AVX-512, 1: AVX2+FMA, 0: neither (use BLAS). */
static int mxcy_gemm_isa(void) {
    static int isa = -1;
    if (isa < 0) {
        __builtin_cpu_init();
        isa = __builtin_cpu_supports("avx512f") ? 2
            : (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? 1 : 0;
    }
    return isa;
}
#else
static int mxcy_gemm_isa(void) { return 0; }
#endif

/* C (m × n, row stride ldc) := A·B, or += A·B when `accumulate`; A is m × k with
 * A[i, kk] = a[i·lda + kk·inc], B packed by mxcy_pack_b. Returns 0 (nothing done) when the
 * CPU has no kernel. */
static int mxcy_gemm_packed(int m, int n, int k, const float* a, int lda, int inc,
                            const float* packed, float* c, int ldc, int accumulate) {
#ifdef MXCY_HAVE_X86
    int isa = mxcy_gemm_isa(), mr = isa == 2 ? 8 : 3;
    if (isa == 0)
        return 0;
    for (int p = 0; p * MXCY_NR < n; p++) {
        const float* panel = packed + (int64_t)p * MXCY_NR * k;
        int j0 = p * MXCY_NR, nj = n - j0 < MXCY_NR ? n - j0 : MXCY_NR;
        for (int i0 = 0; i0 < m; i0 += mr) {
            int rows = m - i0 < mr ? m - i0 : mr;
            if (isa == 2)
                mxcy_block_avx512(rows, nj, k, a + (int64_t)i0 * lda, lda, inc, panel,
                                  c + (int64_t)i0 * ldc + j0, ldc, accumulate);
            else
                mxcy_block_avx2(rows, nj, k, a + (int64_t)i0 * lda, lda, inc, panel,
                                c + (int64_t)i0 * ldc + j0, ldc, accumulate);
        }
    }
    return 1;
#else
    (void)m; (void)n; (void)k; (void)a; (void)lda; (void)inc; (void)packed; (void)c; (void)ldc;
    (void)accumulate;
    return 0;
#endif
}

#endif
