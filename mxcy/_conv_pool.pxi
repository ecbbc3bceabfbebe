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


cdef int pool_fwd_typed(PoolArgs* a, real_t* x, real_t* y) noexcept nogil:
    cdef int64_t plane
    cdef int oi, oj, i, j, hs, he, ws, we, count
    cdef real_t acc, v
    cdef real_t* xp
    cdef real_t* yp
    cdef real_t* row
    cdef int* b = pool_bounds(a)
    cdef int* cb
    if b == NULL:
        return ERR_MEMORY
    cb = b + 3 * a.oh
    for plane in range(a.planes):
        xp = x + plane * a.h * a.w
        yp = y + plane * a.oh * a.ow
        for oi in range(a.oh):
            hs, he = b[3 * oi], b[3 * oi + 1]
            for oj in range(a.ow):
                ws, we = cb[3 * oj], cb[3 * oj + 1]
                if a.pool_type == 0:
                    acc = -1e308 if real_t is double else -3.4e38
                    for i in range(hs, he):
                        row = xp + i * a.w
                        for j in range(ws, we):
                            v = row[j]
                            if v > acc or v != v:
                                acc = v
                    if he <= hs or we <= ws:
                        acc = 0
                else:
                    acc = 0
                    for i in range(hs, he):
                        row = xp + i * a.w
                        for j in range(ws, we):
                            acc += row[j]
                    if a.pool_type == 1:
                        count = b[3 * oi + 2] * cb[3 * oj + 2]
                        acc = acc / count if count > 0 else 0
                if a.req == 2:
                    yp[oi * a.ow + oj] += acc
                else:
                    yp[oi * a.ow + oj] = acc
    free(b)
    return 0


cdef int pool_bwd_typed(PoolArgs* a, real_t* x, real_t* dy, real_t* dx) noexcept nogil:
    cdef int64_t plane
    cdef int oi, oj, i, j, hs, he, ws, we, count, best
    cdef real_t acc = 0, v, g
    cdef real_t* xp
    cdef real_t* dyp
    cdef real_t* dxp
    cdef int* b = pool_bounds(a)
    cdef int* cb
    if b == NULL:
        return ERR_MEMORY
    cb = b + 3 * a.oh
    if a.req == 1:
        memset(dx, 0, <size_t>a.planes * a.h * a.w * sizeof(real_t))
    for plane in range(a.planes):
        xp = x + plane * a.h * a.w
        dxp = dx + plane * a.h * a.w
        dyp = dy + plane * a.oh * a.ow
        for oi in range(a.oh):
            hs, he = b[3 * oi], b[3 * oi + 1]
            for oj in range(a.ow):
                ws, we = cb[3 * oj], cb[3 * oj + 1]
                g = dyp[oi * a.ow + oj]
                if a.pool_type == 0:
                    best = -1
                    for i in range(hs, he):
                        for j in range(ws, we):
                            v = xp[i * a.w + j]
                            if best < 0 or v > acc:
                                acc = v
                                best = i * a.w + j
                    if best >= 0:
                        dxp[best] += g
                else:
                    if a.pool_type == 1:
                        count = b[3 * oi + 2] * cb[3 * oj + 2]
                        if count <= 0:
                            continue
                        g = g / count
                    for i in range(hs, he):
                        for j in range(ws, we):
                            dxp[i * a.w + j] += g
    free(b)
    return 0


cdef int pool_fwd_kernel(void* args, char* errmsg) noexcept nogil:
    """y := pool(x) over each (h, w) plane."""
    cdef PoolArgs* a = <PoolArgs*>args
    if a.req == 0:
        return 0
    if a.dtype == DT_FLOAT32:
        return pool_fwd_typed(a, <float*>a.x, <float*>a.y)
    if a.dtype == DT_FLOAT64:
        return pool_fwd_typed(a, <double*>a.x, <double*>a.y)
    return ERR_VALUE


cdef int pool_bwd_kernel(void* args, char* errmsg) noexcept nogil:
    """dx (req) the gradient of pool at x given dy."""
    cdef PoolArgs* a = <PoolArgs*>args
    if a.req == 0:
        return 0
    if a.dtype == DT_FLOAT32:
        return pool_bwd_typed(a, <float*>a.x, <float*>a.dy, <float*>a.dx)
    if a.dtype == DT_FLOAT64:
        return pool_bwd_typed(a, <double*>a.x, <double*>a.dy, <double*>a.dx)
    return ERR_VALUE
