/* The SIMD build macros shared by the C kernel headers (_vecmath.h, _winograd.h).
 *
 * MXCY_VEC compiles a function for AVX-512, AVX2 and baseline x86-64 and picks one at load
 * time (GCC target_clones), so the wheel stays portable without -march; MXCY_SIMD marks a
 * loop `omp simd` (built with -fopenmp-simd: the pragmas only, no OpenMP runtime).
 */
#ifndef MXCY_SIMD_H
#define MXCY_SIMD_H

/* target_clones dispatches through an IFUNC: GCC on x86-64 glibc (musl has no IFUNC) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__) && \
    !defined(MXCY_NO_CLONES)
#define MXCY_VEC __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MXCY_VEC
#endif
#define MXCY_INLINE static inline __attribute__((always_inline))
#define MXCY_PRAGMA(x) _Pragma(#x)
#define MXCY_SIMD MXCY_PRAGMA(omp simd)

#endif
