# cython: language_level=3
"""C kernels on NumPy arrays for operators otherwise computed by NumPy inside one engine op
(their callers in mxcy/operator keep NumPy for what these do not take, and say so):

- cast_half: float32 <-> float16 by F16C (_npkernels.h), bit for bit NumPy's astype;
- uniform_pdf_select: out[r, j] = inside[r] where low[r] <= sample[r, j] <= high[r], else
  `outside` (random_pdf_uniform's forward: one density per parameter pair).

The loops release the GIL. Each function returns False, having done nothing, for input it
does not take (dtype, layout, no F16C on this CPU).
"""
cimport numpy as cnp
from libc.stdint cimport int64_t, uint16_t

import numpy as np

cnp.import_array()

cdef extern from "_npkernels.h" nogil:
    int mxcy_f16c_available()
    void mxcy_f32_to_f16(const float* x, uint16_t* y, int64_t n)
    void mxcy_f16_to_f32(const uint16_t* x, float* y, int64_t n)
    void mxcy_select_rows_f32(const float* x, const float* lo, const float* hi,
                              const float* inside, float outside, float* y, int64_t rows,
                              int64_t inner)
    void mxcy_select_rows_f64(const double* x, const double* lo, const double* hi,
                              const double* inside, double outside, double* y, int64_t rows,
                              int64_t inner)

HAS_F16C = bool(mxcy_f16c_available())

cdef inline char* data(arr):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>arr)


def cast_half(src, dst):
    """dst[...] = src for float32 -> float16 or float16 -> float32, both C-contiguous NumPy
    arrays of one shape; False (nothing done) otherwise or without F16C."""
    cdef int64_t n = src.size
    cdef char* s
    cdef char* d
    cdef bint to_half
    if (not HAS_F16C or src.shape != dst.shape or not src.flags.c_contiguous
            or not dst.flags.c_contiguous or np.shares_memory(src, dst)):
        return False
    if src.dtype == np.float32 and dst.dtype == np.float16:
        to_half = True
    elif src.dtype == np.float16 and dst.dtype == np.float32:
        to_half = False
    else:
        return False
    s, d = data(src), data(dst)
    with nogil:
        if to_half:
            mxcy_f32_to_f16(<const float*>s, <uint16_t*>d, n)
        else:
            mxcy_f16_to_f32(<const uint16_t*>s, <float*>d, n)
    return True


def uniform_pdf_select(sample, low, high, inside, double outside, out):
    """out := inside[r] where low[r] <= sample[r, ...] <= high[r], else outside; sample and
    out C-contiguous of one float32/float64 dtype, low/high/inside that dtype with one
    value per leading block of sample. False (nothing done) otherwise."""
    dt = sample.dtype
    if (dt not in (np.float32, np.float64) or out.dtype != dt or low.dtype != dt
            or high.dtype != dt or inside.dtype != dt or out.shape != sample.shape
            or not (sample.flags.c_contiguous and out.flags.c_contiguous
                    and low.flags.c_contiguous and high.flags.c_contiguous
                    and inside.flags.c_contiguous)
            or not (low.size == high.size == inside.size) or np.shares_memory(sample, out)):
        return False
    cdef int64_t rows = low.size
    if rows == 0 or sample.size == 0:
        return sample.size == 0
    if sample.size % rows:
        return False
    cdef int64_t inner = sample.size // rows
    cdef char* x = data(sample)
    cdef char* lo = data(low)
    cdef char* hi = data(high)
    cdef char* v = data(inside)
    cdef char* y = data(out)
    cdef bint f32 = dt == np.float32
    with nogil:
        if f32:
            mxcy_select_rows_f32(<float*>x, <float*>lo, <float*>hi, <float*>v,
                                 <float>outside, <float*>y, rows, inner)
        else:
            mxcy_select_rows_f64(<double*>x, <double*>lo, <double*>hi, <double*>v, outside,
                                 <double*>y, rows, inner)
    return True
