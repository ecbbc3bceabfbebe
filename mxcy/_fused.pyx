# cython: language_level=3
"""Fused inference kernels for the executor's graph passes (mxcy/_graph_passes.py).

One engine op each, `noexcept nogil`:

- conv_act: y := clamp(conv(x, w) + b, lo, hi) -- the convolution is _conv's own kernel
  (`conv_fwd_kernel`, called through the `_conv.pxd` contract, not copied); the clamp
  (ReLU: lo = 0, hi = +inf; clip(0, 6): ReLU6) then runs in place on y inside the same op.
- add_act: y := clamp(a + b, lo, hi) elementwise, same shapes; y may be a or b (in place).

float32 and float64, contiguous arrays validated by the caller. Each has a `*_np` twin.
"""
cimport numpy as cnp
from libc.stdint cimport int64_t
from libc.string cimport memset

from mxcy._conv cimport ConvArgs, conv_fwd_kernel, geometry
from mxcy._engine cimport EVar, ERR_VALUE, push_kernel, run_parts
from mxcy._ndptr cimport nd_apart, nd_ptr, nd_var, nd_wflag
from mxcy._ops cimport DT_FLOAT32, DT_FLOAT64

import numpy as np

cnp.import_array()

ctypedef fused real_t:
    float
    double

cdef enum:
    SPLIT_ELEMS = 1 << 18       # an elementwise pass this long is shared with a worker
    MAX_PARTS = 4


cdef struct ActArgs:
    char* a
    char* b             # NULL: clamp a in place
    char* y
    int64_t n
    int dtype
    double lo
    double hi


cdef struct ConvActArgs:
    ConvArgs conv
    ActArgs act


cdef void clamp_add_typed(real_t* a, real_t* b, real_t* y, int64_t lo_i, int64_t hi_i,
                          real_t lo, real_t hi) noexcept nogil:
    """y := min(max(a + b, lo), hi) over [lo_i, hi_i) (b NULL: a alone)."""
    cdef int64_t i
    cdef real_t v
    if b == NULL:
        for i in range(lo_i, hi_i):
            v = a[i]
            v = v if v > lo else lo
            y[i] = v if v < hi else hi
    else:
        for i in range(lo_i, hi_i):
            v = a[i] + b[i]
            v = v if v > lo else lo
            y[i] = v if v < hi else hi


cdef void act_part(void* arg, int part, int nparts) noexcept nogil:
    cdef ActArgs* s = <ActArgs*>arg
    cdef int64_t lo_i = s.n * part // nparts, hi_i = s.n * (part + 1) // nparts
    if s.dtype == DT_FLOAT32:
        clamp_add_typed(<float*>s.a, <float*>s.b, <float*>s.y, lo_i, hi_i, <float>s.lo,
                        <float>s.hi)
    else:
        clamp_add_typed(<double*>s.a, <double*>s.b, <double*>s.y, lo_i, hi_i, s.lo, s.hi)


cdef int act_run(ActArgs* s) noexcept nogil:
    cdef int nparts = 1
    if s.dtype != DT_FLOAT32 and s.dtype != DT_FLOAT64:
        return ERR_VALUE
    if s.n >= SPLIT_ELEMS:
        nparts = <int>min(<int64_t>MAX_PARTS, s.n // (SPLIT_ELEMS // 2))
    run_parts(act_part, s, nparts)
    return 0


cdef int act_kernel(void* args, char* errmsg) noexcept nogil:
    """y := clamp(a + b, lo, hi)."""
    return act_run(<ActArgs*>args)


cdef int conv_act_kernel(void* args, char* errmsg) noexcept nogil:
    """y := clamp(conv(x, w) + b, lo, hi)."""
    cdef ConvActArgs* s = <ConvActArgs*>args
    cdef int rc
    s.conv.act, s.conv.act_lo, s.conv.act_hi = 1, s.act.lo, s.act.hi
    rc = conv_fwd_kernel(&s.conv, errmsg)
    if rc or s.conv.act == 2:       # 2: the convolution clamped in its epilogue
        return rc
    return act_run(&s.act)


_DT = {np.dtype(np.float32): DT_FLOAT32, np.dtype(np.float64): DT_FLOAT64}
cdef bytes _B_CONV_ACT = b"_fused_conv_act"
cdef bytes _B_ADD_ACT = b"_fused_add_act"


def conv_act(x, w, b, y, stride, pad, dilate, int groups, double lo, double hi):
    """Push y := clamp(conv2d(x, w) + b, lo, hi) as one engine op; 4-D NCHW NDArrays of
    one float dtype already validated (b may be None)."""
    cdef ConvActArgs s
    cdef EVar* reads[3]
    cdef EVar* writes[1]
    cdef int nr = 2
    memset(&s, 0, sizeof(s))
    geometry(&s.conv, x.shape, w.shape, y.shape, stride, pad, dilate, groups)
    s.conv.dtype = s.act.dtype = _DT[np.dtype(x.dtype)]
    x, w, b = nd_apart(x, (y,)), nd_apart(w, (y,)), nd_apart(b, (y,))
    s.conv.x, s.conv.wt, s.conv.y = nd_ptr(x), nd_ptr(w), nd_ptr(y)
    reads[0], reads[1] = nd_var(x), nd_var(w)
    if b is not None:
        s.conv.b = nd_ptr(b)
        reads[2] = nd_var(b)
        nr = 3
    s.conv.req_y = 1
    s.act.a = s.act.y = s.conv.y
    s.act.n = y.size
    s.act.lo, s.act.hi = lo, hi
    writes[0] = nd_var(y)
    push_kernel(conv_act_kernel, &s, sizeof(s), reads, nr, writes, 1, 0, _B_CONV_ACT,
                nd_wflag(y, 0))


def add_act(a, b, y, double lo, double hi):
    """Push y := clamp(a + b, lo, hi) as one engine op (same shapes and float dtype; y may
    be a or b)."""
    cdef ActArgs s
    cdef EVar* reads[2]
    cdef EVar* writes[1]
    memset(&s, 0, sizeof(s))
    s.dtype = _DT[np.dtype(y.dtype)]
    a, b = nd_apart(a, (y,), True), nd_apart(b, (y,), True)
    s.a, s.b, s.y = nd_ptr(a), nd_ptr(b), nd_ptr(y)
    s.n = y.size
    s.lo, s.hi = lo, hi
    reads[0], reads[1] = nd_var(a), nd_var(b)
    writes[0] = nd_var(y)
    push_kernel(act_kernel, &s, sizeof(s), reads, 2, writes, 1, 0, _B_ADD_ACT,
                nd_wflag(y, 0))


# ---------------------------------------------------------------- NumPy twins (tests)
def add_act_np(a, b, double lo, double hi):
    """clamp(a + b, lo, hi) on contiguous float32/float64 NumPy arrays (b may be None)."""
    cdef ActArgs s
    a = np.ascontiguousarray(a)
    y = np.empty_like(a)
    memset(&s, 0, sizeof(s))
    s.dtype = _DT[a.dtype]
    s.a, s.y = <char*>cnp.PyArray_DATA(a), <char*>cnp.PyArray_DATA(y)
    if b is not None:
        b = np.ascontiguousarray(b, dtype=a.dtype)
        s.b = <char*>cnp.PyArray_DATA(b)
    s.n, s.lo, s.hi = a.size, lo, hi
    act_run(&s)
    return y
