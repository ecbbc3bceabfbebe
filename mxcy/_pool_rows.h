/* Max, average and sum pooling of one NCHW plane, any window, stride and padding, one output
 * row at a time with contiguous vector loops (mxcy/_conv_pool.pxi drives these; issue 16).
 *
 * Forward, per output row: the window's input rows are reduced into one padded row t
 * (t[c] is input column c - pw; padding holds the reduction's identity), and t is split
 * into its sw column phases (phase p, index q: t[q·sw + p]); window tap dj of output oj
 * then reads phase dj % sw at index oj + dj / sw, so every tap is a contiguous loop over
 * the output row. Before: a loop per output element over its clipped window (3×3 s2 max
 * pooling of (1, 64, 112, 112): 4.2 ms).
 *
 * Backward, per plane: the gradient of every window goes to a phase-split copy of dx
 * (rows of sw phases), tap by tap in contiguous loops, and is interleaved into dx at the
 * end. Max pooling recomputes each window's maximum (no argmax is kept) and gives the
 * gradient to its first position in row-major window order holding it; a window whose first
 * position is NaN gives it there (the semantics of the scalar loops this replaces).
 *
 * Semantics: the forward max keeps a NaN (v > m or v != v replaces m); a window of padding
 * alone gives the dtype's lowest finite value (max), 0 (avg with no counted element);
 * avg divides by bounds[2] · bounds[3·oh + 2] (the window sizes with or without padding).
 * The loops are compiled for AVX2+FMA and for baseline x86-64 and picked per call by
 * mxcy_isa() (_isa.h), as the depthwise loops are.
 */
#ifndef MXCY_POOL_ROWS_H
#define MXCY_POOL_ROWS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(MXCY_NO_CLONES)
#define MXCY_PR_DISPATCH 1
#include "_isa.h"
#endif

typedef struct {
    int h, w, oh, ow, kh, kw, sh, sw, ph, pw;
    int type;           /* 0 max, 1 avg, 2 sum */
    int add;            /* y or dx += instead of = */
} mxcy_pool_geom;

/* padded row length (input columns -pw ..) and phase length */
static inline int mxcy_pool_wp(const mxcy_pool_geom* g) {
    int a = (g->ow - 1) * g->sw + g->kw, b = g->pw + g->w;
    return a > b ? a : b;
}
static inline int mxcy_pool_wq(const mxcy_pool_geom* g) {
    return mxcy_pool_wp(g) / g->sw + g->kw / g->sw + 2;
}
/* scratch elements a forward (bwd = 0) or backward (bwd = 1) plane needs */
static inline int64_t mxcy_pool_scratch(const mxcy_pool_geom* g, int bwd) {
    int64_t wq = mxcy_pool_wq(g), ph = (int64_t)g->sw * wq;
    int64_t n = (int64_t)g->sw * wq + ph + 4 * (int64_t)g->ow + 16;
    return bwd ? n + (int64_t)g->h * ph : n;
}

/* [lo, hi): the output columns oj whose input column oj*sw + off lies in [0, w) */
static inline void mxcy_pool_cols(const mxcy_pool_geom* g, int off, int* lo, int* hi) {
    int a = 0, b = g->ow;
    if (off < 0)
        a = (-off + g->sw - 1) / g->sw;
    if ((int64_t)(g->ow - 1) * g->sw + off >= g->w)
        b = g->w - off > 0 ? (g->w - off + g->sw - 1) / g->sw : 0;
    if (a > g->ow)
        a = g->ow;
    if (b < a)
        b = a;
    *lo = a;
    *hi = b;
}

#define MXCY_PR_SIMD _Pragma("omp simd")

#define MXCY_POOL_ROWS_DEFINE(T, SUF, ATTR, LOWEST)                                           \
/* t[0, wp) := the rows [hs, he) of x reduced (padding: the identity), then split into the  \
 * sw phases at ph (phase p at ph + p·wq); returns the row the taps read (t or ph) */        \
ATTR static inline const T* mxcy_pool_vrow_##SUF(const mxcy_pool_geom* g, const T* x,        \
                                                int hs, int he, int strict, T* restrict t,   \
                                                T* restrict ph) {                            \
    const int wp = mxcy_pool_wp(g), wq = mxcy_pool_wq(g), sw = g->sw, pw = g->pw;           \
    const int n = g->w < wp - pw ? g->w : wp - pw;                                           \
    const T idv = g->type == 0 ? (T)-INFINITY : (T)0;                                        \
    for (int c = 0; c < sw * wq; c++) t[c] = idv;                                            \
    if (he > hs) {                                                                           \
        T* restrict tc = t + pw;                                                             \
        const T* r0 = x + (int64_t)hs * g->w;                                                \
        MXCY_PR_SIMD for (int j = 0; j < n; j++) tc[j] = r0[j];                              \
        for (int r = hs + 1; r < he; r++) {                                                  \
            const T* restrict xr = x + (int64_t)r * g->w;                                    \
            if (g->type != 0) {                                                              \
                MXCY_PR_SIMD for (int j = 0; j < n; j++) tc[j] += xr[j];                     \
            } else if (strict) {                                                             \
                MXCY_PR_SIMD for (int j = 0; j < n; j++) {                                   \
                    T v = xr[j], m = tc[j];                                                  \
                    tc[j] = (v > m || m != m) ? v : m;                                       \
                }                                                                            \
            } else {                                                                         \
                MXCY_PR_SIMD for (int j = 0; j < n; j++) {                                   \
                    T v = xr[j], m = tc[j];                                                  \
                    tc[j] = (v > m || v != v) ? v : m;                                       \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
    if (sw == 1)                                                                             \
        return t;                                                                            \
    if (sw == 2) {                                                                           \
        T* restrict e = ph;                                                                  \
        T* restrict o = ph + wq;                                                             \
        MXCY_PR_SIMD for (int q = 0; q < wq; q++) {                                          \
            e[q] = t[2 * q];                                                                 \
            o[q] = t[2 * q + 1];                                                             \
        }                                                                                    \
    } else {                                                                                 \
        for (int p = 0; p < sw; p++)                                                         \
            for (int q = 0; q < wq; q++) ph[p * wq + q] = t[q * sw + p];                     \
    }                                                                                        \
    return ph;                                                                               \
}                                                                                            \
                                                                                             \
/* acc[0, ow) := the reduction over the kw taps of the row prepared by vrow */               \
ATTR static inline void mxcy_pool_hrow_##SUF(const mxcy_pool_geom* g, const T* src,          \
                                            int strict, T* restrict acc) {                   \
    const int ow = g->ow, sw = g->sw, wq = sw == 1 ? 0 : mxcy_pool_wq(g);                   \
    for (int dj = 0; dj < g->kw; dj++) {                                                     \
        const T* restrict s = src + (dj % sw) * wq + dj / sw;                                \
        if (dj == 0) {                                                                       \
            MXCY_PR_SIMD for (int j = 0; j < ow; j++) acc[j] = s[j];                         \
        } else if (g->type != 0) {                                                           \
            MXCY_PR_SIMD for (int j = 0; j < ow; j++) acc[j] += s[j];                        \
        } else if (strict) {                                                                 \
            MXCY_PR_SIMD for (int j = 0; j < ow; j++) {                                      \
                T v = s[j], m = acc[j];                                                      \
                acc[j] = (v > m || m != m) ? v : m;                                          \
            }                                                                                \
        } else {                                                                             \
            MXCY_PR_SIMD for (int j = 0; j < ow; j++) {                                      \
                T v = s[j], m = acc[j];                                                      \
                acc[j] = (v > m || v != v) ? v : m;                                          \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
}                                                                                            \
                                                                                             \
/* y (add: +=) pool(x) of one plane; b: pool_bounds' [hs, he, hc] per row then [ws, we,     \
 * wc] per column; wc: wc as T per column; buf: mxcy_pool_scratch(g, 0) elements */          \
ATTR static void mxcy_pool_fwd_##SUF(const mxcy_pool_geom* g, const int* b, const T* wc,     \
                                     const T* x, T* restrict y, T* buf) {                    \
    const int ow = g->ow, wq = mxcy_pool_wq(g);                                              \
    const int* cb = b + 3 * g->oh;                                                           \
    T* t = buf;                                                                              \
    T* ph = buf + g->sw * wq;                                                                \
    T* restrict acc = ph + g->sw * wq;                                                       \
    int empty_cols = 0;                                                                      \
    for (int j = 0; j < ow; j++) empty_cols |= cb[3 * j + 1] <= cb[3 * j];                   \
    for (int oi = 0; oi < g->oh; oi++) {                                                     \
        const int hs = b[3 * oi], he = b[3 * oi + 1];                                        \
        T* restrict yr = y + (int64_t)oi * ow;                                               \
        mxcy_pool_hrow_##SUF(g, mxcy_pool_vrow_##SUF(g, x, hs, he, 0, t, ph), 0, acc);       \
        if (g->type == 0) {                                                                  \
            if (he <= hs) {                                                                  \
                for (int j = 0; j < ow; j++) acc[j] = LOWEST;                                \
            } else if (empty_cols) {                                                         \
                for (int j = 0; j < ow; j++)                                                 \
                    if (cb[3 * j + 1] <= cb[3 * j]) acc[j] = LOWEST;                         \
            }                                                                                \
        } else if (g->type == 1) {                                                           \
            const T hc = (T)b[3 * oi + 2];                                                   \
            MXCY_PR_SIMD for (int j = 0; j < ow; j++) {                                      \
                T cnt = hc * wc[j];                                                          \
                acc[j] = cnt > 0 ? acc[j] / cnt : (T)0;                                      \
            }                                                                                \
        }                                                                                    \
        if (g->add) {                                                                        \
            MXCY_PR_SIMD for (int j = 0; j < ow; j++) yr[j] += acc[j];                       \
        } else {                                                                             \
            MXCY_PR_SIMD for (int j = 0; j < ow; j++) yr[j] = acc[j];                        \
        }                                                                                    \
    }                                                                                        \
}                                                                                            \
                                                                                             \
/* dx (add: +=) the gradient of pool at x given dy, one plane; buf: mxcy_pool_scratch(g, 1) \
 * elements */                                                                               \
ATTR static void mxcy_pool_bwd_##SUF(const mxcy_pool_geom* g, const int* b, const T* wc,     \
                                     const T* x, const T* dy, T* restrict dx, T* buf) {      \
    const int ow = g->ow, sw = g->sw, wq = mxcy_pool_wq(g), pw = g->pw;                      \
    const int64_t prow = (int64_t)sw * wq;                                                   \
    T* t = buf;                                                                              \
    T* xph = buf + prow;                                                                     \
    T* restrict m = xph + prow;                                                              \
    T* restrict gg = m + ow;                                                                 \
    T* restrict found = gg + ow;                                                             \
    T* restrict first = found + ow;                                                          \
    T* restrict P = first + ow + 16;                                                         \
    memset(P, 0, (size_t)(g->h * prow) * sizeof(T));                                         \
    for (int oi = 0; oi < g->oh; oi++) {                                                     \
        const int hs = b[3 * oi], he = b[3 * oi + 1];                                        \
        const T* restrict dyr = dy + (int64_t)oi * ow;                                       \
        if (he <= hs)                                                                        \
            continue;                                                                        \
        if (g->type == 0) {                                                                  \
            mxcy_pool_hrow_##SUF(g, mxcy_pool_vrow_##SUF(g, x, hs, he, 1, t, xph), 1, m);    \
            MXCY_PR_SIMD for (int j = 0; j < ow; j++) {                                      \
                gg[j] = dyr[j];                                                              \
                found[j] = 0;                                                                \
                first[j] = 1;                                                                \
            }                                                                                \
        } else if (g->type == 1) {                                                           \
            const T hc = (T)b[3 * oi + 2];                                                   \
            MXCY_PR_SIMD for (int j = 0; j < ow; j++) {                                      \
                T cnt = hc * wc[j];                                                          \
                gg[j] = cnt > 0 ? dyr[j] / cnt : (T)0;                                       \
            }                                                                                \
        } else {                                                                             \
            MXCY_PR_SIMD for (int j = 0; j < ow; j++) gg[j] = dyr[j];                        \
        }                                                                                    \
        for (int r = hs; r < he; r++) {                                                      \
            T* pr = P + (int64_t)r * prow;                                                   \
            const T* xs0 = x + (int64_t)r * g->w;                                            \
            for (int dj = 0; dj < g->kw; dj++) {                                             \
                int lo, hi;                                                                  \
                mxcy_pool_cols(g, dj - pw, &lo, &hi);                                        \
                T* restrict ps = pr + (dj % sw) * wq + dj / sw;                              \
                if (g->type != 0) {                                                          \
                    MXCY_PR_SIMD for (int j = lo; j < hi; j++) ps[j] += gg[j];               \
                    continue;                                                                \
                }                                                                            \
                const T* restrict xs = xs0 + dj - pw;                                        \
                if (sw == 1) {                                                               \
                    MXCY_PR_SIMD for (int j = lo; j < hi; j++) {                             \
                        T v = xs[j];                                                         \
                        int hit = found[j] == 0 && (v == m[j] || (first[j] != 0 && v != v)); \
                        ps[j] += hit ? gg[j] : (T)0;                                         \
                        found[j] = hit ? (T)1 : found[j];                                    \
                        first[j] = 0;                                                        \
                    }                                                                        \
                } else if (sw == 2) {                                                        \
                    MXCY_PR_SIMD for (int j = lo; j < hi; j++) {                             \
                        T v = xs[2 * j];                                                     \
                        int hit = found[j] == 0 && (v == m[j] || (first[j] != 0 && v != v)); \
                        ps[j] += hit ? gg[j] : (T)0;                                         \
                        found[j] = hit ? (T)1 : found[j];                                    \
                        first[j] = 0;                                                        \
                    }                                                                        \
                } else {                                                                     \
                    for (int j = lo; j < hi; j++) {                                          \
                        T v = xs[(int64_t)j * sw];                                           \
                        int hit = found[j] == 0 && (v == m[j] || (first[j] != 0 && v != v)); \
                        ps[j] += hit ? gg[j] : (T)0;                                         \
                        found[j] = hit ? (T)1 : found[j];                                    \
                        first[j] = 0;                                                        \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
    /* dx column c is padded column c + pw: phase (c + pw) % sw, index (c + pw) / sw */      \
    for (int r = 0; r < g->h; r++) {                                                         \
        const T* pr = P + (int64_t)r * prow;                                                 \
        T* restrict dxr = dx + (int64_t)r * g->w;                                            \
        if (sw == 1) {                                                                       \
            const T* restrict s = pr + pw;                                                   \
            if (g->add) {                                                                    \
                MXCY_PR_SIMD for (int c = 0; c < g->w; c++) dxr[c] += s[c];                  \
            } else {                                                                         \
                MXCY_PR_SIMD for (int c = 0; c < g->w; c++) dxr[c] = s[c];                   \
            }                                                                                \
        } else if (sw == 2) {                                                                \
            const int a = pw / 2, half = g->w / 2;                                           \
            const T* restrict e = pw % 2 ? pr + wq + a : pr + a;                             \
            const T* restrict o = pw % 2 ? pr + a + 1 : pr + wq + a;                         \
            if (g->add) {                                                                    \
                MXCY_PR_SIMD for (int q = 0; q < half; q++) {                                \
                    dxr[2 * q] += e[q];                                                      \
                    dxr[2 * q + 1] += o[q];                                                  \
                }                                                                            \
                if (g->w % 2) dxr[g->w - 1] += e[half];                                      \
            } else {                                                                         \
                MXCY_PR_SIMD for (int q = 0; q < half; q++) {                                \
                    dxr[2 * q] = e[q];                                                       \
                    dxr[2 * q + 1] = o[q];                                                   \
                }                                                                            \
                if (g->w % 2) dxr[g->w - 1] = e[half];                                       \
            }                                                                                \
        } else {                                                                             \
            for (int c = 0; c < g->w; c++) {                                                 \
                T v = pr[((c + pw) % sw) * wq + (c + pw) / sw];                              \
                dxr[c] = g->add ? dxr[c] + v : v;                                            \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
}

#ifdef MXCY_PR_DISPATCH
MXCY_POOL_ROWS_DEFINE(float, f32_avx2, __attribute__((target("avx2,fma"))), -FLT_MAX)
MXCY_POOL_ROWS_DEFINE(double, f64_avx2, __attribute__((target("avx2,fma"))), -DBL_MAX)
MXCY_POOL_ROWS_DEFINE(float, f32_base, , -FLT_MAX)
MXCY_POOL_ROWS_DEFINE(double, f64_base, , -DBL_MAX)
#define MXCY_PR_PICK(fn, SUF, ...)                                                           \
    do {                                                                                     \
        if (mxcy_isa() >= 1) fn##_##SUF##_avx2(__VA_ARGS__);                                 \
        else fn##_##SUF##_base(__VA_ARGS__);                                                 \
    } while (0)
#define MXCY_PR_DISPATCHERS(T, SUF)                                                          \
    static inline void mxcy_pool_fwd_##SUF(const mxcy_pool_geom* g, const int* b,            \
                                           const T* wc, const T* x, T* y, T* buf) {          \
        MXCY_PR_PICK(mxcy_pool_fwd, SUF, g, b, wc, x, y, buf);                               \
    }                                                                                        \
    static inline void mxcy_pool_bwd_##SUF(const mxcy_pool_geom* g, const int* b,            \
                                           const T* wc, const T* x, const T* dy, T* dx,      \
                                           T* buf) {                                         \
        MXCY_PR_PICK(mxcy_pool_bwd, SUF, g, b, wc, x, dy, dx, buf);                          \
    }
MXCY_PR_DISPATCHERS(float, f32)
MXCY_PR_DISPATCHERS(double, f64)
#else
MXCY_POOL_ROWS_DEFINE(float, f32, , -FLT_MAX)
MXCY_POOL_ROWS_DEFINE(double, f64, , -DBL_MAX)
#endif

#endif
