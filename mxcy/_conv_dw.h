/* Depthwise convolution, one plane at a time (mxcy/_conv_depthwise.pxi drives these).
 *
 * Each window tap (ki, kj) is a multiply-add of a shifted input row into an output row
 * (forward), of an output-gradient row into a shifted input-gradient row (dx), or a dot
 * product of the two (dW). The loops are compiled for AVX-512, AVX2+FMA and baseline
 * x86-64 with GCC target_clones and picked at load time (see _vecmath.h), so the wheel
 * stays portable; MXCY_NO_CLONES builds one version for the compiler's flags.
 */
#ifndef MXCY_CONV_DW_H
#define MXCY_CONV_DW_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__) && \
    !defined(MXCY_NO_CLONES)
#define MXCY_DW_VEC \
    __attribute__((target_clones("arch=skylake-avx512", "arch=haswell", "default")))
#else
#define MXCY_DW_VEC
#endif
#define MXCY_DW_SIMD _Pragma("omp simd")
/* the row helpers must be inlined into each clone, or they run as baseline code */
#define MXCY_DW_INLINE static inline __attribute__((always_inline))
#define MXCY_DW_MAXKW 64        /* widest window the depthwise path takes (is_depthwise) */
#define MXCY_DW_MAXTAPS 256     /* stride-1 dx through the forward loops up to this many taps */

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
