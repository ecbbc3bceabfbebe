"""Build mxcy: one Extension per .pyx in MOD_NAMES, one set of compiler directives.

MXCY_DEBUG_CYTHON=1 at build time turns bounds checks and wraparound back on.
"""
import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

MOD_NAMES = [
    "mxcy._engine",
    "mxcy._ops",
    "mxcy._ndarray",
    "mxcy._conv",
    "mxcy._rnn",
    "mxcy._fused",
    "mxcy._seqattn",
    "mxcy._sampling",
    "mxcy._lrn",
    "mxcy._npkernels",
    "mxcy._detect",
    "mxcy._gemv",
]

DEBUG = os.environ.get("MXCY_DEBUG_CYTHON", "") not in ("", "0")

# Bounds checks and wraparound are off for the kernels (_ops: pointer loops whose inputs
# are validated before the push); modules with Python-level code (_engine, _ndarray)
# switch them back on in their first line, because there they guard list indexing.
COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "cdivision": True,
    "initializedcheck": DEBUG,
    "embedsignature": True,
}


# Per-module compiler flags. _rnn: its float32 sigmoid/tanh loops (mxcy/_rnn_math.h) clamp
# their argument before an int conversion; with trapping math GCC keeps that as a branch and
# leaves the loop scalar (so would _npkernels' selects, and the compare-and-select loops of
# _detect's NMS and IoU, _detect_nms.h); _lrn: its square roots vectorise only without
# errno. mxcy never reads floating-point exception flags or errno.
EXTRA_COMPILE_ARGS = {"mxcy._rnn": ["-fno-trapping-math"],
                      "mxcy._lrn": ["-fno-trapping-math", "-fno-math-errno"],
                      "mxcy._npkernels": ["-fno-trapping-math"],
                      "mxcy._detect": ["-fno-trapping-math"]}

# C headers a module includes (a change to one rebuilds the module)
HEADERS = {"mxcy._ops": ["mxcy/_vecmath.h", "mxcy/_vecmath_elem.h", "mxcy/_simd.h"],
           "mxcy._conv": ["mxcy/_gemm_packed.h", "mxcy/_pool2x2.h", "mxcy/_isa.h",
                          "mxcy/_conv_dw.h", "mxcy/_conv_dw_impl.h", "mxcy/_winograd.h",
                          "mxcy/_simd.h", "mxcy/_conv_direct.h", "mxcy/_pool_rows.h"],
           "mxcy._rnn": ["mxcy/_gemm_packed.h", "mxcy/_isa.h"],
           "mxcy._fused": ["mxcy/_conv.pxd"],
           "mxcy._sampling": ["mxcy/_sampling_deform.pxi"],
           "mxcy._npkernels": ["mxcy/_npkernels.h"],
           "mxcy._lrn": ["mxcy/_lrn.h", "mxcy/_simd.h"],
           "mxcy._detect": ["mxcy/_detect_nms.h"],
           "mxcy._gemv": ["mxcy/_gemv.h", "mxcy/_isa.h"]}


def make_extension(name):
    # -fopenmp-simd: honour `#pragma omp simd` in the vector loops of _vecmath.h (the pragmas
    # only; no OpenMP runtime). Portability: no -march; _vecmath.h picks AVX2/AVX-512 at
    # run time with target_clones.
    return Extension(
        name,
        [name.replace(".", "/") + ".pyx"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        depends=HEADERS.get(name, []),
        extra_compile_args=["-O3", "-fno-strict-aliasing", "-fopenmp-simd"]
        + EXTRA_COMPILE_ARGS.get(name, [])
        + (["-g", "-O0"] if DEBUG else []),
    )


setup(
    ext_modules=cythonize(
        [make_extension(name) for name in MOD_NAMES],
        compiler_directives=COMPILER_DIRECTIVES,
        nthreads=int(os.environ.get("MXCY_BUILD_JOBS", "2")),
    ),
)
