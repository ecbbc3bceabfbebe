# cython: language_level=3
"""Kernels of the sequence, attention and triangular-solve operators, one engine op each.

- `att_gemm`: strided batched GEMM, one or two products C_i := alpha · op(A_i) · op(B_i) +
  beta · C_i over a batch i = (outer, inner) whose matrices start at
  base + outer · s_outer + inner · s_inner with any row stride: the heads of interleaved
  (L, B, H, parts, D) projections are read and written where they lie, with no split or
  merge copies (MXNet's strided-batched calls). A strided zero fill may run too (the
  gradient parts no product reaches, e.g. dv of selfatt_qk); all of it in one split.
- `seq_op`: SequenceMask, SequenceLast (and its scatter backward) and SequenceReverse on the
  bytes of (T, B, step) or (B, T, step) data of any dtype; each sequence's length is read
  from the length array (float or int; floats truncate; clamped to [low, T]).
- `trsm`: Y_i := alpha · op(A_i)^-1 · B_i (or B_i · op(A_i)^-1) by BLAS trsm on B_i copied
  into Y_i, batched.

GEMM and trsm are float32/float64 through scipy.linalg.cython_blas (mx.engine caps its
threads at blas_threads()). Callers check shapes, dtypes and extents before the push (no
bounds checks here) and route req='add' where BLAS cannot (trsm, sequences) through a
temporary. Each pushing function has a `*_np` twin on NumPy arrays for the tests.
"""
cimport numpy as cnp
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dgemm, dtrsm, sgemm, strsm

from mxcy._engine cimport EVar, push_kernel, run_parts
from mxcy._ndptr cimport nd_apart, nd_ptr, nd_var, nd_wflag
from mxcy._ops cimport DT_FLOAT32, DT_FLOAT64, DT_INT32, DT_INT64, DT_INT8, DT_UINT8

import numpy as np

cnp.import_array()

cdef enum:
    MAX_PARTS = 4
    SPLIT_BYTES = 1 << 19       # sequence copies this long are shared with idle workers
    SPLIT_MACS = 1 << 21        # batches of products this big are shared
    SEQ_MASK = 0
    SEQ_LAST = 1
    SEQ_LAST_BWD = 2
    SEQ_REVERSE = 3

cdef dict _DT = {np.dtype(np.float32): DT_FLOAT32, np.dtype(np.float64): DT_FLOAT64,
                 np.dtype(np.int32): DT_INT32, np.dtype(np.int64): DT_INT64,
                 np.dtype(np.int8): DT_INT8, np.dtype(np.uint8): DT_UINT8}
SEQ_KINDS = {'mask': SEQ_MASK, 'last': SEQ_LAST, 'last_backward': SEQ_LAST_BWD,
             'reverse': SEQ_REVERSE}
LENGTH_DTYPES = tuple(_DT)
cdef dict _NAMES = {}       # op names the engine keeps as char* for the op's lifetime


cdef bytes op_name(bytes name):
    """`name` as a bytes object that lives as long as the module (interned here)."""
    return _NAMES.setdefault(name, name)


cdef inline int parts_for(int64_t work, int64_t split, int64_t most) noexcept nogil:
    """How many parts a job of `work` units gets: one per split/2 units, at most `most`."""
    if work < split or most < 2:
        return 1
    return <int>min(min(<int64_t>MAX_PARTS, most), work // (split // 2))


# ------------------------------------------------------------------ strided batched GEMM
cdef struct GemmDesc:
    char* a
    char* b
    char* c
    int m
    int n
    int k
    int trans_a
    int trans_b
    int lda
    int ldb
    int ldc
    int inner               # product i is (outer, inner) = (i // inner, i % inner)
    int count               # products
    int64_t sa[2]           # element strides of (outer, inner) for A, B and C
    int64_t sb[2]
    int64_t sc[2]
    double alpha
    double beta


cdef struct AttArgs:
    GemmDesc g[2]
    int ngemm
    int dtype
    char* z                 # zero fill first: z_rows rows of z_cols elements, z_ld apart
    int64_t z_rows
    int64_t z_cols
    int64_t z_ld


cdef void gemm_range(GemmDesc* g, int dtype, int lo, int hi) noexcept nogil:
    """Products [lo, hi) of g (row-major, as the column-major Cᵀ = op(B)ᵀ · op(A)ᵀ)."""
    cdef char ta = b'T' if g.trans_a else b'N'
    cdef char tb = b'T' if g.trans_b else b'N'
    cdef float fa = <float>g.alpha, fb = <float>g.beta
    cdef int i
    cdef int64_t o, h, oa, ob, oc
    for i in range(lo, hi):
        o, h = i // g.inner, i % g.inner
        oa = o * g.sa[0] + h * g.sa[1]
        ob = o * g.sb[0] + h * g.sb[1]
        oc = o * g.sc[0] + h * g.sc[1]
        if dtype == DT_FLOAT32:
            sgemm(&tb, &ta, &g.n, &g.m, &g.k, &fa, (<float*>g.b) + ob, &g.ldb,
                  (<float*>g.a) + oa, &g.lda, &fb, (<float*>g.c) + oc, &g.ldc)
        else:
            dgemm(&tb, &ta, &g.n, &g.m, &g.k, &g.alpha, (<double*>g.b) + ob, &g.ldb,
                  (<double*>g.a) + oa, &g.lda, &g.beta, (<double*>g.c) + oc, &g.ldc)


cdef void att_part(void* arg, int part, int nparts) noexcept nogil:
    """Part `part` of `nparts` of the op: its share of the zero fill's rows, then of the
    products of all its GEMMs taken as one range (one join per op, however many GEMMs)."""
    cdef AttArgs* s = <AttArgs*>arg
    cdef int64_t r, size = 4 if s.dtype == DT_FLOAT32 else 8
    cdef int64_t total = 0, base = 0, lo, hi
    cdef int j
    if s.z != NULL:
        for r in range(s.z_rows * part // nparts, s.z_rows * (part + 1) // nparts):
            memset(s.z + r * s.z_ld * size, 0, s.z_cols * size)
    for j in range(s.ngemm):
        total += s.g[j].count
    lo, hi = total * part // nparts, total * (part + 1) // nparts
    for j in range(s.ngemm):
        if lo < base + s.g[j].count and hi > base:
            gemm_range(&s.g[j], s.dtype, <int>(max(lo, base) - base),
                       <int>(min(hi, base + s.g[j].count) - base))
        base += s.g[j].count


cdef void att_run(AttArgs* s, bint shared) noexcept nogil:
    """z := 0 (strided), then C_i := alpha · op(A_i) · op(B_i) + beta · C_i per product
    (shared: split with idle workers). The zero fill and the products write disjoint
    elements, so the parts need no order."""
    cdef int64_t macs = 0, count = 0
    cdef int j
    for j in range(s.ngemm):
        macs += <int64_t>s.g[j].count * s.g[j].m * s.g[j].n * s.g[j].k
        count += s.g[j].count
    if shared:
        run_parts(att_part, s, parts_for(macs, SPLIT_MACS, count))
    else:
        att_part(s, 0, 1)


cdef int att_kernel(void* args, char* errmsg) noexcept nogil:
    att_run(<AttArgs*>args, True)
    return 0


cdef void fill_desc(GemmDesc* g, d, ptrs, int64_t size) except *:
    """d = (A, B, C, m, n, k, trans_a, trans_b, alpha, beta, count, inner), each of A, B, C
    a strided view (array, element offset, row stride, outer stride, inner stride)."""
    cdef char* p[3]
    cdef size_t addr
    cdef int64_t off
    for j in range(3):
        arr, off, ld, so, si = d[j]
        addr = ptrs[j]
        p[j] = <char*>addr + off * size
        if j == 0:
            g.lda, g.sa[0], g.sa[1] = ld, so, si
        elif j == 1:
            g.ldb, g.sb[0], g.sb[1] = ld, so, si
        else:
            g.ldc, g.sc[0], g.sc[1] = ld, so, si
    g.a, g.b, g.c = p[0], p[1], p[2]
    g.m, g.n, g.k, g.trans_a, g.trans_b, g.alpha, g.beta, g.count, g.inner = d[3:12]


cdef void fill_att(AttArgs* s, gemms, zero, ptr) except *:
    """The op's arguments: `ptr(array)` gives an array's data address."""
    cdef size_t addr
    cdef int64_t size, off
    memset(s, 0, sizeof(AttArgs))
    s.dtype = _DT[np.dtype(gemms[0][2][0].dtype)]
    size = 4 if s.dtype == DT_FLOAT32 else 8
    for i, d in enumerate(gemms):
        fill_desc(&s.g[i], d, [ptr(d[j][0]) for j in range(3)], size)
    s.ngemm = len(gemms)
    if zero is not None:
        arr, off, s.z_rows, s.z_cols, s.z_ld = zero
        addr = ptr(arr)
        s.z = <char*>addr + off * size


def att_gemm(reads, writes, gemms, zero=None, bytes name=b"att_gemm"):
    """Push the products `gemms` (one or two, see fill_desc; NDArray views) after the zero
    fill `zero` = (array, element offset, rows, cols, row stride) or None, as one engine op
    reading the NDArrays `reads` and writing `writes` (one or two). The caller has checked
    every extent and that all arrays share one float dtype."""
    cdef AttArgs s
    cdef EVar* rv[4]
    cdef EVar* wv[2]
    cdef int i, flags = 0
    apart = {id(x): nd_apart(x, writes) for x in reads}
    gemms = [tuple((apart.get(id(v[0]), v[0]),) + tuple(v[1:]) for v in d[:3]) + tuple(d[3:])
             for d in gemms]
    fill_att(&s, gemms, zero, _nd_addr)
    reads = list(apart.values())
    for i in range(len(reads)):
        rv[i] = nd_var(reads[i])
    for i in range(len(writes)):
        wv[i] = nd_var(writes[i])
        flags |= nd_wflag(writes[i], i)
    name = op_name(name)
    push_kernel(att_kernel, &s, sizeof(s), rv, len(reads), wv, len(writes), 0, name, flags)


def _np_addr(arr):
    return <size_t>cnp.PyArray_DATA(arr)


def _nd_addr(arr):
    return <size_t>nd_ptr(arr)


def att_gemm_np(gemms, zero=None):
    """att_gemm at once on contiguous NumPy arrays (the twin the tests compare)."""
    cdef AttArgs s
    fill_att(&s, gemms, zero, _np_addr)
    att_run(&s, False)


# ------------------------------------------------------------------ sequence steps
cdef struct SeqArgs:
    char* x
    char* y
    char* lens              # NULL: every sequence has length T
    int lens_dtype
    int kind
    int axis                # 0: step (t, b) at (t·B + b)·row; 1: at (b·T + t)·row
    int64_t T
    int64_t B
    int64_t row             # bytes per step
    int64_t low             # lengths are clamped to [low, T]
    int64_t itemsize
    char fill[8]            # SequenceMask's value in the data dtype
    int fill_zero


cdef inline int64_t seq_len(SeqArgs* s, int64_t b) noexcept nogil:
    """Sequence b's length: truncated, NaN -> low, clamped to [low, T]."""
    cdef double v
    cdef int64_t n
    if s.lens == NULL:
        return s.T
    if s.lens_dtype == DT_INT64 or s.lens_dtype == DT_INT32 or s.lens_dtype == DT_INT8 \
            or s.lens_dtype == DT_UINT8:
        if s.lens_dtype == DT_INT64:
            n = (<int64_t*>s.lens)[b]
        elif s.lens_dtype == DT_INT32:
            n = (<int32_t*>s.lens)[b]
        elif s.lens_dtype == DT_INT8:
            n = (<int8_t*>s.lens)[b]
        else:
            n = (<uint8_t*>s.lens)[b]
        return s.low if n < s.low else (s.T if n > s.T else n)
    v = (<float*>s.lens)[b] if s.lens_dtype == DT_FLOAT32 else (<double*>s.lens)[b]
    if not (v > <double>s.low):
        return s.low
    if v >= <double>s.T:
        return s.T
    return <int64_t>v


cdef inline char* step(SeqArgs* s, char* base, int64_t t, int64_t b) noexcept nogil:
    if s.axis == 0:
        return base + (t * s.B + b) * s.row
    return base + (b * s.T + t) * s.row


cdef void fill_row(SeqArgs* s, char* dst) noexcept nogil:
    """row bytes of dst := the fill value repeated (doubling copies)."""
    cdef int64_t done = s.itemsize, n
    if s.fill_zero:
        memset(dst, 0, s.row)
        return
    if s.row < s.itemsize:
        return
    memcpy(dst, s.fill, s.itemsize)
    while done < s.row:
        n = min(done, s.row - done)
        memcpy(dst + done, dst, n)
        done += n


cdef void seq_part(void* arg, int part, int nparts) noexcept nogil:
    cdef SeqArgs* s = <SeqArgs*>arg
    cdef int64_t b, t, n, src
    cdef int64_t lo = s.B * part // nparts, hi = s.B * (part + 1) // nparts
    for b in range(lo, hi):
        n = seq_len(s, b)
        if s.kind == SEQ_LAST:
            memcpy(s.y + b * s.row, step(s, s.x, n - 1, b), s.row)
            continue
        for t in range(s.T):
            if s.kind == SEQ_MASK:
                if t >= n:
                    fill_row(s, step(s, s.y, t, b))
                elif s.x != s.y:
                    memcpy(step(s, s.y, t, b), step(s, s.x, t, b), s.row)
            elif s.kind == SEQ_REVERSE:
                src = n - 1 - t if t < n else t
                memcpy(step(s, s.y, t, b), step(s, s.x, src, b), s.row)
            elif t == n - 1:        # SEQ_LAST_BWD: x is dy (B, step), y is dx
                memcpy(step(s, s.y, t, b), s.x + b * s.row, s.row)
            else:
                memset(step(s, s.y, t, b), 0, s.row)


cdef int seq_kernel(void* args, char* errmsg) noexcept nogil:
    cdef SeqArgs* s = <SeqArgs*>args
    run_parts(seq_part, s, parts_for(s.T * s.B * s.row, SPLIT_BYTES, s.B))
    return 0


cdef void fill_seq(SeqArgs* s, str kind, shape, int axis, int64_t itemsize, fill, lens_dtype,
                   int64_t low) except *:
    memset(s, 0, sizeof(SeqArgs))
    s.kind = SEQ_KINDS[kind]
    s.axis = axis
    s.T, s.B = shape[axis], shape[1 - axis]
    s.row = itemsize
    for d in shape[2:]:
        s.row *= d
    s.itemsize = itemsize
    s.low = low
    s.lens_dtype = _DT[np.dtype(lens_dtype)] if lens_dtype is not None else -1
    s.fill_zero = 1
    if fill is not None:
        raw = bytes(fill)
        memcpy(s.fill, <char*>raw, min(len(raw), 8))
        s.fill_zero = raw.count(0) == len(raw)


def seq_op(str kind, x, y, lens, int axis, fill=None, int64_t low=0, bytes name=b"seq"):
    """Push kind ('mask', 'last', 'last_backward', 'reverse') from x into y as one engine
    op. x is (T, B, ...) (axis 0) or (B, T, ...) (axis 1); 'last' writes y (B, ...) and
    'last_backward' reads x (B, ...) into y shaped like data; lens (B,) or None, of a dtype
    in LENGTH_DTYPES; fill: SequenceMask's value as bytes of the data dtype. 'mask' may
    run in place (y is x); the caller checked every shape."""
    cdef SeqArgs s
    cdef EVar* rv[2]
    cdef EVar* wv[1]
    data = y if kind == 'last_backward' else x
    fill_seq(&s, kind, data.shape, axis, np.dtype(data.dtype).itemsize, fill,
             None if lens is None else lens.dtype, low)
    x = nd_apart(x, (y,), kind == 'mask')
    s.x, s.y = nd_ptr(x), nd_ptr(y)
    rv[0] = nd_var(x)
    if lens is not None:
        lens = nd_apart(lens, (y,))
        s.lens = nd_ptr(lens)
        rv[1] = nd_var(lens)
    wv[0] = nd_var(y)
    name = op_name(name)
    push_kernel(seq_kernel, &s, sizeof(s), rv, 1 if lens is None else 2, wv, 1, 0, name,
                nd_wflag(y, 0))


def seq_op_np(str kind, x, y, lens, int axis, fill=None, int64_t low=0):
    """seq_op at once on contiguous NumPy arrays (the twin the tests compare)."""
    cdef SeqArgs s
    data = y if kind == 'last_backward' else x
    fill_seq(&s, kind, data.shape, axis, np.dtype(data.dtype).itemsize, fill,
             None if lens is None else lens.dtype, low)
    s.x, s.y = <char*>cnp.PyArray_DATA(x), <char*>cnp.PyArray_DATA(y)
    if lens is not None:
        s.lens = <char*>cnp.PyArray_DATA(lens)
    seq_part(&s, 0, 1)


# ------------------------------------------------------------------ triangular solve
cdef struct TrsmArgs:
    char* a
    char* b
    char* y
    int dtype
    int batch
    int m                   # B_i and Y_i are (m, n) row-major; A_i is (k, k)
    int n
    int k
    int rightside
    int lower
    int transpose
    double alpha


cdef void trsm_part(void* arg, int part, int nparts) noexcept nogil:
    """Y_i := B_i, then op(A) Y = alpha Y (or Y op(A) = alpha Y) in place. Row-major Y is
    the column-major Yᵀ: the side swaps, the triangle flips, the transpose flag stays."""
    cdef TrsmArgs* s = <TrsmArgs*>arg
    cdef char side = b'L' if s.rightside else b'R'
    cdef char uplo = b'U' if s.lower else b'L'
    cdef char ta = b'T' if s.transpose else b'N'
    cdef char diag = b'N'
    cdef int lo = <int>(<int64_t>s.batch * part // nparts)
    cdef int hi = <int>(<int64_t>s.batch * (part + 1) // nparts), i
    cdef int64_t size = 4 if s.dtype == DT_FLOAT32 else 8
    cdef int64_t sy = <int64_t>s.m * s.n * size, sa = <int64_t>s.k * s.k * size
    cdef float fa = <float>s.alpha
    for i in range(lo, hi):
        if s.y != s.b:
            memcpy(s.y + i * sy, s.b + i * sy, sy)
        if s.dtype == DT_FLOAT32:
            strsm(&side, &uplo, &ta, &diag, &s.n, &s.m, &fa, <float*>(s.a + i * sa), &s.k,
                  <float*>(s.y + i * sy), &s.n)
        else:
            dtrsm(&side, &uplo, &ta, &diag, &s.n, &s.m, &s.alpha, <double*>(s.a + i * sa),
                  &s.k, <double*>(s.y + i * sy), &s.n)


cdef int trsm_kernel(void* args, char* errmsg) noexcept nogil:
    cdef TrsmArgs* s = <TrsmArgs*>args
    run_parts(trsm_part, s, parts_for(<int64_t>s.batch * s.k * s.k * (s.m + s.n) // 4,
                                      SPLIT_MACS, s.batch))
    return 0


cdef void fill_trsm(TrsmArgs* s, a_shape, b_shape, bint rightside, bint lower,
                    bint transpose, double alpha, dtype) except *:
    memset(s, 0, sizeof(TrsmArgs))
    s.dtype = _DT[np.dtype(dtype)]
    nd = len(b_shape)
    s.m, s.n, s.k = b_shape[nd - 2], b_shape[nd - 1], a_shape[nd - 1]
    s.batch = 1
    for d in b_shape[:nd - 2]:
        s.batch *= d
    s.rightside, s.lower, s.transpose, s.alpha = rightside, lower, transpose, alpha


def trsm(a, b, y, bint rightside, bint lower, bint transpose, double alpha,
         bytes name=b"_linalg_trsm"):
    """Push y := alpha · op(a)^-1 · b (rightside: b · op(a)^-1) per matrix of the batch as
    one engine op; float32/float64 NDArrays of one dtype with checked shapes, none empty.
    y may be b (in place)."""
    cdef TrsmArgs s
    cdef EVar* rv[2]
    cdef EVar* wv[1]
    fill_trsm(&s, a.shape, b.shape, rightside, lower, transpose, alpha, y.dtype)
    a, b = nd_apart(a, (y,)), nd_apart(b, (y,), True)
    s.a, s.b, s.y = nd_ptr(a), nd_ptr(b), nd_ptr(y)
    rv[0], rv[1] = nd_var(a), nd_var(b)
    wv[0] = nd_var(y)
    name = op_name(name)
    push_kernel(trsm_kernel, &s, sizeof(s), rv, 2, wv, 1, 0, name, nd_wflag(y, 0))


def trsm_np(a, b, bint rightside, bint lower, bint transpose, double alpha):
    """trsm at once on NumPy arrays of one float dtype (made contiguous); returns y. Runs
    inside NumPy-computed backward ops, and is the tests' twin."""
    cdef TrsmArgs s
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    y = np.empty_like(b)
    fill_trsm(&s, a.shape, b.shape, rightside, lower, transpose, alpha, y.dtype)
    s.a, s.b, s.y = <char*>cnp.PyArray_DATA(a), <char*>cnp.PyArray_DATA(b), \
        <char*>cnp.PyArray_DATA(y)
    with nogil:
        trsm_part(&s, 0, 1)
    return y
