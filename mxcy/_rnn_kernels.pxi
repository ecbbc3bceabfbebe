# Part of mxcy/_rnn.pyx (textually included): the whole-sequence forward and backward.

cdef inline int64_t prev_step(int s, int d) noexcept nogil:
    """The step whose state feeds step s (−1 / T: the initial state)."""
    return s - 1 if d == 0 else s + 1


cdef int rnn_fwd_typed(RnnArgs* a, real_t* x, real_t* w, real_t* hx, real_t* cx, real_t* y,
                       real_t* hy, real_t* cy, real_t* res) noexcept nogil:
    cdef int G = num_gates(a.mode), T = a.T, N = a.N, H = a.H, D = a.D
    cdef int GH = G * H, DH = D * H, l, d, k, ni, step, s, r, ldh, j
    cdef int64_t TN = <int64_t>T * N, y_off, mask_off = -1, i
    cdef int64_t gates_off[2]
    cdef int64_t aux_off[2]
    cdef int64_t wxo, who, bxo, bho
    cdef bint vanilla = a.mode == MODE_RNN_RELU or a.mode == MODE_RNN_TANH
    cdef real_t* xin = NULL
    cdef real_t* proj = NULL
    cdef real_t* gh = NULL
    cdef real_t* X
    cdef real_t* Y
    cdef real_t* P
    cdef real_t* Gs
    cdef real_t* hs
    cdef real_t* h_prev
    cdef real_t* c_prev
    cdef real_t* cs
    cdef real_t* bx
    cdef real_t* bh
    cdef real_t* m
    cdef real_t* packed
    if a.masks and a.L > 1:
        xin = <real_t*>malloc(TN * DH * sizeof(real_t))
    if vanilla:
        proj = <real_t*>malloc(TN * H * sizeof(real_t))
    if a.mode == MODE_GRU:
        gh = <real_t*>malloc(<int64_t>N * GH * sizeof(real_t))
    if (a.masks and a.L > 1 and xin == NULL) or (vanilla and proj == NULL) or \
            (a.mode == MODE_GRU and gh == NULL):
        free(xin)
        free(proj)
        free(gh)
        return ERR_MEMORY
    X = x
    for l in range(a.L):
        ni = a.ni if l == 0 else DH
        reserve_layout(a.mode, T, N, H, a.L, D, a.masks, l, &y_off, gates_off, aux_off,
                       &mask_off)
        Y = res + y_off
        for d in range(D):
            k = l * D + d
            weight_offsets(a, l, d, &wxo, &who, &bxo, &bho)
            bx, bh = w + bxo, w + bho
            P = proj if vanilla else res + gates_off[d]
            # the input projection of every step at once, plus the biases
            gemm(False, True, <int>TN, GH, ni, X, ni, w + wxo, ni, 0, P, GH)
            for i in range(TN):             # GRU adds b_h inside the cell (r·(W_hn h + b_hn))
                Gs = P + i * GH
                if a.mode == MODE_GRU:
                    for j in range(GH):
                        Gs[j] += bx[j]
                else:
                    for j in range(GH):
                        Gs[j] += bx[j] + bh[j]
            packed = pack_weight(w + who, H, True, H, GH)     # W_hᵀ, read by every step
            h_prev, ldh = hx + <int64_t>k * N * H, H
            c_prev = cx + <int64_t>k * N * H if a.mode == MODE_LSTM else NULL
            for step in range(T):
                s = step if d == 0 else T - 1 - step
                Gs = P + <int64_t>s * N * GH
                hs = Y + <int64_t>s * N * DH + d * H
                if a.mode == MODE_GRU:
                    step_gemm(N, GH, H, h_prev, ldh, packed, True, w + who, H, 0, gh, GH)
                    for r in range(N):
                        gru_row(Gs + r * GH, gh + r * GH, bh, h_prev + r * ldh,
                                res + aux_off[d] + (<int64_t>s * N + r) * H, hs + r * DH, H)
                else:
                    step_gemm(N, GH, H, h_prev, ldh, packed, True, w + who, H, 1, Gs, GH)
                    if a.mode == MODE_LSTM:
                        cs = res + aux_off[d] + <int64_t>s * N * H
                        for r in range(N):
                            lstm_row(Gs + r * GH, c_prev + r * H, cs + r * H, hs + r * DH, H)
                        c_prev = cs
                    else:
                        for r in range(N):
                            vanilla_row(Gs + r * GH, hs + r * DH, H,
                                        a.mode == MODE_RNN_RELU)
                h_prev, ldh = hs, DH
            free(packed)
            if hy != NULL:
                store_rows(hy + <int64_t>k * N * H, h_prev, N, H, ldh, a.req_hy)
            if cy != NULL and a.mode == MODE_LSTM:
                store_rows(cy + <int64_t>k * N * H, c_prev, N, H, H, a.req_cy)
        if a.masks and l < a.L - 1:
            m = res + mask_off
            if not a.train:             # inference: no dropout
                for i in range(TN * DH):
                    m[i] = 1
            for i in range(TN * DH):
                xin[i] = Y[i] * m[i]
            X = xin
        else:
            X = Y
    if a.req_y:
        store_rows(y, X, <int>TN, DH, DH, a.req_y)
    free(xin)
    free(proj)
    free(gh)
    return 0


cdef struct BwdBuffers:
    void* dg            # gate gradients of the sequence, W_x side (T·N, G·H)
    void* dgh           # GRU: the W_h side (T·N, G·H); else == dg
    void* dy_a          # d(layer output), ping-pong between layers (T·N, D·H)
    void* dy_b
    void* xin           # a masked layer input (T·N, D·H)
    void* dh            # (N, H)
    void* dc            # (N, H)


cdef int alloc_bwd(BwdBuffers* b, RnnArgs* a, size_t item) noexcept nogil:
    cdef int64_t tn = <int64_t>a.T * a.N, gh = <int64_t>num_gates(a.mode) * a.H
    cdef int64_t dh = <int64_t>a.D * a.H, nh = <int64_t>a.N * a.H
    memset(b, 0, sizeof(BwdBuffers))
    b.dg = malloc(tn * gh * item)
    b.dgh = malloc(tn * gh * item) if a.mode == MODE_GRU else b.dg
    b.dy_a = malloc(tn * dh * item) if a.L > 1 else NULL
    b.dy_b = malloc(tn * dh * item) if a.L > 2 else NULL
    b.xin = malloc(tn * dh * item) if a.masks and a.L > 1 else NULL
    b.dh = malloc(nh * item)
    b.dc = malloc(nh * item)
    if b.dg == NULL or b.dgh == NULL or b.dh == NULL or b.dc == NULL or \
            (a.L > 1 and b.dy_a == NULL) or (a.L > 2 and b.dy_b == NULL) or \
            (a.masks and a.L > 1 and b.xin == NULL):
        return ERR_MEMORY
    return 0


cdef void free_bwd(BwdBuffers* b) noexcept nogil:
    if b.dgh != b.dg:
        free(b.dgh)
    free(b.dg)
    free(b.dy_a)
    free(b.dy_b)
    free(b.xin)
    free(b.dh)
    free(b.dc)


cdef int rnn_bwd_typed(RnnArgs* a, real_t* x, real_t* w, real_t* hx, real_t* cx,
                       real_t* res, real_t* dy, real_t* dhy, real_t* dcy, real_t* dx,
                       real_t* dw, real_t* dhx, real_t* dcx) noexcept nogil:
    cdef int G = num_gates(a.mode), T = a.T, N = a.N, H = a.H, D = a.D
    cdef int GH = G * H, DH = D * H, l, d, k, ni, step, s, r, ldh, j, err
    cdef int64_t TN = <int64_t>T * N, y_off, mask_off = -1, below_mask = -1, i, ps
    cdef int64_t gates_off[2]
    cdef int64_t aux_off[2]
    cdef int64_t dummy[2]
    cdef int64_t wxo, who, bxo, bho, nh = <int64_t>N * H
    cdef BwdBuffers b
    cdef real_t beta_w = 1 if a.req_dw == 2 else 0
    cdef real_t beta_x
    cdef real_t* dY = dy
    cdef real_t* dX
    cdef real_t* X
    cdef real_t* Y
    cdef real_t* dg
    cdef real_t* dgh
    cdef real_t* dh
    cdef real_t* dc
    cdef real_t* h_prev
    cdef real_t* hs
    cdef real_t* row
    cdef real_t* packed
    err = alloc_bwd(&b, a, sizeof(real_t))
    if err:
        free_bwd(&b)
        return err
    dg, dgh, dh, dc = <real_t*>b.dg, <real_t*>b.dgh, <real_t*>b.dh, <real_t*>b.dc
    for l in range(a.L - 1, -1, -1):
        ni = a.ni if l == 0 else DH
        reserve_layout(a.mode, T, N, H, a.L, D, a.masks, l, &y_off, gates_off, aux_off,
                       &mask_off)
        Y = res + y_off
        X = x
        if l > 0:                       # this layer's input: the layer below, masked
            reserve_layout(a.mode, T, N, H, a.L, D, a.masks, l - 1, &i, dummy, dummy,
                           &below_mask)
            X = res + i
            if a.masks:
                for ps in range(TN * DH):
                    (<real_t*>b.xin)[ps] = X[ps] * res[below_mask + ps]
                X = <real_t*>b.xin
            dX = <real_t*>(b.dy_a if dY != <real_t*>b.dy_a else b.dy_b)
        else:
            dX = dx if a.req_dx else NULL
        for d in range(D):
            k = l * D + d
            weight_offsets(a, l, d, &wxo, &who, &bxo, &bho)
            if dhy != NULL:
                memcpy(dh, dhy + k * nh, nh * sizeof(real_t))
            else:
                memset(dh, 0, nh * sizeof(real_t))
            if a.mode == MODE_LSTM and dcy != NULL:
                memcpy(dc, dcy + k * nh, nh * sizeof(real_t))
            else:
                memset(dc, 0, nh * sizeof(real_t))
            packed = pack_weight(w + who, H, False, GH, H)    # W_h, read by every step
            for step in range(T):
                s = T - 1 - step if d == 0 else step
                ps = prev_step(s, d)
                row = dY + <int64_t>s * N * DH + d * H
                for r in range(N):
                    for j in range(H):
                        dh[r * H + j] += row[<int64_t>r * DH + j]
                if ps < 0 or ps >= T:
                    h_prev, ldh = hx + k * nh, H
                else:
                    h_prev, ldh = Y + ps * N * DH + d * H, DH
                if a.mode == MODE_LSTM:
                    for r in range(N):
                        lstm_bwd_row(res + gates_off[d] + (<int64_t>s * N + r) * GH,
                                     res + aux_off[d] + (<int64_t>s * N + r) * H,
                                     (cx + k * nh + r * H) if ps < 0 or ps >= T else
                                     (res + aux_off[d] + (ps * N + r) * H),
                                     dh + r * H, dc + r * H, dg + (<int64_t>s * N + r) * GH, H)
                    step_gemm(N, H, GH, dg + <int64_t>s * N * GH, GH, packed, False, w + who, H,
                              0, dh, H)
                elif a.mode == MODE_GRU:
                    for r in range(N):
                        gru_bwd_row(res + gates_off[d] + (<int64_t>s * N + r) * GH,
                                    res + aux_off[d] + (<int64_t>s * N + r) * H,
                                    h_prev + r * ldh, dh + r * H,
                                    dg + (<int64_t>s * N + r) * GH,
                                    dgh + (<int64_t>s * N + r) * GH, H)
                    step_gemm(N, H, GH, dgh + <int64_t>s * N * GH, GH, packed, False, w + who, H,
                              1, dh, H)
                else:
                    hs = Y + <int64_t>s * N * DH + d * H
                    for r in range(N):
                        row = dg + (<int64_t>s * N + r) * H
                        for j in range(H):
                            if a.mode == MODE_RNN_RELU:
                                row[j] = dh[r * H + j] if hs[<int64_t>r * DH + j] > 0 else 0
                            else:
                                row[j] = dh[r * H + j] * (1 - hs[<int64_t>r * DH + j] *
                                                          hs[<int64_t>r * DH + j])
                    step_gemm(N, H, GH, dg + <int64_t>s * N * GH, GH, packed, False, w + who, H,
                              0, dh, H)
            free(packed)
            if dhx != NULL:
                store_rows(dhx + k * nh, dh, N, H, H, a.req_dhx)
            if dcx != NULL and a.mode == MODE_LSTM:
                store_rows(dcx + k * nh, dc, N, H, H, a.req_dcx)
            if a.req_dw:
                # dW_x = dGᵀ·X; dW_h = Σ_s dG_hᵀ[s]·h_prev[s] (T − 1 steps read y, one hx)
                gemm(True, False, GH, ni, <int>TN, dg, GH, X, ni, beta_w, dw + wxo, ni)
                if d == 0:
                    gemm(True, False, GH, H, <int>(TN - N), dgh + nh * G, GH, Y, DH, beta_w,
                         dw + who, H)
                    gemm(True, False, GH, H, N, dgh, GH, hx + k * nh, H, 1, dw + who, H)
                else:
                    gemm(True, False, GH, H, <int>(TN - N), dgh, GH, Y + N * DH + H, DH,
                         beta_w, dw + who, H)
                    gemm(True, False, GH, H, N, dgh + (TN - N) * GH, GH, hx + k * nh, H, 1,
                         dw + who, H)
                column_sums(dg, TN, GH, dw + bxo, a.req_dw)
                column_sums(dgh, TN, GH, dw + bho, a.req_dw)
            if dX != NULL:
                beta_x = 1 if d > 0 or (l == 0 and a.req_dx == 2) else 0
                gemm(False, False, <int>TN, ni, GH, dg, GH, w + wxo, ni, beta_x, dX, ni)
        if l > 0:
            if a.masks:
                for ps in range(TN * DH):
                    dX[ps] *= res[below_mask + ps]
            dY = dX
    free_bwd(&b)
    return 0


cdef int rnn_fwd_kernel(void* args, char* errmsg) noexcept nogil:
    """y, hy, cy (per req) and reserve from x, the weights, hx, cx."""
    cdef RnnArgs* a = <RnnArgs*>args
    if a.dtype == DT_FLOAT32:
        return rnn_fwd_typed(a, <float*>a.x, <float*>a.w, <float*>a.hx, <float*>a.cx,
                             <float*>a.y, <float*>a.hy, <float*>a.cy, <float*>a.reserve)
    if a.dtype == DT_FLOAT64:
        return rnn_fwd_typed(a, <double*>a.x, <double*>a.w, <double*>a.hx, <double*>a.cx,
                             <double*>a.y, <double*>a.hy, <double*>a.cy, <double*>a.reserve)
    return ERR_VALUE


cdef int rnn_bwd_kernel(void* args, char* errmsg) noexcept nogil:
    """dx, dw, dhx, dcx (per req) from dy, dhy, dcy and the forward's reserve."""
    cdef RnnArgs* a = <RnnArgs*>args
    if a.dtype == DT_FLOAT32:
        return rnn_bwd_typed(a, <float*>a.x, <float*>a.w, <float*>a.hx, <float*>a.cx,
                             <float*>a.reserve, <float*>a.dy, <float*>a.dhy, <float*>a.dcy,
                             <float*>a.dx, <float*>a.dw, <float*>a.dhx, <float*>a.dcx)
    if a.dtype == DT_FLOAT64:
        return rnn_bwd_typed(a, <double*>a.x, <double*>a.w, <double*>a.hx, <double*>a.cx,
                             <double*>a.reserve, <double*>a.dy, <double*>a.dhy,
                             <double*>a.dcy, <double*>a.dx, <double*>a.dw, <double*>a.dhx,
                             <double*>a.dcx)
    return ERR_VALUE
