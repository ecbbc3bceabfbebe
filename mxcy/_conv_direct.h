/* float32 convolution forward as a register-blocked "direct" GEMM on AVX2+FMA (issue 16).
 *
 *   y[f, p] = clamp(bias[f] + Σ_r W[f, r] · col[r, p], lo, hi)
 *
 * The image is copied once, zero-padded and split into stride phases (sh × sw planes per
 * channel, each hq × wq). In that buffer the window tap r = (ci, ki, kj) of output (oi, oj)
 * lies at koff[r] + oi·wq + oj whatever the stride and dilation, so consecutive outputs of
 * a row are consecutive floats. Outputs are numbered in "wide" rows of wq (the last
 * wq − ow of each row are computed and dropped): a run of 24 wide positions is then three
 * plain vector loads per tap, with no column matrix at all. The micro-kernel keeps a
 * 4 filters × 24 positions tile in 12 ymm accumulators: per tap it broadcasts 4 weights
 * (read straight from W, rows K apart: no packing, nothing to cache or invalidate), loads
 * 3 vectors of the image and issues 12 FMAs. Bias, an optional clamp (a fused ReLU/ReLU6)
 * and req add are applied while the tile is in registers; the wide positions are mapped to
 * y's compact rows in the store.
 *
 * Only AVX2+FMA; mxcy_cd_isa() says whether it may run (the AVX-512 machines keep the
 * packed kernel of _gemm_packed.h, CPUs without AVX2 the BLAS path).
 */
#ifndef MXCY_CONV_DIRECT_H
#define MXCY_CONV_DIRECT_H

#include <stdint.h>
#include <string.h>

#include "_isa.h"

#define MXCY_CD_MR 4     /* filters per tile */
#define MXCY_CD_NR 24    /* wide positions per tile */

typedef struct {
    int K;                  /* taps per filter: cg · kh · kw */
    int kc;                 /* taps per block (whole channels) */
    const int64_t* koff;    /* K offsets of the taps in the phase-padded image */
    int64_t ntiles;         /* ceil(oh · wq / NR) */
    int wq, ow, oh;
    int64_t ystride;        /* oh · ow: between the filter planes of y */
    int accumulate;         /* y += ... (req add) */
    int act;                /* clamp to [lo, hi] */
    float lo, hi;
} mxcy_cd_geom;

/* Phase-plane geometry of a padded h × w image for stride (sh, sw). */
static inline void mxcy_cd_planes(int h, int w, int ph, int pw, int sh, int sw, int* hq,
                                  int* wq) {
    *hq = (h + 2 * ph + sh - 1) / sh;
    *wq = (w + 2 * pw + sw - 1) / sw;
}

/* Floats of the phase-padded buffer of c channels, with slack for the last tile's reads. */
static inline int64_t mxcy_cd_buf_len(int c, int sh, int sw, int hq, int wq) {
    return (int64_t)c * sh * sw * hq * wq + 2 * (int64_t)wq + 2 * MXCY_CD_NR;
}

/* buf := x (c × h × w) zero-padded by (ph, pw) and split into phases: padded element
 * (i, j) of channel ci lies at ((ci·sh + i%sh)·sw + j%sw)·hq·wq + (i/sh)·wq + j/sw. */
static void mxcy_cd_pad(const float* x, int c, int h, int w, int ph, int pw, int sh, int sw,
                        int hq, int wq, float* buf) {
    int64_t plane = (int64_t)hq * wq;
    memset(buf, 0, (size_t)mxcy_cd_buf_len(c, sh, sw, hq, wq) * sizeof(float));
    for (int ci = 0; ci < c; ci++) {
        float* bc = buf + (int64_t)ci * sh * sw * plane;
        for (int i = 0; i < h; i++) {
            const float* src = x + ((int64_t)ci * h + i) * w;
            int pi = i + ph;
            float* brow = bc + (int64_t)(pi % sh) * sw * plane + (int64_t)(pi / sh) * wq;
            if (sw == 1) {
                memcpy(brow + pw, src, (size_t)w * sizeof(float));
            } else {
                for (int j = 0; j < w; j++) {
                    int pj = j + pw;
                    brow[(int64_t)(pj % sw) * plane + pj / sw] = src[j];
                }
            }
        }
    }
}

/* koff[r] for r = (ci, ki, kj) of a group of cg channels. */
static void mxcy_cd_offsets(int cg, int kh, int kw, int sh, int sw, int dh, int dw, int hq,
                            int wq, int64_t* koff) {
    int64_t plane = (int64_t)hq * wq;
    int r = 0;
    for (int ci = 0; ci < cg; ci++)
        for (int ki = 0; ki < kh; ki++)
            for (int kj = 0; kj < kw; kj++) {
                int ti = ki * dh, tj = kj * dw;
                koff[r++] = ((int64_t)(ci * sh + ti % sh) * sw + tj % sw) * plane
                    + (int64_t)(ti / sh) * wq + tj / sw;
            }
}

static inline float mxcy_cd_clamp(const mxcy_cd_geom* g, float v) {
    if (g->act) {
        v = v > g->lo ? v : g->lo;
        v = v < g->hi ? v : g->hi;
    }
    return v;
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define MXCY_CD_X86 1

/* Stores 8 lanes of wide positions p .. p+7 into the filter row yrow (compact oh × ow). */
__attribute__((target("avx2,fma")))
static inline void mxcy_cd_store8(const mxcy_cd_geom* g, float* yrow, int64_t p, int oi,
                                  int oj, __m256 v) {
    if (oj + 8 <= g->ow && oi < g->oh) {
        float* d = yrow + (int64_t)oi * g->ow + oj;
        if (g->accumulate)
            v = _mm256_add_ps(v, _mm256_loadu_ps(d));
        if (g->act)
            v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(g->lo)), _mm256_set1_ps(g->hi));
        _mm256_storeu_ps(d, v);
        return;
    }
    float t[8];
    _mm256_storeu_ps(t, v);
    (void)p;
    for (int l = 0; l < 8; l++, oj++) {
        if (oj >= g->wq) {
            oj -= g->wq;
            oi++;
        }
        if (oj < g->ow && oi < g->oh) {
            float* d = yrow + (int64_t)oi * g->ow + oj;
            *d = mxcy_cd_clamp(g, g->accumulate ? *d + t[l] : t[l]);
        }
    }
}

/* Rows f0 .. f0+nr (nr ≤ 4) of y for the 24 wide positions from p0. */
__attribute__((target("avx2,fma")))
static void mxcy_cd_tile_avx2(const mxcy_cd_geom* g, const float* img, const float* w,
                              const float* bias, float* y, int f0, int nr, int64_t p0,
                              int r0, int r1, float* part) {
    const int K = g->K;
    const int64_t* koff = g->koff;
    const float* w0 = w + (int64_t)f0 * K;
    const float* w1 = w0 + (nr > 1 ? K : 0);
    const float* w2 = w0 + (int64_t)(nr > 2 ? 2 : nr - 1) * K;
    const float* w3 = w0 + (int64_t)(nr > 3 ? 3 : nr - 1) * K;
    const float* src = img + p0;
    __m256 c00, c01, c02, c10, c11, c12, c20, c21, c22, c30, c31, c32;
    if (r0 == 0) {
        c00 = c01 = c02 = _mm256_set1_ps(bias ? bias[f0] : 0.0f);
        c10 = c11 = c12 = _mm256_set1_ps(bias && nr > 1 ? bias[f0 + 1] : 0.0f);
        c20 = c21 = c22 = _mm256_set1_ps(bias && nr > 2 ? bias[f0 + 2] : 0.0f);
        c30 = c31 = c32 = _mm256_set1_ps(bias && nr > 3 ? bias[f0 + 3] : 0.0f);
    } else {                /* the sums of the earlier tap blocks */
        c00 = _mm256_loadu_ps(part), c01 = _mm256_loadu_ps(part + 8);
        c02 = _mm256_loadu_ps(part + 16), c10 = _mm256_loadu_ps(part + 24);
        c11 = _mm256_loadu_ps(part + 32), c12 = _mm256_loadu_ps(part + 40);
        c20 = _mm256_loadu_ps(part + 48), c21 = _mm256_loadu_ps(part + 56);
        c22 = _mm256_loadu_ps(part + 64), c30 = _mm256_loadu_ps(part + 72);
        c31 = _mm256_loadu_ps(part + 80), c32 = _mm256_loadu_ps(part + 88);
    }
    for (int r = r0; r < r1; r++) {
        const float* bp = src + koff[r];
        __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        __m256 b2 = _mm256_loadu_ps(bp + 16), a;
        a = _mm256_broadcast_ss(w0 + r);
        c00 = _mm256_fmadd_ps(a, b0, c00);
        c01 = _mm256_fmadd_ps(a, b1, c01);
        c02 = _mm256_fmadd_ps(a, b2, c02);
        a = _mm256_broadcast_ss(w1 + r);
        c10 = _mm256_fmadd_ps(a, b0, c10);
        c11 = _mm256_fmadd_ps(a, b1, c11);
        c12 = _mm256_fmadd_ps(a, b2, c12);
        a = _mm256_broadcast_ss(w2 + r);
        c20 = _mm256_fmadd_ps(a, b0, c20);
        c21 = _mm256_fmadd_ps(a, b1, c21);
        c22 = _mm256_fmadd_ps(a, b2, c22);
        a = _mm256_broadcast_ss(w3 + r);
        c30 = _mm256_fmadd_ps(a, b0, c30);
        c31 = _mm256_fmadd_ps(a, b1, c31);
        c32 = _mm256_fmadd_ps(a, b2, c32);
    }
    if (r1 < K) {           /* more tap blocks follow: keep the partial sums */
        _mm256_storeu_ps(part, c00), _mm256_storeu_ps(part + 8, c01);
        _mm256_storeu_ps(part + 16, c02), _mm256_storeu_ps(part + 24, c10);
        _mm256_storeu_ps(part + 32, c11), _mm256_storeu_ps(part + 40, c12);
        _mm256_storeu_ps(part + 48, c20), _mm256_storeu_ps(part + 56, c21);
        _mm256_storeu_ps(part + 64, c22), _mm256_storeu_ps(part + 72, c30);
        _mm256_storeu_ps(part + 80, c31), _mm256_storeu_ps(part + 88, c32);
        return;
    }
    int oi[3], oj[3];
    for (int v = 0; v < 3; v++) {
        int64_t p = p0 + 8 * v;
        oi[v] = (int)(p / g->wq);
        oj[v] = (int)(p - (int64_t)oi[v] * g->wq);
    }
    float* yr = y + (int64_t)f0 * g->ystride;
    mxcy_cd_store8(g, yr, p0, oi[0], oj[0], c00);
    mxcy_cd_store8(g, yr, p0 + 8, oi[1], oj[1], c01);
    mxcy_cd_store8(g, yr, p0 + 16, oi[2], oj[2], c02);
    if (nr < 2) return;
    yr += g->ystride;
    mxcy_cd_store8(g, yr, p0, oi[0], oj[0], c10);
    mxcy_cd_store8(g, yr, p0 + 8, oi[1], oj[1], c11);
    mxcy_cd_store8(g, yr, p0 + 16, oi[2], oj[2], c12);
    if (nr < 3) return;
    yr += g->ystride;
    mxcy_cd_store8(g, yr, p0, oi[0], oj[0], c20);
    mxcy_cd_store8(g, yr, p0 + 8, oi[1], oj[1], c21);
    mxcy_cd_store8(g, yr, p0 + 16, oi[2], oj[2], c22);
    if (nr < 4) return;
    yr += g->ystride;
    mxcy_cd_store8(g, yr, p0, oi[0], oj[0], c30);
    mxcy_cd_store8(g, yr, p0 + 8, oi[1], oj[1], c31);
    mxcy_cd_store8(g, yr, p0 + 16, oi[2], oj[2], c32);
}

static int mxcy_cd_isa(void) { return mxcy_isa() == 1; }
#else
static int mxcy_cd_isa(void) { return 0; }
#endif

/* Tiles handled together: the 4 × kc weights of a kernel call are read from L2/L3 once
 * and from L1 for the other tiles of the block. */
#define MXCY_CD_TB 4

/* Filters [f0, f1) of one group (w: its fg × K weights, y: its fg output planes) for the
 * wide tiles [t0, t1) of the phase-padded image `img` (already offset to the group's
 * first channel). Per block of TB tiles, the taps go in blocks of g->kc (the window they
 * read fits L1) and all the filters pass over each; the partial sums wait in `part`
 * (TB × (f1 − f0 rounded up to MR) × NR floats). */
static void mxcy_cd_run(const mxcy_cd_geom* g, const float* img, const float* w,
                        const float* bias, float* y, int f0, int f1, int64_t t0, int64_t t1,
                        float* part) {
#ifdef MXCY_CD_X86
    int64_t fpad = (int64_t)(f1 - f0 + MXCY_CD_MR - 1) / MXCY_CD_MR * MXCY_CD_MR;
    for (int64_t tb = t0; tb < t1; tb += MXCY_CD_TB) {
        int64_t te = t1 - tb < MXCY_CD_TB ? t1 : tb + MXCY_CD_TB;
        for (int r0 = 0; r0 < g->K; r0 += g->kc) {
            int r1 = g->K - r0 < g->kc ? g->K : r0 + g->kc;
            for (int f = f0; f < f1; f += MXCY_CD_MR)
                for (int64_t t = tb; t < te; t++)
                    mxcy_cd_tile_avx2(g, img, w, bias, y, f, f1 - f < MXCY_CD_MR ? f1 - f
                                      : MXCY_CD_MR, t * MXCY_CD_NR, r0, r1,
                                      part + ((t - tb) * fpad + (f - f0)) * MXCY_CD_NR);
        }
    }
#else
    (void)g; (void)img; (void)w; (void)bias; (void)y; (void)f0; (void)f1; (void)t0; (void)t1;
    (void)part;
#endif
}

#endif
