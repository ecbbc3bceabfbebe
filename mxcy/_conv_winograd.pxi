# Part of mxcy/_conv.pyx (textually included there): float32 3×3 stride-1 convolutions
# through Winograd F(2×2, 3×3) (the transforms and why: mxcy/_winograd.h).
#
# The tiles are taken a block of tile rows at a time: the block's transformed patches V
# (16 × channels × tiles) and products M (16 × filters × tiles) stay within a few MB, so
# the 16 GEMMs read what the transform has just written from cache. Blocks of tile rows
# are split over the engine's workers (run_parts) like the other big convolutions.

cdef extern from "_winograd.h" nogil:
    void mxcy_wino_weights(const float* g, int64_t pairs, float* U)
    int64_t mxcy_wino_scratch(int tw)
    void mxcy_wino_input_row(const float* x, int h, int w, int ph, int pw, int ty, int tw,
                             float* scratch, float* V, int64_t vs)
    void mxcy_wino_output_row(const float* M, int64_t ms, int tw, float bias, float* y,
                              int oh, int ow, int ty, int add, int clamp, float lo,
                              float hi, float* scratch)
    void mxcy_wino_dy_row(const float* dy, int oh, int ow, int ty, int tw, float* scratch,
                          float* Y, int64_t ys)
    void mxcy_wino_dw_out(const float* dU, int64_t pairs, float* dw, int req)


cdef bint winograd_enabled = True      # tests switch it off to compare with im2col


cdef enum:
    WINO_MIN_CHANNELS = 32    # fewer channels or filters: the transforms outweigh the saving
    WINO_MIN_FILTERS = 64     # (16-48 of either ran 1.2-1.8x the direct AVX2 kernel's CPU)
    WINO_MIN_TILES = 64       # fewer tiles (7×7 planes at batch 1): GEMMs too narrow
    WINO_MIN_IMAGE_TILES = 9  # smaller planes (4×4, 2×2: mostly padding in each patch) ran
                              # 1.0-1.3x the CPU time of im2col (ResNet-18 on 32² images)
    WINO_BLOCK_FLOATS = 1 << 20   # V + M of one block (4 MB)


cdef inline bint use_winograd(ConvArgs* a) noexcept nogil:
    cdef int64_t image_tiles = <int64_t>((a.oh + 1) // 2) * ((a.ow + 1) // 2)
    return (winograd_enabled and a.dtype == DT_FLOAT32 and a.groups == 1
            and a.kh == 3 and a.kw == 3 and a.sh == 1 and a.sw == 1
            and a.dil_h == 1 and a.dil_w == 1 and a.c >= WINO_MIN_CHANNELS
            and a.f >= WINO_MIN_FILTERS and image_tiles >= WINO_MIN_IMAGE_TILES
            and a.n * image_tiles >= WINO_MIN_TILES)


cdef struct WinoParts:
    ConvArgs* a
    float* U                  # forward: 16 × f × c, shared and read-only while parts run;
                              # weight gradient: one 16 × f × c sum per part
    int th, tw                # tile rows and columns of one image
    int rows_per_block
    bint clamp                # the forward applies the fused clamp (ConvArgs.act)
    int err


cdef void wino_block(WinoParts* wp, int64_t r, int nr, float* V, float* M,
                     float* scratch) noexcept nogil:
    """Tile rows [r, r + nr) (counted over all images): transform, 16 GEMMs, back."""
    cdef ConvArgs* a = wp.a
    cdef int tw = wp.tw, j, c, f, xi, img, ty
    cdef int64_t T = <int64_t>nr * tw, plane = <int64_t>a.h * a.w, oplane = <int64_t>a.oh * a.ow
    cdef float* x = <float*>a.x
    cdef float* y = <float*>a.y
    cdef float* b = <float*>a.b
    for j in range(nr):
        img = <int>((r + j) // wp.th)
        ty = <int>((r + j) % wp.th)
        for c in range(a.c):
            mxcy_wino_input_row(x + (<int64_t>img * a.c + c) * plane, a.h, a.w, a.ph, a.pw,
                                ty, tw, scratch, V + c * T + <int64_t>j * tw, a.c * T)
    for xi in range(16):
        rm_gemm(False, False, a.f, <int>T, a.c, wp.U + <int64_t>xi * a.f * a.c,
                V + <int64_t>xi * a.c * T, <float>0, M + <int64_t>xi * a.f * T)
    for j in range(nr):
        img = <int>((r + j) // wp.th)
        ty = <int>((r + j) % wp.th)
        for f in range(a.f):
            mxcy_wino_output_row(M + f * T + <int64_t>j * tw, a.f * T, tw,
                                 b[f] if b != NULL else 0, y + (<int64_t>img * a.f + f) * oplane,
                                 a.oh, a.ow, ty, a.req_y == 2, wp.clamp,
                                 <float>a.act_lo, <float>a.act_hi, scratch)


cdef int wino_buffers(WinoParts* wp, float** V, float** scratch) noexcept nogil:
    """A part's block buffers: 16 × (c + f) × the block's tiles (V, then M or Ŷ), and the
    row transforms' scratch; on failure wp.err is set and nothing is kept."""
    cdef int64_t tiles = <int64_t>wp.rows_per_block * wp.tw
    V[0] = <float*>malloc(<size_t>(16 * (wp.a.c + wp.a.f) * tiles) * sizeof(float) + 1)
    scratch[0] = <float*>malloc(<size_t>mxcy_wino_scratch(wp.tw) * sizeof(float) + 1)
    if V[0] == NULL or scratch[0] == NULL:
        free(V[0])
        free(scratch[0])
        wp.err = ERR_MEMORY
        return -1
    return 0


cdef void wino_part(void* arg, int part, int nparts) noexcept nogil:
    cdef WinoParts* wp = <WinoParts*>arg
    cdef ConvArgs* a = wp.a
    cdef int64_t rows = <int64_t>a.n * wp.th
    cdef int64_t r = rows * part // nparts, r1 = rows * (part + 1) // nparts
    cdef float* V
    cdef float* scratch
    cdef int nr
    if wino_buffers(wp, &V, &scratch):
        return
    while r < r1:
        nr = <int>min(<int64_t>wp.rows_per_block, r1 - r)
        wino_block(wp, r, nr, V, V + 16 * a.c * <int64_t>nr * wp.tw, scratch)
        r += nr
    free(V)
    free(scratch)


cdef int wino_plan(ConvArgs* a, WinoParts* wp) noexcept nogil:
    """wp's tiling for a (tile rows and columns, rows per block); returns the parts: big
    convolutions split by tile rows over the workers, blocks no bigger than a part's share
    so every worker gets work."""
    cdef int64_t rows
    cdef int nparts
    wp.a = a
    wp.err = 0
    wp.clamp = False
    wp.th = (a.oh + 1) // 2
    wp.tw = (a.ow + 1) // 2
    wp.rows_per_block = <int>max(1, WINO_BLOCK_FLOATS // (16 * (a.c + a.f)) // wp.tw)
    rows = <int64_t>a.n * wp.th
    nparts = conv_nparts(a) if a.n > 1 else 1
    if a.n == 1 and <int64_t>a.f * a.c * 9 * a.oh * a.ow >= CONV_SPLIT_MACS:
        nparts = CONV_ONE_IMAGE_PARTS
    nparts = <int>min(<int64_t>nparts, rows)
    if nparts > 1:
        wp.rows_per_block = <int>max(1, min(<int64_t>wp.rows_per_block, rows // nparts))
    return nparts


cdef int winograd_fwd(ConvArgs* a) noexcept nogil:
    """y (req) := conv(x, w) + b for use_winograd's convolutions, clamped when a.act
    asks (then marked done, a.act = 2)."""
    cdef WinoParts wp
    cdef int nparts = wino_plan(a, &wp)
    wp.clamp = a.act == 1 and a.req_y == 1
    wp.U = <float*>malloc(<size_t>(16 * <int64_t>a.f * a.c) * sizeof(float) + 1)
    if wp.U == NULL:
        return ERR_MEMORY
    mxcy_wino_weights(<float*>a.wt, <int64_t>a.f * a.c, wp.U)
    run_parts(wino_part, &wp, nparts)
    free(wp.U)
    if wp.err == 0 and wp.clamp:
        a.act = 2
    return wp.err



cdef int winograd_dx(ConvArgs* a, bint* done) noexcept nogil:
    """dx (req_x) of a 3×3 stride-1 convolution as the convolution that is its adjoint:
    dy correlated with the kernels turned 180° and channels and filters swapped, padding
    2 - pad (each dx pixel sums the dy pixels whose windows cover it). Through Winograd
    when that convolution takes it (`done`), else nothing is done here."""
    cdef ConvArgs d
    cdef float* wr
    cdef float* src
    cdef int64_t f, c
    cdef int i, rc
    done[0] = False
    if (a.dtype != DT_FLOAT32 or a.groups != 1 or a.kh != 3 or a.kw != 3 or a.sh != 1
            or a.sw != 1 or a.dil_h != 1 or a.dil_w != 1 or a.ph > 2 or a.pw > 2
            or not a.req_x):
        return 0
    d = a[0]
    d.n, d.c, d.h, d.w, d.f = a.n, a.f, a.oh, a.ow, a.c
    d.ph, d.pw, d.oh, d.ow = 2 - a.ph, 2 - a.pw, a.h, a.w
    d.x, d.y, d.b, d.req_y, d.act = a.dy, a.dx, NULL, a.req_x, 0
    if not use_winograd(&d):
        return 0
    wr = <float*>malloc(<size_t>(9 * <int64_t>a.f * a.c) * sizeof(float) + 1)
    if wr == NULL:
        return ERR_MEMORY
    for f in range(a.f):
        for c in range(a.c):
            src = <float*>a.wt + (f * a.c + c) * 9
            for i in range(9):
                wr[(c * a.f + f) * 9 + i] = src[8 - i]
    d.wt = <char*>wr
    rc = winograd_fwd(&d)
    free(wr)
    done[0] = rc == 0
    return rc



cdef void wino_dw_part(void* arg, int part, int nparts) noexcept nogil:
    """This part's tile rows' Σ Ŷ[ξ] · V[ξ]ᵀ (filters × channels) into its own dU."""
    cdef WinoParts* wp = <WinoParts*>arg
    cdef ConvArgs* a = wp.a
    cdef int64_t rows = <int64_t>a.n * wp.th
    cdef int64_t r = rows * part // nparts, r1 = rows * (part + 1) // nparts
    cdef int64_t T, plane = <int64_t>a.h * a.w, oplane = <int64_t>a.oh * a.ow
    cdef int64_t fc = <int64_t>a.f * a.c
    cdef float* dU = wp.U + part * 16 * fc
    cdef float* V
    cdef float* scratch
    cdef float* Y
    cdef int nr, j, c, f, xi, img, ty
    if wino_buffers(wp, &V, &scratch):
        return
    memset(dU, 0, <size_t>(16 * fc) * sizeof(float))
    while r < r1:
        nr = <int>min(<int64_t>wp.rows_per_block, r1 - r)
        T = <int64_t>nr * wp.tw
        Y = V + 16 * a.c * T
        for j in range(nr):
            img = <int>((r + j) // wp.th)
            ty = <int>((r + j) % wp.th)
            for c in range(a.c):
                mxcy_wino_input_row(<float*>a.x + (<int64_t>img * a.c + c) * plane, a.h, a.w,
                                    a.ph, a.pw, ty, wp.tw, scratch,
                                    V + c * T + <int64_t>j * wp.tw, a.c * T)
            for f in range(a.f):
                mxcy_wino_dy_row(<float*>a.dy + (<int64_t>img * a.f + f) * oplane, a.oh, a.ow,
                                 ty, wp.tw, scratch, Y + f * T + <int64_t>j * wp.tw, a.f * T)
        for xi in range(16):
            rm_gemm(False, True, a.f, a.c, <int>T, Y + xi * a.f * T, V + xi * a.c * T,
                    <float>1, dU + xi * fc)
        r += nr
    free(V)
    free(scratch)


cdef int winograd_dw(ConvArgs* a, bint* done) noexcept nogil:
    """dW (req_w) of a use_winograd convolution: Gᵀ (Σ over tiles of Ŷ ⊙ V) G, the forward's
    adjoint in the kernel (mxcy/_winograd.h); `done` says whether it ran."""
    cdef WinoParts wp
    cdef int64_t fc = <int64_t>a.f * a.c, i
    cdef int nparts, p
    done[0] = False
    if not a.req_w or not use_winograd(a):
        return 0
    nparts = wino_plan(a, &wp)
    wp.U = <float*>malloc(<size_t>(nparts * 16 * fc) * sizeof(float) + 1)
    if wp.U == NULL:
        return ERR_MEMORY
    run_parts(wino_dw_part, &wp, nparts)
    if wp.err == 0:
        for p in range(1, nparts):
            for i in range(16 * fc):
                wp.U[i] += wp.U[p * 16 * fc + i]
        mxcy_wino_dw_out(wp.U, fc, <float*>a.dwt, a.req_w)
        done[0] = True
    free(wp.U)
    return wp.err


cdef int winograd_grads(ConvArgs* a, ConvArgs* rest, bint* done) noexcept nogil:
    """dx and dW of a convolution by Winograd where it takes them; `rest` := a with those
    reqs cleared, `done` whether any ran (the caller then computes only `rest`)."""
    cdef bint dx_done, dw_done
    cdef int rc = winograd_dx(a, &dx_done)
    if rc == 0:
        rc = winograd_dw(a, &dw_done)
    rest[0] = a[0]
    if dx_done:
        rest.req_x = 0
    if rc == 0 and dw_done:
        rest.req_w = 0
    done[0] = dx_done or (rc == 0 and dw_done)
    return rc


def set_winograd(bint enabled):
    """Turn the Winograd path on or off (tests compare it with im2col); returns the old
    setting."""
    global winograd_enabled
    old = winograd_enabled
    winograd_enabled = enabled
    return old
