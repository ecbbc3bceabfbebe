# Part of mxcy/_conv.pyx (textually included there): 1×1 (pointwise) convolutions as plain
# GEMMs on the NCHW data (issue 16).
#
# With a 1×1 window and no padding, image n's columns are the image itself (cg × P rows,
# P = H·W apart), so per group
#   forward  y_n (fg × P)  = W (fg × cg) · x_n        (straight into y, no column copy)
#   dx       dx_n (cg × P) = Wᵀ · dy_n
#   dW       dW (fg × cg) += dy_n · x_nᵀ
# A stride > 1 first gathers the strided pixels (cg × oh·ow: a quarter of the image at
# stride 2) and scatters the data gradient back. These are MobileNets' pointwise layers
# and ResNets' projection shortcuts, where im2col was a full copy of every image. Small
# planes of several images still go through im2col (use_pointwise in _conv.pyx): its chunks
# put the images side by side, one wide GEMM instead of a narrow one per image.


cdef inline bint is_pointwise(ConvArgs* a) noexcept nogil:
    return a.kh == 1 and a.kw == 1 and a.ph == 0 and a.pw == 0


cdef inline void rm_gemm_ld(bint ta, bint tb, int m, int n, int k, real_t* a, int lda,
                            real_t* b, int ldb, real_t beta, real_t* c,
                            int ldc) noexcept nogil:
    """c := op(a)·op(b) + beta·c, row-major with explicit row strides."""
    cdef char cta = b'T' if ta else b'N'
    cdef char ctb = b'T' if tb else b'N'
    cdef real_t one = 1
    if m == 0 or n == 0:
        return
    if real_t is float:
        sgemm(&ctb, &cta, &n, &m, &k, &one, b, &ldb, a, &lda, &beta, c, &ldc)
    else:
        dgemm(&ctb, &cta, &n, &m, &k, &one, b, &ldb, a, &lda, &beta, c, &ldc)


cdef real_t bias_prefill(ConvArgs* a, real_t* b, real_t* yg, int f0, int fg, int cols,
                         int64_t ld) noexcept nogil:
    """Rows f0 .. f0+fg of y (cols wide, ld apart) get the bias (req write: set, add:
    added); returns the beta for the GEMM that follows (1: accumulate onto y)."""
    cdef int f, p
    cdef real_t bias
    cdef real_t* row
    if b == NULL:
        return 1 if a.req_y == 2 else 0
    for f in range(fg):
        row = yg + <int64_t>f * ld
        bias = b[f0 + f]
        if a.req_y == 2:
            for p in range(cols):
                row[p] += bias
        else:
            for p in range(cols):
                row[p] = bias
    return 1


cdef void gather_strided(ConvArgs* a, real_t* x, int r0, int r1, real_t* out) noexcept nogil:
    """out[ci, oi − r0, oj] := x[ci, oi·sh, oj·sw] for output rows [r0, r1)."""
    cdef int ci, oi, oj
    cdef real_t* src
    for ci in range(a.c):
        for oi in range(r0, r1):
            src = x + (<int64_t>ci * a.h + <int64_t>oi * a.sh) * a.w
            for oj in range(a.ow):
                out[oj] = src[oj * a.sw]
            out += a.ow


cdef void scatter_strided(ConvArgs* a, real_t* src, real_t* dx) noexcept nogil:
    """dx[ci, oi·sh, oj·sw] += src[ci, oi, oj] (the adjoint of gather_strided)."""
    cdef int ci, oi, oj
    cdef real_t* dst
    for ci in range(a.c):
        for oi in range(a.oh):
            dst = dx + (<int64_t>ci * a.h + <int64_t>oi * a.sh) * a.w
            for oj in range(a.ow):
                dst[oj * a.sw] += src[oj]
            src += a.ow


cdef int conv_fwd_1x1(ConvArgs* a, real_t* x, real_t* wt, real_t* b, real_t* y, int lo,
                      int hi, int r0, int r1) noexcept nogil:
    """Images [lo, hi), output rows [r0, r1): y (req) W·x + b."""
    cdef int cg = a.c // a.groups, fg = a.f // a.groups, n, g
    cdef int P = a.oh * a.ow, cols = (r1 - r0) * a.ow, p0 = r0 * a.ow, ld
    cdef int64_t xs = <int64_t>a.c * a.h * a.w, ys = <int64_t>a.f * P
    cdef bint strided = a.sh != 1 or a.sw != 1
    cdef real_t* buf = NULL
    cdef real_t* src
    cdef real_t* yg
    cdef real_t beta
    if strided:
        buf = <real_t*>malloc(<size_t>a.c * cols * sizeof(real_t) + 1)
        if buf == NULL:
            return ERR_MEMORY
    for n in range(lo, hi):
        if strided:
            gather_strided(a, x + n * xs, r0, r1, buf)
            src, ld = buf, cols
        else:
            src, ld = x + n * xs + p0, P
        for g in range(a.groups):
            yg = y + n * ys + <int64_t>g * fg * P + p0
            beta = bias_prefill(a, b, yg, g * fg, fg, cols, P)
            rm_gemm_ld(False, False, fg, cols, cg, wt + <int64_t>g * fg * cg, cg,
                       src + <int64_t>g * cg * ld, ld, beta, yg, P)
    free(buf)
    return 0


cdef int conv_bwd_1x1(ConvArgs* a, real_t* x, real_t* wt, real_t* dy, real_t* dx,
                      real_t* dw, int lo, int hi) noexcept nogil:
    """Images [lo, hi): dx (req_x) of those images; their dW added into `dw` (f × cg)."""
    cdef int cg = a.c // a.groups, fg = a.f // a.groups, n, g, P = a.oh * a.ow
    cdef int HW = a.h * a.w
    cdef int64_t xs = <int64_t>a.c * HW, ys = <int64_t>a.f * P
    cdef bint strided = a.sh != 1 or a.sw != 1
    cdef real_t* buf = NULL
    cdef real_t* src
    cdef real_t* dyg
    if strided:
        buf = <real_t*>malloc(<size_t>a.c * P * sizeof(real_t) + 1)
        if buf == NULL:
            return ERR_MEMORY
        if a.req_x == 1:
            memset(dx + lo * xs, 0, <size_t>(hi - lo) * xs * sizeof(real_t))
    for n in range(lo, hi):
        if a.req_w:
            src = x + n * xs
            if strided:
                gather_strided(a, src, 0, a.oh, buf)
                src = buf
            for g in range(a.groups):
                rm_gemm_ld(False, True, fg, cg, P, dy + n * ys + <int64_t>g * fg * P, P,
                           src + <int64_t>g * cg * P, P, 1, dw + <int64_t>g * fg * cg, cg)
        if a.req_x:
            for g in range(a.groups):
                dyg = dy + n * ys + <int64_t>g * fg * P
                if strided:
                    rm_gemm_ld(True, False, cg, P, fg, wt + <int64_t>g * fg * cg, cg, dyg, P,
                               0, buf + <int64_t>g * cg * P, P)
                else:
                    rm_gemm_ld(True, False, cg, P, fg, wt + <int64_t>g * fg * cg, cg, dyg, P,
                               1 if a.req_x == 2 else 0,
                               dx + n * xs + <int64_t>g * cg * HW, HW)
            if strided:
                scatter_strided(a, buf, dx + n * xs)
    free(buf)
    return 0
