# cython: language_level=3
"""Convolution and pooling kernels: `noexcept nogil`, run by the engine.

Which path a convolution takes: depthwise (groups == channels == filters) the direct
kernels of _conv_depthwise.pxi; float32 3×3 stride 1 with enough channels, filters and tiles
Winograd F(2×2, 3×3) (_conv_winograd.pxi); 1×1 without padding GEMMs on the data itself
(_conv_1x1.pxi); a float32 forward on AVX2 the register-blocked direct kernel of
_conv_direct.pxi (unless its weights are big); float32 on AVX-512 the packed, indirect
GEMM of _conv_packed.pxi; the rest im2col + BLAS (_conv_cols.pxi), in cache-sized bands of
output rows. Pooling is in _conv_pool.pxi; the NumPy twins of the kernels in
_conv_twins.pxi. Kernel taps that read only padding are cropped away first
(_conv_crop.pxi).

Layouts are NCHW, row-major, contiguous. A 1-D convolution or pooling is the 2-D one with
H = 1. Shapes and parameters are validated by the operator before the push. `req` codes:
0 null (skip), 1 write, 2 add. Each kernel has a `*_np` twin for tests.
"""
cimport numpy as cnp
from libc.float cimport DBL_MAX, FLT_MAX
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport sgemm, dgemm

from mxcy._engine cimport ERR_MEMORY, ERR_VALUE, run_parts
from mxcy._ops cimport DT_FLOAT32, DT_FLOAT64

import numpy as np

cnp.import_array()

ctypedef fused real_t:
    float
    double


# ---------------------------------------------------------------- row-major GEMM
cdef inline void rm_gemm(bint ta, bint tb, int m, int n, int k, real_t* a, real_t* b,
                         real_t beta, real_t* c) noexcept nogil:
    """c := op(a)·op(b) + beta·c, row-major (as the column-major bᵀ·aᵀ)."""
    cdef char cta = b'T' if ta else b'N'
    cdef char ctb = b'T' if tb else b'N'
    cdef int lda = m if ta else k
    cdef int ldb = k if tb else n
    cdef real_t one = 1
    if m == 0 or n == 0:
        return
    if lda < 1:
        lda = 1
    if ldb < 1:
        ldb = 1
    if real_t is float:
        sgemm(&ctb, &cta, &n, &m, &k, &one, b, &ldb, a, &lda, &beta, c, &n)
    else:
        dgemm(&ctb, &cta, &n, &m, &k, &one, b, &ldb, a, &lda, &beta, c, &n)


include "_conv_cols.pxi"
include "_conv_1x1.pxi"
include "_conv_packed.pxi"


# ---------------------------------------------------------------- convolution
# The BLAS path (float64, shallow float32 windows, CPUs without AVX2): images are processed
# in chunks, the columns of `nb` images side by side making one (K, nb·P) matrix, so each
# group needs one GEMM per chunk instead of nb small ones. A chunk's columns stay in the
# core's cache between im2col and the GEMM (16 MB chunks ran at memory speed).
cdef enum:
    COL_BUDGET = 1 << 18      # elements of the column buffer (1 MB of float32)


cdef inline int chunk_images(int n, int64_t K, int64_t P) noexcept nogil:
    cdef int64_t nb = COL_BUDGET // max(K * P, 1)
    if nb < 1:
        nb = 1
    if nb > n:
        nb = n
    return <int>nb


cdef void conv_fwd_image(ConvArgs* a, real_t* x, real_t* wt, real_t* b, real_t* y, int n,
                         int r0, int r1, real_t* col) noexcept nogil:
    """Output rows [r0, r1) of image n: im2col of those rows, then one GEMM per group
    straight into y (rows P apart)."""
    cdef int cg = a.c // a.groups, fg = a.f // a.groups, g
    cdef int K = cg * a.kh * a.kw, P = a.oh * a.ow, cols = (r1 - r0) * a.ow
    cdef real_t* yg
    cdef real_t beta
    for g in range(a.groups):
        # rows from r0: the window of output row r0 + i starts at input row
        # i·sh + (r0·sh − ph), i.e. im2col with the padding shifted by r0·sh
        im2col(x + <int64_t>n * a.c * a.h * a.w + <int64_t>g * cg * a.h * a.w, cg, a.h, a.w,
               a.kh, a.kw, a.ph - r0 * a.sh, a.pw, a.sh, a.sw, a.dil_h, a.dil_w, r1 - r0,
               a.ow, col, cols)
        yg = y + <int64_t>n * a.f * P + <int64_t>g * fg * P + <int64_t>r0 * a.ow
        beta = bias_prefill(a, b, yg, g * fg, fg, cols, P)
        rm_gemm_ld(False, False, fg, cols, K, wt + <int64_t>g * fg * K, K, col, cols, beta,
                   yg, P)


cdef int conv_fwd_typed(ConvArgs* a, real_t* x, real_t* wt, real_t* b, real_t* y,
                        int lo, int hi, int r0, int r1) noexcept nogil:
    """Images [lo, hi), output rows [r0, r1) of y (req) conv(x, w) + b."""
    cdef int cg = a.c // a.groups, fg = a.f // a.groups
    cdef int K = cg * a.kh * a.kw, P = a.oh * a.ow, n0, m, i, g, f, p, band
    cdef int64_t xs = <int64_t>a.c * a.h * a.w, ys = <int64_t>a.f * P, mp
    cdef int nb = chunk_images(hi - lo, K, P)
    cdef real_t* col
    cdef real_t* tmp
    cdef real_t* yp
    cdef real_t* tp
    cdef real_t bias
    if nb == 1 or r0 != 0 or r1 != a.oh:
        # image by image, no copy of the product; a big image in bands of output rows
        # whose columns fit the budget, so they are still in cache when the GEMM reads them
        band = <int>max(1, min(<int64_t>(r1 - r0), COL_BUDGET // (<int64_t>K * a.ow)))
        col = <real_t*>malloc(<size_t>K * band * a.ow * sizeof(real_t) + 1)
        if col == NULL:
            return ERR_MEMORY
        for n0 in range(lo, hi):
            i = r0
            while i < r1:
                conv_fwd_image(a, x, wt, b, y, n0, i, min(i + band, r1), col)
                i += band
        free(col)
        return 0
    col = <real_t*>malloc(<size_t>K * nb * P * sizeof(real_t) + 1)
    tmp = <real_t*>malloc(<size_t>fg * nb * P * sizeof(real_t) + 1)
    if col == NULL or tmp == NULL:
        free(col)
        free(tmp)
        return ERR_MEMORY
    n0 = lo
    while n0 < hi:
        m = min(nb, hi - n0)
        mp = <int64_t>m * P
        for g in range(a.groups):
            for i in range(m):
                im2col(x + (n0 + i) * xs + <int64_t>g * cg * a.h * a.w, cg, a.h, a.w, a.kh,
                       a.kw, a.ph, a.pw, a.sh, a.sw, a.dil_h, a.dil_w, a.oh, a.ow,
                       col + <int64_t>i * P, mp)
            rm_gemm(False, False, fg, <int>mp, K, wt + <int64_t>g * fg * K, col, 0, tmp)
            for i in range(m):
                for f in range(fg):
                    yp = y + (n0 + i) * ys + <int64_t>(g * fg + f) * P
                    tp = tmp + <int64_t>f * mp + <int64_t>i * P
                    bias = b[g * fg + f] if b != NULL else 0
                    if a.req_y == 2:
                        for p in range(P):
                            yp[p] += tp[p] + bias
                    else:
                        for p in range(P):
                            yp[p] = tp[p] + bias
        n0 += m
    free(col)
    free(tmp)
    return 0


cdef int conv_bwd_typed(ConvArgs* a, real_t* x, real_t* wt, real_t* dy, real_t* dx,
                        real_t* dw, int lo, int hi) noexcept nogil:
    """Images [lo, hi): dx (req_x) of those images, and their dW contribution added into
    `dw` (the caller zeroes it or passes a private buffer)."""
    cdef int cg = a.c // a.groups, fg = a.f // a.groups
    cdef int K = cg * a.kh * a.kw, P = a.oh * a.ow, n0, m, i, g, f, p
    cdef int64_t xs = <int64_t>a.c * a.h * a.w, ys = <int64_t>a.f * P, mp
    cdef int nb = chunk_images(hi - lo, K, P)
    cdef real_t* col = <real_t*>malloc(<size_t>K * nb * P * sizeof(real_t) + 1)
    cdef real_t* dyt = <real_t*>malloc(<size_t>fg * nb * P * sizeof(real_t) + 1)
    cdef real_t* src
    cdef real_t* dst
    if col == NULL or dyt == NULL:
        free(col)
        free(dyt)
        return ERR_MEMORY
    if a.req_x == 1:
        memset(dx + lo * xs, 0, <size_t>(hi - lo) * xs * sizeof(real_t))
    n0 = lo
    while n0 < hi:
        m = min(nb, hi - n0)
        mp = <int64_t>m * P
        for g in range(a.groups):
            # dyt (fg, m·P): this group's output gradients, images side by side
            for f in range(fg):
                for i in range(m):
                    src = dy + (n0 + i) * ys + <int64_t>(g * fg + f) * P
                    dst = dyt + <int64_t>f * mp + <int64_t>i * P
                    memcpy(dst, src, <size_t>P * sizeof(real_t))
            if a.req_w:
                for i in range(m):
                    im2col(x + (n0 + i) * xs + <int64_t>g * cg * a.h * a.w, cg, a.h, a.w,
                           a.kh, a.kw, a.ph, a.pw, a.sh, a.sw, a.dil_h, a.dil_w, a.oh,
                           a.ow, col + <int64_t>i * P, mp)
                rm_gemm(False, True, fg, K, <int>mp, dyt, col, 1, dw + <int64_t>g * fg * K)
            if a.req_x:
                rm_gemm(True, False, K, <int>mp, fg, wt + <int64_t>g * fg * K, dyt, 0, col)
                for i in range(m):
                    col2im(col + <int64_t>i * P, cg, a.h, a.w, a.kh, a.kw, a.ph, a.pw, a.sh,
                           a.sw, a.dil_h, a.dil_w, a.oh, a.ow,
                           dx + (n0 + i) * xs + <int64_t>g * cg * a.h * a.w, mp)
        n0 += m
    free(col)
    free(dyt)
    return 0


cdef void conv_bias_grad(ConvArgs* a, real_t* dy, real_t* db) noexcept nogil:
    """db (req) Σ over images and positions of dy. Eight running sums per filter: one sum
    is a chain of dependent adds (the compiler may not reorder float adds), 4 cycles each."""
    cdef int f, n, p, k, P = a.oh * a.ow, P8 = a.oh * a.ow // 8 * 8
    cdef int64_t ys = <int64_t>a.f * P
    cdef real_t acc
    cdef real_t part[8]
    cdef real_t* src
    for f in range(a.f):
        for k in range(8):
            part[k] = 0
        acc = 0
        for n in range(a.n):
            src = dy + n * ys + <int64_t>f * P
            for p in range(0, P8, 8):
                for k in range(8):
                    part[k] += src[p + k]
            for p in range(P8, P):
                acc += src[p]
        for k in range(8):
            acc += part[k]
        if a.req_b == 1:
            db[f] = acc
        else:
            db[f] += acc


# A big convolution is cut into parts by images (run_parts): idle workers take some. A
# single big image (batch 1) is cut into bands of output rows when the bands stay wide,
# else (late layers: 7×7 or 14×14 planes, where a narrower GEMM loses more than a second
# core gains) into halves of its filters (groups == 1; the columns are built twice, a
# small cost beside the GEMM); small convolutions stay one part (waking a worker costs more
# than they take). Each part of the backward adds its dW contribution into a private
# buffer; the caller sums them after the parts, so no two threads write the same element.
cdef enum:
    CONV_SPLIT_MACS = 1 << 21
    CONV_MAX_PARTS = 4
    CONV_ONE_IMAGE_PARTS = 2
    CONV_BAND_MIN = 256       # output positions a row band keeps at least
    SPLIT_IMAGES = 0
    SPLIT_ROWS = 1
    SPLIT_FILTERS = 2

cdef struct ConvParts:
    ConvArgs* a
    char* dw_parts        # parts × f·K elements (backward with req_w), else NULL
    bint packed           # float32 through the packed GEMM (pc), else BLAS
    bint pointwise        # 1×1 without padding: GEMMs on the data itself (_conv_1x1.pxi)
    int split             # forward parts: SPLIT_IMAGES, or ROWS / FILTERS of the one image
    PackedConv pc
    int err


cdef inline bint use_pointwise(ConvArgs* a) noexcept nogil:
    """1×1 GEMMs on the data, image by image, unless the images are small planes: then
    im2col's chunks of several images side by side make one wider GEMM (1×1 planes of a
    classifier: a GEMV per image otherwise)."""
    return is_pointwise(a) and (a.n == 1 or a.oh * a.ow >= CONV_BAND_MIN)


cdef inline int conv_nparts(ConvArgs* a) noexcept nogil:
    cdef int64_t macs = <int64_t>a.n * a.f * (a.c // a.groups) * a.kh * a.kw * a.oh * a.ow
    if macs < CONV_SPLIT_MACS or a.n < 2:
        return 1
    return min(a.n, <int>CONV_MAX_PARTS)


cdef inline int conv_fwd_nparts(ConvArgs* a, ConvParts* cp) noexcept nogil:
    """Parts of a forward; sets cp.split."""
    cdef int64_t macs = <int64_t>a.n * a.f * (a.c // a.groups) * a.kh * a.kw * a.oh * a.ow
    cp.split = SPLIT_IMAGES
    if a.n >= 2 or cp.packed or macs < CONV_SPLIT_MACS:
        return conv_nparts(a)
    if a.oh >= CONV_ONE_IMAGE_PARTS and a.oh * a.ow >= CONV_ONE_IMAGE_PARTS * CONV_BAND_MIN:
        cp.split = SPLIT_ROWS
        return CONV_ONE_IMAGE_PARTS
    if a.groups == 1 and a.f >= 32:
        cp.split = SPLIT_FILTERS
        return CONV_ONE_IMAGE_PARTS
    return 1


cdef inline int image_bound(int n, int part, int nparts) noexcept nogil:
    """The first image of part `part` (of n images in nparts parts)."""
    return <int>(<int64_t>n * part // nparts)


cdef int conv_fwd_range(ConvArgs* a, bint pointwise, real_t* x, real_t* wt, real_t* b,
                        real_t* y, int lo, int hi, int r0, int r1) noexcept nogil:
    if pointwise:
        return conv_fwd_1x1(a, x, wt, b, y, lo, hi, r0, r1)
    return conv_fwd_typed(a, x, wt, b, y, lo, hi, r0, r1)


cdef void conv_fwd_part(void* arg, int part, int nparts) noexcept nogil:
    cdef ConvParts* cp = <ConvParts*>arg
    cdef ConvArgs* a = cp.a
    cdef ConvArgs sub
    cdef int lo = image_bound(a.n, part, nparts), hi = image_bound(a.n, part + 1, nparts)
    cdef int r0 = 0, r1 = a.oh, rc, f0
    cdef size_t isz = 4 if a.dtype == DT_FLOAT32 else 8
    if cp.split == SPLIT_ROWS:
        lo, hi = 0, a.n
        r0, r1 = image_bound(a.oh, part, nparts), image_bound(a.oh, part + 1, nparts)
    elif cp.split == SPLIT_FILTERS:
        # filters [f0, f1) of the one image (groups == 1): a convolution with fewer filters
        lo, hi = 0, a.n
        sub = a[0]
        f0 = image_bound(a.f, part, nparts)
        sub.f = image_bound(a.f, part + 1, nparts) - f0
        sub.wt = a.wt + <int64_t>f0 * a.c * a.kh * a.kw * isz
        sub.b = a.b + f0 * isz if a.b != NULL else NULL
        sub.y = a.y + <int64_t>f0 * a.oh * a.ow * isz
        a = &sub
    if cp.packed:
        rc = conv_fwd_packed(a, &cp.pc, <float*>a.x, <float*>a.b, <float*>a.y, lo, hi)
    elif a.dtype == DT_FLOAT32:
        rc = conv_fwd_range(a, cp.pointwise, <float*>a.x, <float*>a.wt, <float*>a.b,
                            <float*>a.y, lo, hi, r0, r1)
    else:
        rc = conv_fwd_range(a, cp.pointwise, <double*>a.x, <double*>a.wt, <double*>a.b,
                            <double*>a.y, lo, hi, r0, r1)
    if rc:
        cp.err = rc


cdef void conv_bwd_part(void* arg, int part, int nparts) noexcept nogil:
    cdef ConvParts* cp = <ConvParts*>arg
    cdef ConvArgs* a = cp.a
    cdef int lo = image_bound(a.n, part, nparts), hi = image_bound(a.n, part + 1, nparts)
    cdef int64_t wsize = <int64_t>a.f * (a.c // a.groups) * a.kh * a.kw
    cdef size_t isz = 4 if a.dtype == DT_FLOAT32 else 8
    cdef char* dw = cp.dw_parts + part * wsize * isz if cp.dw_parts != NULL else NULL
    cdef int rc
    if dw != NULL:
        memset(dw, 0, wsize * isz)
    if cp.packed:
        rc = conv_bwd_packed(a, &cp.pc, <float*>a.x, <float*>a.dy, <float*>a.dx, <float*>dw,
                             lo, hi)
    elif cp.pointwise and a.dtype == DT_FLOAT32:
        rc = conv_bwd_1x1(a, <float*>a.x, <float*>a.wt, <float*>a.dy, <float*>a.dx,
                          <float*>dw, lo, hi)
    elif cp.pointwise:
        rc = conv_bwd_1x1(a, <double*>a.x, <double*>a.wt, <double*>a.dy, <double*>a.dx,
                          <double*>dw, lo, hi)
    elif a.dtype == DT_FLOAT32:
        rc = conv_bwd_typed(a, <float*>a.x, <float*>a.wt, <float*>a.dy, <float*>a.dx,
                            <float*>dw, lo, hi)
    else:
        rc = conv_bwd_typed(a, <double*>a.x, <double*>a.wt, <double*>a.dy, <double*>a.dx,
                            <double*>dw, lo, hi)
    if rc:
        cp.err = rc


cdef void sum_parts(real_t* parts, int nparts, int64_t size, real_t* out,
                    bint add) noexcept nogil:
    cdef int64_t i
    cdef int p
    cdef real_t acc
    for i in range(size):
        acc = parts[i]
        for p in range(1, nparts):
            acc += parts[p * size + i]
        out[i] = out[i] + acc if add else acc


include "_conv_depthwise.pxi"
include "_conv_crop.pxi"
include "_conv_winograd.pxi"
include "_conv_direct.pxi"


cdef int conv_fwd_kernel(void* args, char* errmsg) noexcept nogil:
    """y := conv(x, w) + b."""
    cdef ConvArgs* a = <ConvArgs*>args
    cdef ConvParts cp
    cdef ConvArgs sub
    cdef int lh, lw
    if a.req_y == 0:
        return 0
    if a.dtype != DT_FLOAT32 and a.dtype != DT_FLOAT64:
        return ERR_VALUE
    if crop_taps(a, &sub, &lh, &lw):
        return conv_fwd_cropped(a, &sub, lh, lw, errmsg)
    if is_depthwise(a):
        return depthwise_fwd(a)
    if use_winograd(a):
        return winograd_fwd(a)
    if use_direct(a):
        return conv_fwd_direct(a)
    cp.a = a
    cp.dw_parts = NULL
    cp.err = 0
    cp.pointwise = use_pointwise(a)
    cp.packed = not cp.pointwise and use_packed(a)
    if cp.packed and packed_prepare(a, &cp.pc, True):
        return ERR_MEMORY
    run_parts(conv_fwd_part, &cp, conv_fwd_nparts(a, &cp))
    if cp.packed:
        packed_release(&cp.pc)
    return cp.err


cdef int conv_bwd_kernel(void* args, char* errmsg) noexcept nogil:
    """dx, dw, db (per req) from dy."""
    cdef ConvArgs* a = <ConvArgs*>args
    cdef ConvParts cp
    cdef int nparts = conv_nparts(a)
    cdef int64_t wsize = <int64_t>a.f * (a.c // a.groups) * a.kh * a.kw
    cdef size_t isz = 4 if a.dtype == DT_FLOAT32 else 8
    cdef ConvArgs sub
    cdef int lh, lw
    cdef bint done
    if a.dtype != DT_FLOAT32 and a.dtype != DT_FLOAT64:
        return ERR_VALUE
    if crop_taps(a, &sub, &lh, &lw):
        return conv_bwd_cropped(a, &sub, lh, lw, errmsg)
    if winograd_grads(a, &sub, &done):
        return ERR_MEMORY
    if done:                          # what Winograd left (db at least) by the paths below
        return conv_bwd_kernel(&sub, errmsg) if sub.req_x or sub.req_w or sub.req_b else 0
    cp.a = a
    cp.err = 0
    cp.dw_parts = NULL
    if is_depthwise(a):
        cp.err = depthwise_bwd(a)
        nparts = 0                  # nothing below but the bias gradient
    cp.pointwise = use_pointwise(a)
    cp.packed = (nparts > 0 and not cp.pointwise and use_packed(a)
                 and (a.req_x or a.req_w))
    if cp.packed and packed_prepare(a, &cp.pc, False):
        return ERR_MEMORY
    if a.req_w and nparts > 0:
        cp.dw_parts = <char*>malloc(nparts * wsize * isz + 1)
        if cp.dw_parts == NULL:
            if cp.packed:
                packed_release(&cp.pc)
            return ERR_MEMORY
    if (a.req_x or a.req_w) and nparts > 0:
        run_parts(conv_bwd_part, &cp, nparts)
    if cp.packed:
        packed_release(&cp.pc)
    if cp.err == 0 and a.req_w and nparts > 0:
        if cp.packed:
            sum_parts_transposed(<float*>cp.dw_parts, nparts, a.groups,
                                 (a.c // a.groups) * a.kh * a.kw, a.f // a.groups,
                                 <float*>a.dwt, a.req_w == 2)
        elif a.dtype == DT_FLOAT32:
            sum_parts(<float*>cp.dw_parts, nparts, wsize, <float*>a.dwt, a.req_w == 2)
        else:
            sum_parts(<double*>cp.dw_parts, nparts, wsize, <double*>a.dwt, a.req_w == 2)
    free(cp.dw_parts)
    if cp.err == 0 and a.req_b and a.db != NULL:
        if a.dtype == DT_FLOAT32:
            conv_bias_grad(a, <float*>a.dy, <float*>a.db)
        else:
            conv_bias_grad(a, <double*>a.dy, <double*>a.db)
    return cp.err

include "_conv_pool.pxi"


include "_conv_twins.pxi"


# ---------------------------------------------------------------- pushing to the engine
from mxcy._engine cimport EVar, push_kernel
from mxcy._ndptr cimport nd_ptr, nd_var, nd_apart, nd_wflag

cdef bytes _B_CONV_FWD = b"Convolution"
cdef bytes _B_CONV_BWD = b"Convolution_backward"
cdef bytes _B_POOL_FWD = b"Pooling"
cdef bytes _B_POOL_BWD = b"Pooling_backward"
_DT = {np.dtype(np.float32): DT_FLOAT32, np.dtype(np.float64): DT_FLOAT64}
_REQ = {'null': 0, 'write': 1, 'inplace': 1, 'add': 2}


cdef int geometry(ConvArgs* a, tuple xs, tuple ws, tuple ys, stride, pad, dilate,
                  int groups) except -1:
    a.n, a.c, a.h, a.w = xs
    a.f = ws[0]
    a.kh, a.kw = ws[2], ws[3]
    a.sh, a.sw = stride
    a.ph, a.pw = pad
    a.dil_h, a.dil_w = dilate
    a.oh, a.ow = ys[2], ys[3]
    a.groups = groups
    return 0


def conv_forward(x, w, b, y, stride, pad, dilate, int groups, str req='write'):
    """Push y (req) conv2d(x, w) + b; 4-D NCHW NDArrays already validated."""
    cdef ConvArgs a
    cdef EVar* reads[3]
    cdef EVar* writes[1]
    cdef int nr = 2
    memset(&a, 0, sizeof(a))
    geometry(&a, x.shape, w.shape, y.shape, stride, pad, dilate, groups)
    a.dtype = _DT[np.dtype(x.dtype)]
    x, w, b = nd_apart(x, (y,)), nd_apart(w, (y,)), nd_apart(b, (y,))
    a.x, a.wt, a.y = nd_ptr(x), nd_ptr(w), nd_ptr(y)
    reads[0], reads[1] = nd_var(x), nd_var(w)
    if b is not None:
        a.b = nd_ptr(b)
        reads[2] = nd_var(b)
        nr = 3
    a.req_y = _REQ[req]
    if a.req_y == 0:
        return
    writes[0] = nd_var(y)
    push_kernel(conv_fwd_kernel, &a, sizeof(a), reads, nr, writes, 1, 0, _B_CONV_FWD,
                nd_wflag(y, 0))


def conv_backward(x, w, dy, dx, dw, db, stride, pad, dilate, int groups, str req_x,
                  str req_w, str req_b):
    """Push dx, dw, db (each per its req) of conv2d given dy."""
    cdef ConvArgs a
    cdef EVar* reads[3]
    cdef EVar* writes[3]
    cdef int nw = 0, flags = 0
    memset(&a, 0, sizeof(a))
    geometry(&a, x.shape, w.shape, dy.shape, stride, pad, dilate, groups)
    a.dtype = _DT[np.dtype(x.dtype)]
    outs = (dx if req_x != 'null' else None, dw if req_w != 'null' else None,
            db if req_b != 'null' else None)
    x, w, dy = nd_apart(x, outs), nd_apart(w, outs), nd_apart(dy, outs)
    a.x, a.wt, a.dy = nd_ptr(x), nd_ptr(w), nd_ptr(dy)
    reads[0], reads[1], reads[2] = nd_var(x), nd_var(w), nd_var(dy)
    a.req_x, a.req_w = _REQ[req_x], _REQ[req_w]
    a.req_b = _REQ[req_b] if db is not None else 0
    for arr, r in ((dx, a.req_x), (dw, a.req_w), (db, a.req_b)):
        if r:
            writes[nw] = nd_var(arr)
            flags |= nd_wflag(arr, nw)
            nw += 1
    if a.req_x:
        a.dx = nd_ptr(dx)
    if a.req_w:
        a.dwt = nd_ptr(dw)
    if a.req_b:
        a.db = nd_ptr(db)
    if nw:
        push_kernel(conv_bwd_kernel, &a, sizeof(a), reads, 3, writes, nw, 0, _B_CONV_BWD,
                    flags)


def pool_forward(x, y, kernel, stride, pad, int pool_type, bint count_include_pad,
                 str req='write'):
    """Push y (req) pool(x) over NCHW planes."""
    cdef PoolArgs a
    cdef EVar* r
    cdef EVar* wv
    memset(&a, 0, sizeof(a))
    fill_pool(&a, x.shape, kernel, stride, pad, y.shape[2], y.shape[3], pool_type,
              count_include_pad)
    a.dtype = _DT[np.dtype(x.dtype)]
    x = nd_apart(x, (y,))
    a.x, a.y = nd_ptr(x), nd_ptr(y)
    a.req = _REQ[req]
    if a.req == 0:
        return
    r, wv = nd_var(x), nd_var(y)
    push_kernel(pool_fwd_kernel, &a, sizeof(a), &r, 1, &wv, 1, 0, _B_POOL_FWD,
                nd_wflag(y, 0))


def pool_backward(x, dy, dx, kernel, stride, pad, int pool_type, bint count_include_pad,
                  str req='write'):
    """Push dx (req) the gradient of pool given x and dy."""
    cdef PoolArgs a
    cdef EVar* reads[2]
    cdef EVar* wv
    memset(&a, 0, sizeof(a))
    fill_pool(&a, x.shape, kernel, stride, pad, dy.shape[2], dy.shape[3], pool_type,
              count_include_pad)
    a.dtype = _DT[np.dtype(x.dtype)]
    x, dy = nd_apart(x, (dx,)), nd_apart(dy, (dx,))
    a.x, a.dy, a.dx = nd_ptr(x), nd_ptr(dy), nd_ptr(dx)
    a.req = _REQ[req]
    if a.req == 0:
        return
    reads[0], reads[1] = nd_var(x), nd_var(dy)
    wv = nd_var(dx)
    push_kernel(pool_bwd_kernel, &a, sizeof(a), reads, 2, &wv, 1, 0, _B_POOL_BWD,
                nd_wflag(dx, 0))
