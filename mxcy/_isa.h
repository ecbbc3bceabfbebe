/* The widest SIMD kernels mxcy may pick at run time (_gemm_packed.h, _pool2x2.h).
 *
 * The CPU decides; MXCY_ISA_CAP=avx2 or MXCY_ISA_CAP=none lowers the cap, read once per
 * process, so every path can be run and tested on one machine (tests/kernels). The
 * target_clones loops of _vecmath.h are tested through MXCY_NO_CLONES builds instead.
 */
#ifndef MXCY_ISA_H
#define MXCY_ISA_H

#include <stdlib.h>
#include <string.h>

/* 2: AVX-512, 1: AVX2+FMA, 0: neither (plain C / BLAS) */
static int mxcy_isa(void) {
    static int isa = -1;
    if (isa < 0) {
        int cpu = 0, cap = 2;
        const char* env = getenv("MXCY_ISA_CAP");
#if defined(__GNUC__) && defined(__x86_64__)
        __builtin_cpu_init();
        cpu = __builtin_cpu_supports("avx512f") ? 2
            : (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? 1 : 0;
#endif
        if (env != NULL && strcmp(env, "avx2") == 0)
            cap = 1;
        else if (env != NULL && strcmp(env, "none") == 0)
            cap = 0;
        isa = cpu < cap ? cpu : cap;
    }
    return isa;
}

#endif
