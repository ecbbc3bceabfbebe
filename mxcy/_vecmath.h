/* Vectorisable exp and the loops built on it: exp, sigmoid, tanh, float64 softrelu and
 * gelu and their gradients, and softmax / log_softmax over contiguous rows (forward and
 * backward). float32 gelu and softrelu, and more loops, are in _vecmath_elem.h.
 *
 * Why: libm's exp is a scalar call the compiler cannot vectorise, which made mxcy's exp
 * 12x and softmax 5x slower than NumPy. Here exp is branch-free C (Cody-Waite range
 * reduction + polynomial, 2^k built from the exponent bits) that GCC vectorises inside
 * plain `omp simd` loops (-fopenmp-simd: the pragmas only, no OpenMP runtime). Each loop is
 * compiled for AVX-512, AVX2 and baseline x86-64 with GCC target_clones and picked at load
 * time, so the wheel stays portable (MXCY_NO_CLONES builds one version for the compiler's
 * flags: tests/kernels/test_vecmath_isa.py checks each ISA that way).
 *
 * Special values, as libm/NumPy: exp(+inf) = inf, exp(-inf) = 0, NaN -> NaN, overflow to
 * inf, underflow through the subnormals to 0 (2^k is applied as two factors 2^k1 * 2^k2 so
 * a subnormal result is rounded once). Accuracy, measured by tests/kernels: float32 exp
 * within 1.02 ulp (NumPy's own is 2.5 ulp), float64 exp within 1 ulp; sigmoid and tanh of
 * float32 are computed in double (to 2^-31) and rounded once, of float64 within 4 ulp.
 */
#ifndef MXCY_VECMATH_H
#define MXCY_VECMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_simd.h"

MXCY_INLINE float mxcy_f32_from_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
MXCY_INLINE uint32_t mxcy_f32_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
MXCY_INLINE double mxcy_f64_from_bits(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
MXCY_INLINE uint64_t mxcy_f64_bits(double d) { uint64_t b; memcpy(&b, &d, 8); return b; }

/* ------------------------------------------------------------------ float32 exp
 * x = k ln2 + r, |r| <= ln2/2; exp(r) - 1 by a degree-6 minimax polynomial (relative error
 * 3.7e-9, fitted for this file); the result 2^k (1 + p) rounded once.
 * x is clamped to [lo, hi] = [-104, 89] first: exp(-104) rounds to 0 and exp(89)
 * overflows, so results do not change and k stays in [-150, 128]; a NaN passes both
 * comparisons and propagates through p. The loops pass lo and hi through MXCY_OPAQUE:
 * with literal bounds GCC computes exp(bound) as a separate constant path and merges it
 * back with compares and masked moves (4 instructions per vector instead of a max and a
 * min; the whole exp is 19 vector operations per 16 floats with AVX-512). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define MXCY_OPAQUE(v) __asm__("" : "+x"(v))
#else
#define MXCY_OPAQUE(v) ((void)0)
#endif
#define MXCY_EXPF_BOUNDS                                                             \
    float lo_ = -104.0f, hi_ = 89.0f;                                                \
    MXCY_OPAQUE(lo_);                                                                \
    MXCY_OPAQUE(hi_);                                                                \
    (void)lo_;                                                                       \
    (void)hi_
/* exp of a float inside a function that opened with MXCY_EXPF_BOUNDS */
#define MXCY_EXPF_B(v) mxcy_expf((v), lo_, hi_)

MXCY_INLINE float mxcy_expf(float x, float lo, float hi)
{
    const float magic = 0x1.8p23f;                 /* adding it rounds to an integer */
    x = lo > x ? lo : x;
    x = x > hi ? hi : x;
    float t = x * 0x1.715476p+0f + magic;          /* k + magic, k = round(x / ln2) */
    uint32_t kb = mxcy_f32_bits(t);
    float kf = t - magic;
    float r = x - kf * 0x1.62e4p-1f;               /* ln2 high part: exact for |k| < 2^10 */
    r = r - kf * 0x1.7f7d1cp-20f;                  /* ln2 low part */
    float q = 0x1.6a4cc2p-10f;
    q = q * r + 0x1.124334p-7f;
    q = q * r + 0x1.5558c2p-5f;
    q = q * r + 0x1.555486p-3f;
    q = q * r + 0x1.fffffcp-2f;
    float p = q * (r * r) + r;                     /* exp(r) - 1 */
    /* 2^k = 2^(e1 - 127) * 2^(e2 - 127) with e1 + e2 = k + 254 split in halves: both
     * factors normal even when the result is subnormal, so it is rounded once. The low
     * 23 bits of kb hold 2^22 + k, and only the low 9 bits of u and of u - h reach the
     * exponent field, so magic's bits need no subtracting (5 integer operations). */
    uint32_t u = kb + 254u;
    uint32_t h = u >> 1;
    float s1 = mxcy_f32_from_bits(h << 23);
    float s2 = mxcy_f32_from_bits((u - h) << 23);
    return (p * s1 + s1) * s2;
}

/* ------------------------------------------------------------------ float64 exp / expm1
 * Same scheme; exp(r) - 1 by its Taylor series to degree 13 (truncation < 2^-57 on
 * |r| <= ln2/2), or to degree 8 (2^-31) where the result is rounded to float32 (`f32`, a
 * constant after inlining). */
MXCY_INLINE double mxcy_expm1_reduced(double r, int f32)
{
    double q = 1.0 / 40320.0;                      /* 1/8! */
    if (!f32) {
        q = 1.0 / 6227020800.0;                    /* 1/13! */
        q = q * r + 1.0 / 479001600.0;
        q = q * r + 1.0 / 39916800.0;
        q = q * r + 1.0 / 3628800.0;
        q = q * r + 1.0 / 362880.0;
        q = q * r + 1.0 / 40320.0;
    }
    q = q * r + 1.0 / 5040.0;
    q = q * r + 1.0 / 720.0;
    q = q * r + 1.0 / 120.0;
    q = q * r + 1.0 / 24.0;
    q = q * r + 1.0 / 6.0;
    q = q * r + 0.5;
    return q * (r * r) + r;
}

/* x = k ln2 + r: sets *s = 2^k, returns expm1(r); k must stay in [-1022, 1023] */
MXCY_INLINE double mxcy_exp_reduce(double x, double* s, int f32)
{
    const double magic = 0x1.8p52;
    double t = x * 0x1.71547652b82fep+0 + magic;
    uint64_t kb = mxcy_f64_bits(t);
    double kd = t - magic;
    double r = x - kd * 0x1.62e42feep-1;          /* fdlibm's ln2 split */
    r = r - kd * 0x1.a39ef35793c76p-33;
    *s = mxcy_f64_from_bits((kb + 1023u) << 52);   /* low bits of kb: 2^51 + k */
    return mxcy_expm1_reduced(r, f32);
}

/* Outside [-746, 710] the result is 0 or inf; inside, k is in [-1076, 1024] and 2^k is
 * applied as two normal factors, as in mxcy_expf */
MXCY_INLINE double mxcy_exp(double x)
{
    const double magic = 0x1.8p52;
    double t = x * 0x1.71547652b82fep+0 + magic;
    uint64_t kb = mxcy_f64_bits(t);
    double kd = t - magic;
    double r = x - kd * 0x1.62e42feep-1;
    r = r - kd * 0x1.a39ef35793c76p-33;
    double p = mxcy_expm1_reduced(r, 0);
    uint64_t u = kb + 2046u;                       /* e1 + e2 = k + 2046 */
    uint64_t h = u >> 1;
    double s1 = mxcy_f64_from_bits(h << 52);
    double s2 = mxcy_f64_from_bits((u - h) << 52);
    double y = (p * s1 + s1) * s2;
    y = x > 710.0 ? INFINITY : y;
    y = x < -746.0 ? 0.0 : y;
    return y;
}

/* expm1(x) for |x| <= 40: 2^k p + (2^k - 1); p carries the digits when k = 0, and for
 * k != 0 the two terms do not cancel (|2^k p| < |2^k - 1| / 2) */
MXCY_INLINE double mxcy_expm1_small(double x, int f32)
{
    double s;
    double p = mxcy_exp_reduce(x, &s, f32);
    return p * s + (s - 1.0);
}

/* exp(-|x|), shared by sigmoid and softrelu. For a float32 result |x| is capped at 110
 * (exp(-110) is below half float32's least subnormal) and 2^k needs no split. */
MXCY_INLINE double mxcy_exp_neg_abs(double x, int f32)
{
    double a = fabs(x), s;
    if (f32) {
        a = a > 110.0 ? 110.0 : a;
        double e = mxcy_exp_reduce(-a, &s, 1);
        return e * s + s;
    }
    return mxcy_exp(-a);
}

/* 1 / (1 + exp(-x)), as e / (1 + e) with e = exp(x) for x < 0: no rounding of 1 + e^|x|
 * there, so relative accuracy holds down to the subnormals. */
MXCY_INLINE double mxcy_sigmoid(double x, int f32)
{
    double e = mxcy_exp_neg_abs(x, f32);
    double d = 1.0 / (1.0 + e);
    return x >= 0 ? d : e * d;
}

/* tanh |x| = e / (e + 2), e = expm1(2|x|); |x| > 20 gives 1 in double (> 9.5 in float) */
MXCY_INLINE double mxcy_tanh(double x, int f32)
{
    double a = fabs(x);
    const double cap = f32 ? 9.5 : 20.0;
    a = a > cap ? cap : a;
    double e = mxcy_expm1_small(2.0 * a, f32);
    return copysign(e / (e + 2.0), x);
}

/* ------------------------------------------------------------------ elementwise loops
 * y may be x (in place): each iteration reads x[i] before it writes y[i]. */
#define MXCY_UNARY_LOOP(NAME, T, EXPR)                                               \
    MXCY_VEC static void NAME(const T* x, T* y, int64_t n)                           \
    {                                                                                \
        MXCY_EXPF_BOUNDS;                                                            \
        MXCY_SIMD                                                                    \
        for (int64_t i = 0; i < n; i++) {                                            \
            T v = x[i];                                                              \
            y[i] = (EXPR);                                                           \
        }                                                                            \
    }

/* The loops from here to the softmax rows select between computed values (x > 0 ? ...);
 * with trapping math GCC keeps such a select as a branch and leaves the loop scalar (5x
 * slower). mxcy never reads floating-point exception flags, and no value changes. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")
#endif

MXCY_UNARY_LOOP(mxcy_vexp_f32, float, MXCY_EXPF_B(v))
MXCY_UNARY_LOOP(mxcy_vexp_f64, double, mxcy_exp(v))
MXCY_UNARY_LOOP(mxcy_vsigmoid_f32, float, (float)mxcy_sigmoid((double)v, 1))
MXCY_UNARY_LOOP(mxcy_vsigmoid_f64, double, mxcy_sigmoid(v, 0))
MXCY_UNARY_LOOP(mxcy_vtanh_f32, float, (float)mxcy_tanh((double)v, 1))
MXCY_UNARY_LOOP(mxcy_vtanh_f64, double, mxcy_tanh(v, 0))

/* softrelu's gradient factors, computed in double: from the input x, sigmoid(x); from the
 * output y = log(1 + exp(x)) >= 0, 1 - exp(-y) = -expm1(-y) (y > 40: 1 in double) */
MXCY_INLINE double mxcy_softrelu_dx(double x, int f32) { return mxcy_sigmoid(x, f32); }
MXCY_INLINE double mxcy_softrelu_dy(double y, int f32)
{
    y = y > 40.0 ? 40.0 : y;
    return -mxcy_expm1_small(-y, f32);
}

/* dx (= or +=) dy * F(v) */
#define MXCY_GRAD_LOOP(NAME, T, F, F32)                                              \
    MXCY_VEC static void NAME(const T* v, const T* dy, T* dx, int64_t n, int add)    \
    {                                                                                \
        if (add) {                                                                   \
            MXCY_SIMD                                                                \
            for (int64_t i = 0; i < n; i++)                                          \
                dx[i] = (T)(dy[i] * F((double)v[i], F32)) + dx[i];                   \
        } else {                                                                     \
            MXCY_SIMD                                                                \
            for (int64_t i = 0; i < n; i++)                                          \
                dx[i] = (T)(dy[i] * F((double)v[i], F32));                           \
        }                                                                            \
    }

MXCY_GRAD_LOOP(mxcy_vsoftrelu_grad_x_f64, double, mxcy_softrelu_dx, 0)
MXCY_GRAD_LOOP(mxcy_vsoftrelu_grad_y_f64, double, mxcy_softrelu_dy, 0)

/* ------------------------------------------------------------------ softrelu and gelu
 * (float64; the float32 ones compute in float32, in _vecmath_elem.h)
 * softrelu(x) = max(x, 0) + log1p(exp(-|x|)): the log1p argument is in [0, 1], where a
 * short atanh series is exact to the last bit, so the whole is branch-free and vectorises.
 * gelu(x) = x Φ(x), Φ(x) = erfc(-x/√2) / 2 = 1 - erfc(x/√2) / 2 for x > 0, so only
 * erfc(a), a = |x|/√2 >= 0, is needed: erfc(a) = t exp(-a² + g(t)), t = 1 / (1 + a/2), g
 * a polynomial in 2t - 1 (tools/fit_erfcx_cheb.py: degree 24, relative error 2e-15, with
 * a² split into an exact high product and a small rest so exp(-a²) keeps its digits). */

/* log1p(e) for e in [0, 1] (NaN passes): k ln2 + 2 atanh(s) with (k, s) = (0, e / (2 + e))
 * for e < √2 - 1, else (1, (e - 1) / (e + 3)) (that is (m - 1) / (m + 1), m = (1 + e) / 2);
 * |s| <= 0.1716, so 2 atanh(s) = 2s (1 + s²/3 + s⁴/5 + ...) to s²⁰ (< 2^-55) */
MXCY_INLINE double mxcy_log1p_unit(double e)
{
    int hi = e > 0x1.a827999fcef34p-2;
    double s = (hi ? e - 1.0 : e) / (hi ? e + 3.0 : e + 2.0);
    double w = s * s;
    double q = 1.0 / 21.0;
    q = q * w + 1.0 / 19.0;
    q = q * w + 1.0 / 17.0;
    q = q * w + 1.0 / 15.0;
    q = q * w + 1.0 / 13.0;
    q = q * w + 1.0 / 11.0;
    q = q * w + 1.0 / 9.0;
    q = q * w + 1.0 / 7.0;
    q = q * w + 1.0 / 5.0;
    q = q * w + 1.0 / 3.0;
    double s2 = 2.0 * s;
    double r = s2 * (w * q) + s2;
    return hi ? r + 0x1.62e42fefa39efp-1 : r;
}

/* log(1 + exp(x)) */
MXCY_INLINE double mxcy_softrelu(double x)
{
    double e = mxcy_exp_neg_abs(x, 0);
    return (x > 0 ? x : 0.0) + mxcy_log1p_unit(e);
}
#define MXCY_ERFCX_C24 { \
    -0x1.57f564e956ebdp-1, 0x1.5864b151b8577p-1, 0x1.83d61c52405dbp-5, \
    -0x1.802b3908a223ap-5, -0x1.43821ef963d08p-7, 0x1.212cf3434c943p-7, \
    0x1.cd18080489682p-10, -0x1.337868e22d400p-9, -0x1.32b38123bfe97p-13, \
    0x1.6133bd3b7b0bep-11, -0x1.892a22e242ebep-14, -0x1.6d8bc3b275027p-13, \
    0x1.2b8871a32de4dp-14, 0x1.0a59ee052232dp-15, -0x1.fb2b1303ad50ap-16, \
    0x1.1bbc51ae9aa68p-23, 0x1.2244ec1aff984p-17, -0x1.8c9dc5158ced7p-19, \
    -0x1.774d6d41e8b20p-20, 0x1.56f59864caf59p-20, -0x1.a00fc6fca9e8cp-25, \
    -0x1.3481527395256p-22, 0x1.575efd53645edp-24, 0x1.f982b929d8e12p-26, \
    -0x1.c48c6001f0ac6p-27, \
}

/* Φ(x), the standard normal CDF; with pdf set, also *ph = exp(-x²/2). |x| is capped at 56
 * (erfc(39.6) is 0 in double; NaN passes). */
MXCY_INLINE double mxcy_norm_cdf(double x, int pdf, double* ph)
{
    static const double c24[25] = MXCY_ERFCX_C24;
    double ax = fabs(x);
    ax = ax > 56.0 ? 56.0 : ax;                    /* a = |x|/√2 <= 39.6 */
    double a = ax * 0x1.6a09e667f3bccp-1;
    double t = 1.0 / (1.0 + 0.5 * a);
    double u = 2.0 * t - 1.0;
    double g = c24[24];
    MXCY_PRAGMA(GCC unroll 32)
    for (int k = 23; k >= 0; k--)
        g = g * u + c24[k];
    /* a² = x²/2 from x itself (not from the rounded a): xh²/2 (exact, xh the top 26 bits
     * of x) + (x - xh)(x + xh)/2 */
    double xh = mxcy_f64_from_bits(mxcy_f64_bits(ax) & ~((UINT64_C(1) << 27) - 1));
    double a2 = 0.5 * (xh * xh);
    double a2l = 0.5 * ((ax - xh) * (ax + xh));
    double E;
    if (pdf) {
        double q = mxcy_exp(-a2) * mxcy_exp(-a2l);
        *ph = q;
        E = t * q * mxcy_exp(g);
    } else {
        E = t * mxcy_exp(-a2) * mxcy_exp(g - a2l);
    }
    double h = 0.5 * E;
    return x > 0 ? 1.0 - h : h;
}

MXCY_INLINE double mxcy_gelu(double x)
{
    double unused = 0.0;
    return x * mxcy_norm_cdf(x, 0, &unused);
}

/* gelu'(x) = Φ(x) + x φ(x), φ(x) = exp(-x²/2) / √(2π) */
MXCY_INLINE double mxcy_gelu_dx(double x, int f32)
{
    double ph = 0.0;
    (void)f32;                                     /* float64 only (MXCY_GRAD_LOOP's form) */
    double cdf = mxcy_norm_cdf(x, 1, &ph);
    return cdf + x * (ph * 0x1.9884533d43651p-2);
}

MXCY_UNARY_LOOP(mxcy_vsoftrelu_f64, double, mxcy_softrelu(v))
MXCY_UNARY_LOOP(mxcy_vgelu_f64, double, mxcy_gelu(v))
MXCY_GRAD_LOOP(mxcy_vgelu_grad_f64, double, mxcy_gelu_dx, 0)

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

/* ------------------------------------------------------------------ softmax over rows
 * `rows` contiguous rows of `len` elements (the softmax axis is the last one).
 * forward  y = softmax(x / T) or its log: a max pass, an exp-and-sum pass that stages the
 *          exps in y, a scale pass, over a row that stays in cache.
 * backward (x is the forward output y) dx = y (dy - sum dy y) / T,
 *          log: dx = (dy - exp(y) sum dy) / T.
 * add: accumulate into the output (req 'add'); the exps are then recomputed instead of
 * staged. The output may be x (in place) when add is 0.
 * Sums accumulate in double. */
#define MXCY_LANES 16

/* s += sum over the row of TERM (an expression in i, of type TE); STORE(i, e) runs with
 * each term e.
 * 16 lanes of double partial sums, an `omp simd` loop over the lanes (a reduction in
 * double over float terms does not vectorise as a plain `omp simd reduction`) */
#define MXCY_ROW_SUM(TE, s, len, TERM, STORE)                                        \
    do {                                                                             \
        double acc_[MXCY_LANES];                                                     \
        int64_t b_ = 0;                                                              \
        for (int l_ = 0; l_ < MXCY_LANES; l_++)                                      \
            acc_[l_] = 0;                                                            \
        for (; b_ + MXCY_LANES <= (len); b_ += MXCY_LANES) {                         \
            MXCY_SIMD                                                                \
            for (int l_ = 0; l_ < MXCY_LANES; l_++) {                                \
                const int64_t i = b_ + l_;                                           \
                const TE e_ = (TERM);                                                \
                STORE(i, e_);                                                        \
                acc_[l_] += e_;                                                      \
            }                                                                        \
        }                                                                            \
        for (int l_ = 0; l_ < MXCY_LANES; l_++)                                      \
            s += acc_[l_];                                                           \
        for (int64_t i = b_; i < (len); i++) {                                       \
            const TE e_ = (TERM);                                                    \
            STORE(i, e_);                                                            \
            s += e_;                                                                 \
        }                                                                            \
    } while (0)

/* m := max of the row (len > 0): 16 lanes of running maxima, an `omp simd` loop over the
 * lanes (a max reduction over floats does not vectorise: its NaN rules forbid MAX_EXPR) */
#define MXCY_ROW_MAX(T, m, xr, len)                                                  \
    do {                                                                             \
        T acc_[MXCY_LANES];                                                          \
        int64_t i_ = 0;                                                              \
        for (int l_ = 0; l_ < MXCY_LANES; l_++)                                      \
            acc_[l_] = (xr)[0];                                                      \
        for (; i_ + MXCY_LANES <= (len); i_ += MXCY_LANES) {                         \
            MXCY_SIMD                                                                \
            for (int l_ = 0; l_ < MXCY_LANES; l_++)                                  \
                acc_[l_] = (xr)[i_ + l_] > acc_[l_] ? (xr)[i_ + l_] : acc_[l_];      \
        }                                                                            \
        m = (xr)[0];                                                                 \
        for (int l_ = 0; l_ < MXCY_LANES; l_++)                                      \
            m = acc_[l_] > m ? acc_[l_] : m;                                         \
        for (; i_ < (len); i_++)                                                     \
            m = (xr)[i_] > m ? (xr)[i_] : m;                                         \
    } while (0)

#define MXCY_NO_STORE(i, e) (void)0
#define MXCY_STORE_Y(i, e) (yr[i] = (e))

#define MXCY_SOFTMAX_ROWS(NAME, GRAD_NAME, T, EXP)                                   \
    MXCY_VEC static void NAME(const T* x, T* out, int64_t rows, int64_t len,         \
                              double inv_temp, int log_, int add)                    \
    {                                                                                \
        const T it = (T)inv_temp;                                                    \
        MXCY_EXPF_BOUNDS;                                                            \
        if (len <= 0)                                                                \
            return;                                                                  \
        for (int64_t o = 0; o < rows; o++) {                                         \
            const T* xr = x + o * len;                                               \
            T* yr = out + o * len;                                                   \
            T m;                                                                     \
            double s = 0;                                                            \
            MXCY_ROW_MAX(T, m, xr, len);                                             \
            if (!log_ && !add) {                                                     \
                MXCY_ROW_SUM(T, s, len, EXP((xr[i] - m) * it), MXCY_STORE_Y);        \
                const T inv = (T)(1.0 / s);                                          \
                MXCY_SIMD                                                            \
                for (int64_t i = 0; i < len; i++)                                    \
                    yr[i] = yr[i] * inv;                                             \
                continue;                                                            \
            }                                                                        \
            MXCY_ROW_SUM(T, s, len, EXP((xr[i] - m) * it), MXCY_NO_STORE);           \
            if (log_) {                                                              \
                const T lse = (T)log(s);                                             \
                if (add) {                                                           \
                    MXCY_SIMD                                                        \
                    for (int64_t i = 0; i < len; i++)                                \
                        yr[i] += (xr[i] - m) * it - lse;                             \
                } else {                                                             \
                    MXCY_SIMD                                                        \
                    for (int64_t i = 0; i < len; i++)                                \
                        yr[i] = (xr[i] - m) * it - lse;                              \
                }                                                                    \
            } else {                                                                 \
                const T inv = (T)(1.0 / s);                                          \
                MXCY_SIMD                                                            \
                for (int64_t i = 0; i < len; i++)                                    \
                    yr[i] += EXP((xr[i] - m) * it) * inv;                            \
            }                                                                        \
        }                                                                            \
    }                                                                                \
                                                                                     \
    MXCY_VEC static void GRAD_NAME(const T* y, const T* dy, T* dx, int64_t rows,     \
                                   int64_t len, double inv_temp, int log_, int add)  \
    {                                                                                \
        const T it = (T)inv_temp;                                                    \
        MXCY_EXPF_BOUNDS;                                                            \
        for (int64_t o = 0; o < rows; o++) {                                         \
            const T* yr = y + o * len;                                               \
            const T* gr = dy + o * len;                                              \
            T* dr = dx + o * len;                                                    \
            double s = 0;                                                            \
            if (log_) {                                                              \
                MXCY_ROW_SUM(T, s, len, gr[i], MXCY_NO_STORE);                       \
                const T st = (T)s;                                                   \
                MXCY_SIMD                                                            \
                for (int64_t i = 0; i < len; i++) {                                  \
                    T g = (gr[i] - EXP(yr[i]) * st) * it;                            \
                    dr[i] = add ? dr[i] + g : g;                                     \
                }                                                                    \
            } else {                                                                 \
                MXCY_ROW_SUM(double, s, len, (double)gr[i] * yr[i], MXCY_NO_STORE);  \
                const T st = (T)s;                                                   \
                MXCY_SIMD                                                            \
                for (int64_t i = 0; i < len; i++) {                                  \
                    T g = yr[i] * (gr[i] - st) * it;                                 \
                    dr[i] = add ? dr[i] + g : g;                                     \
                }                                                                    \
            }                                                                        \
        }                                                                            \
    }

MXCY_SOFTMAX_ROWS(mxcy_softmax_rows_f32, mxcy_softmax_grad_rows_f32, float, MXCY_EXPF_B)
MXCY_SOFTMAX_ROWS(mxcy_softmax_rows_f64, mxcy_softmax_grad_rows_f64, double, mxcy_exp)

#endif /* MXCY_VECMATH_H */
