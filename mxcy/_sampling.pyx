"""Sampling kernels: bilinear grid sampling (BilinearSampler, SpatialTransformer), the CTC
forward-backward recursions, plain and deformable im2col/col2im.

Each function takes C-contiguous NumPy arrays of one float dtype (float32 or float64;
the operators cast float16 through float32), already checked by the operator, and runs
its loops without the GIL. References: the NumPy formulas these kernels replaced, kept in
tests/operator (test_spatial_ops.py, test_ctc.py, test_deformable_ops.py).
"""
from libc.math cimport exp, floor, log, log1p, INFINITY, isfinite
from libc.stdlib cimport malloc, free
from libc.stdint cimport int64_t
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dgemm, sgemm

ctypedef fused real:
    float
    double


cdef inline bint _inside(Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    return 0 <= i < n


# ---------------------------------------------------------------- bilinear sampling
cdef void _bilinear_taps(const real* gx, const real* gy, Py_ssize_t npix, Py_ssize_t h,
                         Py_ssize_t w, Py_ssize_t* idx, real* wt, real* wx,
                         real* wy) noexcept nogil:
    """For each normalised grid point p (x = (gx + 1)(W − 1)/2, y likewise): wx, wy := the
    top-left pixel's weights 1 − (x − x0), 1 − (y − y0); idx[4p + t], wt[4p + t] := the
    flat index (−1 outside the image) and weight of corner t = top-left, top-right,
    bottom-left, bottom-right."""
    cdef Py_ssize_t p, x0, y0, t, xx, yy
    cdef real xr, yr, a, e
    for p in range(npix):
        xr = (gx[p] + 1) * (w - 1) / 2
        yr = (gy[p] + 1) * (h - 1) / 2
        # far outside (or NaN): every tap is outside either way; keeps the casts defined
        if not xr > -2:
            xr = -2
        elif xr > w + 1:
            xr = w + 1
        if not yr > -2:
            yr = -2
        elif yr > h + 1:
            yr = h + 1
        x0 = <Py_ssize_t>floor(xr)
        y0 = <Py_ssize_t>floor(yr)
        e = 1 - (xr - x0)
        a = 1 - (yr - y0)
        wx[p], wy[p] = e, a
        for t in range(4):
            yy, xx = y0 + (t >> 1), x0 + (t & 1)
            idx[4 * p + t] = yy * w + xx if _inside(xx, w) and _inside(yy, h) else -1
        wt[4 * p] = a * e
        wt[4 * p + 1] = a * (1 - e)
        wt[4 * p + 2] = (1 - a) * e
        wt[4 * p + 3] = (1 - a) * (1 - e)


cdef int _bilinear_buffers(Py_ssize_t npix, Py_ssize_t** idx, real** wt) noexcept nogil:
    """idx: 4 per point; wt: 4 weights, wx, wy and two accumulators per point."""
    idx[0] = <Py_ssize_t*>malloc(4 * npix * sizeof(Py_ssize_t) + 1)
    wt[0] = <real*>malloc(8 * npix * sizeof(real) + 1)
    return idx[0] != NULL and wt[0] != NULL


def bilinear_forward(real[:, :, :, ::1] data, real[:, :, :, ::1] grid,
                     real[:, :, :, ::1] out):
    """out[n, c, i, j] := data[n, c] sampled bilinearly at grid[n, :, i, j] (zeros outside)."""
    cdef Py_ssize_t n = data.shape[0], ch = data.shape[1], h = data.shape[2]
    cdef Py_ssize_t w = data.shape[3], npix = grid.shape[2] * grid.shape[3]
    cdef Py_ssize_t b, c, p, t
    cdef real v
    cdef const real* plane
    cdef real* o
    cdef Py_ssize_t* idx = NULL
    cdef real* wt = NULL
    if not _bilinear_buffers(npix, &idx, &wt):
        free(idx)
        free(wt)
        raise MemoryError('BilinearSampler: no memory for the sampling weights')
    with nogil:
        for b in range(n):
            _bilinear_taps(&grid[b, 0, 0, 0], &grid[b, 1, 0, 0], npix, h, w, idx, wt,
                           wt + 4 * npix, wt + 5 * npix)
            for c in range(ch):
                plane = &data[b, c, 0, 0]
                o = &out[b, c, 0, 0]
                for p in range(npix):
                    v = 0
                    for t in range(4 * p, 4 * p + 4):
                        if idx[t] >= 0:
                            v = v + plane[idx[t]] * wt[t]
                    o[p] = v
    free(idx)
    free(wt)


def bilinear_backward(real[:, :, :, ::1] data, real[:, :, :, ::1] grid,
                      real[:, :, :, ::1] dy, real[:, :, :, ::1] gdata,
                      real[:, :, :, ::1] ggrid, bint add_data, bint add_grid):
    """gdata (+)= the scatter of dy through the bilinear weights; ggrid (+)= d out/d grid
    · dy summed over channels. Either output may be None (not wanted)."""
    cdef Py_ssize_t n = data.shape[0], ch = data.shape[1], h = data.shape[2]
    cdef Py_ssize_t w = data.shape[3], npix = grid.shape[2] * grid.shape[3]
    cdef Py_ssize_t b, c, p, t
    cdef bint want_data = gdata is not None, want_grid = ggrid is not None
    cdef real v00, v01, v10, v11, g, cross, sx, sy
    cdef const real* plane
    cdef const real* gp
    cdef const Py_ssize_t* ip
    cdef real* dplane = NULL
    cdef Py_ssize_t* idx = NULL
    cdef real* wt = NULL
    cdef real* wx
    cdef real* wy
    cdef real* accx
    cdef real* accy
    if not _bilinear_buffers(npix, &idx, &wt):
        free(idx)
        free(wt)
        raise MemoryError('BilinearSampler: no memory for the sampling weights')
    wx, wy, accx, accy = wt + 4 * npix, wt + 5 * npix, wt + 6 * npix, wt + 7 * npix
    with nogil:
        if want_data and not add_data:
            memset(&gdata[0, 0, 0, 0], 0, n * ch * h * w * sizeof(real))
        sx = <real>(w - 1) / 2
        sy = <real>(h - 1) / 2
        for b in range(n):
            _bilinear_taps(&grid[b, 0, 0, 0], &grid[b, 1, 0, 0], npix, h, w, idx, wt, wx, wy)
            memset(accx, 0, 2 * npix * sizeof(real))
            for c in range(ch):
                plane = &data[b, c, 0, 0]
                gp = &dy[b, c, 0, 0]
                if want_data:
                    dplane = &gdata[b, c, 0, 0]
                for p in range(npix):
                    g = gp[p]
                    ip = idx + 4 * p
                    v00 = plane[ip[0]] if ip[0] >= 0 else 0
                    v01 = plane[ip[1]] if ip[1] >= 0 else 0
                    v10 = plane[ip[2]] if ip[2] >= 0 else 0
                    v11 = plane[ip[3]] if ip[3] >= 0 else 0
                    if want_data:
                        for t in range(4):
                            if ip[t] >= 0:
                                dplane[ip[t]] += g * wt[4 * p + t]
                    cross = v00 - v01 - v10 + v11
                    accy[p] -= g * (v01 - v11 + cross * wx[p])
                    accx[p] -= g * (v10 - v11 + cross * wy[p])
            if want_grid:
                for p in range(npix):
                    if add_grid:
                        (&ggrid[b, 0, 0, 0])[p] += accx[p] * sx
                        (&ggrid[b, 1, 0, 0])[p] += accy[p] * sy
                    else:
                        (&ggrid[b, 0, 0, 0])[p] = accx[p] * sx
                        (&ggrid[b, 1, 0, 0])[p] = accy[p] * sy
    free(idx)
    free(wt)


# ---------------------------------------------------------------- CTC
cdef inline double _lae(double a, double b) noexcept nogil:
    """log(exp(a) + exp(b)), exact at -inf."""
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a > b:
        return a + log1p(exp(b - a))
    return b + log1p(exp(a - b))


cdef inline bint _skip(const int64_t* ext, Py_ssize_t s) noexcept nogil:
    """State s may be entered from s - 2: a symbol differing from the one before it."""
    return s >= 2 and ext[s] != ext[0] and ext[s] != ext[s - 2]


cdef double _ctc_log(const double* lp, Py_ssize_t n, Py_ssize_t classes, Py_ssize_t b,
                     Py_ssize_t f, Py_ssize_t size, const int64_t* lab, double* alpha,
                     double* beta, double* occ, double* grad, double head) noexcept nogil:
    """-log p(label) of sample b (f >= 1 frames) in log space (-inf when no alignment
    exists); when grad is not NULL, its frames' rows of grad := head · (softmax − posterior).
    lp[(t·n + b)·classes + k] = log-softmax; alpha, beta: f × size tables."""
    cdef Py_ssize_t t, s, k, w = size
    cdef double a, loglik, post
    for s in range(size):
        alpha[s] = lp[b * classes + lab[s]] if s < 2 else -INFINITY
    for t in range(1, f):
        for s in range(size):
            a = alpha[(t - 1) * w + s]
            if s >= 1:
                a = _lae(a, alpha[(t - 1) * w + s - 1])
            if _skip(lab, s):
                a = _lae(a, alpha[(t - 1) * w + s - 2])
            alpha[t * w + s] = a + lp[(t * n + b) * classes + lab[s]]
    loglik = alpha[(f - 1) * w + size - 1]
    if size > 1:
        loglik = _lae(loglik, alpha[(f - 1) * w + size - 2])
    if grad == NULL or not isfinite(loglik):
        return loglik
    for s in range(size):   # beta[t, s]: the rest of the label after frame t, from state s
        beta[(f - 1) * w + s] = 0.0 if s >= size - 2 else -INFINITY
    for t in range(f - 2, -1, -1):
        for s in range(size):
            a = beta[(t + 1) * w + s] + lp[((t + 1) * n + b) * classes + lab[s]]
            if s + 1 < size:
                a = _lae(a, beta[(t + 1) * w + s + 1] +
                         lp[((t + 1) * n + b) * classes + lab[s + 1]])
            if s + 2 < size and _skip(lab, s + 2):
                a = _lae(a, beta[(t + 1) * w + s + 2] +
                         lp[((t + 1) * n + b) * classes + lab[s + 2]])
            beta[t * w + s] = a
    for t in range(f):
        memset(occ, 0, classes * sizeof(double))
        for s in range(size):
            post = exp(alpha[t * w + s] + beta[t * w + s] - loglik)
            if isfinite(post):
                occ[lab[s]] += post
        for k in range(classes):
            grad[(t * n + b) * classes + k] = (exp(lp[(t * n + b) * classes + k]) - occ[k]) * head
    return loglik


# log-probabilities below this send a sample to the log-space recursion: the scaled one
# below loses paths whose weight falls under 1e-308 of the frame's total
cdef double _LINEAR_FLOOR = -200.0


cdef bint _ctc_linear(const double* lp, const double* pr, Py_ssize_t n, Py_ssize_t classes,
                      Py_ssize_t b, Py_ssize_t f, Py_ssize_t size, const int64_t* lab,
                      double* alpha, double* beta, double* occ, double* grad, double head,
                      double* loglik) noexcept nogil:
    """The same as _ctc_log with probabilities (pr = exp(lp)) rescaled to sum 1 per frame
    (Rabiner's scaling): no exp/log per state. False (nothing written to grad) when a
    probability is below exp(_LINEAR_FLOOR), a frame's total is 0, or no alignment ends
    the label: the caller then runs _ctc_log."""
    cdef Py_ssize_t t, s, k, w = size
    cdef double a, c, logsum, z
    cdef const double* y
    for t in range(f):
        for s in range(size):
            if lp[(t * n + b) * classes + lab[s]] < _LINEAR_FLOOR:
                return False
    c = 0.0
    for s in range(size):
        alpha[s] = pr[b * classes + lab[s]] if s < 2 else 0.0
        c += alpha[s]
    for s in range(size):
        alpha[s] /= c
    logsum = log(c)
    for t in range(1, f):
        c = 0.0
        y = pr + (t * n + b) * classes
        for s in range(size):
            a = alpha[(t - 1) * w + s]
            if s >= 1:
                a += alpha[(t - 1) * w + s - 1]
            if _skip(lab, s):
                a += alpha[(t - 1) * w + s - 2]
            alpha[t * w + s] = a * y[lab[s]]
            c += alpha[t * w + s]
        if not c > 0:
            return False
        for s in range(size):
            alpha[t * w + s] /= c
        logsum += log(c)
    a = alpha[(f - 1) * w + size - 1] + (alpha[(f - 1) * w + size - 2] if size > 1 else 0.0)
    if not a > 0:
        return False
    loglik[0] = logsum + log(a)
    if grad == NULL:
        return True
    for s in range(size):
        beta[(f - 1) * w + s] = 1.0 if s >= size - 2 else 0.0
    for t in range(f - 2, -1, -1):
        c = 0.0
        y = pr + ((t + 1) * n + b) * classes
        for s in range(size):
            a = beta[(t + 1) * w + s] * y[lab[s]]
            if s + 1 < size:
                a += beta[(t + 1) * w + s + 1] * y[lab[s + 1]]
            if s + 2 < size and _skip(lab, s + 2):
                a += beta[(t + 1) * w + s + 2] * y[lab[s + 2]]
            beta[t * w + s] = a
            c += a
        if not c > 0:
            return False
        for s in range(size):
            beta[t * w + s] /= c
    for t in range(f):       # alpha·beta summed over states is p(label) at every frame
        z = 0.0
        for s in range(size):
            z += alpha[t * w + s] * beta[t * w + s]
        if not z > 0:
            return False
    for t in range(f):
        z = 0.0
        memset(occ, 0, classes * sizeof(double))
        for s in range(size):
            z += alpha[t * w + s] * beta[t * w + s]
        for s in range(size):
            occ[lab[s]] += alpha[t * w + s] * beta[t * w + s] / z
        y = pr + (t * n + b) * classes
        for k in range(classes):
            grad[(t * n + b) * classes + k] = (y[k] - occ[k]) * head
    return True


def ctc(double[:, :, ::1] logp, double[:, :, ::1] prob, int64_t[::1] frames,
        int64_t[:, ::1] ext, int64_t[::1] sizes, double[::1] losses, double[:, :, ::1] grad,
        double[::1] head):
    """losses[b] := -log p(label b | frames of b) (0 when no alignment exists); when grad
    is not None, grad[t, b, :] := head[b] · (softmax − class posteriors) for t < frames[b]
    and a feasible label, else 0. logp (T, N, C) are log-softmax values, prob their exp;
    ext (N, S) the labels with blanks around and between their symbols; sizes[b] its used
    width. Each sample runs the scaled recursion, or the log-space one where that fails."""
    cdef Py_ssize_t steps = logp.shape[0], n = logp.shape[1], classes = logp.shape[2]
    cdef Py_ssize_t width = ext.shape[1], b, f, size
    cdef double loglik, h
    cdef double* g = NULL
    cdef double* alpha = <double*>malloc((2 * steps * width + classes + 1) * sizeof(double))
    cdef double* beta = alpha + steps * width
    cdef double* occ = beta + steps * width
    if alpha == NULL:
        raise MemoryError('CTCLoss: no memory for the alpha/beta tables')
    with nogil:
        if grad is not None:
            g = &grad[0, 0, 0]
            memset(g, 0, steps * n * classes * sizeof(double))
        for b in range(n):
            f, size = frames[b], sizes[b]
            if f == 0:
                losses[b] = 0.0      # an empty label over no frames has probability 1
                continue
            h = head[b] if g != NULL else 0.0
            if not _ctc_linear(&logp[0, 0, 0], &prob[0, 0, 0], n, classes, b, f, size,
                               &ext[b, 0], alpha, beta, occ, g, h, &loglik):
                loglik = _ctc_log(&logp[0, 0, 0], n, classes, b, f, size, &ext[b, 0],
                                  alpha, beta, occ, g, h)
            losses[b] = -loglik if isfinite(loglik) else 0.0
    free(alpha)


# ---------------------------------------------------------------- im2col / col2im (2-D)
cdef inline void _span(Py_ssize_t n_out, Py_ssize_t stride, Py_ssize_t start, Py_ssize_t size,
                       Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    """[lo, hi): the outputs z < n_out whose input z·stride + start lies in [0, size)."""
    cdef Py_ssize_t a = 0, b
    if start < 0:
        a = (-start + stride - 1) // stride
    b = (size - 1 - start) // stride + 1 if size - 1 - start >= 0 else 0
    lo[0] = min(a, n_out)
    hi[0] = max(min(b, n_out), lo[0])


def im2col2d(real[:, :, :, ::1] x, real[:, :, ::1] cols, int kh, int kw, int sh, int sw,
             int ph, int pw, int dh, int dw, int oh, int ow):
    """cols[n, (c, i, j), (y, z)] := x[n, c, y·sh − ph + i·dh, z·sw − pw + j·dw] (0 outside)."""
    cdef Py_ssize_t n = x.shape[0], ch = x.shape[1], h = x.shape[2], w = x.shape[3]
    cdef Py_ssize_t b, c, i, j, y, z, r, lo, hi, q0
    cdef const real* src
    cdef real* dst
    with nogil:
        for b in range(n):
            for c in range(ch):
                for i in range(kh):
                    for j in range(kw):
                        dst = &cols[b, (c * kh + i) * kw + j, 0]
                        q0 = j * dw - pw
                        _span(ow, sw, q0, w, &lo, &hi)
                        for y in range(oh):
                            r = y * sh - ph + i * dh
                            if not _inside(r, h):
                                memset(dst + y * ow, 0, ow * sizeof(real))
                                continue
                            src = &x[b, c, r, 0]
                            for z in range(lo):
                                dst[y * ow + z] = 0
                            for z in range(lo, hi):
                                dst[y * ow + z] = src[z * sw + q0]
                            for z in range(hi, ow):
                                dst[y * ow + z] = 0


def col2im2d(real[:, :, ::1] cols, real[:, :, :, ::1] x, int kh, int kw, int sh, int sw,
             int ph, int pw, int dh, int dw, int oh, int ow, bint add):
    """x (+)= the sum of each column block back at the pixel im2col2d took it from."""
    cdef Py_ssize_t n = x.shape[0], ch = x.shape[1], h = x.shape[2], w = x.shape[3]
    cdef Py_ssize_t b, c, i, j, y, z, r, lo, hi, q0
    cdef const real* src
    cdef real* dst
    with nogil:
        if not add:
            memset(&x[0, 0, 0, 0], 0, n * ch * h * w * sizeof(real))
        for b in range(n):
            for c in range(ch):
                for i in range(kh):
                    for j in range(kw):
                        src = &cols[b, (c * kh + i) * kw + j, 0]
                        q0 = j * dw - pw
                        _span(ow, sw, q0, w, &lo, &hi)
                        for y in range(oh):
                            r = y * sh - ph + i * dh
                            if not _inside(r, h):
                                continue
                            dst = &x[b, c, r, 0]
                            for z in range(lo, hi):
                                dst[z * sw + q0] += src[y * ow + z]


# ---------------------------------------------------------------- nearest upsampling
def upsample_nearest(real[:, :, :, ::1] x, real[:, :, :, ::1] out, Py_ssize_t c0,
                     bint add):
    """out[n, c0 + c, y, z] (+)= x[n, c, y // fh, z // fw], fh = H / h, fw = W / w."""
    cdef Py_ssize_t n = x.shape[0], ch = x.shape[1], h = x.shape[2], w = x.shape[3]
    cdef Py_ssize_t oh = out.shape[2], ow = out.shape[3], fh = oh // h, fw = ow // w
    cdef Py_ssize_t b, c, y, z, i
    cdef const real* src
    cdef real* dst
    cdef real v
    with nogil:
        for b in range(n):
            for c in range(ch):
                for y in range(oh):
                    src = &x[b, c, y // fh, 0]
                    dst = &out[b, c0 + c, y, 0]
                    if add:
                        for z in range(ow):
                            dst[z] += src[z // fw]
                    elif fw == 2:
                        for z in range(w):
                            v = src[z]
                            dst[2 * z] = v
                            dst[2 * z + 1] = v
                    else:
                        for z in range(w):
                            v = src[z]
                            for i in range(fw):
                                dst[z * fw + i] = v


# ---------------------------------------------------------------- GEMM
def gemm(real[:, ::1] a, real[:, ::1] b, real[:, ::1] c, bint trans_a=False,
         bint trans_b=False, double beta=0.0):
    """c := op(a) · op(b) + beta · c, row-major, through SciPy's BLAS (the column-major
    call on the transposes: cᵀ = op(b)ᵀ · op(a)ᵀ), without the GIL."""
    cdef int m = c.shape[0], n = c.shape[1]
    cdef int k = a.shape[0] if trans_a else a.shape[1]
    cdef int lda = a.shape[1], ldb = b.shape[1], ldc = c.shape[1]
    cdef char ta = b'T' if trans_a else b'N', tb = b'T' if trans_b else b'N'
    cdef float sa = 1, sb = <float>beta
    cdef double da = 1, db = beta
    if (a.shape[1] if trans_a else a.shape[0]) != m or \
            (b.shape[1] if trans_b else b.shape[0]) != k or \
            (b.shape[0] if trans_b else b.shape[1]) != n:
        raise ValueError(f'gemm: shapes ({a.shape[0]}, {a.shape[1]}), ({b.shape[0]}, '
                         f'{b.shape[1]}) -> ({m}, {n}) do not match (trans_a={trans_a}, '
                         f'trans_b={trans_b})')
    cdef Py_ssize_t i, j
    if m == 0 or n == 0:
        return
    if k == 0:                      # BLAS wants leading dimensions >= 1: c := beta · c here
        for i in range(m):
            for j in range(n):
                c[i, j] = c[i, j] * beta if beta != 0 else 0
        return
    with nogil:
        if real is float:
            sgemm(&tb, &ta, &n, &m, &k, &sa, &b[0, 0], &ldb, &a[0, 0], &lda, &sb, &c[0, 0], &ldc)
        else:
            dgemm(&tb, &ta, &n, &m, &k, &da, &b[0, 0], &ldb, &a[0, 0], &lda, &db, &c[0, 0], &ldc)


include "_sampling_deform.pxi"
