# cython: language_level=3
"""Local response normalisation across channels (LRN's forward, and the scale its NumPy
backward reads), on C-contiguous float32/float64 NumPy arrays of shape (N, C, ...):

    s[n, c, i] = knorm + alpha / nsize · Σ x[n, c', i]²,  |c' - c| <= nsize // 2, 0 <= c' < C
    y = x · s^-beta

One pass per channel row (the loops of _lrn.h, AVX2 or baseline picked at load): the
window's squares summed in the element type (as MXNet's float32 kernel), s^-beta by two
square roots for beta = 0.75 and one for 0.5 (LRN's usual values; within 2 ulp of pow), pow
otherwise. The callers (mxcy/operator/nn_extra.py) run these inside one engine op; the
loops release the GIL.
"""
cimport numpy as cnp
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free

import numpy as np

cnp.import_array()

ctypedef fused real_t:
    float
    double


cdef extern from "_lrn.h" nogil:
    void mxcy_lrn_row_f32(const float* x, const float* xr, float* s, float* y, int64_t hw,
                          int64_t lo, int64_t hi, float alpha_n, float knorm, float beta,
                          int scale_only)
    void mxcy_lrn_row_f64(const double* x, const double* xr, double* s, double* y,
                          int64_t hw, int64_t lo, int64_t hi, double alpha_n, double knorm,
                          double beta, int scale_only)


cdef void lrn_rows(const real_t* x, real_t* y, real_t* s, int64_t nb, int64_t c,
                   int64_t hw, int half, real_t alpha_n, real_t beta, real_t knorm,
                   bint scale_only) noexcept nogil:
    """y := x · s^-beta (scale_only: y := s), one channel row at a time by the loops of
    _lrn.h (s: hw elements of scratch; y must not overlap x)."""
    cdef int64_t n, ch, lo, hi
    cdef const real_t* xn
    cdef real_t* yr
    for n in range(nb):
        xn = x + n * c * hw
        for ch in range(c):
            lo = ch - half if ch > half else 0
            hi = ch + half if ch + half < c else c - 1
            yr = y + (n * c + ch) * hw
            if real_t is float:
                mxcy_lrn_row_f32(xn, xn + ch * hw, yr if scale_only else s, yr, hw, lo, hi,
                                 alpha_n, knorm, beta, scale_only)
            else:
                mxcy_lrn_row_f64(xn, xn + ch * hw, yr if scale_only else s, yr, hw, lo, hi,
                                 alpha_n, knorm, beta, scale_only)


def _check(name, x, out):
    if x.ndim < 2 or x.dtype not in (np.float32, np.float64) or not x.flags.c_contiguous:
        raise ValueError(f"{name}: a C-contiguous float32/float64 array of shape (N, C, ...) "
                         f"is needed, got {x.dtype} {x.shape}")
    if out.shape != x.shape or out.dtype != x.dtype or not out.flags.c_contiguous:
        raise ValueError(f"{name}: out must be C-contiguous {x.dtype} {x.shape}, got "
                         f"{out.dtype} {out.shape}")


def _run(name, x, out, int nsize, double alpha, double beta, double knorm, bint scale_only):
    _check(name, x, out)
    if nsize < 1:
        raise ValueError(f"{name}: nsize must be at least 1, got {nsize}")
    if np.shares_memory(x, out):
        tmp = np.empty_like(out)
        _run(name, x, tmp, nsize, alpha, beta, knorm, scale_only)
        out[...] = tmp
        return out
    cdef int64_t nb = x.shape[0], c = x.shape[1]
    cdef int64_t hw = x.size // (nb * c) if nb * c else 0
    cdef int half = nsize // 2
    cdef char* xp = <char*>cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef char* yp = <char*>cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef void* s
    cdef bint f32 = x.dtype == np.float32
    if x.size == 0:
        return out
    s = malloc(hw * x.itemsize)
    if s == NULL:
        raise MemoryError(f"{name}: no memory for a scratch row of {hw} elements")
    with nogil:
        if f32:
            lrn_rows(<float*>xp, <float*>yp, <float*>s, nb, c, hw, half,
                     <float>(alpha / nsize), <float>beta, <float>knorm, scale_only)
        else:
            lrn_rows(<double*>xp, <double*>yp, <double*>s, nb, c, hw, half, alpha / nsize,
                     beta, knorm, scale_only)
    free(s)
    return out


def lrn_forward(x, out, int nsize, double alpha, double beta, double knorm):
    """out := x · s^-beta (out may be x)."""
    return _run('LRN', x, out, nsize, alpha, beta, knorm, False)


def lrn_scale(x, int nsize, double alpha, double knorm):
    """s = knorm + alpha / nsize · (window sum of x² over the channels), a new array."""
    return _run('LRN', x, np.empty_like(x), nsize, alpha, 0.0, knorm, True)
