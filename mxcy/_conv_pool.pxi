# Part of mxcy/_conv.pyx (textually included there): the pooling kernels. Every pool runs
# the row loops of _pool_rows.h (float32/float64), except float32 2×2/stride-2 max pooling
# with AVX-512, which keeps the permute loops of _pool2x2.h.
# ---------------------------------------------------------------- pooling
cdef int* pool_bounds(PoolArgs* a) noexcept nogil:
    """Per output row and column: clipped window start/end and the average divisor parts,
    computed once per call: [hs, he, hc] per row then [ws, we, wc] per column."""
    cdef int* b = <int*>malloc((3 * a.oh + 3 * a.ow + 1) * sizeof(int))
    cdef int i, s, e, full
    if b == NULL:
        return NULL
    for i in range(a.oh):
        s = i * a.sh - a.ph
        e = min(s + a.kh, a.h + a.ph)
        full = e - s
        s = max(s, 0)
        e = min(e, a.h)
        b[3 * i], b[3 * i + 1] = s, e
        b[3 * i + 2] = full if a.count_include_pad else e - s
    for i in range(a.ow):
        s = i * a.sw - a.pw
        e = min(s + a.kw, a.w + a.pw)
        full = e - s
        s = max(s, 0)
        e = min(e, a.w)
        b[3 * a.oh + 3 * i], b[3 * a.oh + 3 * i + 1] = s, e
        b[3 * a.oh + 3 * i + 2] = full if a.count_include_pad else e - s
    return b


cdef inline bint pool_inside(PoolArgs* a) noexcept nogil:
    """Every window lies inside the plane (no padding reached)."""
    return (a.ph == 0 and a.pw == 0 and (a.oh - 1) * a.sh + a.kh <= a.h
            and (a.ow - 1) * a.sw + a.kw <= a.w)


cdef extern from "_pool_rows.h" nogil:
    ctypedef struct mxcy_pool_geom:
        int h, w, oh, ow, kh, kw, sh, sw, ph, pw, type, add
    int64_t mxcy_pool_scratch(const mxcy_pool_geom* g, int bwd)
    void mxcy_pool_fwd_f32(const mxcy_pool_geom* g, const int* b, const float* wc,
                           const float* x, float* y, float* buf)
    void mxcy_pool_fwd_f64(const mxcy_pool_geom* g, const int* b, const double* wc,
                           const double* x, double* y, double* buf)
    void mxcy_pool_bwd_f32(const mxcy_pool_geom* g, const int* b, const float* wc,
                           const float* x, const float* dy, float* dx, float* buf)
    void mxcy_pool_bwd_f64(const mxcy_pool_geom* g, const int* b, const double* wc,
                           const double* x, const double* dy, double* dx, double* buf)
    int mxcy_isa()


cdef int pool_rows_typed(PoolArgs* a, real_t* x, real_t* dy, real_t* out, int64_t lo,
                         int64_t hi, bint backward) noexcept nogil:
    """Planes [lo, hi) of the forward (out = y) or the backward (dy given, out = dx)
    through the row loops of _pool_rows.h."""
    cdef mxcy_pool_geom g
    cdef int64_t plane, px = <int64_t>a.h * a.w, py = <int64_t>a.oh * a.ow
    cdef int j
    cdef int* b = pool_bounds(a)
    cdef real_t* buf
    cdef real_t* wc
    if b == NULL:
        return ERR_MEMORY
    g.h, g.w, g.oh, g.ow, g.kh, g.kw = a.h, a.w, a.oh, a.ow, a.kh, a.kw
    g.sh, g.sw, g.ph, g.pw, g.type, g.add = a.sh, a.sw, a.ph, a.pw, a.pool_type, a.req == 2
    buf = <real_t*>malloc((mxcy_pool_scratch(&g, backward) + a.ow + 16) * sizeof(real_t))
    if buf == NULL:
        free(b)
        return ERR_MEMORY
    wc = buf + mxcy_pool_scratch(&g, backward)
    for j in range(a.ow):
        wc[j] = b[3 * a.oh + 3 * j + 2]
    for plane in range(lo, hi):
        if real_t is float:
            if backward:
                mxcy_pool_bwd_f32(&g, b, wc, x + plane * px, dy + plane * py, out + plane * px,
                                  buf)
            else:
                mxcy_pool_fwd_f32(&g, b, wc, x + plane * px, out + plane * py, buf)
        else:
            if backward:
                mxcy_pool_bwd_f64(&g, b, wc, x + plane * px, dy + plane * py, out + plane * px,
                                  buf)
            else:
                mxcy_pool_fwd_f64(&g, b, wc, x + plane * px, out + plane * py, buf)
    free(buf)
    free(b)
    return 0


cdef int pool_fwd_typed(PoolArgs* a, real_t* x, real_t* y, int64_t lo,
                        int64_t hi) noexcept nogil:
    """Planes [lo, hi) of y (req) pool(x)."""
    if real_t is float:
        if pool_max2x2(a):
            pool_max2x2_planes(a, x, NULL, y, lo, hi, False)
            return 0
    return pool_rows_typed(a, x, NULL, y, lo, hi, False)


cdef extern from "_pool2x2.h" nogil:
    void mxcy_maxpool2x2_fwd_f32(const float* r0, const float* r1, float* y, int ow, int add)
    void mxcy_maxpool2x2_bwd_f32(const float* r0, const float* r1, const float* g, float* d0,
                                 float* d1, int ow, int add)


cdef inline bint pool_max2x2(PoolArgs* a) noexcept nogil:
    """float32 max over 2×2 windows at stride 2, all inside, with AVX-512: the loops of
    _pool2x2.h apply (with AVX2 alone, the row loops of _pool_rows.h are faster)."""
    return (mxcy_isa() >= 2 and a.dtype == DT_FLOAT32 and a.pool_type == 0 and a.kh == 2
            and a.kw == 2 and a.sh == 2 and a.sw == 2 and pool_inside(a))


cdef void pool_max2x2_planes(PoolArgs* a, float* x, float* dy, float* out, int64_t lo,
                             int64_t hi, bint backward) noexcept nogil:
    """Planes [lo, hi) of the forward (out = y) or the backward (dy given, out = dx), one
    output row at a time. The backward writes every input it covers, so only inputs no
    window covers need zeroing first."""
    cdef int H = a.h, W = a.w, OH = a.oh, OW = a.ow, add = a.req == 2
    cdef int64_t plane, row
    cdef int oi
    for plane in range(lo, hi):
        if backward and not add and (2 * OH != H or 2 * OW != W):
            memset(out + plane * H * W, 0, <size_t>H * W * sizeof(float))
        for oi in range(OH):
            row = plane * H * W + <int64_t>(2 * oi) * W
            if backward:
                mxcy_maxpool2x2_bwd_f32(x + row, x + row + W, dy + plane * OH * OW + oi * OW,
                                        out + row, out + row + W, OW, add)
            else:
                mxcy_maxpool2x2_fwd_f32(x + row, x + row + W, out + plane * OH * OW + oi * OW,
                                        OW, add)


cdef inline bint pool_whole_plane(PoolArgs* a) noexcept nogil:
    """One window covering the whole plane, no padding (global pooling)."""
    return (a.oh == 1 and a.ow == 1 and a.ph == 0 and a.pw == 0 and a.kh >= a.h
            and a.kw >= a.w)


cdef void pool_whole_plane_bwd(PoolArgs* a, real_t* dy, real_t* dx, int64_t lo,
                               int64_t hi) noexcept nogil:
    """avg/sum over whole planes: each dx plane is its dy value (÷ h·w for avg)."""
    cdef int64_t plane, i, px = <int64_t>a.h * a.w
    cdef real_t v
    cdef real_t* d
    for plane in range(lo, hi):
        v = dy[plane] / px if a.pool_type == 1 else dy[plane]
        d = dx + plane * px
        if a.req == 2:
            for i in range(px):
                d[i] += v
        else:
            for i in range(px):
                d[i] = v


cdef int pool_bwd_typed(PoolArgs* a, real_t* x, real_t* dy, real_t* dx, int64_t lo,
                        int64_t hi) noexcept nogil:
    """Planes [lo, hi) of dx (req) the gradient of pool given dy."""
    if a.pool_type != 0 and pool_whole_plane(a):
        pool_whole_plane_bwd(a, dy, dx, lo, hi)
        return 0
    if real_t is float:
        if pool_max2x2(a):
            pool_max2x2_planes(a, x, dy, dx, lo, hi, True)
            return 0
    return pool_rows_typed(a, x, dy, dx, lo, hi, True)


# Pooling is cut into parts by planes (run_parts) when it is big enough to share.
cdef enum:
    POOL_SPLIT_READS = 1 << 18

cdef struct PoolParts:
    PoolArgs* a
    int backward
    int err


cdef void pool_part(void* arg, int part, int nparts) noexcept nogil:
    cdef PoolParts* pp = <PoolParts*>arg
    cdef PoolArgs* a = pp.a
    cdef int64_t lo = a.planes * part // nparts, hi = a.planes * (part + 1) // nparts
    cdef int rc
    if pp.backward:
        if a.dtype == DT_FLOAT32:
            rc = pool_bwd_typed(a, <float*>a.x, <float*>a.dy, <float*>a.dx, lo, hi)
        else:
            rc = pool_bwd_typed(a, <double*>a.x, <double*>a.dy, <double*>a.dx, lo, hi)
    elif a.dtype == DT_FLOAT32:
        rc = pool_fwd_typed(a, <float*>a.x, <float*>a.y, lo, hi)
    else:
        rc = pool_fwd_typed(a, <double*>a.x, <double*>a.y, lo, hi)
    if rc:
        pp.err = rc


cdef int run_pool(PoolArgs* a, int backward) noexcept nogil:
    cdef PoolParts pp
    cdef int64_t reads = <int64_t>a.planes * a.oh * a.ow * a.kh * a.kw
    if a.req == 0:
        return 0
    if a.dtype != DT_FLOAT32 and a.dtype != DT_FLOAT64:
        return ERR_VALUE
    pp.a = a
    pp.backward = backward
    pp.err = 0
    run_parts(pool_part, &pp, 4 if reads >= POOL_SPLIT_READS and a.planes >= 4 else 1)
    return pp.err


cdef int pool_fwd_kernel(void* args, char* errmsg) noexcept nogil:
    """y := pool(x) over each (h, w) plane."""
    return run_pool(<PoolArgs*>args, 0)


cdef int pool_bwd_kernel(void* args, char* errmsg) noexcept nogil:
    """dx (req) the gradient of pool at x given dy."""
    return run_pool(<PoolArgs*>args, 1)
