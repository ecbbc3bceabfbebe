# Part of mxcy/_conv.pyx (textually included there): float32 convolution through the packed
# GEMM of mxcy/_gemm_packed.h, image by image.
#
# The BLAS path copies each chunk's columns (K × m·P) out with im2col, then OpenBLAS reads
# them again to pack its own panels: two passes at memory speed that cost as much as the
# GEMM for LeNet-sized layers. Here the columns are never copied: the GEMM reads A through
# offsets into the image (A[p, r] = image[base(p) + koff(r)], the indirect GEMM), so
#   forward  yᵀ (P × fg)  = colᵀ · Wᵀ   (Wᵀ packed once per call; stored transposed into y)
#   dW       dWᵀ (K × fg) += col · dyᵀ  (the same offsets with the roles swapped)
#   dx       dcol (K × P) = Wᵀ · dy, then col2im.
# Padding is handled by a zero-padded copy of each image, so every window lies inside.
# Used when the CPU has AVX-512 (mxcy_gemm_isa); otherwise the BLAS path runs.

from mxcy._gemm_packed cimport (mxcy_packed_len, mxcy_pack_b, mxcy_gemm_packed,
                                mxcy_gemm_indirect, mxcy_gemm_isa, MXCY_NR)


cdef bint packed_conv_enabled = True      # tests switch it off to compare with BLAS
cdef int packed_conv_isa = 2              # the lowest mxcy_gemm_isa() that takes it


cdef enum:
    PACKED_MIN_K = 64     # shallower windows (LeNet's first layer: K = 25) are faster with
                          # BLAS: the packed path's per-tile stores and packing of dy then
                          # outweigh the few multiply-adds per output


cdef inline bint use_packed(ConvArgs* a) noexcept nogil:
    # AVX-512 only by default: the AVX2 kernel (3 rows × 32) ran LeNet's second layer 1.7x
    # slower than im2col + OpenBLAS (MXCY_ISA_CAP=avx2), and ResNet-18's 3×3 layers
    # 1.5-1.8x slower in CPU time on an AVX2-only EPYC (set_packed_conv_isa(1), issue 16)
    return (packed_conv_enabled and a.dtype == DT_FLOAT32
            and mxcy_gemm_isa() >= packed_conv_isa
            and (a.c // a.groups) * a.kh * a.kw >= PACKED_MIN_K)


cdef struct PackedConv:
    # shared by all parts of one call, read-only while they run
    int hp, wp                # the padded image
    int64_t* pos_off          # P: offset of output position p's window in a padded image
    int64_t* col_off          # K: offset of column row r = (ci, ki, kj) within the window
    float* w_packed           # forward: per group, Wᵀ (K × fg) packed
    float* w_t                # backward dx: per group, Wᵀ (K × fg) row-major


cdef int packed_prepare(ConvArgs* a, PackedConv* pc, bint forward) noexcept nogil:
    """Fill pc for one call (offsets; the weight packed or transposed); 0 or ERR_MEMORY."""
    cdef int cg = a.c // a.groups, fg = a.f // a.groups
    cdef int K = cg * a.kh * a.kw, P = a.oh * a.ow, p, r, g, f, ci, ki, kj
    cdef int64_t plen = mxcy_packed_len(K, fg)
    cdef float* wt = <float*>a.wt
    pc.hp, pc.wp = a.h + 2 * a.ph, a.w + 2 * a.pw
    pc.pos_off = <int64_t*>malloc(<size_t>(P + K) * sizeof(int64_t))
    pc.col_off = pc.pos_off + P if pc.pos_off != NULL else NULL
    pc.w_packed = NULL
    pc.w_t = NULL
    if forward:
        pc.w_packed = <float*>malloc(<size_t>a.groups * plen * sizeof(float) + 1)
    elif a.req_x:
        pc.w_t = <float*>malloc(<size_t>a.groups * K * fg * sizeof(float) + 1)
    if pc.pos_off == NULL or (forward and pc.w_packed == NULL) or (
            not forward and a.req_x and pc.w_t == NULL):
        packed_release(pc)
        return ERR_MEMORY
    for p in range(P):
        pc.pos_off[p] = <int64_t>(p // a.ow) * a.sh * pc.wp + (p % a.ow) * a.sw
    r = 0
    for ci in range(cg):
        for ki in range(a.kh):
            for kj in range(a.kw):
                pc.col_off[r] = (<int64_t>ci * pc.hp + ki * a.dil_h) * pc.wp + kj * a.dil_w
                r += 1
    for g in range(a.groups):
        if forward:
            mxcy_pack_b(wt + <int64_t>g * fg * K, K, 1, K, fg, pc.w_packed + g * plen)
        elif a.req_x:
            for f in range(fg):
                for r in range(K):
                    pc.w_t[(<int64_t>g * K + r) * fg + f] = wt[(<int64_t>g * fg + f) * K + r]
    return 0


cdef void packed_release(PackedConv* pc) noexcept nogil:
    free(pc.pos_off)
    free(pc.w_packed)
    free(pc.w_t)
    pc.pos_off = NULL
    pc.w_packed = NULL
    pc.w_t = NULL


cdef float* padded_image(ConvArgs* a, PackedConv* pc, float* x, float* buf) noexcept nogil:
    """x itself when there is no padding, else its zero-padded copy in buf (c × hp × wp)."""
    cdef int ci, i
    if a.ph == 0 and a.pw == 0:
        return x
    memset(buf, 0, <size_t>a.c * pc.hp * pc.wp * sizeof(float))
    for ci in range(a.c):
        for i in range(a.h):
            memcpy(buf + (<int64_t>ci * pc.hp + i + a.ph) * pc.wp + a.pw,
                   x + (<int64_t>ci * a.h + i) * a.w, <size_t>a.w * sizeof(float))
    return buf


cdef int conv_fwd_packed(ConvArgs* a, PackedConv* pc, float* x, float* b, float* y, int lo,
                         int hi) noexcept nogil:
    """conv_fwd_typed for float32 through the indirect GEMM."""
    cdef int cg = a.c // a.groups, fg = a.f // a.groups
    cdef int K = cg * a.kh * a.kw, P = a.oh * a.ow, n, g, f, p
    cdef int64_t xs = <int64_t>a.c * a.h * a.w, ys = <int64_t>a.f * P
    cdef int64_t plen = mxcy_packed_len(K, fg), gs = <int64_t>cg * pc.hp * pc.wp
    cdef float* pad = NULL
    cdef float* img
    cdef float* yg
    cdef float* row
    cdef float bias
    cdef bint accumulate = a.req_y == 2 or b != NULL
    if a.ph or a.pw:
        pad = <float*>malloc(<size_t>a.c * pc.hp * pc.wp * sizeof(float) + 1)
        if pad == NULL:
            return ERR_MEMORY
    for n in range(lo, hi):
        img = padded_image(a, pc, x + n * xs, pad)
        for g in range(a.groups):
            yg = y + n * ys + <int64_t>g * fg * P
            if b != NULL:           # the bias first; the product then accumulates onto it
                for f in range(fg):
                    row = yg + <int64_t>f * P
                    bias = b[g * fg + f]
                    if a.req_y == 2:
                        for p in range(P):
                            row[p] += bias
                    else:
                        for p in range(P):
                            row[p] = bias
            mxcy_gemm_indirect(P, fg, K, img + g * gs, pc.pos_off, pc.col_off,
                               pc.w_packed + g * plen, yg, 1, P, accumulate)
    free(pad)
    return 0


cdef int conv_bwd_packed(ConvArgs* a, PackedConv* pc, float* x, float* dy, float* dx,
                         float* dwt_t, int lo, int hi) noexcept nogil:
    """conv_bwd_typed for float32 through the packed GEMMs. The weight gradient is added
    transposed, per group (K × fg), into `dwt_t`; the caller transposes it into dW."""
    cdef int cg = a.c // a.groups, fg = a.f // a.groups
    cdef int K = cg * a.kh * a.kw, P = a.oh * a.ow, n, g
    cdef int64_t xs = <int64_t>a.c * a.h * a.w, ys = <int64_t>a.f * P
    cdef int64_t gs = <int64_t>cg * pc.hp * pc.wp
    cdef int64_t plen = max(mxcy_packed_len(fg, P), mxcy_packed_len(P, fg))
    cdef float* col = NULL
    cdef float* packed = <float*>malloc(<size_t>plen * sizeof(float) + 1)
    cdef float* pad = NULL
    cdef float* img
    cdef float* dyg
    cdef bint ok = packed != NULL
    if a.req_x:
        col = <float*>malloc(<size_t>K * P * sizeof(float) + 1)
        ok = ok and col != NULL
    if a.req_w and (a.ph or a.pw):
        pad = <float*>malloc(<size_t>a.c * pc.hp * pc.wp * sizeof(float) + 1)
        ok = ok and pad != NULL
    if not ok:
        free(col)
        free(packed)
        free(pad)
        return ERR_MEMORY
    if a.req_x == 1:
        memset(dx + lo * xs, 0, <size_t>(hi - lo) * xs * sizeof(float))
    for n in range(lo, hi):
        if a.req_w:
            img = padded_image(a, pc, x + n * xs, pad)
        for g in range(a.groups):
            dyg = dy + n * ys + <int64_t>g * fg * P
            if a.req_w:             # dWᵀ (K × fg) += col (K × P) · dyᵀ (P × fg)
                mxcy_pack_b(dyg, P, 1, P, fg, packed)
                mxcy_gemm_indirect(K, fg, P, img + g * gs, pc.col_off, pc.pos_off, packed,
                                   dwt_t + <int64_t>g * K * fg, fg, 1, 1)
            if a.req_x:             # dcol (K × P) = Wᵀ (K × fg) · dy (fg × P), then col2im
                mxcy_pack_b(dyg, P, 0, fg, P, packed)
                mxcy_gemm_packed(K, P, fg, pc.w_t + <int64_t>g * K * fg, fg, 1, packed, col,
                                 P, 0)
                col2im(col, cg, a.h, a.w, a.kh, a.kw, a.ph, a.pw, a.sh, a.sw, a.dil_h,
                       a.dil_w, a.oh, a.ow, dx + n * xs + <int64_t>g * cg * a.h * a.w, P)
    free(col)
    free(packed)
    free(pad)
    return 0


cdef void sum_parts_transposed(float* parts, int nparts, int groups, int K, int fg,
                               float* dw, bint add) noexcept nogil:
    """dw[g·fg + f, r] (+)= Σ_parts parts[part, g, r, f]: the per-part dWᵀ blocks of
    conv_bwd_packed, summed and transposed into the (f, cg·kh·kw) weight layout."""
    cdef int64_t size = <int64_t>groups * K * fg
    cdef int g, r, f, p
    cdef float acc
    cdef float* src
    for g in range(groups):
        for f in range(fg):
            for r in range(K):
                src = parts + <int64_t>g * K * fg + <int64_t>r * fg + f
                acc = src[0]
                for p in range(1, nparts):
                    acc += src[p * size]
                if add:
                    dw[(<int64_t>g * fg + f) * K + r] += acc
                else:
                    dw[(<int64_t>g * fg + f) * K + r] = acc


def set_packed_conv_isa(int isa):
    """The lowest ISA level (2 AVX-512, 1 AVX2) on which float32 convolutions take the
    packed path; returns the old one. For measuring and testing the AVX2 kernel."""
    global packed_conv_isa
    old = packed_conv_isa
    packed_conv_isa = max(isa, 1)
    return old


def set_packed_conv(bint enabled):
    """Use (True, the default) or bypass the packed float32 path; returns the old value.
    For tests that compare it with the BLAS path."""
    global packed_conv_enabled
    old = packed_conv_enabled
    packed_conv_enabled = enabled
    return old
