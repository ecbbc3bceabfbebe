/* Max pooling over 2×2 windows at stride 2 (LeNet's pools, and most CNNs'), one output row
 * at a time, forward and backward.
 *
 * Why: the general pooling loops read with a run-time stride and pick the backward's
 * maximum with branches that mispredict on every window; they made pooling the largest
 * cost of a LeNet step after the GEMMs. Here the loops use selects only. With AVX-512, 16
 * windows at a time (masked loads and stores for the rest of a row: LeNet's rows have 12
 * and 4): the even and odd columns are separated and merged back with two-source permutes
 * (left to itself, GCC vectorises the stride-2 stores as scatters, which are slower than
 * the scalar loop); without AVX-512, the scalar select loops.
 *
 * Taken only when the CPU has AVX-512 (pool_max2x2 in _conv_pool.pxi): with AVX2 alone the
 * general row loops of _pool_rows.h vectorise and beat the scalar select loops here.
 *
 * Semantics as the general loops: the forward keeps a NaN (v > m or v != v replaces m);
 * the backward gives the gradient to the window's first maximum (strictly greater replaces).
 * float32 only; float64 takes the general loops.
 */
#ifndef MXCY_POOL2X2_H
#define MXCY_POOL2X2_H

#include <stdint.h>

#include "_isa.h"

/* y[j] (add: +=) the max of window j over input rows r0, r1 (columns 2j, 2j+1), j in
 * [j0, ow) */
static inline void mxcy_maxpool2x2_fwd_scalar(const float* r0, const float* r1, float* y,
                                              int j0, int ow, int add) {
    for (int j = j0; j < ow; j++) {
        float m = r0[2 * j], v = r0[2 * j + 1];
        m = (v > m || v != v) ? v : m;
        v = r1[2 * j];
        m = (v > m || v != v) ? v : m;
        v = r1[2 * j + 1];
        m = (v > m || v != v) ? v : m;
        y[j] = add ? y[j] + m : m;
    }
}

/* d0, d1 (add: +=) g[j] at window j's first maximum, 0 at its other inputs, j in [j0, ow) */
static inline void mxcy_maxpool2x2_bwd_scalar(const float* r0, const float* r1,
                                              const float* g, float* d0, float* d1, int j0,
                                              int ow, int add) {
    for (int j = j0; j < ow; j++) {
        float v0 = r0[2 * j], v1 = r0[2 * j + 1], v2 = r1[2 * j], v3 = r1[2 * j + 1];
        float m = v0, gg = g[j];
        int s = 0;
        s = v1 > m ? 1 : s;
        m = v1 > m ? v1 : m;
        s = v2 > m ? 2 : s;
        m = v2 > m ? v2 : m;
        s = v3 > m ? 3 : s;
        float o0 = s == 0 ? gg : 0.0f, o1 = s == 1 ? gg : 0.0f;
        float o2 = s == 2 ? gg : 0.0f, o3 = s == 3 ? gg : 0.0f;
        if (add) {
            d0[2 * j] += o0; d0[2 * j + 1] += o1; d1[2 * j] += o2; d1[2 * j + 1] += o3;
        } else {
            d0[2 * j] = o0; d0[2 * j + 1] = o1; d1[2 * j] = o2; d1[2 * j + 1] = o3;
        }
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define MXCY_POOL_X86 1

/* Lane masks for n ≤ 16 windows: their outputs, and the two halves of their 2n inputs */
typedef struct { __mmask16 out, lo, hi; } mxcy_pool_masks;

static inline mxcy_pool_masks mxcy_pool_masks_for(int n) {
    mxcy_pool_masks k;
    k.out = (__mmask16)((1u << n) - 1u);
    k.lo = (__mmask16)(2 * n >= 16 ? 0xFFFFu : (1u << (2 * n)) - 1u);
    k.hi = (__mmask16)(2 * n >= 32 ? 0xFFFFu : 2 * n > 16 ? (1u << (2 * n - 16)) - 1u : 0u);
    return k;
}

/* even (columns 0, 2, ..) and odd columns of the 2n floats at p (masked loads) */
__attribute__((target("avx512f")))
static inline void mxcy_split_pairs(const float* p, mxcy_pool_masks k, __m512* even,
                                    __m512* odd) {
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                         28, 30);
    const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27,
                                         29, 31);
    __m512 a = _mm512_maskz_loadu_ps(k.lo, p), b = _mm512_maskz_loadu_ps(k.hi, p + 16);
    *even = _mm512_permutex2var_ps(a, ie, b);
    *odd = _mm512_permutex2var_ps(a, io, b);
}

/* the 2n floats at p (add: +=) even and odd interleaved */
__attribute__((target("avx512f")))
static inline void mxcy_store_pairs(float* p, mxcy_pool_masks k, __m512 even, __m512 odd,
                                    int add) {
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7,
                                         23);
    const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14,
                                         30, 15, 31);
    __m512 a = _mm512_permutex2var_ps(even, lo, odd), b = _mm512_permutex2var_ps(even, hi, odd);
    if (add) {
        a = _mm512_add_ps(a, _mm512_maskz_loadu_ps(k.lo, p));
        b = _mm512_add_ps(b, _mm512_maskz_loadu_ps(k.hi, p + 16));
    }
    _mm512_mask_storeu_ps(p, k.lo, a);
    _mm512_mask_storeu_ps(p + 16, k.hi, b);
}

/* m := v where v > m or v is NaN */
__attribute__((target("avx512f")))
static inline __m512 mxcy_max_keep_nan(__m512 m, __m512 v) {
    __mmask16 take = _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(take, m, v);
}

__attribute__((target("avx512f")))
static void mxcy_maxpool2x2_fwd_avx512(const float* r0, const float* r1, float* y, int ow,
                                       int add) {
    for (int j = 0; j < ow; j += 16) {
        mxcy_pool_masks k = mxcy_pool_masks_for(ow - j < 16 ? ow - j : 16);
        __m512 e0, o0, e1, o1;
        mxcy_split_pairs(r0 + 2 * j, k, &e0, &o0);
        mxcy_split_pairs(r1 + 2 * j, k, &e1, &o1);
        __m512 m = mxcy_max_keep_nan(mxcy_max_keep_nan(mxcy_max_keep_nan(e0, o0), e1), o1);
        if (add)
            m = _mm512_add_ps(m, _mm512_maskz_loadu_ps(k.out, y + j));
        _mm512_mask_storeu_ps(y + j, k.out, m);
    }
}

__attribute__((target("avx512f")))
static void mxcy_maxpool2x2_bwd_avx512(const float* r0, const float* r1, const float* g,
                                       float* d0, float* d1, int ow, int add) {
    for (int j = 0; j < ow; j += 16) {
        mxcy_pool_masks k = mxcy_pool_masks_for(ow - j < 16 ? ow - j : 16);
        __m512 v0, v1, v2, v3, gg = _mm512_maskz_loadu_ps(k.out, g + j);
        mxcy_split_pairs(r0 + 2 * j, k, &v0, &v1);
        mxcy_split_pairs(r1 + 2 * j, k, &v2, &v3);
        __mmask16 k1 = _mm512_cmp_ps_mask(v1, v0, _CMP_GT_OQ);
        __m512 m = _mm512_mask_blend_ps(k1, v0, v1);
        __mmask16 k2 = _mm512_cmp_ps_mask(v2, m, _CMP_GT_OQ);
        m = _mm512_mask_blend_ps(k2, m, v2);
        __mmask16 k3 = _mm512_cmp_ps_mask(v3, m, _CMP_GT_OQ);
        __mmask16 s3 = k3, s2 = k2 & ~k3, s1 = k1 & ~k2 & ~k3, s0 = ~(k1 | k2 | k3);
        mxcy_store_pairs(d0 + 2 * j, k, _mm512_maskz_mov_ps(s0, gg),
                         _mm512_maskz_mov_ps(s1, gg), add);
        mxcy_store_pairs(d1 + 2 * j, k, _mm512_maskz_mov_ps(s2, gg),
                         _mm512_maskz_mov_ps(s3, gg), add);
    }
}

static int mxcy_pool_avx512(void) { return mxcy_isa() == 2; }
#endif

static void mxcy_maxpool2x2_fwd_f32(const float* r0, const float* r1, float* y, int ow,
                                    int add) {
#ifdef MXCY_POOL_X86
    if (mxcy_pool_avx512()) {
        mxcy_maxpool2x2_fwd_avx512(r0, r1, y, ow, add);
        return;
    }
#endif
    mxcy_maxpool2x2_fwd_scalar(r0, r1, y, 0, ow, add);
}

static void mxcy_maxpool2x2_bwd_f32(const float* r0, const float* r1, const float* g,
                                    float* d0, float* d1, int ow, int add) {
#ifdef MXCY_POOL_X86
    if (mxcy_pool_avx512()) {
        mxcy_maxpool2x2_bwd_avx512(r0, r1, g, d0, d1, ow, add);
        return;
    }
#endif
    mxcy_maxpool2x2_bwd_scalar(r0, r1, g, d0, d1, 0, ow, add);
}

#endif
