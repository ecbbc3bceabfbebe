# Part of mxcy/_conv.pyx (textually included there): the column helpers, im2col and col2im.
# ---------------------------------------------------------------- im2col / col2im
cdef inline void valid_cols(int ow, int sw, int off, int w, int* lo, int* hi) noexcept nogil:
    """[lo, hi): the output columns oj whose input column oj·sw + off lies in [0, w)."""
    cdef int a = 0, b = ow
    if off < 0:
        a = (-off + sw - 1) // sw
    if (ow - 1) * sw + off >= w:
        b = (w - off + sw - 1) // sw if w - off > 0 else 0
    if a > ow:
        a = ow
    if b < a:
        b = a
    lo[0] = a
    hi[0] = b


# Rows of a convolution's columns are short (ow elements: 8 in LeNet's second layer), so
# per-element loops spend more on loop control than on moving data. These move fixed-size
# blocks, which the compiler turns into a few vector loads and stores.
cdef inline void copy_short(real_t* d, real_t* s, int n) noexcept nogil:
    while n >= 8:
        memcpy(d, s, 8 * sizeof(real_t))
        d += 8
        s += 8
        n -= 8
    if n >= 4:
        memcpy(d, s, 4 * sizeof(real_t))
        d += 4
        s += 4
        n -= 4
    while n > 0:
        d[0] = s[0]
        d += 1
        s += 1
        n -= 1


cdef inline void add_short(real_t* d, real_t* s, int n) noexcept nogil:
    """d[:n] += s[:n]; blocks go through a local copy so they vectorize though d, s may
    alias as far as the compiler knows."""
    cdef real_t t[8]
    cdef real_t u[8]
    cdef int k
    while n >= 8:
        memcpy(t, d, 8 * sizeof(real_t))
        memcpy(u, s, 8 * sizeof(real_t))
        for k in range(8):
            t[k] += u[k]
        memcpy(d, t, 8 * sizeof(real_t))
        d += 8
        s += 8
        n -= 8
    while n > 0:
        d[0] += s[0]
        d += 1
        s += 1
        n -= 1


cdef inline void zero_short(real_t* d, int n) noexcept nogil:
    if n > 0:
        memset(d, 0, <size_t>n * sizeof(real_t))


cdef inline void col_segment(real_t* xc, int h, int w, int ii, int off, int sw, int lo,
                             int hi, int oj0, int run, real_t* dst) noexcept nogil:
    """dst[0:run] := one image channel's values under output columns oj0 .. oj0+run of the
    window row reading input row `ii` (column oj reads xc[ii, oj·sw + off]; 0 outside the
    image, i.e. for ii outside [0, h) or oj outside the valid columns [lo, hi))."""
    cdef int a, b, oj
    cdef real_t* src
    if ii < 0 or ii >= h:
        zero_short(dst, run)
        return
    a = min(max(lo, oj0), oj0 + run)
    b = max(min(hi, oj0 + run), a)
    src = xc + <int64_t>ii * w + off
    zero_short(dst, a - oj0)
    if sw == 1:
        copy_short(dst + (a - oj0), src + a, b - a)
    else:
        for oj in range(a, b):
            dst[oj - oj0] = src[oj * sw]
    zero_short(dst + (b - oj0), oj0 + run - b)


cdef void im2col(real_t* x, int c, int h, int w, int kh, int kw, int ph, int pw, int sh,
                 int sw, int dh, int dw, int oh, int ow, real_t* col,
                 int64_t ld) noexcept nogil:
    """col[(ci·kh + ki)·kw + kj, oi·ow + oj] := x[ci, oi·sh − ph + ki·dh, oj·sw − pw + kj·dw]
    (0 outside the image); rows of `col` are `ld` elements apart."""
    cdef int ci, ki, kj, oi, lo, hi, off
    cdef real_t* dst
    for ci in range(c):
        for ki in range(kh):
            for kj in range(kw):
                dst = col + <int64_t>((ci * kh + ki) * kw + kj) * ld
                off = kj * dw - pw
                valid_cols(ow, sw, off, w, &lo, &hi)
                for oi in range(oh):
                    col_segment(x + <int64_t>ci * h * w, h, w, oi * sh - ph + ki * dh, off, sw,
                                lo, hi, 0, ow, dst)
                    dst += ow


cdef void col2im(real_t* col, int c, int h, int w, int kh, int kw, int ph, int pw, int sh,
                 int sw, int dh, int dw, int oh, int ow, real_t* x,
                 int64_t ld) noexcept nogil:
    """x[ci, ii, jj] += col[...] for every window position that read it (im2col's adjoint)."""
    cdef int ci, ki, kj, oi, oj, ii, lo, hi, off
    cdef real_t* src
    cdef real_t* dst
    for ci in range(c):
        for ki in range(kh):
            for kj in range(kw):
                src = col + <int64_t>((ci * kh + ki) * kw + kj) * ld
                off = kj * dw - pw
                valid_cols(ow, sw, off, w, &lo, &hi)
                for oi in range(oh):
                    ii = oi * sh - ph + ki * dh
                    if 0 <= ii < h:
                        dst = x + (<int64_t>ci * h + ii) * w + off
                        if sw == 1:
                            add_short(dst + lo, src + lo, hi - lo)
                        else:
                            for oj in range(lo, hi):
                                dst[oj * sw] += src[oj]
                    src += ow
