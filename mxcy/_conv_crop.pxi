# Part of mxcy/_conv.pyx (textually included there): convolutions whose outer kernel taps
# read only padding.
#
# A 3×3 convolution on a 1×1 plane (ResNet's last stage trained on 32×32 images) reads
# its centre tap alone: the other eight multiply the zeros of the padding, 8/9 of its
# multiply-adds. Such a call runs as the convolution with the kernel cropped to the taps
# that touch the image and the padding reduced to match, so every output is the same sum
# less its zero terms; the weight gradient of the cut taps is zero.


cdef inline void tap_span(int size, int k, int s, int p, int d, int out, int* lo,
                          int* hi) noexcept nogil:
    """[lo, hi): the first tap of a kernel axis that reads a pixel for some output
    position, and one past the last (taps between them that read none stay in)."""
    cdef int i, o, pos
    lo[0] = k
    hi[0] = 0
    for i in range(k):
        pos = i * d - p                           # the tap's read at output 0
        o = 0 if pos >= 0 else (-pos + s - 1) // s  # the first output reading row >= 0
        if o < out and pos + o * s < size:
            if i < lo[0]:
                lo[0] = i
            hi[0] = i + 1


cdef inline bint crop_axis(int size, int k, int s, int p, int d, int out, int* lo,
                           int* k2, int* p2) noexcept nogil:
    """Whether the axis crops: its span, and the padding that keeps every read in place
    with the same output size (the kernels take symmetric padding)."""
    cdef int hi
    tap_span(size, k, s, p, d, out, lo, &hi)
    if hi <= lo[0]:                  # no tap reads a pixel: leave it to the plain path
        lo[0], k2[0], p2[0] = 0, k, p
        return False
    k2[0] = hi - lo[0]
    p2[0] = p - lo[0] * d
    if p2[0] < 0 or (size + 2 * p2[0] - d * (k2[0] - 1) - 1) // s + 1 != out:
        lo[0], k2[0], p2[0] = 0, k, p
        return False
    return k2[0] < k


cdef inline bint crop_taps(ConvArgs* a, ConvArgs* sub, int* lh, int* lw) noexcept nogil:
    """sub := a with its kernel cropped to the taps that read pixels; False when nothing
    crops (or the call is depthwise, or not float32/float64)."""
    cdef int kh, kw, ph, pw
    cdef bint ch, cw
    if (a.dtype != DT_FLOAT32 and a.dtype != DT_FLOAT64) or is_depthwise(a):
        return False
    ch = crop_axis(a.h, a.kh, a.sh, a.ph, a.dil_h, a.oh, lh, &kh, &ph)
    cw = crop_axis(a.w, a.kw, a.sw, a.pw, a.dil_w, a.ow, lw, &kw, &pw)
    if not ch and not cw:
        return False
    sub[0] = a[0]
    sub.kh, sub.kw, sub.ph, sub.pw = kh, kw, ph, pw
    return True


cdef void copy_taps(ConvArgs* a, ConvArgs* sub, int lh, int lw, char* full, char* part,
                    bint to_part, int req) noexcept nogil:
    """Between the full (f, c/g, kh, kw) weights and the cropped (f, c/g, kh', kw') ones:
    gather the crop (to_part), or put it back by req (1 write, 2 add) into the full ones,
    whose cut taps a write sets to zero."""
    cdef size_t isz = 4 if a.dtype == DT_FLOAT32 else 8
    cdef int64_t rows = <int64_t>a.f * (a.c // a.groups), r, j
    cdef int i
    cdef char* src
    cdef char* dst
    if not to_part and req == 1:
        memset(full, 0, <size_t>(rows * a.kh * a.kw) * isz)
    for r in range(rows):
        for i in range(sub.kh):
            src = full + ((r * a.kh + lh + i) * a.kw + lw) * isz
            dst = part + (r * sub.kh + i) * sub.kw * isz
            if to_part:
                memcpy(dst, src, sub.kw * isz)
            elif req == 1:
                memcpy(src, dst, sub.kw * isz)
            elif a.dtype == DT_FLOAT32:
                for j in range(sub.kw):
                    (<float*>src)[j] += (<float*>dst)[j]
            else:
                for j in range(sub.kw):
                    (<double*>src)[j] += (<double*>dst)[j]


cdef int conv_fwd_cropped(ConvArgs* a, ConvArgs* sub, int lh, int lw,
                          char* errmsg) noexcept nogil:
    cdef size_t isz = 4 if a.dtype == DT_FLOAT32 else 8
    cdef char* wc = <char*>malloc(<size_t>a.f * (a.c // a.groups) * sub.kh * sub.kw * isz
                                  + 1)
    cdef int rc
    if wc == NULL:
        return ERR_MEMORY
    copy_taps(a, sub, lh, lw, a.wt, wc, True, 0)
    sub.wt = wc
    rc = conv_fwd_kernel(sub, errmsg)
    a.act = sub.act             # 2 when the kernel applied the fused clamp itself
    free(wc)
    return rc


cdef int conv_bwd_cropped(ConvArgs* a, ConvArgs* sub, int lh, int lw,
                          char* errmsg) noexcept nogil:
    cdef size_t isz = 4 if a.dtype == DT_FLOAT32 else 8
    cdef size_t wbytes = <size_t>a.f * (a.c // a.groups) * sub.kh * sub.kw * isz
    cdef char* wc = <char*>malloc(2 * wbytes + 1)
    cdef int rc
    if wc == NULL:
        return ERR_MEMORY
    copy_taps(a, sub, lh, lw, a.wt, wc, True, 0)
    sub.wt = wc
    if a.req_w:
        sub.dwt = wc + wbytes
        sub.req_w = 1
    rc = conv_bwd_kernel(sub, errmsg)
    if rc == 0 and a.req_w:
        copy_taps(a, sub, lh, lw, a.dwt, sub.dwt, False, a.req_w)
    free(wc)
    return rc
