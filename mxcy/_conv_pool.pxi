# Part of mxcy/_conv.pyx (textually included there): the pooling kernels.
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
    """Every window lies inside the plane (no padding reached): the fast loops apply."""
    return (a.ph == 0 and a.pw == 0 and (a.oh - 1) * a.sh + a.kh <= a.h
            and (a.ow - 1) * a.sw + a.kw <= a.w)


cdef void pool_fwd_inside(PoolArgs* a, real_t* x, real_t* y, real_t* acc, int64_t lo,
                          int64_t hi) noexcept nogil:
    """pool_fwd_typed when every window is inside: for each output row, one pass over the
    outputs per window offset (tight, branch-light loops) into the row accumulator."""
    cdef int H = a.h, W = a.w, OH = a.oh, OW = a.ow, KH = a.kh, KW = a.kw
    cdef int SH = a.sh, SW = a.sw, ptype = a.pool_type, req = a.req
    cdef int64_t plane
    cdef int oi, oj, di, dj
    cdef real_t v, scale = <real_t>1.0 / (KH * KW)
    cdef real_t* row
    cdef real_t* yp
    for plane in range(lo, hi):
        for oi in range(OH):
            for di in range(KH):
                row = x + plane * H * W + <int64_t>(oi * SH + di) * W
                for dj in range(KW):
                    if di == 0 and dj == 0:
                        for oj in range(OW):
                            acc[oj] = row[oj * SW]
                    elif ptype == 0:
                        for oj in range(OW):
                            v = row[oj * SW + dj]
                            acc[oj] = v if (v > acc[oj] or v != v) else acc[oj]
                    else:
                        for oj in range(OW):
                            acc[oj] += row[oj * SW + dj]
            yp = y + plane * OH * OW + <int64_t>oi * OW
            if ptype == 1:
                for oj in range(OW):
                    acc[oj] *= scale
            if req == 2:
                for oj in range(OW):
                    yp[oj] += acc[oj]
            else:
                for oj in range(OW):
                    yp[oj] = acc[oj]


cdef int pool_fwd_typed(PoolArgs* a, real_t* x, real_t* y, int64_t lo,
                        int64_t hi) noexcept nogil:
    """Planes [lo, hi) of y (req) pool(x). The geometry lives in locals: stores through
    y may alias the argument struct, which would force a reload of every field."""
    cdef real_t* acc_row
    if real_t is float:
        if pool_max2x2(a):
            pool_max2x2_planes(a, x, NULL, y, lo, hi, False)
            return 0
    if pool_inside(a):
        acc_row = <real_t*>malloc(a.ow * sizeof(real_t) + 1)
        if acc_row == NULL:
            return ERR_MEMORY
        pool_fwd_inside(a, x, y, acc_row, lo, hi)
        free(acc_row)
        return 0
    cdef int64_t plane
    cdef int oi, oj, i, j, hs, he, ws, we, count
    cdef int H = a.h, W = a.w, OH = a.oh, OW = a.ow, ptype = a.pool_type, req = a.req
    cdef real_t acc, v
    cdef real_t* xp
    cdef real_t* yp
    cdef real_t* row
    cdef int* b = pool_bounds(a)
    cdef int* cb
    if b == NULL:
        return ERR_MEMORY
    cb = b + 3 * OH
    for plane in range(lo, hi):
        xp = x + plane * H * W
        yp = y + plane * OH * OW
        for oi in range(OH):
            hs, he = b[3 * oi], b[3 * oi + 1]
            for oj in range(OW):
                ws, we = cb[3 * oj], cb[3 * oj + 1]
                if ptype == 0:
                    if he <= hs or we <= ws:
                        # a window of padding only: MXNet's lowest finite value
                        acc = -FLT_MAX if real_t is float else -DBL_MAX
                    else:
                        acc = xp[hs * W + ws]
                        for i in range(hs, he):
                            row = xp + i * W
                            for j in range(ws, we):
                                v = row[j]
                                if v > acc or v != v:
                                    acc = v
                else:
                    acc = 0
                    for i in range(hs, he):
                        row = xp + i * W
                        for j in range(ws, we):
                            acc += row[j]
                    if ptype == 1:
                        count = b[3 * oi + 2] * cb[3 * oj + 2]
                        acc = acc / count if count > 0 else 0
                if req == 2:
                    yp[oi * OW + oj] += acc
                else:
                    yp[oi * OW + oj] = acc
    free(b)
    return 0


cdef void pool_bwd_inside(PoolArgs* a, real_t* x, real_t* dy, real_t* dx, int64_t lo,
                          int64_t hi) noexcept nogil:
    """pool_bwd_typed (after dx is zeroed or kept for add) when every window is inside."""
    cdef int H = a.h, W = a.w, OH = a.oh, OW = a.ow, KH = a.kh, KW = a.kw
    cdef int SH = a.sh, SW = a.sw, ptype = a.pool_type
    cdef int64_t plane, base, r, best
    cdef int oi, oj, di, dj
    cdef real_t v, top, g, scale = <real_t>1.0 / (KH * KW) if a.pool_type == 1 else 1
    cdef real_t* xp
    cdef real_t* dxp
    cdef real_t* dyp
    for plane in range(lo, hi):
        xp = x + plane * H * W
        dxp = dx + plane * H * W
        dyp = dy + plane * OH * OW
        for oi in range(OH):
            for oj in range(OW):
                base = <int64_t>oi * SH * W + oj * SW
                g = dyp[oi * OW + oj]
                if ptype == 0 and KH == 2 and KW == 2:     # the common 2×2 window, unrolled
                    best = base
                    top = xp[base]
                    if xp[base + 1] > top:
                        best = base + 1
                        top = xp[best]
                    if xp[base + W] > top:
                        best = base + W
                        top = xp[best]
                    if xp[base + W + 1] > top:
                        best = base + W + 1
                    dxp[best] += g
                elif ptype == 0:
                    best = base
                    top = xp[base]
                    for di in range(KH):
                        r = base + <int64_t>di * W
                        for dj in range(KW):
                            v = xp[r + dj]
                            if v > top:
                                top = v
                                best = r + dj
                    dxp[best] += g
                else:
                    g = g * scale
                    for di in range(KH):
                        r = base + <int64_t>di * W
                        for dj in range(KW):
                            dxp[r + dj] += g


cdef extern from "_pool2x2.h" nogil:
    void mxcy_maxpool2x2_fwd_f32(const float* r0, const float* r1, float* y, int ow, int add)
    void mxcy_maxpool2x2_bwd_f32(const float* r0, const float* r1, const float* g, float* d0,
                                 float* d1, int ow, int add)


cdef inline bint pool_max2x2(PoolArgs* a) noexcept nogil:
    """float32 max over 2×2 windows at stride 2, all inside: the loops of _pool2x2.h apply."""
    return (a.dtype == DT_FLOAT32 and a.pool_type == 0 and a.kh == 2 and a.kw == 2
            and a.sh == 2 and a.sw == 2 and pool_inside(a))


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


cdef int pool_bwd_typed(PoolArgs* a, real_t* x, real_t* dy, real_t* dx, int64_t lo,
                        int64_t hi) noexcept nogil:
    """Planes [lo, hi) of dx (req) the gradient of pool given dy."""
    cdef int64_t plane
    cdef int oi, oj, i, j, hs, he, ws, we, count, best
    cdef int H = a.h, W = a.w, OH = a.oh, OW = a.ow, ptype = a.pool_type
    cdef real_t acc = 0, v, g
    cdef real_t* xp
    cdef real_t* dyp
    cdef real_t* dxp
    cdef int* b
    cdef int* cb
    if real_t is float:
        if pool_max2x2(a):
            pool_max2x2_planes(a, x, dy, dx, lo, hi, True)
            return 0
    if a.req == 1:
        memset(dx + lo * H * W, 0, <size_t>(hi - lo) * H * W * sizeof(real_t))
    if pool_inside(a):
        pool_bwd_inside(a, x, dy, dx, lo, hi)
        return 0
    b = pool_bounds(a)
    if b == NULL:
        return ERR_MEMORY
    cb = b + 3 * OH
    for plane in range(lo, hi):
        xp = x + plane * H * W
        dxp = dx + plane * H * W
        dyp = dy + plane * OH * OW
        for oi in range(OH):
            hs, he = b[3 * oi], b[3 * oi + 1]
            for oj in range(OW):
                ws, we = cb[3 * oj], cb[3 * oj + 1]
                g = dyp[oi * OW + oj]
                if ptype == 0:
                    best = -1
                    for i in range(hs, he):
                        for j in range(ws, we):
                            v = xp[i * W + j]
                            if best < 0 or v > acc:
                                acc = v
                                best = i * W + j
                    if best >= 0:
                        dxp[best] += g
                else:
                    if ptype == 1:
                        count = b[3 * oi + 2] * cb[3 * oj + 2]
                        if count <= 0:
                            continue
                        g = g / count
                    for i in range(hs, he):
                        for j in range(ws, we):
                            dxp[i * W + j] += g
    free(b)
    return 0


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
