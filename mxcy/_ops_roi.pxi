# Part of mxcy/_ops.pyx (textually included there): ROIPooling's max over each bin of each
# region and its gradient. As a NumPy op it looped over rois x bins in Python (6-13x
# slower than MXNet on 128 rois of 7x7 bins).
#
# A roi (batch index, x1, y1, x2, y2) is rounded (half away from zero, as MXNet's C round)
# after scaling by spatial_scale; bin (i, j) covers rows [floor(i bh), ceil((i + 1) bh)) +
# y1 and the columns likewise, clipped into the image, bh = max(y2 - y1 + 1, 1) / ph. An
# empty bin gives 0 and no gradient; otherwise the first maximum (NumPy's argmax: NaN
# wins) is the output and receives the gradient.

cdef struct RoiPoolArgs:
    char* x              # data (N, C, H, W)
    char* rois           # (R, 5)
    char* y              # forward: output (R, C, ph, pw); backward: the head gradient
    char* dx             # backward: data gradient (N, C, H, W)
    int64_t n, c, h, w, r, ph, pw
    double scale
    int dtype            # float32/float64 of x, y, dx
    int roi_dtype        # float32/float64/int32/int64
    int add              # backward with req 'add'
    int backward


cdef inline double roi_coord(RoiPoolArgs* a, int64_t r, int k) noexcept nogil:
    """round(rois[r, k] * spatial_scale), the product in the rois' float precision."""
    cdef double v = load_as_double(a.rois, a.roi_dtype, r * 5 + k)
    if a.roi_dtype == DT_FLOAT32:
        return round(<double>(<float>v * <float>a.scale))
    return round(v * a.scale)


cdef inline void roi_span(int64_t i, double size, int64_t start, int64_t limit,
                          int64_t* lo, int64_t* hi) noexcept nogil:
    lo[0] = min(max(<int64_t>floor(i * size) + start, <int64_t>0), limit)
    hi[0] = min(max(<int64_t>ceil((i + 1) * size) + start, <int64_t>0), limit)


cdef void roi_pool_typed(RoiPoolArgs* a, real_t* x, real_t* y, real_t* dx, int64_t c_lo,
                         int64_t c_hi) noexcept nogil:
    cdef int64_t r, b, c, i, j, yy, xx, hs, he, ws, we, best, x1, y1
    cdef double bh, bw
    cdef real_t m, v
    cdef real_t* plane
    if a.backward and not a.add:
        for b in range(a.n):
            memset(dx + (b * a.c + c_lo) * a.h * a.w, 0,
                   (c_hi - c_lo) * a.h * a.w * sizeof(real_t))
    for r in range(a.r):
        b = <int64_t>load_as_double(a.rois, a.roi_dtype, r * 5)
        x1, y1 = <int64_t>roi_coord(a, r, 1), <int64_t>roi_coord(a, r, 2)
        bw = max(<int64_t>roi_coord(a, r, 3) - x1 + 1, <int64_t>1) / <double>a.pw
        bh = max(<int64_t>roi_coord(a, r, 4) - y1 + 1, <int64_t>1) / <double>a.ph
        for c in range(c_lo, c_hi):
            plane = x + (b * a.c + c) * a.h * a.w
            for i in range(a.ph):
                roi_span(i, bh, y1, a.h, &hs, &he)
                for j in range(a.pw):
                    roi_span(j, bw, x1, a.w, &ws, &we)
                    if he <= hs or we <= ws:
                        if not a.backward:
                            y[((r * a.c + c) * a.ph + i) * a.pw + j] = 0
                        continue
                    best = hs * a.w + ws
                    m = plane[best]
                    for yy in range(hs, he):
                        for xx in range(ws, we):
                            v = plane[yy * a.w + xx]
                            if m == m and (v > m or v != v):
                                m, best = v, yy * a.w + xx
                    if a.backward:
                        dx[(b * a.c + c) * a.h * a.w + best] += \
                            y[((r * a.c + c) * a.ph + i) * a.pw + j]
                    else:
                        y[((r * a.c + c) * a.ph + i) * a.pw + j] = m


cdef void roi_pool_part(void* args, int part, int nparts) noexcept nogil:
    """Channels [lo, hi) of every roi: parts never write the same element."""
    cdef RoiPoolArgs* a = <RoiPoolArgs*>args
    cdef int64_t lo = a.c * part // nparts, hi = a.c * (part + 1) // nparts
    if a.dtype == DT_FLOAT32:
        roi_pool_typed(a, <float*>a.x, <float*>a.y, <float*>a.dx, lo, hi)
    else:
        roi_pool_typed(a, <double*>a.x, <double*>a.y, <double*>a.dx, lo, hi)


cdef int roi_pool_kernel(void* args, char* errmsg) noexcept nogil:
    """Forward y[r, c, i, j] := max of bin (i, j); backward dx[b, c, argmax] += dy."""
    cdef RoiPoolArgs* a = <RoiPoolArgs*>args
    cdef int64_t r
    cdef double b
    for r in range(a.r):
        b = load_as_double(a.rois, a.roi_dtype, r * 5)
        if not (-1 < b < a.n):            # the index is truncated toward zero
            snprintf(errmsg, 255, b"ROIPooling: rois[%lld] names batch %g, data has %lld",
                     <long long>r, b, <long long>a.n)
            return ERR_INDEX
    run_parts(roi_pool_part, args, 2 if a.c > 1 and a.r * a.c * a.ph * a.pw > 4096 else 1)
    return 0


cdef bytes _B_ROIPOOL = b"ROIPooling"
cdef bytes _B_ROIPOOL_BWD = b"ROIPooling_backward"


def roi_pool_supported(data, rois):
    """Whether the C kernel takes these arrays (else the NumPy path)."""
    return np.dtype(data.dtype) in FLOAT_DTYPES and np.dtype(rois.dtype) in INDEX_DTYPES


def push_roi_pool(data, rois, out, pooled_size, double spatial_scale, grad=None,
                  bint add=False):
    """Forward (grad None): out (R, C, ph, pw) := ROIPooling(data, rois). Backward: grad
    (data's shape; zeroed first unless `add`) += out (the head gradient) at each bin's
    maximum. Shapes are checked by the operator's inference first."""
    cdef RoiPoolArgs a
    cdef EVar* reads[3]
    cdef EVar* w
    a.n, a.c, a.h, a.w = data.shape
    a.r = rois.shape[0]
    a.ph, a.pw = pooled_size
    if tuple(out.shape) != (a.r, a.c, a.ph, a.pw) or tuple(rois.shape) != (a.r, 5) or \
            (grad is not None and tuple(grad.shape) != tuple(data.shape)):
        raise ValueError(f"ROIPooling: data {data.shape}, rois {rois.shape}, output "
                         f"{out.shape} do not fit")
    if np.dtype(out.dtype) != np.dtype(data.dtype) or \
            (grad is not None and np.dtype(grad.dtype) != np.dtype(data.dtype)):
        raise TypeError("ROIPooling: data, output and gradient must share one dtype")
    a.scale = spatial_scale
    a.dtype = _NP_CODES[np.dtype(data.dtype)]
    a.roi_dtype = _NP_CODES[np.dtype(rois.dtype)]
    a.add = add
    a.backward = grad is not None
    written = out if grad is None else grad
    data = nd_apart(data, (written,))
    rois = nd_apart(rois, (written,))
    if grad is not None:
        out = nd_apart(out, (grad,))
    a.x, a.rois, a.y = nd_ptr(data), nd_ptr(rois), nd_ptr(out)
    a.dx = nd_ptr(grad) if grad is not None else NULL
    reads[0], reads[1] = nd_var(data), nd_var(rois)
    reads[2] = nd_var(out)
    w = nd_var(written)
    push_kernel(roi_pool_kernel, &a, sizeof(a), reads, 3 if grad is not None else 2, &w, 1,
                0, _B_ROIPOOL_BWD if grad is not None else _B_ROIPOOL, nd_wflag(written, 0))
