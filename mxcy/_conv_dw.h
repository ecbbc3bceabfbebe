/* Depthwise convolution, one plane at a time (mxcy/_conv_depthwise.pxi drives these).
 *
 * Each window tap (ki, kj) is a multiply-add of a shifted input row into an output row
 * (forward), of an output-gradient row into a shifted input-gradient row (dx), or a dot
 * product of the two (dW). The loops are compiled for AVX-512, AVX2+FMA and baseline
 * x86-64 and picked per call (below), so the wheel stays portable; MXCY_NO_CLONES builds
 * one version for the compiler's flags.
 */
#ifndef MXCY_CONV_DW_H
#define MXCY_CONV_DW_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Each ISA's copy is a static function compiled with target(...) and picked per call by
 * mxcy_isa() (_isa.h: the CPU's features, capped by MXCY_ISA_CAP). Not target_clones with
 * "arch=haswell": GCC resolves those by CPU model, so AMD CPUs with AVX2 and FMA got the
 * baseline SSE2 copy, 4-6x slower. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(MXCY_NO_CLONES)
#define MXCY_DW_DISPATCH 1
#include "_isa.h"
#endif
#define MXCY_DW_SIMD _Pragma("omp simd")
/* the row helpers must be inlined into each clone, or they run as baseline code */
#define MXCY_DW_INLINE static inline __attribute__((always_inline))
#define MXCY_DW_MAXKW 64        /* widest window the depthwise path takes (is_depthwise) */
#define MXCY_DW_MAXTAPS 256     /* stride-1 dx through the forward loops up to this many taps */
#define MXCY_DW_FLAT_MAX 1600   /* padded planes up to this many elements: mxcy_dw_fwd_flat */
#define MXCY_DW_ROW_MAX 4096    /* mxcy_dw_fwd_3x3s1: planes up to this wide */
#define MXCY_DW_S2_STACK 4096   /* stride-2 parity planes on the stack up to this size, else heap */

typedef struct {
    int h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
} mxcy_dw_geom;

/* [lo, hi): the output columns oj whose input column oj*sw + off lies in [0, w) */
MXCY_DW_INLINE void mxcy_dw_cols(const mxcy_dw_geom* g, int off, int* lo, int* hi) {
    int a = 0, b = g->ow;
    if (off < 0)
        a = (-off + g->sw - 1) / g->sw;
    if ((g->ow - 1) * g->sw + off >= g->w)
        b = g->w - off > 0 ? (g->w - off + g->sw - 1) / g->sw : 0;
    if (a > g->ow)
        a = g->ow;
    if (b < a)
        b = a;
    *lo = a;
    *hi = b;
}

#ifdef MXCY_DW_DISPATCH
#define MXCY_DW_VEC static __attribute__((target("avx512f,avx512dq,avx2,fma"), unused))
#define T float
#define DW(name) name##_f32_avx512
#include "_conv_dw_impl.h"
#undef T
#undef DW
#define T double
#define DW(name) name##_f64_avx512
#include "_conv_dw_impl.h"
#undef T
#undef DW
#undef MXCY_DW_VEC
#define MXCY_DW_VEC static __attribute__((target("avx2,fma"), unused))
#define T float
#define DW(name) name##_f32_avx2
#include "_conv_dw_impl.h"
#undef T
#undef DW
#define T double
#define DW(name) name##_f64_avx2
#include "_conv_dw_impl.h"
#undef T
#undef DW
#undef MXCY_DW_VEC
#define MXCY_DW_VEC static __attribute__((unused))
#define T float
#define DW(name) name##_f32_base
#include "_conv_dw_impl.h"
#undef T
#undef DW
#define T double
#define DW(name) name##_f64_base
#include "_conv_dw_impl.h"
#undef T
#undef DW

#define MXCY_DW_PICK(fn, ...)                                                            \
    do {                                                                                 \
        int isa_ = mxcy_isa();                                                           \
        if (isa_ == 2) fn##_avx512(__VA_ARGS__);                                         \
        else if (isa_ == 1) fn##_avx2(__VA_ARGS__);                                      \
        else fn##_base(__VA_ARGS__);                                                     \
    } while (0)
#define MXCY_DW_DISPATCHERS(T, SUF)                                                      \
    static inline void mxcy_dw_fwd_##SUF(const mxcy_dw_geom* g, const T* x, const T* wt, T bias, \
                                  T* y, int add) {                                       \
        MXCY_DW_PICK(mxcy_dw_fwd_##SUF, g, x, wt, bias, y, add);                         \
    }                                                                                    \
    static inline void mxcy_dw_bwd_data_##SUF(const mxcy_dw_geom* g, const T* wt, const T* dy,  \
                                       T* dx, int add) {                                 \
        MXCY_DW_PICK(mxcy_dw_bwd_data_##SUF, g, wt, dy, dx, add);                        \
    }                                                                                    \
    static inline void mxcy_dw_bwd_weight_##SUF(const mxcy_dw_geom* g, const T* x, const T* dy, \
                                         int n, int64_t xstep, int64_t ystep, T* acc,    \
                                         double* sums) {                                 \
        MXCY_DW_PICK(mxcy_dw_bwd_weight_##SUF, g, x, dy, n, xstep, ystep, acc, sums);    \
    }
MXCY_DW_DISPATCHERS(float, f32)
MXCY_DW_DISPATCHERS(double, f64)
#else
#define MXCY_DW_VEC
#define T float
#define DW(name) name##_f32
#include "_conv_dw_impl.h"
#undef T
#undef DW
#define T double
#define DW(name) name##_f64
#include "_conv_dw_impl.h"
#undef T
#undef DW
#endif

#endif
