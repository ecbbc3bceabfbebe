# Part of mxcy/_conv.pyx (textually included there): depthwise convolution (issue 16).
#
# num_group == channels == num_filter: every output plane is one input plane convolved with
# one kh × kw filter. As grouped im2col + GEMM it is C GEMMs of a single row each, mostly
# spent building columns; here each window tap (ki, kj) adds w[ki, kj] times a shifted
# input row to an output row (stride 1: a contiguous multiply-add); the row loops are in
# _conv_dw.h, compiled per ISA.
# Forward and dx are split by planes, dW by channels (run_parts): no two parts write the
# same element, so no private buffers are needed.

cdef extern from "_conv_dw.h" nogil:
    ctypedef struct mxcy_dw_geom:
        int h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw
    void mxcy_dw_fwd_f32(const mxcy_dw_geom* g, const float* x, const float* wt, float bias,
                         float* y, int add)
    void mxcy_dw_fwd_f64(const mxcy_dw_geom* g, const double* x, const double* wt,
                         double bias, double* y, int add)
    void mxcy_dw_bwd_data_f32(const mxcy_dw_geom* g, const float* wt, const float* dy,
                              float* dx, int add)
    void mxcy_dw_bwd_data_f64(const mxcy_dw_geom* g, const double* wt, const double* dy,
                              double* dx, int add)
    void mxcy_dw_bwd_weight_f32(const mxcy_dw_geom* g, const float* x, const float* dy,
                                int n, int64_t xstep, int64_t ystep, float* acc,
                                double* sums)
    void mxcy_dw_bwd_weight_f64(const mxcy_dw_geom* g, const double* x, const double* dy,
                                int n, int64_t xstep, int64_t ystep, double* acc,
                                double* sums)
    enum:
        MXCY_DW_MAXKW


cdef inline bint is_depthwise(ConvArgs* a) noexcept nogil:
    return a.groups > 1 and a.groups == a.c and a.groups == a.f and a.kw <= MXCY_DW_MAXKW


cdef inline void dw_geom(ConvArgs* a, mxcy_dw_geom* g) noexcept nogil:
    g.h, g.w, g.oh, g.ow = a.h, a.w, a.oh, a.ow
    g.kh, g.kw, g.sh, g.sw = a.kh, a.kw, a.sh, a.sw
    g.ph, g.pw, g.dh, g.dw = a.ph, a.pw, a.dil_h, a.dil_w


cdef struct DWParts:
    ConvArgs* a
    char* scratch         # per part: taps × ow lanes of dW products, then taps doubles


cdef void dw_bwd_weight_channel(ConvArgs* a, mxcy_dw_geom* g, int c, char* scratch) noexcept nogil:
    """dW (req) of channel c: dw[ki, kj] = Σ over images and output positions of dy·x
    under tap (ki, kj)."""
    cdef int k, taps = a.kh * a.kw
    cdef int64_t px = <int64_t>a.h * a.w, py = <int64_t>a.oh * a.ow
    cdef int64_t lanes = <int64_t>taps * a.ow, p
    cdef double* sums
    if a.dtype == DT_FLOAT32:
        sums = <double*>(scratch + lanes * sizeof(float))
    else:
        sums = <double*>(scratch + lanes * sizeof(double))
    for k in range(taps):
        sums[k] = 0
    if a.dtype == DT_FLOAT32:
        mxcy_dw_bwd_weight_f32(g, (<float*>a.x) + c * px, (<float*>a.dy) + c * py, a.n,
                               a.c * px, a.c * py, <float*>scratch, sums)
    else:
        mxcy_dw_bwd_weight_f64(g, (<double*>a.x) + c * px, (<double*>a.dy) + c * py, a.n,
                               a.c * px, a.c * py, <double*>scratch, sums)
    for k in range(taps):
        p = <int64_t>c * taps + k
        if a.dtype == DT_FLOAT32:
            if a.req_w == 2:
                (<float*>a.dwt)[p] += <float>sums[k]
            else:
                (<float*>a.dwt)[p] = <float>sums[k]
        else:
            if a.req_w == 2:
                (<double*>a.dwt)[p] += sums[k]
            else:
                (<double*>a.dwt)[p] = sums[k]


cdef inline size_t dw_scratch_bytes(ConvArgs* a) noexcept nogil:
    cdef size_t isz = 4 if a.dtype == DT_FLOAT32 else 8
    return (<size_t>a.kh * a.kw * a.ow * isz + <size_t>a.kh * a.kw * 8 + 63) & ~(<size_t>63)


cdef enum:
    DW_SPLIT_ELEMS = 1 << 15      # output elements from which a call is split


cdef inline int dw_nparts(ConvArgs* a, int64_t units) noexcept nogil:
    if <int64_t>a.n * a.f * a.oh * a.ow < DW_SPLIT_ELEMS or units < 2:
        return 1
    return <int>min(units, <int64_t>CONV_MAX_PARTS)


cdef void dw_fwd_part(void* arg, int part, int nparts) noexcept nogil:
    cdef ConvArgs* a = <ConvArgs*>arg
    cdef mxcy_dw_geom g
    cdef int64_t planes = <int64_t>a.n * a.c, p
    cdef int64_t px = <int64_t>a.h * a.w, py = <int64_t>a.oh * a.ow
    cdef int taps = a.kh * a.kw, c
    dw_geom(a, &g)
    for p in range(planes * part // nparts, planes * (part + 1) // nparts):
        c = <int>(p % a.c)
        if a.dtype == DT_FLOAT32:
            mxcy_dw_fwd_f32(&g, (<float*>a.x) + p * px, (<float*>a.wt) + c * taps,
                            (<float*>a.b)[c] if a.b != NULL else 0, (<float*>a.y) + p * py,
                            a.req_y == 2)
        else:
            mxcy_dw_fwd_f64(&g, (<double*>a.x) + p * px, (<double*>a.wt) + c * taps,
                            (<double*>a.b)[c] if a.b != NULL else 0,
                            (<double*>a.y) + p * py, a.req_y == 2)


cdef void dw_bwd_data_part(void* arg, int part, int nparts) noexcept nogil:
    cdef ConvArgs* a = <ConvArgs*>arg
    cdef mxcy_dw_geom g
    cdef int64_t planes = <int64_t>a.n * a.c, p
    cdef int64_t px = <int64_t>a.h * a.w, py = <int64_t>a.oh * a.ow
    cdef int taps = a.kh * a.kw, c
    dw_geom(a, &g)
    for p in range(planes * part // nparts, planes * (part + 1) // nparts):
        c = <int>(p % a.c)
        if a.dtype == DT_FLOAT32:
            mxcy_dw_bwd_data_f32(&g, (<float*>a.wt) + c * taps, (<float*>a.dy) + p * py,
                                 (<float*>a.dx) + p * px, a.req_x == 2)
        else:
            mxcy_dw_bwd_data_f64(&g, (<double*>a.wt) + c * taps, (<double*>a.dy) + p * py,
                                 (<double*>a.dx) + p * px, a.req_x == 2)


cdef void dw_bwd_weight_part(void* arg, int part, int nparts) noexcept nogil:
    cdef DWParts* dp = <DWParts*>arg
    cdef ConvArgs* a = dp.a
    cdef mxcy_dw_geom g
    cdef int c
    dw_geom(a, &g)
    for c in range(a.c * part // nparts, a.c * (part + 1) // nparts):
        dw_bwd_weight_channel(a, &g, c, dp.scratch + part * dw_scratch_bytes(a))


cdef int depthwise_fwd(ConvArgs* a) noexcept nogil:
    """y (req) depthwise conv(x, w) + b."""
    run_parts(dw_fwd_part, a, dw_nparts(a, <int64_t>a.n * a.c))
    return 0


cdef int depthwise_bwd(ConvArgs* a) noexcept nogil:
    """dx, dW (each per req) of a depthwise convolution; db by the caller."""
    cdef DWParts dp
    cdef int nparts
    if a.req_x:
        run_parts(dw_bwd_data_part, a, dw_nparts(a, <int64_t>a.n * a.c))
    if a.req_w:
        nparts = dw_nparts(a, a.c)
        dp.a = a
        dp.scratch = <char*>malloc(nparts * dw_scratch_bytes(a))
        if dp.scratch == NULL:
            return ERR_MEMORY
        run_parts(dw_bwd_weight_part, &dp, nparts)
        free(dp.scratch)
    return 0
