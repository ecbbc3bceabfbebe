# Deformable im2col/col2im (included by _sampling.pyx): the sampling taps of one image and
# deformable group, then loops over that group's channels.

cdef void _deform_taps(const real* off, Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t oh,
                       Py_ssize_t ow, int sh, int sw, int ph, int pw, int dh, int dw,
                       Py_ssize_t height, Py_ssize_t width, bint clamp, Py_ssize_t* idx,
                       real* wt, real* wth, real* wtw) noexcept nogil:
    """For tap k = (i, j) and output pixel p (q = k·P + p): the 4 bilinear corners of
    (y·sh − ph + i·dh + off_h, z·sw − pw + j·dw + off_w): flat index (−1 when it reads
    nothing), weight and its derivatives in h and w. `clamp`: DeformableConvolution's
    rule (positions in [0, H) × [0, W), the last row/column held); else DCNv2's
    (positions in (−1, H) × (−1, W))."""
    cdef Py_ssize_t npix = oh * ow, i, j, y, z, q, c, hh, ww, h0, w0
    cdef real hp, wp, lh, lw, fh, fw
    cdef bint inside, free_h, free_w, ok
    for i in range(kh):
        for j in range(kw):
            for y in range(oh):
                for z in range(ow):
                    q = (i * kw + j) * npix + y * ow + z
                    hp = <real>(y * sh - ph + i * dh) + off[2 * (i * kw + j) * npix + y * ow + z]
                    wp = <real>(z * sw - pw + j * dw) + \
                        off[(2 * (i * kw + j) + 1) * npix + y * ow + z]
                    free_h = free_w = True
                    if clamp:
                        inside = hp >= 0 and wp >= 0 and hp < height and wp < width
                        free_h, free_w = hp < height - 1, wp < width - 1
                        if not free_h:
                            hp = height - 1
                        if not free_w:
                            wp = width - 1
                    else:
                        inside = hp > -1 and wp > -1 and hp < height and wp < width
                    if not inside:          # no tap reads (also keeps the casts defined)
                        for c in range(4):
                            idx[4 * q + c] = -1
                            wt[4 * q + c] = wth[4 * q + c] = wtw[4 * q + c] = 0
                        continue
                    h0 = <Py_ssize_t>floor(hp)
                    w0 = <Py_ssize_t>floor(wp)
                    lh, lw = hp - h0, wp - w0
                    for c in range(4):
                        hh, ww = h0 + (c >> 1), w0 + (c & 1)
                        ok = inside and _inside(hh, height) and _inside(ww, width)
                        fh = lh if c >> 1 else 1 - lh
                        fw = lw if c & 1 else 1 - lw
                        idx[4 * q + c] = hh * width + ww if ok else -1
                        wt[4 * q + c] = fh * fw if ok else 0
                        wth[4 * q + c] = ((fw if c >> 1 else -fw)
                                          if ok and free_h else 0)
                        wtw[4 * q + c] = ((fh if c & 1 else -fh)
                                          if ok and free_w else 0)


cdef inline real _tap_value(const real* plane, const Py_ssize_t* idx,
                            const real* wt) noexcept nogil:
    cdef real v = 0
    cdef int c
    for c in range(4):
        if idx[c] >= 0:
            v += plane[idx[c]] * wt[c]
    return v


def deform_im2col(real[:, :, :, ::1] x, real[:, :, :, ::1] offset, real[:, :, :, ::1] mask,
                  real[:, :, ::1] cols, int kh, int kw, int sh, int sw, int ph, int pw,
                  int dh, int dw, int groups, bint clamp):
    """cols[n, c·K + k, p] := x[n, c] sampled at tap k of output pixel p, moved by its
    group's offset (times mask[n, g·K + k, p] when mask is not None)."""
    cdef Py_ssize_t n = x.shape[0], ch = x.shape[1], height = x.shape[2], width = x.shape[3]
    cdef Py_ssize_t oh = offset.shape[2], ow = offset.shape[3], k = kh * kw
    cdef Py_ssize_t kp = k * oh * ow, cg = ch // groups, b, g, c, q
    cdef bint masked = mask is not None
    cdef real v
    cdef const real* plane
    cdef const real* m = NULL
    cdef real* dst
    cdef Py_ssize_t* idx = <Py_ssize_t*>malloc(4 * kp * sizeof(Py_ssize_t) + 1)
    cdef real* wt = <real*>malloc(12 * kp * sizeof(real) + 1)
    if idx == NULL or wt == NULL:
        free(idx)
        free(wt)
        raise MemoryError('DeformableConvolution: no memory for the sampling taps')
    with nogil:
        for b in range(n):
            for g in range(groups):
                _deform_taps(&offset[b, 2 * g * k, 0, 0], kh, kw, oh, ow, sh, sw, ph, pw,
                             dh, dw, height, width, clamp, idx, wt, wt + 4 * kp,
                             wt + 8 * kp)
                if masked:
                    m = &mask[b, g * k, 0, 0]
                for c in range(g * cg, (g + 1) * cg):
                    plane = &x[b, c, 0, 0]
                    dst = &cols[b, c * k, 0]
                    for q in range(kp):
                        v = _tap_value(plane, idx + 4 * q, wt + 4 * q)
                        dst[q] = v * m[q] if masked else v
    free(idx)
    free(wt)


def deform_col2im(real[:, :, :, ::1] x, real[:, :, :, ::1] offset, real[:, :, :, ::1] mask,
                  real[:, :, ::1] dcols, real[:, :, :, ::1] dx, real[:, :, :, ::1] doffset,
                  real[:, :, :, ::1] dmask, int kh, int kw, int sh, int sw, int ph, int pw,
                  int dh, int dw, int groups, bint clamp):
    """The gradients of deform_im2col given d cols: dx := the scatter through the bilinear
    weights, doffset := d cols · d sample / d position, dmask := d cols · unmasked sample
    (all written, not added; dmask only when mask is not None)."""
    cdef Py_ssize_t n = x.shape[0], ch = x.shape[1], height = x.shape[2], width = x.shape[3]
    cdef Py_ssize_t oh = offset.shape[2], ow = offset.shape[3], k = kh * kw, npix = oh * ow
    cdef Py_ssize_t kp = k * npix, cg = ch // groups, b, g, c, q, t, j
    cdef bint masked = mask is not None
    cdef real d, xv
    cdef const real* plane
    cdef const real* src
    cdef const real* m = NULL
    cdef real* dplane
    cdef real* doff
    cdef Py_ssize_t* idx = <Py_ssize_t*>malloc(4 * kp * sizeof(Py_ssize_t) + 1)
    cdef real* wt = <real*>malloc(15 * kp * sizeof(real) + 1)
    cdef real* wth = wt + 4 * kp
    cdef real* wtw = wt + 8 * kp
    cdef real* acc_h = wt + 12 * kp
    cdef real* acc_w = wt + 13 * kp
    cdef real* acc_m = wt + 14 * kp
    if idx == NULL or wt == NULL:
        free(idx)
        free(wt)
        raise MemoryError('DeformableConvolution: no memory for the sampling taps')
    with nogil:
        memset(&dx[0, 0, 0, 0], 0, n * ch * height * width * sizeof(real))
        for b in range(n):
            for g in range(groups):
                _deform_taps(&offset[b, 2 * g * k, 0, 0], kh, kw, oh, ow, sh, sw, ph, pw,
                             dh, dw, height, width, clamp, idx, wt, wth, wtw)
                memset(acc_h, 0, 3 * kp * sizeof(real))
                if masked:
                    m = &mask[b, g * k, 0, 0]
                for c in range(g * cg, (g + 1) * cg):
                    plane = &x[b, c, 0, 0]
                    dplane = &dx[b, c, 0, 0]
                    src = &dcols[b, c * k, 0]
                    for q in range(kp):
                        d = src[q]
                        if masked:
                            acc_m[q] += d * _tap_value(plane, idx + 4 * q, wt + 4 * q)
                            d = d * m[q]
                        for t in range(4 * q, 4 * q + 4):
                            if idx[t] >= 0:
                                xv = plane[idx[t]]
                                dplane[idx[t]] += d * wt[t]
                                acc_h[q] += d * xv * wth[t]
                                acc_w[q] += d * xv * wtw[t]
                doff = &doffset[b, 2 * g * k, 0, 0]
                for q in range(kp):
                    j = q // npix
                    doff[(2 * j) * npix + q % npix] = acc_h[q]
                    doff[(2 * j + 1) * npix + q % npix] = acc_w[q]
                if masked:
                    for q in range(kp):
                        (&dmask[b, g * k, 0, 0])[q] = acc_m[q]
    free(idx)
    free(wt)
