/* LRN's per-row loops for mxcy/_lrn.pyx, compiled for each ISA by MXCY_VEC (_simd.h: GCC
 * target_clones, picked at load; MXCY_NO_CLONES or another compiler: one version).
 *
 * s[0:hw] := knorm + alpha_n · Σ_k x[k, 0:hw]² over the channel window [lo, hi];
 * y[0:hw] := x[0:hw] · s^-beta, by √ and 1/√√ for beta 0.75 and 1/√ for 0.5 (within 2 ulp
 * of pow), by pow otherwise. */
#ifndef MXCY_LRN_H
#define MXCY_LRN_H

#include <math.h>
#include <stdint.h>

#include "_simd.h"

#define MXCY_LRN_ROW(NAME, T, SQRT, POW)                                              \
    MXCY_VEC static void NAME(const T* x, const T* xr, T* s, T* y, int64_t hw,       \
                                  int64_t lo, int64_t hi, T alpha_n, T knorm, T beta,    \
                                  int scale_only)                                        \
    {                                                                                    \
        for (int64_t i = 0; i < hw; i++)                                                 \
            s[i] = 0;                                                                    \
        for (int64_t k = lo; k <= hi; k++) {                                             \
            const T* xk = x + k * hw;                                                    \
            _Pragma("omp simd") for (int64_t i = 0; i < hw; i++) s[i] += xk[i] * xk[i];  \
        }                                                                                \
        _Pragma("omp simd") for (int64_t i = 0; i < hw; i++) s[i] = knorm + alpha_n * s[i]; \
        if (scale_only)                                                                  \
            return;                                                                      \
        if (beta == (T)0.75) {                                                           \
            _Pragma("omp simd") for (int64_t i = 0; i < hw; i++)                         \
            {                                                                            \
                T r = SQRT(s[i]);                                                        \
                y[i] = xr[i] / (r * SQRT(r));                                            \
            }                                                                            \
        } else if (beta == (T)0.5) {                                                     \
            _Pragma("omp simd") for (int64_t i = 0; i < hw; i++) y[i] = xr[i] / SQRT(s[i]); \
        } else {                                                                         \
            for (int64_t i = 0; i < hw; i++)                                             \
                y[i] = xr[i] * (T)POW(s[i], -beta);                                      \
        }                                                                                \
    }

MXCY_LRN_ROW(mxcy_lrn_row_f32, float, __builtin_sqrtf, powf)
MXCY_LRN_ROW(mxcy_lrn_row_f64, double, __builtin_sqrt, pow)

#endif /* MXCY_LRN_H */
