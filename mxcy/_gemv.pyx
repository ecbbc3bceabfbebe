# cython: language_level=3
"""FullyConnected at a small batch: y (req) x · wᵀ + b read as a few dot products per weight
row (mxcy/_gemv.h), the weight rows shared by both engine workers (issue 16).

At batch 1 the product is memory bound: BLAS's sgemm packs the weights before it reads
them for the one input row, so the weights cross memory twice and on one core. Here each
worker reads its half of the weight rows once. Up to 16 rows this also beat OpenBLAS's
sgemm in CPU time on every FullyConnected shape measured (AVX2 EPYC: 1000×512 at batch
16, 0.31 ms against 0.58 at batch 17; 4096×4096, 11.2 against 22.6). m ≤ MAX_ROWS input
rows, float32/float64,
contiguous arrays validated by the caller (mxcy/operator/nn.py). `fc_forward_np` is the
NumPy twin for the kernel tests.
"""
cimport numpy as cnp
from libc.stdint cimport int64_t
from libc.string cimport memset

from mxcy._engine cimport EVar, ERR_VALUE, push_kernel, run_parts
from mxcy._ndptr cimport nd_apart, nd_ptr, nd_var, nd_wflag
from mxcy._ops cimport DT_FLOAT32, DT_FLOAT64

import numpy as np

cnp.import_array()

cdef extern from "_gemv.h" nogil:
    enum:
        MXCY_GEMV_MAXM
    void mxcy_gemv_rows_f32(const float* x, const float* w, const float* bias, float* y,
                            int m, int64_t n, int64_t k, int64_t j0, int64_t j1, int add)
    void mxcy_gemv_rows_f64(const double* x, const double* w, const double* bias, double* y,
                            int m, int64_t n, int64_t k, int64_t j0, int64_t j1, int add)

MAX_ROWS = MXCY_GEMV_MAXM

cdef enum:
    SPLIT_WEIGHTS = 1 << 16     # weight elements from which the rows are shared (256 KB)
    NPARTS = 2                  # one part per core: more only adds claims


cdef struct GemvArgs:
    char* x
    char* w
    char* b             # NULL: no bias
    char* y
    int m
    int64_t n           # output features (weight rows)
    int64_t k           # input features
    int dtype
    int add


cdef void gemv_part(void* arg, int part, int nparts) noexcept nogil:
    """Weight rows [lo, hi) of the product; the bounds are multiples of 16 rows."""
    cdef GemvArgs* g = <GemvArgs*>arg
    cdef int64_t step = ((g.n + nparts - 1) // nparts + 15) & ~(<int64_t>15)
    cdef int64_t lo = min(g.n, part * step), hi = min(g.n, lo + step)
    if lo >= hi:
        return
    if g.dtype == DT_FLOAT32:
        mxcy_gemv_rows_f32(<float*>g.x, <float*>g.w, <float*>g.b, <float*>g.y, g.m, g.n,
                           g.k, lo, hi, g.add)
    else:
        mxcy_gemv_rows_f64(<double*>g.x, <double*>g.w, <double*>g.b, <double*>g.y, g.m,
                           g.n, g.k, lo, hi, g.add)


cdef int gemv_run(GemvArgs* g) noexcept nogil:
    if g.dtype != DT_FLOAT32 and g.dtype != DT_FLOAT64:
        return ERR_VALUE
    run_parts(gemv_part, g, NPARTS if g.n * g.k >= SPLIT_WEIGHTS and g.n >= 32 else 1)
    return 0


cdef int gemv_kernel(void* args, char* errmsg) noexcept nogil:
    """y (req) x · wᵀ + b for m ≤ MXCY_GEMV_MAXM rows of x."""
    return gemv_run(<GemvArgs*>args)


_DT = {np.dtype(np.float32): DT_FLOAT32, np.dtype(np.float64): DT_FLOAT64}
cdef bytes _B_FC = b"FullyConnected_gemv"


def fc_forward(x, w, b, y, int m, int64_t n, int64_t k, str req='write'):
    """Push y (req) x · wᵀ + b: x (m, k), w (n, k), b (n,) or None, y (m, n) NDArrays of one
    float dtype, m ≤ MAX_ROWS (checked by the caller)."""
    cdef GemvArgs g
    cdef EVar* reads[3]
    cdef EVar* writes[1]
    cdef int nr = 2
    if req == 'null':
        return
    if m < 1 or m > MXCY_GEMV_MAXM:
        raise ValueError(f"fc_forward: m must be in [1, {MXCY_GEMV_MAXM}], got {m}")
    memset(&g, 0, sizeof(g))
    g.dtype = _DT[np.dtype(x.dtype)]
    x, w, b = nd_apart(x, (y,)), nd_apart(w, (y,)), nd_apart(b, (y,))
    g.x, g.w, g.y = nd_ptr(x), nd_ptr(w), nd_ptr(y)
    reads[0], reads[1] = nd_var(x), nd_var(w)
    if b is not None:
        g.b = nd_ptr(b)
        reads[2] = nd_var(b)
        nr = 3
    g.m, g.n, g.k = m, n, k
    g.add = req == 'add'
    writes[0] = nd_var(y)
    push_kernel(gemv_kernel, &g, sizeof(g), reads, nr, writes, 1, 0, _B_FC,
                nd_wflag(y, 0))


# ---------------------------------------------------------------- NumPy twin (tests)
def fc_forward_np(x, w, b=None, y=None):
    """x · wᵀ + b (or y + x · wᵀ + b when y is given: req 'add') on contiguous float32 or
    float64 NumPy arrays, x (m, k) with m ≤ MAX_ROWS, w (n, k)."""
    cdef GemvArgs g
    x = np.ascontiguousarray(x)
    w = np.ascontiguousarray(w, dtype=x.dtype)
    if x.ndim != 2 or w.ndim != 2 or x.shape[1] != w.shape[1] or \
            not 1 <= x.shape[0] <= MXCY_GEMV_MAXM or x.dtype not in _DT:
        raise ValueError(f"fc_forward_np: x (m <= {MXCY_GEMV_MAXM}, k) and w (n, k) of "
                         f"float32/float64, got {x.shape} {x.dtype}, {w.shape}")
    memset(&g, 0, sizeof(g))
    g.add = y is not None
    y = np.zeros((x.shape[0], w.shape[0]), x.dtype) if y is None else \
        np.ascontiguousarray(y, dtype=x.dtype).copy()
    g.dtype = _DT[x.dtype]
    g.x, g.w, g.y = <char*>cnp.PyArray_DATA(x), <char*>cnp.PyArray_DATA(w), \
        <char*>cnp.PyArray_DATA(y)
    if b is not None:
        b = np.ascontiguousarray(b, dtype=x.dtype)
        g.b = <char*>cnp.PyArray_DATA(b)
    g.m, g.n, g.k = x.shape[0], w.shape[0], x.shape[1]
    gemv_run(&g)
    return y
