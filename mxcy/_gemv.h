/* y[i, j] (add: +=) bias[j] + Σ_k x[i, k] · w[j, k] for rows j in [j0, j1): FullyConnected
 * at a small batch (i < m, m ≤ MXCY_GEMV_MAXM), where the product is a few dot products
 * with each weight row and its speed is the speed of reading the weights once.
 *
 * Why not BLAS: sgemm with few rows packs the whole weight matrix first (alexnet's first
 * FullyConnected at batch 1: 33 ms through sgemm, 151 MB of weights, against 7 ms read
 * once; at batch 16, 47 ms of CPU against 30 here). Four weight rows at a time, each dotted
 * with two input rows at once (eight sums) while it is in L1/L2. The loops
 * are compiled for AVX2+FMA and for baseline x86-64 and picked per call by mxcy_isa()
 * (_isa.h), as the depthwise loops are; `omp simd` reductions give the vector sums.
 */
#ifndef MXCY_GEMV_H
#define MXCY_GEMV_H

#include <stdint.h>

#define MXCY_GEMV_MAXM 16

#if defined(__GNUC__) && defined(__x86_64__) && !defined(MXCY_NO_CLONES)
#define MXCY_GEMV_DISPATCH 1
#include "_isa.h"
#endif

/* y rows i, i + 1 (pair) or i alone, weight rows j .. j + nr of the product */
#define MXCY_GEMV_STORE(T, I, S0, S1, S2, S3)                                              \
    {                                                                                      \
        T s_[4] = {S0, S1, S2, S3};                                                        \
        T* yi = y + (int64_t)(I) * n + j;                                                  \
        for (int r = 0; r < nr; r++) {                                                     \
            T v = s_[r] + (bias != 0 ? bias[j + r] : (T)0);                               \
            yi[r] = add ? yi[r] + v : v;                                                   \
        }                                                                                  \
    }

#define MXCY_GEMV_BODY(T)                                                                  \
    for (int64_t j = j0; j < j1; j += 4) {                                                 \
        const int nr = j1 - j < 4 ? (int)(j1 - j) : 4;                                    \
        const T* restrict w0 = w + j * k;                                                  \
        const T* restrict w1 = nr > 1 ? w0 + k : w0;                                       \
        const T* restrict w2 = nr > 2 ? w0 + 2 * k : w0;                                   \
        const T* restrict w3 = nr > 3 ? w0 + 3 * k : w0;                                   \
        int i = 0;                                                                         \
        for (; i + 2 <= m; i += 2) {        /* two input rows: the weights read half as often */ \
            const T* restrict xa = x + i * k;                                              \
            const T* restrict xb = xa + k;                                                 \
            T a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;              \
            _Pragma("omp simd reduction(+:a0, a1, a2, a3, b0, b1, b2, b3)")                \
            for (int64_t q = 0; q < k; q++) {                                              \
                const T u = xa[q], v = xb[q];                                              \
                const T p0 = w0[q], p1 = w1[q], p2 = w2[q], p3 = w3[q];                    \
                a0 += p0 * u; a1 += p1 * u; a2 += p2 * u; a3 += p3 * u;                    \
                b0 += p0 * v; b1 += p1 * v; b2 += p2 * v; b3 += p3 * v;                    \
            }                                                                              \
            MXCY_GEMV_STORE(T, i, a0, a1, a2, a3)                                          \
            MXCY_GEMV_STORE(T, i + 1, b0, b1, b2, b3)                                      \
        }                                                                                  \
        if (i < m) {                                                                       \
            const T* restrict xi = x + i * k;                                              \
            T s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                              \
            _Pragma("omp simd reduction(+:s0, s1, s2, s3)")                                \
            for (int64_t q = 0; q < k; q++) {                                              \
                const T v = xi[q];                                                         \
                s0 += w0[q] * v;                                                           \
                s1 += w1[q] * v;                                                           \
                s2 += w2[q] * v;                                                           \
                s3 += w3[q] * v;                                                           \
            }                                                                              \
            MXCY_GEMV_STORE(T, i, s0, s1, s2, s3)                                          \
        }                                                                                  \
    }

#define MXCY_GEMV_DEFINE(T, SUF, ATTR)                                                     \
    ATTR static void mxcy_gemv_rows_##SUF(const T* restrict x, const T* restrict w,       \
                                          const T* restrict bias, T* restrict y, int m,    \
                                          int64_t n, int64_t k, int64_t j0, int64_t j1,    \
                                          int add) {                                       \
        MXCY_GEMV_BODY(T)                                                                  \
    }

#ifdef MXCY_GEMV_DISPATCH
MXCY_GEMV_DEFINE(float, f32_avx2, __attribute__((target("avx2,fma"))))
MXCY_GEMV_DEFINE(double, f64_avx2, __attribute__((target("avx2,fma"))))
MXCY_GEMV_DEFINE(float, f32_base, )
MXCY_GEMV_DEFINE(double, f64_base, )
static inline void mxcy_gemv_rows_f32(const float* x, const float* w, const float* bias,
                                      float* y, int m, int64_t n, int64_t k, int64_t j0,
                                      int64_t j1, int add) {
    if (mxcy_isa() >= 1) mxcy_gemv_rows_f32_avx2(x, w, bias, y, m, n, k, j0, j1, add);
    else mxcy_gemv_rows_f32_base(x, w, bias, y, m, n, k, j0, j1, add);
}
static inline void mxcy_gemv_rows_f64(const double* x, const double* w, const double* bias,
                                      double* y, int m, int64_t n, int64_t k, int64_t j0,
                                      int64_t j1, int add) {
    if (mxcy_isa() >= 1) mxcy_gemv_rows_f64_avx2(x, w, bias, y, m, n, k, j0, j1, add);
    else mxcy_gemv_rows_f64_base(x, w, bias, y, m, n, k, j0, j1, add);
}
#else
MXCY_GEMV_DEFINE(float, f32, )
MXCY_GEMV_DEFINE(double, f64, )
#endif

#endif
