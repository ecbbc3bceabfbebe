# Part of mxcy/_rnn.pyx (textually included): the layout for Python, the NumPy twins of
# the kernels (tests) and the pushes to the engine (the operator).
from mxcy._engine cimport EVar, push_kernel
from mxcy._ndptr cimport nd_ptr, nd_var, nd_apart, nd_wflag

MODES = {'rnn_relu': MODE_RNN_RELU, 'rnn_tanh': MODE_RNN_TANH, 'lstm': MODE_LSTM,
         'gru': MODE_GRU}
_DT = {np.dtype(np.float32): DT_FLOAT32, np.dtype(np.float64): DT_FLOAT64}
_REQ = {'null': 0, 'write': 1, 'inplace': 1, 'add': 2}
cdef bytes _B_FWD = b"RNN"
cdef bytes _B_BWD = b"RNN_backward"


def reserve_size(str mode, int T, int N, int H, int L, bint bidirectional, bint masks):
    """Length of the `reserve` vector the kernels keep between forward and backward."""
    cdef int64_t unused[2]
    return reserve_layout(MODES[mode], T, N, H, L, 2 if bidirectional else 1, masks, -1,
                          unused, unused, unused, unused)


def mask_offsets(str mode, int T, int N, int H, int L, bint bidirectional):
    """[offset of layer l's dropout mask in `reserve`, l < L − 1]; each is T·N·D·H long."""
    cdef int64_t y, mask
    cdef int64_t parts[2]
    out = []
    for l in range(L - 1):
        reserve_layout(MODES[mode], T, N, H, L, 2 if bidirectional else 1, 1, l, &y, parts,
                       parts, &mask)
        out.append(mask)
    return out


cdef int fill_dims(RnnArgs* a, str mode, tuple xshape, int H, int L, bint bidirectional,
                   bint masks, dtype) except -1:
    memset(a, 0, sizeof(RnnArgs))
    a.mode = MODES[mode]
    a.dtype = _DT[np.dtype(dtype)]
    a.T, a.N, a.ni = xshape
    a.H, a.L, a.D = H, L, 2 if bidirectional else 1
    a.masks = masks and L > 1
    return 0


# ---------------------------------------------------------------- NumPy twins (tests)
cdef char* _ptr(object arr) except? NULL:
    cdef cnp.ndarray v
    if arr is None:
        return NULL
    v = <cnp.ndarray?>arr
    if not v.flags['C_CONTIGUOUS']:
        raise ValueError("RNN kernel twins take C-contiguous arrays")
    return <char*>cnp.PyArray_DATA(v)


def rnn_fwd_np(str mode, x, w, hx, cx, int num_layers, bint bidirectional, masks=None):
    """(y, hy, cy, reserve) through rnn_fwd_kernel; `masks`: the dropout mask (T, N, D·H)
    of each layer but the last, or None."""
    cdef RnnArgs a
    cdef char msg[256]
    cdef int err
    T, N, _ = x.shape
    H, D = hx.shape[2], 2 if bidirectional else 1
    fill_dims(&a, mode, x.shape, H, num_layers, bidirectional, masks is not None, x.dtype)
    reserve = np.zeros(reserve_size(mode, T, N, H, num_layers, bidirectional, a.masks),
                       dtype=x.dtype)
    if a.masks:
        for off, m in zip(mask_offsets(mode, T, N, H, num_layers, bidirectional), masks):
            reserve[off:off + m.size] = m.ravel()
    y = np.empty((T, N, D * H), dtype=x.dtype)
    hy, cy = np.empty_like(hx), (np.empty_like(hx) if mode == 'lstm' else None)
    a.train = 1
    a.req_y = a.req_hy = a.req_cy = 1
    a.x, a.w, a.hx, a.cx = _ptr(x), _ptr(w), _ptr(hx), _ptr(cx)
    a.y, a.hy, a.cy, a.reserve = _ptr(y), _ptr(hy), _ptr(cy), _ptr(reserve)
    with nogil:
        err = rnn_fwd_kernel(&a, msg)
    if err:
        raise MemoryError("rnn_fwd_np: out of memory")
    return y, hy, cy, reserve


def rnn_bwd_np(str mode, x, w, hx, cx, reserve, dy, dhy, dcy, int num_layers,
               bint bidirectional, bint masks=False):
    """(dx, dw, dhx, dcx) through rnn_bwd_kernel; dhy / dcy may be None (no gradient)."""
    cdef RnnArgs a
    cdef char msg[256]
    cdef int err
    fill_dims(&a, mode, x.shape, hx.shape[2], num_layers, bidirectional, masks, x.dtype)
    dx, dw, dhx = np.empty_like(x), np.empty_like(w), np.empty_like(hx)
    dcx = np.empty_like(hx) if mode == 'lstm' else None
    a.req_dx = a.req_dw = a.req_dhx = a.req_dcx = 1
    a.x, a.w, a.hx, a.cx, a.reserve = _ptr(x), _ptr(w), _ptr(hx), _ptr(cx), _ptr(reserve)
    a.dy, a.dhy, a.dcy = _ptr(dy), _ptr(dhy), _ptr(dcy)
    a.dx, a.dw, a.dhx, a.dcx = _ptr(dx), _ptr(dw), _ptr(dhx), _ptr(dcx)
    with nogil:
        err = rnn_bwd_kernel(&a, msg)
    if err:
        raise MemoryError("rnn_bwd_np: out of memory")
    return dx, dw, dhx, dcx


# ---------------------------------------------------------------- pushing to the engine
cdef int add_write(EVar** writes, int* nw, int* flags, arr, int req) except -1:
    if req and arr is not None:
        writes[nw[0]] = nd_var(arr)
        flags[0] |= nd_wflag(arr, nw[0])
        nw[0] += 1
    return 0


cdef char* opt_ptr(arr) except? NULL:
    return NULL if arr is None else nd_ptr(arr)


def rnn_forward(str mode, int num_layers, bint bidirectional, bint masks, bint train,
                x, w, hx, cx, y, hy, cy, reserve, str req_y, str req_hy, str req_cy):
    """Push the forward of the whole sequence: y, hy, cy (each per its req; hy, cy may be
    None) and reserve. With `masks`, reserve's dropout masks must have been written
    before (train) or are set to 1 (not train). NDArrays already validated."""
    cdef RnnArgs a
    cdef EVar* reads[4]
    cdef EVar* writes[4]
    cdef int nr = 3, nw = 1, flags = nd_wflag(reserve, 0)
    fill_dims(&a, mode, x.shape, hx.shape[2], num_layers, bidirectional, masks, x.dtype)
    outs = (y, hy, cy, reserve)
    x, w, hx, cx = (nd_apart(x, outs), nd_apart(w, outs), nd_apart(hx, outs),
                    nd_apart(cx, outs))
    a.train = train
    a.req_y, a.req_hy, a.req_cy = _REQ[req_y], _REQ[req_hy], _REQ[req_cy]
    a.x, a.w, a.hx, a.cx = nd_ptr(x), nd_ptr(w), nd_ptr(hx), opt_ptr(cx)
    a.y, a.hy, a.cy = opt_ptr(y), opt_ptr(hy), opt_ptr(cy)
    a.reserve = nd_ptr(reserve)
    reads[0], reads[1], reads[2] = nd_var(x), nd_var(w), nd_var(hx)
    if cx is not None:
        reads[3] = nd_var(cx)
        nr = 4
    writes[0] = nd_var(reserve)
    add_write(writes, &nw, &flags, y, a.req_y)
    add_write(writes, &nw, &flags, hy, a.req_hy)
    add_write(writes, &nw, &flags, cy, a.req_cy)
    push_kernel(rnn_fwd_kernel, &a, sizeof(a), reads, nr, writes, nw, 0, _B_FWD, flags)


def rnn_backward(str mode, int num_layers, bint bidirectional, bint masks, x, w, hx, cx,
                 reserve, dy, dhy, dcy, dx, dw, dhx, dcx, str req_dx, str req_dw,
                 str req_dhx, str req_dcx):
    """Push the backward of the whole sequence: dx, dw, dhx, dcx, each per its req (None
    where absent); dhy, dcy may be None (no gradient reaches the final states)."""
    cdef RnnArgs a
    cdef EVar* reads[8]
    cdef EVar* writes[4]
    cdef int nr = 0, nw = 0, flags = 0
    fill_dims(&a, mode, x.shape, hx.shape[2], num_layers, bidirectional, masks, x.dtype)
    a.req_dx, a.req_dw = _REQ[req_dx], _REQ[req_dw]
    a.req_dhx, a.req_dcx = _REQ[req_dhx], _REQ[req_dcx]
    add_write(writes, &nw, &flags, dx, a.req_dx)
    add_write(writes, &nw, &flags, dw, a.req_dw)
    add_write(writes, &nw, &flags, dhx, a.req_dhx)
    add_write(writes, &nw, &flags, dcx, a.req_dcx)
    if nw == 0:
        return
    outs = tuple(g for g, r in ((dx, a.req_dx), (dw, a.req_dw), (dhx, a.req_dhx),
                                (dcx, a.req_dcx)) if r)
    x, w, hx, cx, reserve, dy, dhy, dcy = [nd_apart(arr, outs) for arr in
                                           (x, w, hx, cx, reserve, dy, dhy, dcy)]
    for arr in (x, w, hx, cx, reserve, dy, dhy, dcy):
        if arr is not None:
            reads[nr] = nd_var(arr)
            nr += 1
    a.x, a.w, a.hx, a.cx, a.reserve = (nd_ptr(x), nd_ptr(w), nd_ptr(hx), opt_ptr(cx),
                                       nd_ptr(reserve))
    a.dy, a.dhy, a.dcy = nd_ptr(dy), opt_ptr(dhy), opt_ptr(dcy)
    a.dx = opt_ptr(dx) if a.req_dx else NULL
    a.dw = opt_ptr(dw) if a.req_dw else NULL
    a.dhx = opt_ptr(dhx) if a.req_dhx else NULL
    a.dcx = opt_ptr(dcx) if a.req_dcx else NULL
    push_kernel(rnn_bwd_kernel, &a, sizeof(a), reads, nr, writes, nw, 0, _B_BWD, flags)


def gemm_np(a, b, bint trans_a=False, bint trans_b=False):
    """op(a)·op(b) through the kernels' GEMM (float32: the packed SIMD kernel, if the CPU
    has one; float64: BLAS)."""
    m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
    n = b.shape[0] if trans_b else b.shape[1]
    c = np.empty((m, n), dtype=a.dtype)
    if a.dtype == np.float32:
        gemm[float](trans_a, trans_b, m, n, k, <float*>_ptr(a), a.shape[1], <float*>_ptr(b),
                    b.shape[1], 0, <float*>_ptr(c), n)
    else:
        gemm[double](trans_a, trans_b, m, n, k, <double*>_ptr(a), a.shape[1],
                     <double*>_ptr(b), b.shape[1], 0, <double*>_ptr(c), n)
    return c


def step_gemm_np(a, b, bint trans_b=False, c=None):
    """a·op(b) (+ c when given) through the step product: op(b) packed once, then the
    SIMD kernel for this CPU (float64 or no SIMD: BLAS)."""
    cdef float* packed
    m, k = a.shape
    n = b.shape[0] if trans_b else b.shape[1]
    out = np.empty((m, n), dtype=a.dtype) if c is None else c.copy()
    if a.dtype == np.float32:
        packed = pack_weight[float](<float*>_ptr(b), b.shape[1], trans_b, k, n)
        step_gemm[float](m, n, k, <float*>_ptr(a), k, packed, trans_b, <float*>_ptr(b),
                         b.shape[1], 0 if c is None else 1, <float*>_ptr(out), n)
        free(packed)
    else:
        step_gemm[double](m, n, k, <double*>_ptr(a), k, NULL, trans_b, <double*>_ptr(b),
                          b.shape[1], 0 if c is None else 1, <double*>_ptr(out), n)
    return out


def gemm_isa():
    """The SIMD GEMM kernel in use: 'avx512', 'avx2' or None (BLAS)."""
    return {2: 'avx512', 1: 'avx2'}.get(mxcy_gemm_isa())
