/* The C loops of mxcy/_npkernels.pyx.
 *
 * float32 <-> float16 conversion by the F16C instructions (8 lanes, round to nearest even:
 * bit for bit NumPy's astype, NaN, inf and subnormals included), 35x NumPy's software
 * conversion. mxcy_f16c_available() says whether this CPU has them (x86-64 GCC/clang
 * builds only; elsewhere 0, and the callers keep NumPy).
 *
 * A select per row, y[r, j] = lo[r] <= x[r, j] <= hi[r] ? v[r] : outside, branch-free
 * (the module is built without trapping math, so the compares vectorise as masks). */
#ifndef MXCY_NPKERNELS_H
#define MXCY_NPKERNELS_H

#include <stdint.h>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define MXCY_HAVE_F16C_CODE 1

static int mxcy_f16c_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
}

__attribute__((target("avx,f16c"))) static void mxcy_f32_to_f16(const float* x, uint16_t* y,
                                                               int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i*)(y + i), h);
    }
    for (; i < n; i++)
        y[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

__attribute__((target("avx,f16c"))) static void mxcy_f16_to_f32(const uint16_t* x, float* y,
                                                               int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(x + i))));
    for (; i < n; i++)
        y[i] = _cvtsh_ss(x[i]);
}
#else
#define MXCY_HAVE_F16C_CODE 0
static int mxcy_f16c_available(void) { return 0; }
static void mxcy_f32_to_f16(const float* x, uint16_t* y, int64_t n) { (void)x; (void)y; (void)n; }
static void mxcy_f16_to_f32(const uint16_t* x, float* y, int64_t n) { (void)x; (void)y; (void)n; }
#endif

#define MXCY_SELECT_ROWS(NAME, T)                                                    \
    static void NAME(const T* x, const T* lo, const T* hi, const T* in, T outside, T* y,  \
                     int64_t rows, int64_t inner)                                      \
    {                                                                                  \
        for (int64_t r = 0; r < rows; r++) {                                           \
            const T a = lo[r], b = hi[r], v = in[r];                                   \
            const T* xr = x + r * inner;                                               \
            T* yr = y + r * inner;                                                     \
            _Pragma("omp simd") for (int64_t j = 0; j < inner; j++)                    \
            {                                                                          \
                const T s = xr[j];                                                     \
                yr[j] = ((s >= a) & (s <= b)) ? v : outside;                           \
            }                                                                          \
        }                                                                              \
    }

MXCY_SELECT_ROWS(mxcy_select_rows_f32, float)
MXCY_SELECT_ROWS(mxcy_select_rows_f64, double)

#endif /* MXCY_NPKERNELS_H */
