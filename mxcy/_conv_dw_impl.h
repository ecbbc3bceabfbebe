/* Depthwise row loops for one element type: included by _conv_dw.h with T (float, double)
 * and DW(name) (name_f32, name_f64) defined. */

/* lo_[kj], hi_[kj]: the valid output columns of tap column kj (they do not change along a
 * plane: computed once, the divisions would cost more than a short row's multiply-adds) */
MXCY_DW_INLINE void DW(mxcy_dw_bounds)(const mxcy_dw_geom* g, int* lo_, int* hi_) {
    for (int kj = 0; kj < g->kw; kj++)
        mxcy_dw_cols(g, kj * g->dw - g->pw, &lo_[kj], &hi_[kj]);
}

/* yr[lo:hi] += wv * xr[j*sw] (xr already offset by the tap's column) */
MXCY_DW_INLINE void DW(mxcy_dw_tap)(T* restrict yr, const T* restrict xr, T wv, int lo, int hi,
                                   int sw) {
    if (sw == 1) {
        MXCY_DW_SIMD for (int j = lo; j < hi; j++) yr[j] += wv * xr[j];
    } else if (sw == 2) {
        MXCY_DW_SIMD for (int j = lo; j < hi; j++) yr[j] += wv * xr[2 * j];
    } else {
        for (int j = lo; j < hi; j++) yr[j] += wv * xr[j * sw];
    }
}

/* one output row's taps from input row xr (ki fixed): three columns at once where all three
 * are inside the image (kw == 3), each tap on its own elsewhere */
MXCY_DW_INLINE void DW(mxcy_dw_row)(const mxcy_dw_geom* g, T* restrict yr, const T* restrict xr,
                                   const T* wk, const int* lo_, const int* hi_) {
    int jl = 0, jh = g->ow, sw = g->sw;
    if (g->kw == 3) {
        for (int kj = 0; kj < 3; kj++) {
            jl = lo_[kj] > jl ? lo_[kj] : jl;
            jh = hi_[kj] < jh ? hi_[kj] : jh;
        }
    }
    if (g->kw != 3 || jl >= jh) {
        for (int kj = 0; kj < g->kw; kj++)
            DW(mxcy_dw_tap)(yr, xr + kj * g->dw - g->pw, wk[kj], lo_[kj], hi_[kj], sw);
        return;
    }
    {
        const T w0 = wk[0], w1 = wk[1], w2 = wk[2];
        const T* restrict x0 = xr - g->pw;
        const T* restrict x1 = xr + g->dw - g->pw;
        const T* restrict x2 = xr + 2 * g->dw - g->pw;
        if (sw == 1) {
            MXCY_DW_SIMD for (int j = jl; j < jh; j++)
                yr[j] += w0 * x0[j] + w1 * x1[j] + w2 * x2[j];
        } else if (sw == 2) {
            MXCY_DW_SIMD for (int j = jl; j < jh; j++)
                yr[j] += w0 * x0[2 * j] + w1 * x1[2 * j] + w2 * x2[2 * j];
        } else {
            for (int j = jl; j < jh; j++)
                yr[j] += w0 * x0[j * sw] + w1 * x1[j * sw] + w2 * x2[j * sw];
        }
        for (int kj = 0; kj < 3; kj++) {       /* the edges: lo_[kj] <= jl < jh <= hi_[kj] */
            const T* xk = xr + kj * g->dw - g->pw;
            DW(mxcy_dw_tap)(yr, xk, wk[kj], lo_[kj], jl, sw);
            DW(mxcy_dw_tap)(yr, xk, wk[kj], jh, hi_[kj], sw);
        }
    }
}

/* mxcy_dw_fwd for small planes at stride 1 without dilation; 0 (nothing done) otherwise.
 * MobileNets' late planes are 14 or 7 wide: row by row, every tap is a loop of 14 or 7
 * mostly spent in its vector remainder. Here the plane is copied into a zero-padded one
 * (rows wp apart) and each tap row is one long multiply-add over the flattened plane:
 * t[q] += w·xp[q + ki·wp + kj] for q < oh·wp; output (oi, oj) is t[oi·wp + oj], and the
 * wp − ow columns between rows are computed and dropped. x is read in full before y is
 * written, so y may overlap x. */
MXCY_DW_INLINE int DW(mxcy_dw_fwd_flat)(const mxcy_dw_geom* g, const T* x, const T* wt,
                                       T bias, T* y, int add) {
    const int hp = g->h + 2 * g->ph, wp = g->w + 2 * g->pw, n = g->oh * wp;
    T xp[MXCY_DW_FLAT_MAX + MXCY_DW_MAXKW], t[MXCY_DW_FLAT_MAX];
    if (g->sh != 1 || g->sw != 1 || g->dh != 1 || g->dw != 1 || g->ph < 0 || g->pw < 0 ||
        g->oh != hp - g->kh + 1 || g->ow != wp - g->kw + 1 || hp * wp > MXCY_DW_FLAT_MAX)
        return 0;
    /* the last tap reads kw - 1 past the padded plane (into dropped columns): zeros */
    memset(xp, 0, (size_t)(hp * wp + g->kw) * sizeof(T));
    for (int i = 0; i < g->h; i++)
        memcpy(xp + (int64_t)(i + g->ph) * wp + g->pw, x + (int64_t)i * g->w,
               (size_t)g->w * sizeof(T));
    MXCY_DW_SIMD for (int q = 0; q < n; q++) t[q] = bias;
    for (int ki = 0; ki < g->kh; ki++) {
        const T* restrict s = xp + ki * wp;
        const T* wk = wt + ki * g->kw;
        int kj = 0;
        for (; kj + 3 <= g->kw; kj += 3) {
            const T w0 = wk[kj], w1 = wk[kj + 1], w2 = wk[kj + 2];
            const T* restrict s0 = s + kj;
            MXCY_DW_SIMD for (int q = 0; q < n; q++)
                t[q] += w0 * s0[q] + w1 * s0[q + 1] + w2 * s0[q + 2];
        }
        for (; kj < g->kw; kj++) {
            const T w0 = wk[kj];
            const T* restrict s0 = s + kj;
            MXCY_DW_SIMD for (int q = 0; q < n; q++) t[q] += w0 * s0[q];
        }
    }
    for (int oi = 0; oi < g->oh; oi++) {
        T* yr = y + (int64_t)oi * g->ow;
        const T* tr = t + (int64_t)oi * wp;
        if (add) {
            MXCY_DW_SIMD for (int j = 0; j < g->ow; j++) yr[j] += tr[j];
        } else {
            MXCY_DW_SIMD for (int j = 0; j < g->ow; j++) yr[j] = tr[j];
        }
    }
    return 1;
}

/* mxcy_dw_fwd at stride 2 on both axes without dilation; 0 (nothing done) otherwise.
 * Row by row, a stride-2 tap reads every other input column: the loads need permutes and
 * MobileNets' stride-2 rows are 7 to 56 outputs, mostly vector remainder. Here the zero-
 * padded plane is split once into its four (row, column) parity planes, p[a][b][r][q] =
 * xp[2r + a][2q + b], each wq wide; tap (ki, kj) then reads plane (ki % 2, kj % 2) at
 * offset (ki / 2)·wq + kj / 2, and each row of taps is one contiguous multiply-add over the
 * flattened output rows (the one or two columns per row past ow are computed and dropped).
 * x is read in full before y is written, so y may overlap x. */
MXCY_DW_INLINE int DW(mxcy_dw_fwd_s2)(const mxcy_dw_geom* g, const T* x, const T* wt,
                                     T bias, T* y, int add) {
    if (g->sh != 2 || g->sw != 2 || g->dh != 1 || g->dw != 1 || g->ph < 0 || g->pw < 0)
        return 0;
    const int hq = g->oh + (g->kh - 1) / 2 + 1, wq = g->ow + (g->kw - 1) / 2 + 1;
    const int64_t pq = (int64_t)hq * wq, n = (int64_t)g->oh * wq;
    const int64_t need = 4 * pq + n;
    T stack_buf[MXCY_DW_S2_STACK];
    T* buf = need <= MXCY_DW_S2_STACK ? stack_buf : (T*)malloc((size_t)need * sizeof(T));
    if (buf == NULL)
        return 0;
    T* restrict t = buf + 4 * pq;
    memset(buf, 0, (size_t)(4 * pq) * sizeof(T));
    for (int i = 0; i < g->h; i++) {
        const int r = i + g->ph, a = r & 1, rr = r >> 1;
        if (rr >= hq)
            break;
        const T* restrict xr = x + (int64_t)i * g->w;
        for (int b = 0; b < 2; b++) {
            /* input columns j with (j + pw) % 2 == b: j = j0 + 2q at index (j0 + pw) / 2 + q */
            const int j0 = (b - g->pw % 2 + 2) % 2, q0 = (j0 + g->pw) / 2;
            int cnt = (g->w - j0 + 1) / 2;
            if (cnt > wq - q0)
                cnt = wq - q0;
            T* restrict pr = buf + (2 * a + b) * pq + (int64_t)rr * wq + q0;
            const T* restrict xs = xr + j0;
            MXCY_DW_SIMD for (int q = 0; q < cnt; q++) pr[q] = xs[2 * q];
        }
    }
    MXCY_DW_SIMD for (int64_t q = 0; q < n; q++) t[q] = bias;
    for (int ki = 0; ki < g->kh; ki++) {
        const T* wk = wt + ki * g->kw;
        const T* restrict e = buf + (2 * (ki & 1)) * pq + (int64_t)(ki >> 1) * wq;
        const T* restrict o = e + pq;
        int kj = 0;
        for (; kj + 3 <= g->kw; kj += 3) {     /* columns kj, kj + 1, kj + 2 of one parity */
            const T w0 = wk[kj], w1 = wk[kj + 1], w2 = wk[kj + 2];
            const T* restrict s0 = (kj & 1 ? o : e) + (kj >> 1);
            const T* restrict s1 = ((kj + 1) & 1 ? o : e) + ((kj + 1) >> 1);
            const T* restrict s2 = ((kj + 2) & 1 ? o : e) + ((kj + 2) >> 1);
            MXCY_DW_SIMD for (int64_t q = 0; q < n; q++)
                t[q] += w0 * s0[q] + w1 * s1[q] + w2 * s2[q];
        }
        for (; kj < g->kw; kj++) {
            const T w0 = wk[kj];
            const T* restrict s0 = (kj & 1 ? o : e) + (kj >> 1);
            MXCY_DW_SIMD for (int64_t q = 0; q < n; q++) t[q] += w0 * s0[q];
        }
    }
    for (int oi = 0; oi < g->oh; oi++) {
        T* yr = y + (int64_t)oi * g->ow;
        const T* tr = t + (int64_t)oi * wq;
        if (add) {
            MXCY_DW_SIMD for (int j = 0; j < g->ow; j++) yr[j] += tr[j];
        } else {
            MXCY_DW_SIMD for (int j = 0; j < g->ow; j++) yr[j] = tr[j];
        }
    }
    if (buf != stack_buf)
        free(buf);
    return 1;
}

/* mxcy_dw_fwd for MobileNet's 3×3 stride-1 'same' layers (pad 1, no dilation) on planes
 * too big for mxcy_dw_fwd_flat; 0 (nothing done) otherwise. Row by row, the general loops
 * make three passes over each output row (one per filter row) plus six edge loops; here
 * each output row is one pass of all nine taps (rows outside the image read a zero row),
 * and the two edge columns are written on their own. */
MXCY_DW_INLINE int DW(mxcy_dw_fwd_3x3s1)(const mxcy_dw_geom* g, const T* x, const T* wt,
                                        T bias, T* y, int add) {
    const int w = g->w;
    T zeros[MXCY_DW_ROW_MAX];
    if (g->kh != 3 || g->kw != 3 || g->sh != 1 || g->sw != 1 || g->dh != 1 || g->dw != 1 ||
        g->ph != 1 || g->pw != 1 || g->oh != g->h || g->ow != w || w < 2 ||
        w > MXCY_DW_ROW_MAX)
        return 0;
    memset(zeros, 0, (size_t)w * sizeof(T));
    const T w00 = wt[0], w01 = wt[1], w02 = wt[2], w10 = wt[3], w11 = wt[4], w12 = wt[5];
    const T w20 = wt[6], w21 = wt[7], w22 = wt[8];
    for (int oi = 0; oi < g->oh; oi++) {
        const T* restrict r0 = oi > 0 ? x + (int64_t)(oi - 1) * w : zeros;
        const T* restrict r1 = x + (int64_t)oi * w;
        const T* restrict r2 = oi + 1 < g->h ? x + (int64_t)(oi + 1) * w : zeros;
        T* restrict yr = y + (int64_t)oi * w;
        T first = bias + w01 * r0[0] + w02 * r0[1] + w11 * r1[0] + w12 * r1[1] +
                  w21 * r2[0] + w22 * r2[1];
        T last = bias + w00 * r0[w - 2] + w01 * r0[w - 1] + w10 * r1[w - 2] +
                 w11 * r1[w - 1] + w20 * r2[w - 2] + w21 * r2[w - 1];
        if (add) {
            MXCY_DW_SIMD for (int j = 1; j < w - 1; j++)
                yr[j] += bias + w00 * r0[j - 1] + w01 * r0[j] + w02 * r0[j + 1] +
                         w10 * r1[j - 1] + w11 * r1[j] + w12 * r1[j + 1] +
                         w20 * r2[j - 1] + w21 * r2[j] + w22 * r2[j + 1];
            yr[0] += first;
            yr[w - 1] += last;
        } else {
            MXCY_DW_SIMD for (int j = 1; j < w - 1; j++)
                yr[j] = bias + w00 * r0[j - 1] + w01 * r0[j] + w02 * r0[j + 1] +
                        w10 * r1[j - 1] + w11 * r1[j] + w12 * r1[j + 1] +
                        w20 * r2[j - 1] + w21 * r2[j] + w22 * r2[j + 1];
            yr[0] = first;
            yr[w - 1] = last;
        }
    }
    return 1;
}

/* y (add ? += : =) bias + sum over taps of wt[ki, kj] * x[oi*sh - ph + ki*dh, oj*sw - pw + kj*dw] */
MXCY_DW_VEC void DW(mxcy_dw_fwd)(const mxcy_dw_geom* gp, const T* restrict x,
                                 const T* restrict wt, T bias, T* restrict y, int add) {
    const mxcy_dw_geom g = *gp;
    int lo_[MXCY_DW_MAXKW], hi_[MXCY_DW_MAXKW];
    if (DW(mxcy_dw_fwd_flat)(&g, x, wt, bias, y, add) ||
        DW(mxcy_dw_fwd_s2)(&g, x, wt, bias, y, add) ||
        DW(mxcy_dw_fwd_3x3s1)(&g, x, wt, bias, y, add))
        return;
    DW(mxcy_dw_bounds)(&g, lo_, hi_);
    for (int oi = 0; oi < g.oh; oi++) {
        T* restrict yr = y + (int64_t)oi * g.ow;
        if (add) {
            MXCY_DW_SIMD for (int j = 0; j < g.ow; j++) yr[j] += bias;
        } else {
            MXCY_DW_SIMD for (int j = 0; j < g.ow; j++) yr[j] = bias;
        }
        for (int ki = 0; ki < g.kh; ki++) {
            int ii = oi * g.sh - g.ph + ki * g.dh;
            if (ii >= 0 && ii < g.h)
                DW(mxcy_dw_row)(&g, yr, x + (int64_t)ii * g.w, wt + ki * g.kw, lo_, hi_);
        }
    }
}

/* dx (add ? += : =) the taps' wt[ki, kj] * dy scattered back under every window. Stride 1:
 * the forward loops on dy with the flipped filter and padding dil*(k-1) - pad. */
MXCY_DW_VEC void DW(mxcy_dw_bwd_data)(const mxcy_dw_geom* gp, const T* restrict wt,
                                      const T* restrict dy, T* restrict dx, int add) {
    const mxcy_dw_geom g = *gp;
    int taps = g.kh * g.kw;
    if (g.sh == 1 && g.sw == 1 && taps <= MXCY_DW_MAXTAPS) {
        T flipped[MXCY_DW_MAXTAPS];
        mxcy_dw_geom t = g;
        for (int k = 0; k < taps; k++)
            flipped[k] = wt[taps - 1 - k];
        t.h = g.oh;
        t.w = g.ow;
        t.oh = g.h;
        t.ow = g.w;
        t.ph = g.dh * (g.kh - 1) - g.ph;
        t.pw = g.dw * (g.kw - 1) - g.pw;
        DW(mxcy_dw_fwd)(&t, dy, flipped, 0, dx, add);
        return;
    }
    int lo_[MXCY_DW_MAXKW], hi_[MXCY_DW_MAXKW];
    DW(mxcy_dw_bounds)(&g, lo_, hi_);
    const int s = g.sw, wq = (g.w + g.sw - 1) / g.sw;
    /* column stride s > 1: scatter into s phase rows per dx row (column c = q*s + phase
     * lives at phase[q]), where every tap's writes are contiguous; interleave at the end */
    T* ph = s > 1 ? (T*)calloc((size_t)g.h * s * wq, sizeof(T)) : NULL;
    if (ph == NULL && !add)
        memset(dx, 0, (size_t)g.h * g.w * sizeof(T));
    for (int oi = 0; oi < g.oh; oi++) {
        const T* restrict dyr = dy + (int64_t)oi * g.ow;
        for (int ki = 0; ki < g.kh; ki++) {
            int ii = oi * g.sh - g.ph + ki * g.dh;
            if (ii < 0 || ii >= g.h)
                continue;
            for (int kj = 0; kj < g.kw; kj++) {
                const T wv = wt[ki * g.kw + kj];
                int off = kj * g.dw - g.pw, lo = lo_[kj], hi = hi_[kj];
                if (ph != NULL) {
                    int phase = ((off % s) + s) % s, base = (off - phase) / s;
                    T* restrict pr = ph + ((int64_t)ii * s + phase) * wq + base;
                    MXCY_DW_SIMD for (int j = lo; j < hi; j++) pr[j] += wv * dyr[j];
                } else {
                    T* restrict dxr = dx + (int64_t)ii * g.w + off;
                    if (s == 1) {
                        MXCY_DW_SIMD for (int j = lo; j < hi; j++) dxr[j] += wv * dyr[j];
                    } else {
                        for (int j = lo; j < hi; j++) dxr[j * s] += wv * dyr[j];
                    }
                }
            }
        }
    }
    if (ph == NULL)
        return;
    for (int ii = 0; ii < g.h; ii++) {
        T* restrict dxr = dx + (int64_t)ii * g.w;
        const T* pr = ph + (int64_t)ii * s * wq;
        if (s == 2 && g.w % 2 == 0) {
            const T* restrict e = pr;
            const T* restrict o = pr + wq;
            if (add) {
                MXCY_DW_SIMD for (int q = 0; q < wq; q++) {
                    dxr[2 * q] += e[q];
                    dxr[2 * q + 1] += o[q];
                }
            } else {
                MXCY_DW_SIMD for (int q = 0; q < wq; q++) {
                    dxr[2 * q] = e[q];
                    dxr[2 * q + 1] = o[q];
                }
            }
        } else {
            for (int c = 0; c < g.w; c++) {
                T v = pr[(int64_t)(c % s) * wq + c / s];
                dxr[c] = add ? dxr[c] + v : v;
            }
        }
    }
    free(ph);
}

/* sums[t] += sum over images and output positions of dy * x under tap t (all taps), for
 * one channel: planes n*xstep / n*ystep apart. The products of each tap build up in a row
 * of ow lanes (no horizontal sum per row), summed into `sums` in double at the end. */
MXCY_DW_VEC void DW(mxcy_dw_bwd_weight)(const mxcy_dw_geom* gp, const T* restrict x,
                                        const T* restrict dy, int n, int64_t xstep,
                                        int64_t ystep, T* restrict acc, double* sums) {
    const mxcy_dw_geom g = *gp;
    int lo_[MXCY_DW_MAXKW], hi_[MXCY_DW_MAXKW], taps = g.kh * g.kw;
    DW(mxcy_dw_bounds)(&g, lo_, hi_);
    memset(acc, 0, (size_t)taps * g.ow * sizeof(T));
    for (int im = 0; im < n; im++) {
        const T* xp = x + im * xstep;
        const T* dyp = dy + im * ystep;
        for (int oi = 0; oi < g.oh; oi++) {
            const T* restrict dyr = dyp + (int64_t)oi * g.ow;
            for (int ki = 0; ki < g.kh; ki++) {
                int ii = oi * g.sh - g.ph + ki * g.dh;
                if (ii < 0 || ii >= g.h)
                    continue;
                for (int kj = 0; kj < g.kw; kj++) {
                    T* restrict ar = acc + (int64_t)(ki * g.kw + kj) * g.ow;
                    const T* restrict xr = xp + (int64_t)ii * g.w + kj * g.dw - g.pw;
                    int lo = lo_[kj], hi = hi_[kj];
                    if (g.sw == 1) {
                        MXCY_DW_SIMD for (int j = lo; j < hi; j++) ar[j] += dyr[j] * xr[j];
                    } else if (g.sw == 2) {
                        MXCY_DW_SIMD for (int j = lo; j < hi; j++) ar[j] += dyr[j] * xr[2 * j];
                    } else {
                        const int s = g.sw;
                        for (int j = lo; j < hi; j++) ar[j] += dyr[j] * xr[j * s];
                    }
                }
            }
        }
    }
    for (int t = 0; t < taps; t++) {
        double s = 0;
        for (int j = 0; j < g.ow; j++) s += acc[(int64_t)t * g.ow + j];
        sums[t] += s;
    }
}
