# Part of mxcy/_ops.pyx (textually included there): BatchNorm forward and backward (issue 16).
# As a NumPy Python op it held the GIL on a worker for every layer of a convnet.
#
# The data is seen as an (outer, channels, inner) view, channels the normalised axis, so
# every `axis` takes the same loops (NCHW with axis 1: outer N, inner H·W). Statistics are
# per channel, so a big call is split by channel ranges (run_parts): no two parts write
# the same element. Sums run in double, four at a time (independent adds, exact order).

cdef struct BNArgs:
    char* x
    char* gamma
    char* beta
    char* mm             # moving_mean: read; written in training (update)
    char* mv             # moving_var
    char* y              # forward output; backward: the forward output for the ReLU mask
    char* mean           # the mean output (forward writes it, backward reads it)
    char* invstd         # the 'var' output: 1 / sqrt(var + eps)
    char* dy
    char* dx
    char* dgamma
    char* dbeta
    int64_t outer
    int64_t channels
    int64_t inner
    int dtype
    int req_y            # forward output; 0 null, 1 write, 2 add
    int req_x            # backward: dx, dgamma, dbeta
    int req_g
    int req_b
    int update           # forward: batch statistics and the moving-statistics update
    int batch_stats      # backward: the statistics depended on x (training)
    int fix_gamma
    int relu
    double eps
    double momentum


cdef inline double bn_sum(real_t* p, int64_t n, double shift) noexcept nogil:
    """Σ (p[i] - shift) in double, four running sums."""
    cdef double s0 = 0, s1 = 0, s2 = 0, s3 = 0
    cdef int64_t i, n4 = n & ~(<int64_t>3)
    for i in range(0, n4, 4):
        s0 += p[i] - shift
        s1 += p[i + 1] - shift
        s2 += p[i + 2] - shift
        s3 += p[i + 3] - shift
    for i in range(n4, n):
        s0 += p[i] - shift
    return (s0 + s1) + (s2 + s3)


cdef inline double bn_sqdev(real_t* p, int64_t n, double mean) noexcept nogil:
    """Σ (p[i] - mean)² in double, four running sums."""
    cdef double s0 = 0, s1 = 0, s2 = 0, s3 = 0, d0, d1, d2, d3
    cdef int64_t i, n4 = n & ~(<int64_t>3)
    for i in range(0, n4, 4):
        d0 = p[i] - mean
        d1 = p[i + 1] - mean
        d2 = p[i + 2] - mean
        d3 = p[i + 3] - mean
        s0 += d0 * d0
        s1 += d1 * d1
        s2 += d2 * d2
        s3 += d3 * d3
    for i in range(n4, n):
        d0 = p[i] - mean
        s0 += d0 * d0
    return (s0 + s1) + (s2 + s3)


cdef inline void bn_sums_bwd(real_t* dy, real_t* x, real_t* y, int64_t n, double mean,
                             double* sdy, double* sdyx) noexcept nogil:
    """sdy += Σ dy', sdyx += Σ dy'·(x - mean), dy' = dy where y > 0 (y NULL: dy)."""
    cdef double a0 = 0, a1 = 0, b0 = 0, b1 = 0, d0, d1
    cdef int64_t i, n2 = n & ~(<int64_t>1)
    for i in range(0, n2, 2):
        d0 = dy[i] if y == NULL or y[i] > 0 else 0
        d1 = dy[i + 1] if y == NULL or y[i + 1] > 0 else 0
        a0 += d0
        a1 += d1
        b0 += d0 * (x[i] - mean)
        b1 += d1 * (x[i + 1] - mean)
    for i in range(n2, n):
        d0 = dy[i] if y == NULL or y[i] > 0 else 0
        a0 += d0
        b0 += d0 * (x[i] - mean)
    sdy[0] += a0 + a1
    sdyx[0] += b0 + b1


cdef void bn_forward_channels(BNArgs* a, real_t* x, real_t* y, int64_t c0,
                              int64_t c1) noexcept nogil:
    """Channels [c0, c1): statistics, the moving update, y (req) x·scale + shift."""
    cdef real_t* g = <real_t*>a.gamma
    cdef real_t* bt = <real_t*>a.beta
    cdef real_t* mm = <real_t*>a.mm
    cdef real_t* mv = <real_t*>a.mv
    cdef int64_t c, o, i, B = a.inner, m = a.outer * a.inner
    cdef double mean, var, s, invstd
    cdef real_t scale, shift, v
    cdef real_t* xr
    cdef real_t* yr
    for c in range(c0, c1):
        if a.update:
            s = 0
            for o in range(a.outer):
                s += bn_sum(x + (o * a.channels + c) * B, B, 0)
            mean = s / m
            s = 0
            for o in range(a.outer):
                s += bn_sqdev(x + (o * a.channels + c) * B, B, mean)
            var = s / m
            mm[c] = <real_t>(mm[c] * a.momentum + mean * (1 - a.momentum))
            mv[c] = <real_t>(mv[c] * a.momentum + var * (1 - a.momentum))
        else:
            mean = mm[c]
            var = mv[c]
        invstd = 1.0 / sqrt(var + a.eps)
        (<real_t*>a.mean)[c] = <real_t>mean
        (<real_t*>a.invstd)[c] = <real_t>invstd
        if a.req_y == 0:
            continue
        scale = <real_t>(invstd if a.fix_gamma else g[c] * invstd)
        shift = <real_t>(bt[c] - mean * scale)
        for o in range(a.outer):
            xr = x + (o * a.channels + c) * B
            yr = y + (o * a.channels + c) * B
            if a.req_y == 2:
                for i in range(B):
                    v = xr[i] * scale + shift
                    yr[i] += (v if v > 0 else 0) if a.relu else v
            elif a.relu:
                for i in range(B):
                    v = xr[i] * scale + shift
                    yr[i] = v if v > 0 else 0
            else:
                for i in range(B):
                    yr[i] = xr[i] * scale + shift


cdef void bn_backward_channels(BNArgs* a, real_t* x, real_t* dy, real_t* dx,
                               int64_t c0, int64_t c1) noexcept nogil:
    """Channels [c0, c1): dβ = Σ dy', dγ = Σ dy'·x̂, and dx = γ·invstd·(dy' − mean(dy')
    − x̂·mean(dy'·x̂)) (only γ·invstd·dy' when the statistics were constants)."""
    cdef real_t* y = <real_t*>a.y if a.relu else NULL
    cdef real_t* g = <real_t*>a.gamma
    cdef int64_t c, o, i, B = a.inner, m = a.outer * a.inner, off
    cdef double mean, invstd, sdy, sdyx, gam, dgam
    cdef real_t k1, k2, k3, d
    cdef real_t* dyr
    cdef real_t* xr
    cdef real_t* dxr
    cdef real_t* yr
    for c in range(c0, c1):
        mean = (<real_t*>a.mean)[c]
        invstd = (<real_t*>a.invstd)[c]
        gam = 1.0 if a.fix_gamma else g[c]
        sdy = 0
        sdyx = 0
        if a.req_g or a.req_b or (a.req_x and a.batch_stats):
            for o in range(a.outer):
                off = (o * a.channels + c) * B
                bn_sums_bwd(dy + off, x + off, y + off if y != NULL else NULL, B, mean,
                            &sdy, &sdyx)
        dgam = 0 if a.fix_gamma else sdyx * invstd
        if a.req_g == 1:
            (<real_t*>a.dgamma)[c] = <real_t>dgam
        elif a.req_g == 2:
            (<real_t*>a.dgamma)[c] += <real_t>dgam
        if a.req_b == 1:
            (<real_t*>a.dbeta)[c] = <real_t>sdy
        elif a.req_b == 2:
            (<real_t*>a.dbeta)[c] += <real_t>sdy
        if a.req_x == 0:
            continue
        # dx = k1·dy' − k2 − k3·(x − mean)
        k1 = <real_t>(gam * invstd)
        k2 = <real_t>(gam * invstd * sdy / m) if a.batch_stats else 0
        k3 = <real_t>(gam * invstd * invstd * invstd * sdyx / m) if a.batch_stats else 0
        for o in range(a.outer):
            off = (o * a.channels + c) * B
            dyr, xr, dxr = dy + off, x + off, dx + off
            yr = y + off if y != NULL else NULL
            if a.req_x == 2:
                for i in range(B):
                    d = dyr[i] if yr == NULL or yr[i] > 0 else 0
                    dxr[i] += k1 * d - k2 - k3 * (xr[i] - <real_t>mean)
            elif yr != NULL:
                for i in range(B):
                    d = dyr[i] if yr[i] > 0 else 0
                    dxr[i] = k1 * d - k2 - k3 * (xr[i] - <real_t>mean)
            else:
                for i in range(B):
                    dxr[i] = k1 * dyr[i] - k2 - k3 * (xr[i] - <real_t>mean)


# Channels last (inner == 1: an (N, C) batch, or NHWC with axis -1): one channel's values
# are C apart, so per-channel loops would stride through memory once per channel. These
# walk the rows in order instead, over blocks of up to BN_BLOCK channels at a time.
cdef enum:
    BN_BLOCK = 128


cdef void bn_forward_last(BNArgs* a, real_t* x, real_t* y, int64_t c0,
                          int64_t c1) noexcept nogil:
    """bn_forward_channels for inner == 1."""
    cdef double s[BN_BLOCK]
    cdef double q[BN_BLOCK]
    cdef real_t scale[BN_BLOCK]
    cdef real_t shift[BN_BLOCK]
    cdef real_t* g = <real_t*>a.gamma
    cdef real_t* mm = <real_t*>a.mm
    cdef real_t* mv = <real_t*>a.mv
    cdef int64_t cb = c0, n, o, k, C = a.channels, m = a.outer
    cdef double mean, var, invstd, d
    cdef real_t v
    cdef real_t* xr
    cdef real_t* yr
    while cb < c1:
        n = min(<int64_t>BN_BLOCK, c1 - cb)
        if a.update:
            for k in range(n):
                s[k] = 0
                q[k] = 0
            for o in range(m):
                xr = x + o * C + cb
                for k in range(n):
                    s[k] += xr[k]
            for k in range(n):
                s[k] /= m
            for o in range(m):
                xr = x + o * C + cb
                for k in range(n):
                    d = xr[k] - s[k]
                    q[k] += d * d
        for k in range(n):
            if a.update:
                mean, var = s[k], q[k] / m
                mm[cb + k] = <real_t>(mm[cb + k] * a.momentum + mean * (1 - a.momentum))
                mv[cb + k] = <real_t>(mv[cb + k] * a.momentum + var * (1 - a.momentum))
            else:
                mean, var = mm[cb + k], mv[cb + k]
            invstd = 1.0 / sqrt(var + a.eps)
            (<real_t*>a.mean)[cb + k] = <real_t>mean
            (<real_t*>a.invstd)[cb + k] = <real_t>invstd
            scale[k] = <real_t>(invstd if a.fix_gamma else g[cb + k] * invstd)
            shift[k] = <real_t>((<real_t*>a.beta)[cb + k] - mean * scale[k])
        for o in range(m if a.req_y else 0):
            xr = x + o * C + cb
            yr = y + o * C + cb
            if a.relu:
                for k in range(n):
                    v = xr[k] * scale[k] + shift[k]
                    v = v if v > 0 else 0
                    yr[k] = yr[k] + v if a.req_y == 2 else v
            elif a.req_y == 2:
                for k in range(n):
                    yr[k] += xr[k] * scale[k] + shift[k]
            else:
                for k in range(n):
                    yr[k] = xr[k] * scale[k] + shift[k]
        cb += n


cdef void bn_backward_last(BNArgs* a, real_t* x, real_t* dy, real_t* dx, int64_t c0,
                           int64_t c1) noexcept nogil:
    """bn_backward_channels for inner == 1."""
    cdef double sdy[BN_BLOCK]
    cdef double sdyx[BN_BLOCK]
    cdef real_t mean[BN_BLOCK]
    cdef real_t k1[BN_BLOCK]
    cdef real_t k2[BN_BLOCK]
    cdef real_t k3[BN_BLOCK]
    cdef real_t* y = <real_t*>a.y if a.relu else NULL
    cdef int64_t cb = c0, n, o, k, C = a.channels, m = a.outer, off
    cdef double invstd, gam, dgam
    cdef real_t d
    while cb < c1:
        n = min(<int64_t>BN_BLOCK, c1 - cb)
        for k in range(n):
            sdy[k] = 0
            sdyx[k] = 0
            mean[k] = (<real_t*>a.mean)[cb + k]
        for o in range(m if a.req_g or a.req_b or (a.req_x and a.batch_stats) else 0):
            off = o * C + cb
            if y != NULL:
                for k in range(n):
                    d = dy[off + k] if y[off + k] > 0 else 0
                    sdy[k] += d
                    sdyx[k] += d * (x[off + k] - mean[k])
            else:
                for k in range(n):
                    sdy[k] += dy[off + k]
                    sdyx[k] += dy[off + k] * (x[off + k] - mean[k])
        for k in range(n):
            invstd = (<real_t*>a.invstd)[cb + k]
            gam = 1.0 if a.fix_gamma else (<real_t*>a.gamma)[cb + k]
            dgam = 0 if a.fix_gamma else sdyx[k] * invstd
            if a.req_g == 1:
                (<real_t*>a.dgamma)[cb + k] = <real_t>dgam
            elif a.req_g == 2:
                (<real_t*>a.dgamma)[cb + k] += <real_t>dgam
            if a.req_b == 1:
                (<real_t*>a.dbeta)[cb + k] = <real_t>sdy[k]
            elif a.req_b == 2:
                (<real_t*>a.dbeta)[cb + k] += <real_t>sdy[k]
            k1[k] = <real_t>(gam * invstd)
            k2[k] = <real_t>(gam * invstd * sdy[k] / m) if a.batch_stats else 0
            k3[k] = <real_t>(gam * invstd * invstd * invstd * sdyx[k] / m) if a.batch_stats else 0
        for o in range(m if a.req_x else 0):
            off = o * C + cb
            if y != NULL or a.req_x == 2:
                for k in range(n):
                    d = dy[off + k] if y == NULL or y[off + k] > 0 else 0
                    d = k1[k] * d - k2[k] - k3[k] * (x[off + k] - mean[k])
                    dx[off + k] = dx[off + k] + d if a.req_x == 2 else d
            else:
                for k in range(n):
                    dx[off + k] = k1[k] * dy[off + k] - k2[k] - k3[k] * (x[off + k] - mean[k])
        cb += n


cdef enum:
    BN_SPLIT_ELEMS = 1 << 16      # calls this big are split by channels
    BN_MAX_PARTS = 4
    BN_SMALL_ELEMS = 16384        # calls this small may run inline on the pushing thread


cdef inline void bn_channel_range(BNArgs* a, int part, int nparts, int64_t* c0,
                                  int64_t* c1) noexcept nogil:
    c0[0] = a.channels * part // nparts
    c1[0] = a.channels * (part + 1) // nparts


cdef void bn_forward_part(void* args, int part, int nparts) noexcept nogil:
    cdef BNArgs* a = <BNArgs*>args
    cdef int64_t c0, c1
    bn_channel_range(a, part, nparts, &c0, &c1)
    if a.inner == 1:
        if a.dtype == DT_FLOAT32:
            bn_forward_last(a, <float*>a.x, <float*>a.y, c0, c1)
        else:
            bn_forward_last(a, <double*>a.x, <double*>a.y, c0, c1)
    elif a.dtype == DT_FLOAT32:
        bn_forward_channels(a, <float*>a.x, <float*>a.y, c0, c1)
    else:
        bn_forward_channels(a, <double*>a.x, <double*>a.y, c0, c1)


cdef void bn_backward_part(void* args, int part, int nparts) noexcept nogil:
    cdef BNArgs* a = <BNArgs*>args
    cdef int64_t c0, c1
    bn_channel_range(a, part, nparts, &c0, &c1)
    if a.inner == 1:
        if a.dtype == DT_FLOAT32:
            bn_backward_last(a, <float*>a.x, <float*>a.dy, <float*>a.dx, c0, c1)
        else:
            bn_backward_last(a, <double*>a.x, <double*>a.dy, <double*>a.dx, c0, c1)
    elif a.dtype == DT_FLOAT32:
        bn_backward_channels(a, <float*>a.x, <float*>a.dy, <float*>a.dx, c0, c1)
    else:
        bn_backward_channels(a, <double*>a.x, <double*>a.dy, <double*>a.dx, c0, c1)


cdef inline int bn_nparts(BNArgs* a) noexcept nogil:
    if a.outer * a.channels * a.inner < BN_SPLIT_ELEMS or a.channels < 2:
        return 1
    return <int>min(a.channels, <int64_t>BN_MAX_PARTS)


cdef int batchnorm_kernel(void* args, char* errmsg) noexcept nogil:
    """mean, invstd per channel (batch or moving statistics); y (req) γ·x̂ + β."""
    run_parts(bn_forward_part, args, bn_nparts(<BNArgs*>args))
    return 0


cdef int batchnorm_backward_kernel(void* args, char* errmsg) noexcept nogil:
    """dx, dγ, dβ (each per req) of BatchNorm from dy and the saved mean and invstd."""
    run_parts(bn_backward_part, args, bn_nparts(<BNArgs*>args))
    return 0


cdef bytes _B_BN = b"BatchNorm"
cdef bytes _B_BN_BWD = b"BatchNorm_backward"
_BN_REQ = {'null': 0, 'write': 1, 'inplace': 1, 'add': 2}


def batchnorm_supported(*arrays):
    """Whether the C kernels take these arrays: one dtype, float32 or float64."""
    dt = np.dtype(arrays[0].dtype)
    return dt in FLOAT_DTYPES and all(np.dtype(a.dtype) == dt for a in arrays[1:])


cdef void bn_view(BNArgs* a, shape, int axis):
    a.outer = math.prod(shape[:axis])
    a.channels = shape[axis]
    a.inner = math.prod(shape[axis + 1:])


def push_batchnorm(x, gamma, beta, moving_mean, moving_var, y, mean, invstd, int axis,
                   double eps, double momentum, bint fix_gamma, bint update, bint relu,
                   str req='write'):
    """Push BatchNorm's forward on the (outer, C, inner) view around `axis`: mean and
    invstd (C,) from the batch (`update`: and the moving statistics updated in place) or
    from moving_mean/var; y (req) [relu] γ·(x − mean)·invstd + β. All arrays one float
    dtype (see batchnorm_supported), shapes already checked by the operator."""
    cdef BNArgs a
    cdef EVar* reads[5]
    cdef EVar* writes[5]
    cdef int nw = 3, flags = 0, i
    memset(&a, 0, sizeof(a))
    bn_view(&a, tuple(x.shape), axis)
    a.dtype = _NP_CODES[np.dtype(x.dtype)]
    a.req_y = _BN_REQ[req]
    a.update, a.fix_gamma, a.relu = update, fix_gamma, relu
    a.eps, a.momentum = eps, momentum
    stats = (mean, invstd) + ((moving_mean, moving_var) if update else ())
    written = (y,) + stats
    x = nd_apart(nd_apart(x, (y,), True), stats)
    gamma, beta = nd_apart(gamma, written), nd_apart(beta, written)
    moving_mean = nd_apart(moving_mean, (y, mean, invstd))
    moving_var = nd_apart(moving_var, (y, mean, invstd))
    a.x, a.gamma, a.beta = nd_ptr(x), nd_ptr(gamma), nd_ptr(beta)
    a.mm, a.mv = nd_ptr(moving_mean), nd_ptr(moving_var)
    a.y, a.mean, a.invstd = nd_ptr(y), nd_ptr(mean), nd_ptr(invstd)
    for i, arr in enumerate((x, gamma, beta, moving_mean, moving_var)):
        reads[i] = nd_var(arr)
    if update:
        nw = 5
    for i in range(nw):
        writes[i] = nd_var(written[i])
        flags |= nd_wflag(written[i], i)
    if x.size <= BN_SMALL_ELEMS:
        flags |= FLAG_SMALL
    push_kernel(batchnorm_kernel, &a, sizeof(a), reads, 5, writes, nw, 0, _B_BN, flags)


def push_batchnorm_backward(dy, x, gamma, mean, invstd, y, dx, dgamma, dbeta, int axis,
                            bint fix_gamma, bint batch_stats, bint relu, str req_x,
                            str req_g, str req_b):
    """Push dx, dγ, dβ (each per its req; 'null' skips it, its array may be None) of
    BatchNorm given dy, the forward's x, γ, mean and invstd outputs, and (relu) its
    output y; `batch_stats` when the forward normalised with the batch statistics."""
    cdef BNArgs a
    cdef EVar* reads[6]
    cdef EVar* writes[3]
    cdef int nr = 5, nw = 0, flags = 0, i
    memset(&a, 0, sizeof(a))
    bn_view(&a, tuple(x.shape), axis)
    a.dtype = _NP_CODES[np.dtype(x.dtype)]
    a.req_x, a.req_g, a.req_b = _BN_REQ[req_x], _BN_REQ[req_g], _BN_REQ[req_b]
    a.fix_gamma, a.batch_stats, a.relu = fix_gamma, batch_stats, relu
    outs = tuple(o for o, r in ((dx, a.req_x), (dgamma, a.req_g), (dbeta, a.req_b)) if r)
    if not outs:
        return
    small = tuple(o for o in outs if o is not dx)
    # dx may take the place of dy, x or y exactly (each element is read before written)
    dy = nd_apart(nd_apart(dy, (dx,) if a.req_x else (), True), small)
    x = nd_apart(nd_apart(x, (dx,) if a.req_x else (), True), small)
    gamma, mean, invstd = nd_apart(gamma, outs), nd_apart(mean, outs), nd_apart(invstd, outs)
    ins = [dy, x, gamma, mean, invstd]
    if relu:
        y = nd_apart(nd_apart(y, (dx,) if a.req_x else (), True), small)
        a.y = nd_ptr(y)
        ins.append(y)
        nr = 6
    a.dy, a.x, a.gamma, a.mean, a.invstd = (nd_ptr(dy), nd_ptr(x), nd_ptr(gamma),
                                            nd_ptr(mean), nd_ptr(invstd))
    for i in range(nr):
        reads[i] = nd_var(ins[i])
    for arr, r in ((dx, a.req_x), (dgamma, a.req_g), (dbeta, a.req_b)):
        if r:
            writes[nw] = nd_var(arr)
            flags |= nd_wflag(arr, nw)
            nw += 1
    if a.req_x:
        a.dx = nd_ptr(dx)
    if a.req_g:
        a.dgamma = nd_ptr(dgamma)
    if a.req_b:
        a.dbeta = nd_ptr(dbeta)
    if x.size <= BN_SMALL_ELEMS:
        flags |= FLAG_SMALL
    push_kernel(batchnorm_backward_kernel, &a, sizeof(a), reads, nr, writes, nw, 0,
                _B_BN_BWD, flags)
