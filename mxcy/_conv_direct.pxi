# Part of mxcy/_conv.pyx (textually included there): the float32 forward on AVX2+FMA
# through the direct register-blocked kernel of mxcy/_conv_direct.h (issue 16).
#
# Each image is copied once into a zero-padded, stride-phase-split buffer; the kernel then
# reads the convolution's columns in place (no im2col, no BLAS packing) and writes y's
# tiles with the bias, req add and an optional fused clamp applied in registers. Weights
# are read straight from W (4 rows, broadcast), so there is nothing to pack or cache per
# layer. Parts: a batch splits by images; one image by tiles of output positions, or by
# filters when the plane is small (7×7, 14×14: few tiles, many filters).

cdef extern from "_conv_direct.h" nogil:
    ctypedef struct mxcy_cd_geom:
        int K
        int kc
        const int64_t* koff
        int64_t ntiles
        int wq
        int ow
        int oh
        int64_t ystride
        int accumulate
        int act
        float lo
        float hi
    void mxcy_cd_planes(int h, int w, int ph, int pw, int sh, int sw, int* hq, int* wq)
    int64_t mxcy_cd_buf_len(int c, int sh, int sw, int hq, int wq)
    void mxcy_cd_pad(const float* x, int c, int h, int w, int ph, int pw, int sh, int sw,
                     int hq, int wq, float* buf)
    void mxcy_cd_offsets(int cg, int kh, int kw, int sh, int sw, int dh, int dw, int hq,
                         int wq, int64_t* koff)
    void mxcy_cd_run(const mxcy_cd_geom* g, const float* img, const float* w,
                     const float* bias, float* y, int f0, int f1, int64_t t0, int64_t t1,
                     float* part)
    int mxcy_cd_isa()
    enum: MXCY_CD_MR
    enum: MXCY_CD_NR
    enum: MXCY_CD_TB


cdef bint direct_conv_enabled = True      # tests switch it off to compare with BLAS

cdef enum:
    DIRECT_MIN_K = 16         # taps per filter below which im2col + BLAS is kept
    DIRECT_TILE_SPLIT = 8     # one image: split by tiles when it has this many per part
    DIRECT_W_BATCH = 1 << 19  # weight bytes up to which a batch takes the direct path
    DIRECT_W_ONE = 1 << 22    # ... and batch 1
    DIRECT_L1_BYTES = 20480   # a tap block's image window (per tile block) fits this


cdef struct DirectConv:
    ConvArgs* a
    mxcy_cd_geom geom
    int hq, wq
    int64_t buf_len, gstride     # floats of one padded image; between groups in it
    float* img1                  # batch 1: the image, padded before the parts
    bint by_filters              # batch 1: parts split the filters, else the tiles
    int err


cdef inline bint use_direct(ConvArgs* a) noexcept nogil:
    """A float32 forward on AVX2 with enough taps, unless its weights are big: every block
    of tiles reads all of W again, which measured slower than im2col + OpenBLAS once W
    outgrows L2 with both cores busy (a batch), or L3's share at batch 1 (bench/RESULTS.md,
    issue 16). 1×1 layers without padding keep their GEMMs on the data (_conv_1x1.pxi)."""
    cdef int64_t wbytes = <int64_t>a.f * (a.c // a.groups) * a.kh * a.kw * 4
    return (direct_conv_enabled and a.dtype == DT_FLOAT32 and mxcy_cd_isa()
            and (a.c // a.groups) * a.kh * a.kw >= DIRECT_MIN_K and not is_pointwise(a)
            and wbytes <= (DIRECT_W_ONE if a.n == 1 else DIRECT_W_BATCH))


cdef void direct_image(DirectConv* dc, float* img, int n, int f0, int f1, int64_t t0,
                       int64_t t1, float* part) noexcept nogil:
    """Filters [f0, f1) of every group, tiles [t0, t1), of image n (img: its padded copy)."""
    cdef ConvArgs* a = dc.a
    cdef int fg = a.f // a.groups, K = dc.geom.K, g
    cdef int64_t P = <int64_t>a.oh * a.ow
    cdef float* b = <float*>a.b
    for g in range(a.groups):
        mxcy_cd_run(&dc.geom, img + g * dc.gstride, <float*>a.wt + <int64_t>g * fg * K,
                    b + g * fg if b != NULL else NULL,
                    <float*>a.y + (<int64_t>n * a.f + <int64_t>g * fg) * P, f0, f1, t0, t1,
                    part)


cdef void direct_part(void* arg, int part, int nparts) noexcept nogil:
    cdef DirectConv* dc = <DirectConv*>arg
    cdef ConvArgs* a = dc.a
    cdef int lo, hi, n, fg = a.f // a.groups, f0, f1
    cdef int64_t xs = <int64_t>a.c * a.h * a.w, nt = dc.geom.ntiles
    cdef float* buf = NULL
    cdef float* sums = <float*>malloc(<size_t>(fg + MXCY_CD_MR) * MXCY_CD_NR * MXCY_CD_TB
                                      * sizeof(float))
    if sums == NULL:
        dc.err = ERR_MEMORY
        return
    if dc.img1 != NULL:           # one image: a share of its tiles or filters
        if dc.by_filters:         # whole tiles of MR filters per part
            f0 = (fg + MXCY_CD_MR - 1) // MXCY_CD_MR * part // nparts * MXCY_CD_MR
            f1 = (fg + MXCY_CD_MR - 1) // MXCY_CD_MR * (part + 1) // nparts * MXCY_CD_MR
            direct_image(dc, dc.img1, 0, min(f0, fg), min(f1, fg), 0, nt, sums)
        else:
            direct_image(dc, dc.img1, 0, 0, fg, nt * part // nparts,
                         nt * (part + 1) // nparts, sums)
        free(sums)
        return
    lo, hi = image_bound(a.n, part, nparts), image_bound(a.n, part + 1, nparts)
    buf = <float*>malloc(<size_t>dc.buf_len * sizeof(float))
    if buf == NULL:
        free(sums)
        dc.err = ERR_MEMORY
        return
    for n in range(lo, hi):
        mxcy_cd_pad(<float*>a.x + n * xs, a.c, a.h, a.w, a.ph, a.pw, a.sh, a.sw, dc.hq, dc.wq,
                    buf)
        direct_image(dc, buf, n, 0, fg, 0, nt, sums)
    free(buf)
    free(sums)


cdef int conv_fwd_direct(ConvArgs* a) noexcept nogil:
    """conv_fwd_kernel for float32 on AVX2 (use_direct); applies a requested clamp
    (a.act == 1) in the epilogue and marks it done (a.act = 2)."""
    cdef DirectConv dc
    cdef int cg = a.c // a.groups, K = cg * a.kh * a.kw, nparts = 1
    cdef int64_t win
    cdef int64_t macs = <int64_t>a.n * a.f * K * a.oh * a.ow
    cdef int64_t* koff = <int64_t*>malloc(<size_t>K * sizeof(int64_t))
    if koff == NULL:
        return ERR_MEMORY
    dc.a = a
    dc.err = 0
    dc.img1 = NULL
    dc.by_filters = False
    mxcy_cd_planes(a.h, a.w, a.ph, a.pw, a.sh, a.sw, &dc.hq, &dc.wq)
    mxcy_cd_offsets(cg, a.kh, a.kw, a.sh, a.sw, a.dil_h, a.dil_w, dc.hq, dc.wq, koff)
    dc.buf_len = mxcy_cd_buf_len(a.c, a.sh, a.sw, dc.hq, dc.wq)
    dc.gstride = <int64_t>cg * a.sh * a.sw * dc.hq * dc.wq
    dc.geom.K, dc.geom.koff = K, koff
    # a tap block's window per tile: the rows a channel's taps span, in each phase read
    win = (((a.kh - 1) * a.dil_h // a.sh) * dc.wq + (a.kw - 1) * a.dil_w // a.sw
           + MXCY_CD_TB * MXCY_CD_NR) * min(a.sh, a.kh) * min(a.sw, a.kw) * sizeof(float)
    dc.geom.kc = <int>max(1, DIRECT_L1_BYTES // win) * a.kh * a.kw
    dc.geom.wq, dc.geom.ow, dc.geom.oh = dc.wq, a.ow, a.oh
    dc.geom.ntiles = (<int64_t>a.oh * dc.wq + MXCY_CD_NR - 1) // MXCY_CD_NR
    dc.geom.ystride = <int64_t>a.oh * a.ow
    dc.geom.accumulate = a.req_y == 2
    dc.geom.act = a.act == 1
    dc.geom.lo, dc.geom.hi = <float>a.act_lo, <float>a.act_hi
    if a.n == 1:
        dc.img1 = <float*>malloc(<size_t>dc.buf_len * sizeof(float))
        if dc.img1 == NULL:
            free(koff)
            return ERR_MEMORY
        mxcy_cd_pad(<float*>a.x, a.c, a.h, a.w, a.ph, a.pw, a.sh, a.sw, dc.hq, dc.wq, dc.img1)
        if macs >= CONV_SPLIT_MACS:
            nparts = CONV_ONE_IMAGE_PARTS
            dc.by_filters = dc.geom.ntiles < DIRECT_TILE_SPLIT * nparts
    else:
        nparts = conv_nparts(a)
    run_parts(direct_part, &dc, nparts)
    free(dc.img1)
    free(koff)
    if dc.err == 0 and a.act == 1:
        a.act = 2
    return dc.err


def set_direct_conv(bint enabled):
    """Use (True, the default) or bypass the AVX2 direct float32 forward; returns the old
    value. For tests and benchmarks that compare it with the other paths."""
    global direct_conv_enabled
    old = direct_conv_enabled
    direct_conv_enabled = enabled
    return old


def conv_fwd_takes_direct(x_shape, w_shape, stride=(1, 1), pad=(0, 0), dilate=(1, 1),
                          int groups=1, dtype=np.float32):
    """Whether a forward of this geometry and dtype runs through the direct kernel (tests
    check that the shapes they mean to cover do)."""
    cdef ConvArgs a
    memset(&a, 0, sizeof(a))
    oh, ow = conv_geometry(x_shape, w_shape, stride, pad, dilate)
    a.dtype = DT_FLOAT32 if np.dtype(dtype) == np.float32 else DT_FLOAT64
    a.n, a.c, a.h, a.w = x_shape
    a.f, a.kh, a.kw = w_shape[0], w_shape[2], w_shape[3]
    a.sh, a.sw = stride
    a.ph, a.pw = pad
    a.dil_h, a.dil_w = dilate
    a.oh, a.ow, a.groups = oh, ow, groups
    return bool(not is_depthwise(&a) and use_direct(&a))


def direct_conv_available():
    """Whether this CPU (and MXCY_ISA_CAP) lets float32 forwards take the direct path."""
    return bool(mxcy_cd_isa())
