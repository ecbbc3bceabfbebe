# cython: language_level=3
"""C kernels on NumPy arrays for operators otherwise computed by NumPy inside one engine op
(their callers in mxcy/operator keep NumPy for what these do not take, and say so):

- cast_half: float32 <-> float16 by F16C (_npkernels.h), bit for bit NumPy's astype;
- uniform_pdf_select: out[r, j] = inside[r] where low[r] <= sample[r, j] <= high[r], else
  `outside` (random_pdf_uniform's forward: one density per parameter pair);
- hawkes_loglike: the Hawkes log likelihood and end state of each sequence
  (contrib.hawkesll's forward; its gradient stays NumPy's, vectorised over sequences).

The loops release the GIL. Each function returns False, having done nothing, for input it
does not take (dtype, layout, no F16C on this CPU).
"""
cimport numpy as cnp
from libc.math cimport exp, log
from libc.stdint cimport int64_t, uint16_t
from libc.stdlib cimport free, malloc

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


def hawkes_loglike(const double[:, ::1] lda, const double[::1] alpha,
                   const double[::1] beta, const double[:, ::1] state,
                   const double[:, ::1] lags, const int64_t[:, ::1] marks,
                   const int64_t[::1] length, const double[::1] max_time,
                   double[::1] ll, double[:, ::1] out_state):
    """ll[i], out_state[i] of sequence i: per event (mark m at time t, d since m's last)
    log(λ_m + α_m β_m s_m e^(−β_m d)) less the compensator λ_m d + α_m s_m (1 − e^(−β_m d)),
    then s_m := 1 + s_m e^(−β_m d); at max_time the compensators of every mark, and the
    state decayed to it. The same sums, in the same order, as hawkes_ops.hawkes."""
    cdef Py_ssize_t n = lda.shape[0], k = lda.shape[1], i, j, m
    cdef double t, d, ed, rate, acc
    cdef double* s = <double*>malloc(2 * k * sizeof(double) + 1)
    cdef double* last
    if s == NULL:
        raise MemoryError("hawkes_loglike")
    last = s + k
    with nogil:
        for i in range(n):
            for m in range(k):
                s[m] = state[i, m]
                last[m] = 0
            t = 0
            acc = 0
            for j in range(length[i]):
                m = marks[i, j]
                t = t + lags[i, j]
                d = t - last[m]
                ed = exp(-beta[m] * d)
                rate = lda[i, m] + alpha[m] * beta[m] * s[m] * ed
                acc = acc + log(rate)
                acc = acc - (lda[i, m] * d + alpha[m] * s[m] * (1 - ed))
                s[m] = 1 + s[m] * ed
                last[m] = t
            for m in range(k):
                d = max_time[i] - last[m]
                ed = exp(-beta[m] * d)
                acc = acc - (lda[i, m] * d + alpha[m] * s[m] * (1 - ed))
                out_state[i, m] = s[m] * ed
            ll[i] = acc
    free(s)
