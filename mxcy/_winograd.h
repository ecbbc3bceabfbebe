/* Winograd F(2×2, 3×3) transforms for float32 convolution (mxcy/_conv_winograd.pxi).
 *
 * A 3×3, stride-1 convolution computes each 2×2 block of outputs (a tile) from the 4×4
 * input patch under it. In the Winograd domain the tile costs 16 multiplies per
 * (filter, channel) instead of 36: with V = Bᵀ d B (the patch), U = G g Gᵀ (the
 * kernel) and M = Σ_c U ⊙ V, the outputs are Aᵀ M A. Summed over channels that is 16
 * GEMMs, one per position ξ of the 4×4 domain, of (filters × channels)·(channels ×
 * tiles): 2.25× fewer multiply-adds than the direct convolution. The transforms only
 * add, subtract and halve, so float32 keeps its accuracy (a few ulp). The backward uses
 * the same algebra: the data gradient is itself a 3×3 stride-1 convolution (of dy), and
 * the weight gradient is the forward's adjoint in g, dW = Gᵀ (Σ_tiles (A dY Aᵀ) ⊙ V) G:
 * again 16 GEMMs, (filters × tiles)·(tiles × channels).
 *
 *   Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]   G = [1 0 0; ½ ½ ½; ½ -½ ½; 0 0 1]
 *   Aᵀ = [1 1 1 0; 0 1 -1 -1]
 *
 * The loops run along a row of tiles, so they vectorise: consecutive tiles of a row sit
 * two input columns apart, so each input row is split once into its even and odd columns.
 */
#ifndef MXCY_WINOGRAD_H
#define MXCY_WINOGRAD_H

#include <stdint.h>
#include <string.h>

#include "_simd.h"

/* U[ξ·pairs + p] := (G g_p Gᵀ)[ξ] for the `pairs` 3×3 kernels g_p (row-major, 9 apart). */
MXCY_VEC static void mxcy_wino_weights(const float* g, int64_t pairs, float* U) {
    for (int64_t p = 0; p < pairs; p++) {
        const float* q = g + p * 9;
        float t[4][3];
        for (int j = 0; j < 3; j++) {
            t[0][j] = q[j];
            t[1][j] = 0.5f * (q[j] + q[3 + j] + q[6 + j]);
            t[2][j] = 0.5f * (q[j] - q[3 + j] + q[6 + j]);
            t[3][j] = q[6 + j];
        }
        for (int i = 0; i < 4; i++) {
            U[(int64_t)(i * 4 + 0) * pairs + p] = t[i][0];
            U[(int64_t)(i * 4 + 1) * pairs + p] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
            U[(int64_t)(i * 4 + 2) * pairs + p] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
            U[(int64_t)(i * 4 + 3) * pairs + p] = t[i][2];
        }
    }
}

/* Floats of scratch mxcy_wino_input_row and mxcy_wino_output_row need for tw tiles. */
static inline int64_t mxcy_wino_scratch(int tw) { return 2 * (int64_t)(tw + 1) + 16 * (int64_t)tw; }

/* V[ξ·vs + t], t < tw: the transformed patches of tile row ty of one h × w plane, the
 * plane padded by ph rows and pw columns (reads outside it are zeros). */
MXCY_VEC static void mxcy_wino_input_row(const float* x, int h, int w, int ph, int pw, int ty,
                                         int tw, float* scratch, float* V, int64_t vs) {
    float* restrict E = scratch;     /* E[t] = row[2t - pw], O[t] = row[2t + 1 - pw] */
    float* restrict O = E + tw + 1;
    float* restrict H = O + tw + 1;  /* 4 rows × 4 column transforms × tw */
    /* tiles t in [lo, hi) read both their columns inside the row */
    int lo = (pw + 1) / 2, hi = (w + pw) / 2;
    if (hi > tw + 1)
        hi = tw + 1;
    if (lo > hi)
        lo = hi;
    for (int r = 0; r < 4; r++) {
        int ir = 2 * ty - ph + r;
        float* restrict hr = H + (int64_t)r * 4 * tw;
        if (ir < 0 || ir >= h) {
            memset(hr, 0, sizeof(float) * 4 * (size_t)tw);
            continue;
        }
        const float* restrict xr = x + (int64_t)ir * w - pw;   /* xr[c] = column c - pw */
        for (int t = 0; t <= tw; t++) {
            if (t == lo)
                t = hi;
            if (t > tw)
                break;
            int c0 = 2 * t - pw, c1 = c0 + 1;
            E[t] = (c0 >= 0 && c0 < w) ? xr[2 * t] : 0.0f;
            O[t] = (c1 >= 0 && c1 < w) ? xr[2 * t + 1] : 0.0f;
        }
        MXCY_SIMD
        for (int t = lo; t < hi; t++) {
            E[t] = xr[2 * t];
            O[t] = xr[2 * t + 1];
        }
        float *h0 = hr, *h1 = hr + tw, *h2 = hr + 2 * tw, *h3 = hr + 3 * tw;
        MXCY_SIMD
        for (int t = 0; t < tw; t++) {      /* Bᵀ along the patch row: d0..d3 */
            h0[t] = E[t] - E[t + 1];
            h1[t] = O[t] + E[t + 1];
            h2[t] = E[t + 1] - O[t];
            h3[t] = O[t] - O[t + 1];
        }
    }
    for (int k = 0; k < 4; k++) {           /* Bᵀ down the patch's four rows */
        const float *r0 = H + k * tw, *r1 = H + 4 * tw + k * tw;
        const float *r2 = H + 8 * tw + k * tw, *r3 = H + 12 * tw + k * tw;
        float* restrict v0 = V + (int64_t)k * vs;
        float* restrict v1 = V + (int64_t)(4 + k) * vs;
        float* restrict v2 = V + (int64_t)(8 + k) * vs;
        float* restrict v3 = V + (int64_t)(12 + k) * vs;
        MXCY_SIMD
        for (int t = 0; t < tw; t++) {
            v0[t] = r0[t] - r2[t];
            v1[t] = r1[t] + r2[t];
            v2[t] = r2[t] - r1[t];
            v3[t] = r1[t] - r3[t];
        }
    }
}

/* Output rows 2ty, 2ty + 1 (those < oh) of one oh × ow plane from M[ξ·ms + t], t < tw:
 * Aᵀ M A + bias, clamped to [lo, hi] when `clamp` (a fused ReLU; never with add), written
 * (add = 0) or added (add = 1). */
MXCY_VEC static void mxcy_wino_output_row(const float* M, int64_t ms, int tw, float bias,
                                          float* y, int oh, int ow, int ty, int add,
                                          int clamp, float lo, float hi, float* scratch) {
    float* restrict y00 = scratch;
    float* restrict y01 = scratch + tw;
    float* restrict y10 = scratch + 2 * tw;
    float* restrict y11 = scratch + 3 * tw;
    const float* m[16];
    for (int i = 0; i < 16; i++)
        m[i] = M + (int64_t)i * ms;
    MXCY_SIMD
    for (int t = 0; t < tw; t++) {
        float a0 = m[0][t] + m[1][t] + m[2][t], b0 = m[1][t] - m[2][t] - m[3][t];
        float a1 = m[4][t] + m[5][t] + m[6][t], b1 = m[5][t] - m[6][t] - m[7][t];
        float a2 = m[8][t] + m[9][t] + m[10][t], b2 = m[9][t] - m[10][t] - m[11][t];
        float a3 = m[12][t] + m[13][t] + m[14][t], b3 = m[13][t] - m[14][t] - m[15][t];
        y00[t] = a0 + a1 + a2 + bias;
        y10[t] = a1 - a2 - a3 + bias;
        y01[t] = b0 + b1 + b2 + bias;
        y11[t] = b1 - b2 - b3 + bias;
    }
    if (clamp) {
        MXCY_SIMD
        for (int t = 0; t < 4 * tw; t++) {
            float v = scratch[t] < lo ? lo : scratch[t];
            scratch[t] = v > hi ? hi : v;
        }
    }
    int pairs = ow / 2;
    for (int a = 0; a < 2; a++) {
        int row = 2 * ty + a;
        if (row >= oh)
            break;
        float* yr = y + (int64_t)row * ow;
        const float* left = a ? y10 : y00;
        const float* right = a ? y11 : y01;
        if (add) {
            MXCY_SIMD
            for (int t = 0; t < pairs; t++) {
                yr[2 * t] += left[t];
                yr[2 * t + 1] += right[t];
            }
            if (ow & 1)
                yr[ow - 1] += left[pairs];
        } else {
            MXCY_SIMD
            for (int t = 0; t < pairs; t++) {
                yr[2 * t] = left[t];
                yr[2 * t + 1] = right[t];
            }
            if (ow & 1)
                yr[ow - 1] = left[pairs];
        }
    }
}

/* Ŷ[ξ·ys + t], t < tw: A dY Aᵀ of tile row ty of one oh × ow output-gradient plane
 * (A = (Aᵀ)ᵀ; the 2×2 blocks' entries past the plane are zeros), for the weight gradient
 * dW = Gᵀ (Σ Ŷ ⊙ V) G, the adjoint of the forward in g. */
MXCY_VEC static void mxcy_wino_dy_row(const float* dy, int oh, int ow, int ty, int tw,
                                      float* scratch, float* Y, int64_t ys) {
    float* restrict c0 = scratch;    /* c0[t] = dY[row][2t], c1[t] = dY[row][2t + 1] */
    float* restrict c1 = scratch + tw;
    float* restrict h = scratch + 2 * tw;   /* 2 rows × 4 × tw */
    int pairs = ow / 2;
    for (int a = 0; a < 2; a++) {
        int row = 2 * ty + a;
        float* restrict ha = h + (int64_t)a * 4 * tw;
        if (row >= oh) {
            memset(ha, 0, sizeof(float) * 4 * (size_t)tw);
            continue;
        }
        const float* restrict dr = dy + (int64_t)row * ow;
        MXCY_SIMD
        for (int t = 0; t < pairs; t++) {
            c0[t] = dr[2 * t];
            c1[t] = dr[2 * t + 1];
        }
        if (ow & 1) {
            c0[pairs] = dr[ow - 1];
            c1[pairs] = 0.0f;
        }
        float *h0 = ha, *h1 = ha + tw, *h2 = ha + 2 * tw, *h3 = ha + 3 * tw;
        MXCY_SIMD
        for (int t = 0; t < tw; t++) {
            h0[t] = c0[t];
            h1[t] = c0[t] + c1[t];
            h2[t] = c0[t] - c1[t];
            h3[t] = -c1[t];
        }
    }
    for (int k = 0; k < 4; k++) {
        const float *r0 = h + k * tw, *r1 = h + 4 * tw + k * tw;
        float* restrict y0 = Y + (int64_t)k * ys;
        float* restrict y1 = Y + (int64_t)(4 + k) * ys;
        float* restrict y2 = Y + (int64_t)(8 + k) * ys;
        float* restrict y3 = Y + (int64_t)(12 + k) * ys;
        MXCY_SIMD
        for (int t = 0; t < tw; t++) {
            y0[t] = r0[t];
            y1[t] = r0[t] + r1[t];
            y2[t] = r0[t] - r1[t];
            y3[t] = -r1[t];
        }
    }
}

/* dw[p·9 + 3r + s] := (Gᵀ dU_p G)[r][s] (req 1 write, 2 add), dU_p[ξ] = dU[ξ·pairs + p]. */
MXCY_VEC static void mxcy_wino_dw_out(const float* dU, int64_t pairs, float* dw, int req) {
    for (int64_t p = 0; p < pairs; p++) {
        float d[16], t[3][4], o[9];
        for (int i = 0; i < 16; i++)
            d[i] = dU[(int64_t)i * pairs + p];
        for (int k = 0; k < 4; k++) {
            t[0][k] = d[k] + 0.5f * (d[4 + k] + d[8 + k]);
            t[1][k] = 0.5f * (d[4 + k] - d[8 + k]);
            t[2][k] = 0.5f * (d[4 + k] + d[8 + k]) + d[12 + k];
        }
        for (int r = 0; r < 3; r++) {
            o[3 * r] = t[r][0] + 0.5f * (t[r][1] + t[r][2]);
            o[3 * r + 1] = 0.5f * (t[r][1] - t[r][2]);
            o[3 * r + 2] = 0.5f * (t[r][1] + t[r][2]) + t[r][3];
        }
        float* out = dw + p * 9;
        for (int i = 0; i < 9; i++)
            out[i] = req == 2 ? out[i] + o[i] : o[i];
    }
}

#endif
