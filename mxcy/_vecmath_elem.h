/* More vector loops on _vecmath.h's scheme (target_clones, `omp simd`, no trapping math):
 * float32 gelu and softrelu computed in float32 (MXNet's precision, 8 lanes with AVX2),
 * float32 sin, cos, log, pow and hypot computed in double and rounded once, sqrt, and the
 * gradient factors of square, sqrt, log and exp.
 *
 * Accuracy (measured by tests/kernels/test_vecmath_elem.py and test_vecmath_act.py):
 * - gelu float32 within 8 ulp (its Φ from a degree-9 float32 polynomial, see
 *   tools/fit_erfcx_cheb.py; MXNet's float32 ½x(1 + erf(x/√2)) cancels for x < 0: 60 ulp
 *   at x = -2, 700 at -3, 0 below -5.6); its gradient within 8 ulp of Φ(x) + |x φ(x)|;
 * - softrelu float32 within 3 ulp, its gradients within 3 ulp;
 * - sin, cos, log, pow, hypot float32 within 0.51 ulp (double arithmetic, one rounding);
 *   sin/cos for |x| > 65536, and the special values of log and pow (x <= 0, inf, NaN), go
 *   through libm in double in a second pass over the few such elements.
 */
#ifndef MXCY_VECMATH_ELEM_H
#define MXCY_VECMATH_ELEM_H

#include "_vecmath.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math", "no-math-errno")
#endif

/* ------------------------------------------------------------------ float32 exp pieces
 * 2^sk exp(hi + lo) with hi reduced on its own: hi - k·ln2_hi is exact when hi is a
 * multiple of 2^-21 (x²/2 of a 12-bit x >= 2), so a large hi keeps its digits;
 * k + sk in [-252, 254]. */
MXCY_INLINE float mxcy_expf_split(float hi, float lo, uint32_t sk)
{
    const float magic = 0x1.8p23f;
    float t = (hi + lo) * 0x1.715476p+0f + magic;
    uint32_t kb = mxcy_f32_bits(t);
    float kf = t - magic;
    float r = (hi - kf * 0x1.62e4p-1f) + (lo - kf * 0x1.7f7d1cp-20f);
    float q = 0x1.6a4cc2p-10f;
    q = q * r + 0x1.124334p-7f;
    q = q * r + 0x1.5558c2p-5f;
    q = q * r + 0x1.555486p-3f;
    q = q * r + 0x1.fffffcp-2f;
    float p = q * (r * r) + r;
    uint32_t u = kb + 254u + sk;
    uint32_t h = u >> 1;
    float s1 = mxcy_f32_from_bits(h << 23);
    float s2 = mxcy_f32_from_bits((u - h) << 23);
    return (p * s1 + s1) * s2;
}

/* expm1(x) for x in [-80, 0] (NaN passes): 2^k p + (2^k - 1), p = expm1(r) */
MXCY_INLINE float mxcy_expm1f_neg(float x)
{
    const float magic = 0x1.8p23f;
    x = x < -80.0f ? -80.0f : x;
    float t = x * 0x1.715476p+0f + magic;
    uint32_t kb = mxcy_f32_bits(t);
    float kf = t - magic;
    float r = x - kf * 0x1.62e4p-1f;
    r = r - kf * 0x1.7f7d1cp-20f;
    float q = 0x1.6a4cc2p-10f;
    q = q * r + 0x1.124334p-7f;
    q = q * r + 0x1.5558c2p-5f;
    q = q * r + 0x1.555486p-3f;
    q = q * r + 0x1.fffffcp-2f;
    float p = q * (r * r) + r;
    float s = mxcy_f32_from_bits((kb + 127u) << 23);    /* 2^k, k >= -116: normal */
    return p * s + (s - 1.0f);
}

/* ------------------------------------------------------------------ float32 softrelu
 * log1p(e) for e in [0, 1] as in mxcy_log1p_unit, in float32 to s^8 (|s| <= 0.1716) */
MXCY_INLINE float mxcy_log1pf_unit(float e)
{
    int hi = e > 0x1.a8279ap-2f;
    float s = (hi ? e - 1.0f : e) / (hi ? e + 3.0f : e + 2.0f);
    float w = s * s;
    float q = 1.0f / 9.0f;
    q = q * w + 1.0f / 7.0f;
    q = q * w + 1.0f / 5.0f;
    q = q * w + 1.0f / 3.0f;
    float s2 = 2.0f * s;
    float r = s2 * (w * q) + s2;
    return hi ? r + 0x1.62e430p-1f : r;
}

#define MXCY_SOFTRELU_F32(v) \
    (((v) > 0.0f ? (v) : 0.0f) + mxcy_log1pf_unit(MXCY_EXPF_B(-fabsf(v))))

/* sigmoid(x) = 1 / (1 + e) or e / (1 + e), e = exp(-|x|) */
MXCY_INLINE float mxcy_sigmoidf_e(float x, float e)
{
    float d = 1.0f / (1.0f + e);
    return x >= 0.0f ? d : e * d;
}

/* ------------------------------------------------------------------ float32 gelu
 * Φ(x) = 1 - h (x > 0) or h, h = erfc(a) / 2, a = |x|/√2, erfc(a) = t exp(-a² + g(t)),
 * t = 1 / (1 + a/2), g of degree 9 in 2t - 1. Beyond |x| = 14.5 the tail is 0 (Φ(-14.5)
 * is below half the least float32 subnormal). a² = x²/2 = xh²/2 + (x - xh)(x + xh)/2 with xh the
 * top 12 bits of x, so xh²/2 is exact and goes to mxcy_expf_split whole. With `pdf`,
 * *ph = exp(-x²/2). */
#define MXCY_ERFCX_F9 { \
    -0x1.57f564p-1f, 0x1.58649ep-1f, 0x1.83d324p-5f, -0x1.800cb4p-5f, \
    -0x1.43067cp-7f, 0x1.1dcfe6p-7f, 0x1.c27ecp-10f, -0x1.0c7112p-9f, \
    -0x1.30b6c8p-13f, 0x1.3bc8ep-12f, \
}

/* h = 2^24 (1 - Φ(|x|)) and, with `pdf`, *ph = 2^24 exp(-x²/2): scaled by 2^24 so that
 * neither is rounded as a subnormal before the caller's last multiply */
MXCY_INLINE float mxcy_norm_tail_scaled(float x, int pdf, float* ph)
{
    static const float c[10] = MXCY_ERFCX_F9;
    float ax = fabsf(x);
    ax = ax > 14.5f ? 14.5f : ax;
    float a = ax * 0x1.6a09e6p-1f;
    float t = 1.0f / (1.0f + 0.5f * a);
    float u = 2.0f * t - 1.0f;
    float g = c[9];
    MXCY_PRAGMA(GCC unroll 10)
    for (int k = 8; k >= 0; k--)
        g = g * u + c[k];
    float xh = mxcy_f32_from_bits(mxcy_f32_bits(ax) & 0xfffff000u);
    float a2 = 0.5f * (xh * xh);
    float a2l = 0.5f * ((ax - xh) * (ax + xh));
    /* beyond the cap both are 0, even scaled (so -inf · h is NaN, as MXNet's gelu(-inf)) */
    int over = fabsf(x) > 14.5f;
    if (pdf) {
        float q = mxcy_expf_split(-a2, -a2l, 24u);
        *ph = over ? 0.0f : q;
    }
    float h = 0.5f * (t * mxcy_expf_split(-a2, g - a2l, 24u));
    return over ? 0.0f : h;
}

/* x Φ(x): x (1 - h) for x > 0, else x h */
MXCY_INLINE float mxcy_geluf(float x)
{
    float unused = 0.0f;
    float h = mxcy_norm_tail_scaled(x, 0, &unused);
    return x > 0.0f ? x * (1.0f - h * 0x1p-24f) : (x * h) * 0x1p-24f;
}

/* Φ(x) + x φ(x), φ(x) = exp(-x²/2) / √(2π) */
MXCY_INLINE float mxcy_geluf_dx(float x)
{
    float ph = 0.0f;
    float h = mxcy_norm_tail_scaled(x, 1, &ph);
    float xp = x * (ph * 0x1.988454p-2f);
    return x > 0.0f ? 1.0f + (xp - h) * 0x1p-24f : (h + xp) * 0x1p-24f;
}

/* ------------------------------------------------------------------ sin and cos
 * float32 in double: x = n π/2 + r, |r| <= π/4 (π/2 in two parts: the first of 33 bits, so
 * n·hi and x - n·hi are exact for |x| <= 65536), then Taylor series to r^11 / r^12
 * (truncation < 1e-11) and the quadrant's sign and swap. */
MXCY_INLINE double mxcy_sin_quadrant(double x, uint64_t shift)
{
    const double magic = 0x1.8p52;
    double t = x * 0x1.45f306dc9c883p-1 + magic;
    uint64_t q = (mxcy_f64_bits(t) + shift) & 3u;
    double n = t - magic;
    double r = x - n * 0x1.921fb544p0;
    r = r - n * 0x1.0b4611a626331p-34;
    double w = r * r;
    double s = -1.0 / 39916800.0;
    s = s * w + 1.0 / 362880.0;
    s = s * w - 1.0 / 5040.0;
    s = s * w + 1.0 / 120.0;
    s = s * w - 1.0 / 6.0;
    s = r * (1.0 + w * s);                        /* keeps the sign of r = -0 */
    double c = 1.0 / 479001600.0;
    c = c * w - 1.0 / 3628800.0;
    c = c * w + 1.0 / 40320.0;
    c = c * w - 1.0 / 720.0;
    c = c * w + 1.0 / 24.0;
    c = c * w - 0.5;
    c = 1.0 + w * c;
    double v = (q & 1u) ? c : s;
    return (q & 2u) ? -v : v;
}

/* ------------------------------------------------------------------ log
 * log(x) of a positive normal or subnormal float32, in double: x = 2^e m, m in [√½, √2),
 * log m = 2 atanh(s), s = (m - 1)/(m + 1), |s| <= 0.1716, to s^17 (< 1e-14). Zero,
 * negatives, inf and NaN give garbage here: the loops fix them with libm. */
MXCY_INLINE double mxcy_log_f32arg(float x)
{
    uint32_t ix = mxcy_f32_bits(x);
    int sub = ix < 0x00800000u;
    ix = mxcy_f32_bits(sub ? x * 0x1p23f : x);
    uint32_t tmp = ix - 0x3f3504f3u;
    int32_t e = (int32_t)tmp >> 23;
    double m = (double)mxcy_f32_from_bits((tmp & 0x007fffffu) + 0x3f3504f3u);
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double w = s * s;
    double q = 1.0 / 17.0;
    q = q * w + 1.0 / 15.0;
    q = q * w + 1.0 / 13.0;
    q = q * w + 1.0 / 11.0;
    q = q * w + 1.0 / 9.0;
    q = q * w + 1.0 / 7.0;
    q = q * w + 1.0 / 5.0;
    q = q * w + 1.0 / 3.0;
    double s2 = 2.0 * s;
    double ed = (double)(e - (sub ? 23 : 0));
    return ed * 0x1.62e42fefa39efp-1 + (s2 * (w * q) + s2);
}

/* x^y for x > 0 finite, y finite: exp(y log x) in double (the exp to 2^-31, enough
 * before a float32 rounding; |z| <= 200 keeps 2^k normal) */
MXCY_INLINE float mxcy_powf_pos(float x, float y)
{
    double z = (double)y * mxcy_log_f32arg(x), s;
    z = z > 200.0 ? 200.0 : z;
    z = z < -200.0 ? -200.0 : z;
    double p = mxcy_exp_reduce(z, &s, 1);
    return (float)(p * s + s);
}

MXCY_INLINE int mxcy_pow_plain(float x, float y)
{
    return x > 0.0f && x < INFINITY && fabsf(y) < INFINITY;
}

/* ------------------------------------------------------------------ loops
 * gelu and softrelu in float32 are mostly multiply-adds: on a CPU with AVX2 and FMA they run
 * a version compiled for both (30% faster than target_clones' AVX2 one, which may not
 * assume FMA), picked once at run time; elsewhere the target_clones version. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(MXCY_NO_CLONES)
#define MXCY_FMA_PATH 1
#define MXCY_FMA_ATTR __attribute__((target("avx2,fma")))
static int mxcy_has_avx2_fma(void)
{
    static int ok = -1;                /* a benign race: every thread stores the same value */
    if (ok < 0) {
        __builtin_cpu_init();
        ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return ok;
}
#else
#define MXCY_FMA_PATH 0
#define MXCY_FMA_ATTR
static int mxcy_has_avx2_fma(void) { return 0; }
#endif

#define MXCY_UNARY_F32(NAME, ATTR, EXPR)                                             \
    ATTR static void NAME(const float* x, float* y, int64_t n)                       \
    {                                                                                \
        MXCY_EXPF_BOUNDS;                                                            \
        MXCY_SIMD                                                                    \
        for (int64_t i = 0; i < n; i++) {                                            \
            float v = x[i];                                                          \
            y[i] = (EXPR);                                                           \
        }                                                                            \
    }

/* NAME: NAME##_fma where the CPU has AVX2 and FMA, else NAME##_any */
#define MXCY_UNARY_F32_DISPATCH(NAME, EXPR)                                          \
    MXCY_UNARY_F32(NAME##_fma, MXCY_FMA_ATTR, EXPR)                                  \
    MXCY_UNARY_F32(NAME##_any, MXCY_VEC, EXPR)                                       \
    static void NAME(const float* x, float* y, int64_t n)                            \
    {                                                                                \
        if (MXCY_FMA_PATH && mxcy_has_avx2_fma())                                    \
            NAME##_fma(x, y, n);                                                     \
        else                                                                         \
            NAME##_any(x, y, n);                                                     \
    }

MXCY_UNARY_F32_DISPATCH(mxcy_vgelu32_f32, mxcy_geluf(v))
MXCY_UNARY_F32_DISPATCH(mxcy_vsoftrelu32_f32, MXCY_SOFTRELU_F32(v))
MXCY_UNARY_LOOP(mxcy_vsqrt_f32, float, __builtin_sqrtf(v))
MXCY_UNARY_LOOP(mxcy_vsqrt_f64, double, __builtin_sqrt(v))

#define MXCY_SIMD_ANY MXCY_PRAGMA(omp simd reduction(| : any))
#define MXCY_TRIG_FIX(v) (!(fabsf(v) <= 65536.0f))
#define MXCY_LOG_FIX(v) (!((v) > 0.0f && (v) < INFINITY))
#define MXCY_SIN_F32(v) ((float)mxcy_sin_quadrant((double)(MXCY_TRIG_FIX(v) ? 0.0f : (v)), 0))
#define MXCY_COS_F32(v) ((float)mxcy_sin_quadrant((double)(MXCY_TRIG_FIX(v) ? 0.0f : (v)), 1))
#define MXCY_LOG_F32(v) ((float)mxcy_log_f32arg(MXCY_LOG_FIX(v) ? 1.0f : (v)))

/* y := f(x) by the vector expression, then libm in double for the inputs FIX(v) names
 * (rare: a second pass only over a block that has one). Blocks of 256 elements keep their
 * inputs in `keep`, so y may be x (in place). */
#define MXCY_UNARY_FIXED_LOOP(NAME, EXPR, FIX, LIBM)                                 \
    MXCY_VEC static void NAME(const float* x, float* y, int64_t n)                   \
    {                                                                                \
        float keep[256];                                                             \
        for (int64_t b = 0; b < n; b += 256) {                                       \
            int64_t m = n - b < 256 ? n - b : 256;                                   \
            int any = 0;                                                             \
            MXCY_SIMD_ANY                                                            \
            for (int64_t i = 0; i < m; i++) {                                        \
                float v = x[b + i];                                                  \
                keep[i] = v;                                                         \
                any |= (FIX);                                                        \
                y[b + i] = (EXPR);                                                   \
            }                                                                        \
            if (!any)                                                                \
                continue;                                                            \
            for (int64_t i = 0; i < m; i++) {                                        \
                float v = keep[i];                                                   \
                if (FIX)                                                             \
                    y[b + i] = (float)LIBM((double)v);                               \
            }                                                                        \
        }                                                                            \
    }

MXCY_UNARY_FIXED_LOOP(mxcy_vsin_f32, MXCY_SIN_F32(v), MXCY_TRIG_FIX(v), sin)
MXCY_UNARY_FIXED_LOOP(mxcy_vcos_f32, MXCY_COS_F32(v), MXCY_TRIG_FIX(v), cos)
MXCY_UNARY_FIXED_LOOP(mxcy_vlog_f32, MXCY_LOG_F32(v), MXCY_LOG_FIX(v), log)

/* out := x^y or hypot(x, y), y an array (ys = 1) or one value (ys = 0); out may be x or y */
#define MXCY_BINARY_F32_LOOP(NAME, EXPR, FIX, LIBM)                                  \
    MXCY_VEC static void NAME(const float* x, const float* y, int64_t ys, float* out,  \
                              int64_t n)                                             \
    {                                                                                \
        float kx[256], ky[256];                                                      \
        for (int64_t b = 0; b < n; b += 256) {                                       \
            int64_t m = n - b < 256 ? n - b : 256;                                   \
            int any = 0;                                                             \
            if (ys) {                                                                \
                MXCY_SIMD_ANY                                                        \
                for (int64_t i = 0; i < m; i++) {                                    \
                    float a = x[b + i], c = y[b + i];                                \
                    kx[i] = a;                                                       \
                    ky[i] = c;                                                       \
                    any |= (FIX);                                                    \
                    out[b + i] = (EXPR);                                             \
                }                                                                    \
            } else {                                                                 \
                const float c = y[0];                                                \
                MXCY_SIMD_ANY                                                        \
                for (int64_t i = 0; i < m; i++) {                                    \
                    float a = x[b + i];                                              \
                    kx[i] = a;                                                       \
                    ky[i] = c;                                                       \
                    any |= (FIX);                                                    \
                    out[b + i] = (EXPR);                                             \
                }                                                                    \
            }                                                                        \
            if (!any)                                                                \
                continue;                                                            \
            for (int64_t i = 0; i < m; i++) {                                        \
                float a = kx[i], c = ky[i];                                          \
                if (FIX)                                                             \
                    out[b + i] = (float)LIBM((double)a, (double)c);                  \
            }                                                                        \
        }                                                                            \
    }

#define MXCY_POW_FIX (!mxcy_pow_plain(a, c))
#define MXCY_POW_F32 mxcy_powf_pos(MXCY_POW_FIX ? 1.0f : a, MXCY_POW_FIX ? 0.0f : c)
/* sqrt(x² + y²) in double is exact before its one rounding; an infinite operand gives inf
 * even beside a NaN (C's hypot) */
#define MXCY_HYPOT_FIX 0
#define MXCY_HYPOT_F32                                                               \
    ((fabsf(a) == INFINITY || fabsf(c) == INFINITY)                                  \
         ? INFINITY                                                                  \
         : (float)__builtin_sqrt((double)a * a + (double)c * c))

MXCY_BINARY_F32_LOOP(mxcy_vpow_f32, MXCY_POW_F32, MXCY_POW_FIX, pow)
MXCY_BINARY_F32_LOOP(mxcy_vhypot_f32, MXCY_HYPOT_F32, MXCY_HYPOT_FIX, hypot)

/* ------------------------------------------------------------------ gradient loops
 * dx (= or +=) dy · F(v) with F in float32 (gelu, softrelu) */
#define MXCY_GRAD_F32_ATTR(NAME, ATTR, F)                                            \
    ATTR static void NAME(const float* x, const float* dy, float* dx, int64_t n,      \
                          int add)                                                   \
    {                                                                                \
        MXCY_EXPF_BOUNDS;                                                            \
        if (add) {                                                                   \
            MXCY_SIMD                                                                \
            for (int64_t i = 0; i < n; i++) {                                        \
                float v = x[i];                                                      \
                dx[i] = dy[i] * (F) + dx[i];                                         \
            }                                                                        \
        } else {                                                                     \
            MXCY_SIMD                                                                \
            for (int64_t i = 0; i < n; i++) {                                        \
                float v = x[i];                                                      \
                dx[i] = dy[i] * (F);                                                 \
            }                                                                        \
        }                                                                            \
    }

/* NAME: NAME##_fma where the CPU has AVX2 and FMA, else NAME##_any */
#define MXCY_GRAD_F32_LOOP(NAME, F)                                                  \
    MXCY_GRAD_F32_ATTR(NAME##_fma, MXCY_FMA_ATTR, F)                                 \
    MXCY_GRAD_F32_ATTR(NAME##_any, MXCY_VEC, F)                                      \
    static void NAME(const float* x, const float* dy, float* dx, int64_t n, int add) \
    {                                                                                \
        if (MXCY_FMA_PATH && mxcy_has_avx2_fma())                                    \
            NAME##_fma(x, dy, dx, n, add);                                           \
        else                                                                         \
            NAME##_any(x, dy, dx, n, add);                                           \
    }

MXCY_GRAD_F32_LOOP(mxcy_vgelu32_grad_f32, mxcy_geluf_dx(v))
MXCY_GRAD_F32_LOOP(mxcy_vsoftrelu32_grad_x_f32,
                   mxcy_sigmoidf_e(v, MXCY_EXPF_B(-fabsf(v))))
MXCY_GRAD_F32_LOOP(mxcy_vsoftrelu32_grad_y_f32,
                   -mxcy_expm1f_neg(-(v > 80.0f ? 80.0f : v)))

/* dx (= or +=) dy · f'(v) for square (v = x: 2x), sqrt (v = y: 0.5 / y), log (v = x: 1 / x)
 * and exp (v = y: y), in double before one rounding, as the generic loop did */
#define MXCY_GRAD_SIMPLE(NAME, T, F)                                                 \
    MXCY_VEC static void NAME(const T* v, const T* dy, T* dx, int64_t n, int add)    \
    {                                                                                \
        if (add) {                                                                   \
            MXCY_SIMD                                                                \
            for (int64_t i = 0; i < n; i++) {                                        \
                double w = (double)v[i];                                             \
                dx[i] = (T)(dy[i] * (F)) + dx[i];                                    \
            }                                                                        \
        } else {                                                                     \
            MXCY_SIMD                                                                \
            for (int64_t i = 0; i < n; i++) {                                        \
                double w = (double)v[i];                                             \
                dx[i] = (T)(dy[i] * (F));                                            \
            }                                                                        \
        }                                                                            \
    }

MXCY_GRAD_SIMPLE(mxcy_vgrad_square_f32, float, 2.0 * w)
MXCY_GRAD_SIMPLE(mxcy_vgrad_square_f64, double, 2.0 * w)
MXCY_GRAD_SIMPLE(mxcy_vgrad_sqrt_f32, float, 0.5 / w)
MXCY_GRAD_SIMPLE(mxcy_vgrad_sqrt_f64, double, 0.5 / w)
MXCY_GRAD_SIMPLE(mxcy_vgrad_log_f32, float, 1.0 / w)
MXCY_GRAD_SIMPLE(mxcy_vgrad_log_f64, double, 1.0 / w)
MXCY_GRAD_SIMPLE(mxcy_vgrad_exp_f32, float, w)
MXCY_GRAD_SIMPLE(mxcy_vgrad_exp_f64, double, w)

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#endif /* MXCY_VECMATH_ELEM_H */
