# cython: language_level=3
"""Detection kernels: greedy NMS, pairwise IoU, box encoding and the region pooling family
(ROIAlign, RROIAlign, PSROIPooling), as `nogil` loops over typed memoryviews.

They run inside the operators' NumPy engine ops (mxcy/operator/box_ops.py,
detection_ops.py, roi_pool_ops.py): the operator checks shapes and batch indices and
prepares contiguous float32/float64 arrays before calling, because bounds checks are off
here. Each kernel repeats the arithmetic of the NumPy expression it replaces in the same
precision and order where a result is compared or rounded (IoU against a threshold in the
boxes' dtype; NumPy's NaN-propagating minimum/maximum), so suppression decisions are
identical; sums of a bin accumulate in double.
"""
from libc.math cimport ceil, cos, floor, log, round, sin
from libc.stdint cimport int32_t, int64_t

import numpy as np

ctypedef fused real:
    float
    double

# NMS variants: which IoU formula and which comparison suppresses
cdef enum:
    MODE_BOX = 0        # box_nms: areas max(w, 0) * max(h, 0), 0 for an empty union, IoU > t
    MODE_MULTIBOX = 1   # MultiBoxDetection: plain areas, 0 for an empty union, IoU >= t
    MODE_PROPOSAL = 2   # Proposal: +1 pixel sizes, no empty-union fix-up, IoU > t

NMS_BOX, NMS_MULTIBOX, NMS_PROPOSAL = MODE_BOX, MODE_MULTIBOX, MODE_PROPOSAL


def as_real(a):
    """a as a C-contiguous float32/float64 array, the kernels' input (float16 goes
    through float32, other dtypes through float64)."""
    a = np.asarray(a)
    dt = a.dtype if a.dtype in (np.float32, np.float64) else (
        np.float32 if a.dtype == np.float16 else np.float64)
    return np.ascontiguousarray(a, dt)


cdef inline real nmin(real a, real b) noexcept nogil:
    """np.minimum: NaN if either is NaN."""
    return a if (a < b or a != a) else b


cdef inline real nmax(real a, real b) noexcept nogil:
    """np.maximum: NaN if either is NaN."""
    return a if (a > b or a != a) else b


cdef inline real box_area(real x0, real y0, real x1, real y1, int mode) noexcept nogil:
    if mode == MODE_BOX:
        return nmax(x1 - x0, <real>0) * nmax(y1 - y0, <real>0)
    if mode == MODE_MULTIBOX:
        return (x1 - x0) * (y1 - y0)
    return (x1 - x0 + 1) * (y1 - y0 + 1)


cdef extern from "_detect_nms.h" nogil:     # NMS and IoU rows, vectorised
    void mxcy_nms_row_box_f(Py_ssize_t, Py_ssize_t, const float*, const float*, const float*,
                            const float*, const float*, const float*, float, int32_t*)
    void mxcy_nms_row_box_d(Py_ssize_t, Py_ssize_t, const double*, const double*,
                            const double*, const double*, const double*, const double*,
                            double, int32_t*)
    void mxcy_nms_row_multibox_f(Py_ssize_t, Py_ssize_t, const float*, const float*,
                                 const float*, const float*, const float*, const float*,
                                 float, int32_t*)
    void mxcy_nms_row_multibox_d(Py_ssize_t, Py_ssize_t, const double*, const double*,
                                 const double*, const double*, const double*,
                                 const double*, double, int32_t*)
    void mxcy_nms_row_proposal_f(Py_ssize_t, Py_ssize_t, const float*, const float*,
                                 const float*, const float*, const float*, const float*,
                                 float, int32_t*)
    void mxcy_nms_row_proposal_d(Py_ssize_t, Py_ssize_t, const double*, const double*,
                                 const double*, const double*, const double*,
                                 const double*, double, int32_t*)
    void mxcy_iou_row_f(const double*, double, const double*, const double*, const double*,
                        const double*, const double*, float*, Py_ssize_t)
    void mxcy_iou_row_d(const double*, double, const double*, const double*, const double*,
                        const double*, const double*, double*, Py_ssize_t)


cdef inline void suppress_after(Py_ssize_t i, Py_ssize_t n, const real* x0, const real* y0,
                                const real* x1, const real* y1, const real* area,
                                const real* ids, real t, int mode,
                                int32_t* gone) noexcept nogil:
    """gone[j] |= kept box i suppresses box j, for j in (i, n) (_detect_nms.h)."""
    if real is float:
        if mode == MODE_PROPOSAL:
            mxcy_nms_row_proposal_f(i, n, x0, y0, x1, y1, area, ids, t, gone)
        elif mode == MODE_MULTIBOX:
            mxcy_nms_row_multibox_f(i, n, x0, y0, x1, y1, area, ids, t, gone)
        else:
            mxcy_nms_row_box_f(i, n, x0, y0, x1, y1, area, ids, t, gone)
    else:
        if mode == MODE_PROPOSAL:
            mxcy_nms_row_proposal_d(i, n, x0, y0, x1, y1, area, ids, t, gone)
        elif mode == MODE_MULTIBOX:
            mxcy_nms_row_multibox_d(i, n, x0, y0, x1, y1, area, ids, t, gone)
        else:
            mxcy_nms_row_box_d(i, n, x0, y0, x1, y1, area, ids, t, gone)


cdef Py_ssize_t nms_loop(const real[:, ::1] cols, const real* ids, real thresh, int mode,
                         Py_ssize_t limit, real* area, int32_t* gone,
                         int64_t* keep) noexcept nogil:
    cdef Py_ssize_t n = cols.shape[1], i, kept = 0
    cdef const real* x0 = &cols[0, 0]
    cdef const real* y0 = &cols[1, 0]
    cdef const real* x1 = &cols[2, 0]
    cdef const real* y1 = &cols[3, 0]
    for i in range(n):
        area[i] = box_area(x0[i], y0[i], x1[i], y1[i], mode)
    for i in range(n):
        if gone[i]:
            continue
        keep[kept] = i
        kept += 1
        if kept >= limit:
            break
        suppress_after(i, n, x0, y0, x1, y1, area, ids, thresh, mode, gone)
    return kept


def nms(boxes, ids, double thresh, int mode, Py_ssize_t limit=-1):
    """Greedy NMS over float32/float64 boxes (n, 4) (corners) already in score order: box
    i is kept unless a kept box before it (of the same id when ids (n,) is given)
    suppresses it (`mode`). Stops after `limit` kept boxes (< 0: no limit). Returns (kept
    indices int64, the suppressed mask bool (n,))."""
    boxes = as_real(boxes)
    if boxes.ndim != 2 or boxes.shape[1] != 4 or (ids is not None and len(ids) != len(boxes)):
        raise ValueError(f"nms: boxes (n, 4) and ids (n,) expected, got {boxes.shape} and "
                         f"{None if ids is None else len(ids)}")
    return _nms(np.ascontiguousarray(boxes.T), ids, thresh, mode, limit)


def _nms(const real[:, ::1] cols, ids, double thresh, int mode, Py_ssize_t limit):
    cdef Py_ssize_t n = cols.shape[1]
    dt = np.float32 if real is float else np.float64
    area_a = np.empty(n, dt)
    gone_a = np.zeros(n, np.int32)
    keep_a = np.empty(n, np.int64)
    ids_a = None if ids is None else np.ascontiguousarray(ids, dt)
    cdef real[::1] area = area_a
    cdef int32_t[::1] gone = gone_a
    cdef int64_t[::1] keep = keep_a
    cdef const real[::1] idv
    cdef const real* idp = NULL
    cdef Py_ssize_t kept = 0
    if n == 0:
        return keep_a, gone_a.astype(bool)
    if ids_a is not None:
        idv = ids_a
        idp = &idv[0]
    with nogil:
        kept = nms_loop(cols, idp, <real>thresh, mode, limit if limit >= 0 else n,
                        &area[0], &gone[0], &keep[0])
    return keep_a[:kept], gone_a.astype(bool)


def box_iou_pairs(const double[:, ::1] a, const double[:, ::1] b, real[:, ::1] out):
    """out[i, j] := IoU of corner boxes a[i] and b[j] (areas max(w, 0) * max(h, 0);
    0 where the union is not positive), computed in double."""
    cdef Py_ssize_t m = a.shape[0], n = b.shape[0], i
    cdef double aa
    if out.shape[0] != m or out.shape[1] != n or a.shape[1] != 4 or b.shape[1] != 4:
        raise ValueError("box_iou: a (m, 4), b (n, 4) and out (m, n) expected")
    if m == 0 or n == 0:
        return
    cols_a = np.ascontiguousarray(np.asarray(b).T)                  # (4, n): one row a side
    area_a = np.maximum(cols_a[2] - cols_a[0], 0) * np.maximum(cols_a[3] - cols_a[1], 0)
    cdef const double[:, ::1] cols = cols_a
    cdef const double[::1] area_b = area_a
    with nogil:
        for i in range(m):
            aa = box_area(a[i, 0], a[i, 1], a[i, 2], a[i, 3], MODE_BOX)
            if real is float:
                mxcy_iou_row_f(&a[i, 0], aa, &cols[0, 0], &cols[1, 0], &cols[2, 0],
                               &cols[3, 0], &area_b[0], &out[i, 0], n)
            else:
                mxcy_iou_row_d(&a[i, 0], aa, &cols[0, 0], &cols[1, 0], &cols[2, 0],
                               &cols[3, 0], &area_b[0], &out[i, 0], n)


def box_encode(const double[:, ::1] samples, const double[:, ::1] matches,
               const double[:, :, ::1] anchors, const double[:, :, ::1] refs,
               const double[::1] means, const double[::1] stds, real[:, :, ::1] out,
               real[:, :, ::1] mask):
    """SSD targets: for samples[b, n] > 0.5, anchor a = anchors[b, n] and reference
    g = refs[b, clip(int(matches[b, n]), 0, M - 1)] (corners), out := (((gx - ax) / aw,
    (gy - ay) / ah, log(gw / aw), log(gh / ah)) - means) / stds and mask := 1; else 0."""
    cdef Py_ssize_t nb = anchors.shape[0], n = anchors.shape[1], m = refs.shape[1]
    cdef Py_ssize_t b, i, k, r
    cdef double mt, ax, ay, aw, ah, gx, gy, gw, gh
    cdef double t[4]
    cdef const double* g
    if m < 1 or refs.shape[0] != nb:
        raise ValueError(f"box_encode: refs (B, M >= 1, 4) expected, got "
                         f"({refs.shape[0]}, {refs.shape[1]}, {refs.shape[2]})")
    with nogil:
        for b in range(nb):
            for i in range(n):
                if not samples[b, i] > 0.5:
                    for k in range(4):
                        out[b, i, k] = 0
                        mask[b, i, k] = 0
                    continue
                mt = matches[b, i]
                # NumPy's astype(int64) then clip: NaN/inf/huge become INT64_MIN -> 0
                r = 0 if not (1 <= mt < 9.2e18) else min(<Py_ssize_t>mt, m - 1)
                g = &refs[b, r, 0]
                ax, ay = (anchors[b, i, 0] + anchors[b, i, 2]) / 2, \
                    (anchors[b, i, 1] + anchors[b, i, 3]) / 2
                aw, ah = anchors[b, i, 2] - anchors[b, i, 0], anchors[b, i, 3] - anchors[b, i, 1]
                gx, gy = (g[0] + g[2]) / 2, (g[1] + g[3]) / 2
                gw, gh = g[2] - g[0], g[3] - g[1]
                t[0], t[1] = (gx - ax) / aw, (gy - ay) / ah
                t[2], t[3] = log(gw / aw), log(gh / ah)
                for k in range(4):
                    out[b, i, k] = <real>((t[k] - means[k]) / stds[k])
                    mask[b, i, k] = 1


def roi_align_sep(const real[:, :, :, ::1] data, const int64_t[::1] batch,
                  const double[:, :, ::1] wy, const double[:, :, ::1] wx,
                  real[:, :, :, ::1] out):
    """out[r, c, i, j] := sum_y,x wy[r, i, y] wx[r, j, x] data[batch[r], c, y, x] over the
    nonzero span of each weight row (ROIAlign's separable bilinear averages)."""
    cdef Py_ssize_t nr = batch.shape[0], nc = data.shape[1], ph = wy.shape[1]
    cdef Py_ssize_t pw = wx.shape[1], hh = data.shape[2], ww = data.shape[3]
    cdef Py_ssize_t r, c, i, j, y, x
    cdef double acc, row
    cdef const real* plane
    if wy.shape[2] != hh or wx.shape[2] != ww or out.shape[0] != nr or out.shape[1] != nc:
        raise ValueError("roi_align_sep: weights or output do not fit the data")
    span_a = np.zeros((max(ph, pw), 4), np.int64)
    cdef int64_t[:, ::1] span = span_a        # y lo, y hi, x lo, x hi per bin row/column
    with nogil:
        for r in range(nr):
            for i in range(ph):
                span_of(&wy[r, i, 0], hh, &span[i, 0])
            for j in range(pw):
                span_of(&wx[r, j, 0], ww, &span[j, 2])
            for c in range(nc):
                plane = &data[batch[r], c, 0, 0]
                for i in range(ph):
                    for j in range(pw):
                        acc = 0
                        for y in range(span[i, 0], span[i, 1]):
                            row = 0
                            for x in range(span[j, 2], span[j, 3]):
                                row = row + wx[r, j, x] * plane[y * ww + x]
                            acc = acc + wy[r, i, y] * row
                        out[r, c, i, j] = <real>acc


def roi_align_sep_grad(const double[:, :, :, ::1] dy, const int64_t[::1] batch,
                       const double[:, :, ::1] wy, const double[:, :, ::1] wx,
                       double[:, :, :, ::1] dx):
    """dx[batch[r], c, y, x] += sum_i,j wy[r, i, y] wx[r, j, x] dy[r, c, i, j] (the
    transpose of roi_align_sep; dx zeroed by the caller)."""
    cdef Py_ssize_t nr = batch.shape[0], nc = dx.shape[1], ph = wy.shape[1]
    cdef Py_ssize_t pw = wx.shape[1], hh = dx.shape[2], ww = dx.shape[3]
    cdef Py_ssize_t r, c, i, j, y, x
    cdef double g, gy
    cdef double* plane
    if wy.shape[2] != hh or wx.shape[2] != ww or dy.shape[0] != nr or dy.shape[1] != nc \
            or dy.shape[2] != ph or dy.shape[3] != pw:
        raise ValueError("roi_align_sep_grad: weights or gradients do not fit")
    span_a = np.zeros((max(ph, pw), 4), np.int64)
    cdef int64_t[:, ::1] span = span_a
    with nogil:
        for r in range(nr):
            for i in range(ph):
                span_of(&wy[r, i, 0], hh, &span[i, 0])
            for j in range(pw):
                span_of(&wx[r, j, 0], ww, &span[j, 2])
            for c in range(nc):
                plane = &dx[batch[r], c, 0, 0]
                for i in range(ph):
                    for j in range(pw):
                        g = dy[r, c, i, j]
                        for y in range(span[i, 0], span[i, 1]):
                            gy = g * wy[r, i, y]
                            for x in range(span[j, 2], span[j, 3]):
                                plane[y * ww + x] += gy * wx[r, j, x]


cdef inline void span_of(const double* w, Py_ssize_t n, int64_t* lo_hi) noexcept nogil:
    """[first, last + 1) of the nonzero entries of w (empty: [0, 0))."""
    cdef Py_ssize_t lo = 0, hi = n
    while lo < n and w[lo] == 0:
        lo += 1
    while hi > lo and w[hi - 1] == 0:
        hi -= 1
    lo_hi[0], lo_hi[1] = lo, hi


cdef inline void taps(double y, double x, Py_ssize_t hh, Py_ssize_t ww, int64_t* idx,
                      double* wt) noexcept nogil:
    """ROIAlign's bilinear sample as 4 (offset, weight) taps: weight 0 outside [-1, H] x
    [-1, W]; positions clamped into the image, an edge row/column read alone."""
    cdef Py_ssize_t yl, xl, yh, xh, k
    cdef double ly, lx
    if y < -1 or y > hh or x < -1 or x > ww:
        for k in range(4):
            idx[k], wt[k] = 0, 0
        return
    y, x = max(y, 0.0), max(x, 0.0)
    yl, xl = min(<Py_ssize_t>floor(y), hh - 1), min(<Py_ssize_t>floor(x), ww - 1)
    if yl >= hh - 1:
        y = yl
    if xl >= ww - 1:
        x = xl
    yh, xh = min(yl + 1, hh - 1), min(xl + 1, ww - 1)
    ly, lx = y - yl, x - xl
    idx[0], idx[1], idx[2], idx[3] = yl * ww + xl, yl * ww + xh, yh * ww + xl, yh * ww + xh
    wt[0], wt[1] = (1 - ly) * (1 - lx), (1 - ly) * lx
    wt[2], wt[3] = ly * (1 - lx), ly * lx


def rroi_align(const real[:, :, :, ::1] data, const double[:, ::1] rois,
               const int64_t[::1] batch, double scale, Py_ssize_t ratio,
               real[:, :, :, ::1] out):
    """Rotated ROIAlign: out[r, c, i, j] := mean of the bin's sample grid (ratio² samples,
    or ceil(bin size) per axis when ratio <= 0) of bilinear taps at x = xx cos t +
    yy sin t + cx, y = yy cos t - xx sin t + cy (box-frame xx, yy; t in degrees). The
    taps of a roi are computed once and applied to every channel."""
    cdef Py_ssize_t nr = rois.shape[0], nc = data.shape[1], hh = data.shape[2]
    cdef Py_ssize_t ww = data.shape[3], ph = out.shape[2], pw = out.shape[3]
    cdef Py_ssize_t r, c, i, j, gy, gx, ngh, ngw, k, cell, s, per_bin
    cdef double cx, cy, rw, rh, th, ct, st, yy, xx, acc, cnt
    cdef const real* plane
    if out.shape[0] != nr or out.shape[1] != nc or rois.shape[1] != 6:
        raise ValueError("rroi_align: rois (R, 6) and output (R, C, ph, pw) expected")
    if nr == 0 or nc == 0:
        return
    rs = np.maximum(np.asarray(rois[:, 3:5]) * scale, 1.0)
    most = ratio * ratio if ratio > 0 else int(
        (np.ceil(rs[:, 1] / ph) * np.ceil(rs[:, 0] / pw)).max())
    idx_a = np.empty((ph * pw * max(most, 1), 4), np.int64)
    wt_a = np.empty((ph * pw * max(most, 1), 4), np.float64)
    cdef int64_t[:, ::1] idx = idx_a
    cdef double[:, ::1] wt = wt_a
    with nogil:
        for r in range(nr):
            cx, cy = rois[r, 1] * scale, rois[r, 2] * scale
            rw, rh = max(rois[r, 3] * scale, 1.0), max(rois[r, 4] * scale, 1.0)
            th = rois[r, 5] * 3.141592653589793 / 180.0
            ct, st = cos(th), sin(th)
            if ratio > 0:
                ngh = ngw = ratio
            else:
                ngh, ngw = <Py_ssize_t>ceil(rh / ph), <Py_ssize_t>ceil(rw / pw)
            per_bin = ngh * ngw
            cnt = max(per_bin, 1)
            k = 0
            for i in range(ph):
                for j in range(pw):
                    for gy in range(ngh):
                        yy = (-rh / 2 + i * (rh / ph)) + (gy + 0.5) * (rh / ph / max(ngh, 1))
                        for gx in range(ngw):
                            xx = (-rw / 2 + j * (rw / pw)) + \
                                (gx + 0.5) * (rw / pw / max(ngw, 1))
                            taps(yy * ct - xx * st + cy, xx * ct + yy * st + cx, hh, ww,
                                 &idx[k, 0], &wt[k, 0])
                            k += 1
            for c in range(nc):
                plane = &data[batch[r], c, 0, 0]
                k = 0
                for cell in range(ph * pw):
                    acc = 0
                    for s in range(per_bin):
                        acc = acc + (wt[k, 0] * plane[idx[k, 0]] + wt[k, 1] * plane[idx[k, 1]]
                                     + wt[k, 2] * plane[idx[k, 2]]
                                     + wt[k, 3] * plane[idx[k, 3]])
                        k += 1
                    out[r, c, cell // pw, cell % pw] = <real>(acc / cnt)


def psroi_pool(const real[:, :, :, ::1] data, const int64_t[::1] batch,
               const int64_t[:, :, ::1] chan, const int64_t[:, ::1] hs,
               const int64_t[:, ::1] he, const int64_t[:, ::1] ws, const int64_t[:, ::1] we,
               double[:, :, :, ::1] out):
    """out[r, d, i, j] := mean of data[batch[r], chan[d, i, j]] over rows [hs, he)[r, i]
    and columns [ws, we)[r, j] (0 for an empty bin)."""
    cdef Py_ssize_t nr = batch.shape[0], nd = chan.shape[0], p = chan.shape[1]
    cdef Py_ssize_t ww = data.shape[3], r, d, i, j, y, x, k
    cdef double acc
    cdef const real* plane
    if out.shape[0] != nr or out.shape[1] != nd or out.shape[2] != p or hs.shape[1] != p:
        raise ValueError("psroi_pool: bins or output do not fit")
    with nogil:
        for r in range(nr):
            for d in range(nd):
                for i in range(p):
                    for j in range(p):
                        plane = &data[batch[r], chan[d, i, j], 0, 0]
                        acc = 0
                        for y in range(hs[r, i], he[r, i]):
                            for x in range(ws[r, j], we[r, j]):
                                acc = acc + plane[y * ww + x]
                        k = (he[r, i] - hs[r, i]) * (we[r, j] - ws[r, j])
                        out[r, d, i, j] = acc / k if k > 0 else 0.0


def psroi_pool_grad(const real[:, :, :, ::1] dy, const int64_t[::1] batch,
                    const int64_t[:, :, ::1] chan, const int64_t[:, ::1] hs,
                    const int64_t[:, ::1] he, const int64_t[:, ::1] ws,
                    const int64_t[:, ::1] we, double[:, :, :, ::1] dx):
    """dx[batch[r], chan[d, i, j], y, x] += dy[r, d, i, j] / bin area over each bin's
    pixels (dx zeroed by the caller)."""
    cdef Py_ssize_t nr = batch.shape[0], nd = chan.shape[0], p = chan.shape[1]
    cdef Py_ssize_t ww = dx.shape[3], r, d, i, j, y, x, k
    cdef double share
    cdef double* plane
    if dy.shape[0] != nr or dy.shape[1] != nd or dy.shape[2] != p or hs.shape[1] != p:
        raise ValueError("psroi_pool_grad: bins or gradient do not fit")
    with nogil:
        for r in range(nr):
            for d in range(nd):
                for i in range(p):
                    for j in range(p):
                        k = (he[r, i] - hs[r, i]) * (we[r, j] - ws[r, j])
                        if k <= 0:
                            continue
                        share = dy[r, d, i, j] / <double>k
                        plane = &dx[batch[r], chan[d, i, j], 0, 0]
                        for y in range(hs[r, i], he[r, i]):
                            for x in range(ws[r, j], we[r, j]):
                                plane[y * ww + x] += share


def roi_pool(const real[:, :, :, ::1] data, const int64_t[::1] batch,
             const double[:, ::1] coords, real[:, :, :, ::1] out,
             int64_t[:, :, :, ::1] argmax):
    """ROIPooling: out[r, c, i, j] := max of bin (i, j) of roi r (coords (R, 4) = x1, y1,
    x2, y2 already scaled, rounded here half away from zero; bin rows [floor(i bh),
    ceil((i + 1) bh)) + y1 clipped into the image, bh = max(y2 - y1 + 1, 1) / ph; columns
    likewise), the first maximum (NumPy's argmax: a NaN wins); argmax := its offset in the
    plane (-1 and out 0 for an empty bin). Batch indices are checked by the caller."""
    cdef Py_ssize_t nr = batch.shape[0], nc = data.shape[1], hh = data.shape[2]
    cdef Py_ssize_t ww = data.shape[3], ph = out.shape[2], pw = out.shape[3]
    cdef Py_ssize_t r, c, i, j, y, x, best, k, nan_at
    cdef int64_t b
    cdef bint gt
    cdef double bh, bw
    cdef double v4[4]
    cdef real m, v
    cdef const real* plane
    if out.shape[0] != nr or out.shape[1] != nc or coords.shape[0] != nr or \
            coords.shape[1] != 4 or argmax.shape[0] != nr or argmax.shape[1] != nc or \
            argmax.shape[2] != ph or argmax.shape[3] != pw:
        raise ValueError("roi_pool: coords (R, 4), output and argmax (R, C, ph, pw) expected")
    span_a = np.zeros((max(ph, pw), 4), np.int64)
    cdef int64_t[:, ::1] span = span_a
    with nogil:
        for r in range(nr):
            b = batch[r]
            for k in range(4):
                v4[k] = round(coords[r, k])
            bw = max(<int64_t>v4[2] - <int64_t>v4[0] + 1, <int64_t>1) / <double>pw
            bh = max(<int64_t>v4[3] - <int64_t>v4[1] + 1, <int64_t>1) / <double>ph
            for i in range(ph):
                span[i, 0] = min(max(<int64_t>floor(i * bh) + <int64_t>v4[1], 0), hh)
                span[i, 1] = min(max(<int64_t>ceil((i + 1) * bh) + <int64_t>v4[1], 0), hh)
            for j in range(pw):
                span[j, 2] = min(max(<int64_t>floor(j * bw) + <int64_t>v4[0], 0), ww)
                span[j, 3] = min(max(<int64_t>ceil((j + 1) * bw) + <int64_t>v4[0], 0), ww)
            for c in range(nc):
                plane = &data[b, c, 0, 0]
                for i in range(ph):
                    for j in range(pw):
                        if span[i, 1] <= span[i, 0] or span[j, 3] <= span[j, 2]:
                            out[r, c, i, j] = 0
                            argmax[r, c, i, j] = -1
                            continue
                        # the first maximum by selects (no unpredictable branch); a NaN,
                        # rare, is looked for alongside and wins (first one)
                        best = span[i, 0] * ww + span[j, 2]
                        m = plane[best]
                        nan_at = -1
                        for y in range(span[i, 0], span[i, 1]):
                            for x in range(span[j, 2], span[j, 3]):
                                v = plane[y * ww + x]
                                gt = v > m
                                m = v if gt else m
                                best = y * ww + x if gt else best
                                if v != v and nan_at < 0:
                                    nan_at = y * ww + x
                        if nan_at >= 0:
                            m, best = plane[nan_at], nan_at
                        out[r, c, i, j] = m
                        argmax[r, c, i, j] = best


def roi_pool_grad(const real[:, :, :, ::1] dy, const int64_t[:, :, :, ::1] argmax,
                  const int64_t[::1] batch, double[:, :, :, ::1] dx):
    """dx[batch[r], c] at offset argmax[r, c, i, j] += dy[r, c, i, j] (skipping -1, an
    empty bin); dx zeroed by the caller."""
    cdef Py_ssize_t nr = dy.shape[0], nc = dy.shape[1], ph = dy.shape[2], pw = dy.shape[3]
    cdef Py_ssize_t r, c, i, j
    cdef int64_t k
    cdef double* plane
    if argmax.shape[0] != nr or argmax.shape[1] != nc or argmax.shape[2] != ph or \
            argmax.shape[3] != pw or batch.shape[0] != nr or dx.shape[1] != nc:
        raise ValueError("roi_pool_grad: gradient, argmax and batch do not fit")
    with nogil:
        for r in range(nr):
            for c in range(nc):
                plane = &dx[batch[r], c, 0, 0]
                for i in range(ph):
                    for j in range(pw):
                        k = argmax[r, c, i, j]
                        if k >= 0:
                            plane[k] += dy[r, c, i, j]
