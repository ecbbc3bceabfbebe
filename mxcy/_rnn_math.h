/* Vectorisable float32 sigmoid and tanh for the fused RNN kernels (mxcy/_rnn.pyx).
 *
 * libm's expf/tanhf are scalar calls (~20 ns each); an LSTM step needs five per hidden
 * unit, so they would cost more than the GEMMs. These are the Cephes polynomials written
 * branch-free so GCC vectorises the loops, compiled for AVX-512, AVX2 and a baseline and
 * picked at load time (target_clones: the wheel stays portable).
 * Accuracy: expf within 2 ulp; tanh within ~1e-7 absolute (polynomial below |x| < 0.625);
 * sigmoid within ~1e-7 absolute. float64 keeps libm (the gradient checks need it).
 */
#ifndef MXCY_RNN_MATH_H
#define MXCY_RNN_MATH_H

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define MXCY_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MXCY_CLONES
#endif

/* e^x for x clamped to [-87, 87] (Cephes expf: x = n·ln2 + r, e^r by a degree-6 poly).
 * n = round(x·log2 e) by the 1.5·2^23 trick, not a float->int conversion: that can trap
 * on the clamped-away values, which stops GCC from vectorising the loop. */
static inline float mxcy_expf(float x) {
    const float magic = 12582912.0f;
    float t, nf, r, z, y, p2;
    int32_t tb, bits;
    x = x > 87.0f ? 87.0f : x;
    x = x < -87.0f ? -87.0f : x;
    t = x * 1.44269504088896341f + magic;
    nf = t - magic;
    memcpy(&tb, &t, sizeof(tb));
    r = x - nf * 0.693359375f;
    r = r + nf * 2.12194440e-4f;
    z = r * r;
    y = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r
          + 4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f;
    y = y * z + r + 1.0f;
    bits = (tb - 0x4B400000 + 127) << 23;
    memcpy(&p2, &bits, sizeof(p2));
    return y * p2;
}

static inline float mxcy_sigmoidf(float x) {
    return 1.0f / (1.0f + mxcy_expf(-x));
}

static inline float mxcy_tanhf(float x) {
    float ax = __builtin_fabsf(x);
    float z = x * x;
    float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z
                    + 1.33314422036e-1f) * z - 3.33332819422e-1f) * z * x + x;
    float e = mxcy_expf(2.0f * (ax > 20.0f ? 20.0f : ax));
    float big = __builtin_copysignf(1.0f - 2.0f / (e + 1.0f), x);
    float use_small = (float)(ax < 0.625f);     /* a blend, not a branch: vectorises */
    return use_small * small + (1.0f - use_small) * big;
}

/* y[i] := tanh(x[i]) (y may be x) */
MXCY_CLONES static void mxcy_vtanh(const float* x, float* y, int n) {
    for (int64_t i = 0; i < n; i++)
        y[i] = mxcy_tanhf(x[i]);
}

/* The row loops count with int64_t: Python builds with -fwrapv, and with a wrapping int
 * index `g[n + j]` is not an affine address to GCC, which then leaves the loop scalar. */

/* One LSTM step for one batch row: g = [i, f, g, o] pre-activations (4n) become the
 * activations; c := f·c_prev + i·g; h := o·tanh(c). */
MXCY_CLONES static void mxcy_lstm_row_f32(float* __restrict g, const float* __restrict c_prev,
                                          float* __restrict c, float* __restrict h, int n) {
    for (int64_t j = 0; j < n; j++) {
        float i = mxcy_sigmoidf(g[j]);
        float f = mxcy_sigmoidf(g[n + j]);
        float u = mxcy_tanhf(g[2 * n + j]);
        float o = mxcy_sigmoidf(g[3 * n + j]);
        float cn = f * c_prev[j] + i * u;
        g[j] = i;
        g[n + j] = f;
        g[2 * n + j] = u;
        g[3 * n + j] = o;
        c[j] = cn;
        h[j] = o * mxcy_tanhf(cn);
    }
}

/* LSTM backward for one batch row (see _rnn.pyx lstm_bwd_row): from the activations g,
 * the cells c and c_prev, and dh, dc (dc updated to the gradient of c_prev), writes the
 * pre-activation gradients dg (4n). */
MXCY_CLONES static void mxcy_lstm_bwd_row_f32(const float* __restrict g,
                                              const float* __restrict c,
                                              const float* __restrict c_prev,
                                              const float* __restrict dh,
                                              float* __restrict dc, float* __restrict dg,
                                              int n) {
    for (int64_t j = 0; j < n; j++) {
        float i = g[j], f = g[n + j], u = g[2 * n + j], o = g[3 * n + j];
        float tc = mxcy_tanhf(c[j]);
        float dcj = dc[j] + dh[j] * o * (1.0f - tc * tc);
        dg[j] = dcj * u * i * (1.0f - i);
        dg[n + j] = dcj * c_prev[j] * f * (1.0f - f);
        dg[2 * n + j] = dcj * i * (1.0f - u * u);
        dg[3 * n + j] = dh[j] * tc * o * (1.0f - o);
        dc[j] = dcj * f;
    }
}

/* One GRU step for one batch row: gx = [x_r, x_z, x_n] (W_x x + b_x, 3n) becomes the
 * activations [r, z, n]; gh = W_h h (3n, without b_h); hn := W_hn h + b_hn;
 * h := n + z·(h_prev − n) with n = tanh(x_n + r·hn). */
MXCY_CLONES static void mxcy_gru_row_f32(float* __restrict gx, const float* __restrict gh,
                                         const float* __restrict bh,
                                         const float* __restrict h_prev,
                                         float* __restrict hn, float* __restrict h, int n) {
    for (int64_t j = 0; j < n; j++) {
        float r = mxcy_sigmoidf(gx[j] + gh[j] + bh[j]);
        float z = mxcy_sigmoidf(gx[n + j] + gh[n + j] + bh[n + j]);
        float hnj = gh[2 * n + j] + bh[2 * n + j];
        float nn = mxcy_tanhf(gx[2 * n + j] + r * hnj);
        gx[j] = r;
        gx[n + j] = z;
        gx[2 * n + j] = nn;
        hn[j] = hnj;
        h[j] = nn + z * (h_prev[j] - nn);
    }
}

#endif
