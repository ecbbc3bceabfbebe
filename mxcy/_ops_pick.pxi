# Part of mxcy/_ops.pyx (textually included there): pick along an axis and its gradient
# (gluon's SoftmaxCrossEntropyLoss picks the label's log-probability of every row). As a
# NumPy Python op it held the GIL on a worker, stalling the thread that records the step.

cdef struct PickArgs:
    char* x              # (outer, n, inner) values; backward: the gradient written
    char* idx            # (outer, inner) indices, float or int
    char* y              # (outer, inner) picked values; backward: the head gradient
    int64_t outer
    int64_t n
    int64_t inner
    int dtype            # float32/float64 of x and y
    int idx_dtype
    int wrap             # mode 'wrap' (else 'clip')
    int add              # backward with req 'add': do not zero x first


cdef inline int64_t picked_index(PickArgs* a, int64_t i) noexcept nogil:
    """MXNet's cast (truncate toward zero), then clip into [0, n) or wrap modulo n."""
    cdef int64_t k = <int64_t>load_as_double(a.idx, a.idx_dtype, i)
    if a.wrap:
        k %= a.n
        return k + a.n if k < 0 else k
    if k < 0:
        return 0
    return k if k < a.n else a.n - 1


cdef void pick_typed(PickArgs* a, real_t* x, real_t* y, bint backward) noexcept nogil:
    cdef int64_t o, j, i, k
    if backward and not a.add:
        memset(x, 0, a.outer * a.n * a.inner * sizeof(real_t))
    for o in range(a.outer):
        for j in range(a.inner):
            i = o * a.inner + j
            k = (o * a.n + picked_index(a, i)) * a.inner + j
            if backward:
                x[k] += y[i]
            else:
                y[i] = x[k]


cdef int pick_kernel(void* args, char* errmsg) noexcept nogil:
    """y[o, j] := x[o, idx[o, j], j]."""
    cdef PickArgs* a = <PickArgs*>args
    if a.dtype == DT_FLOAT32:
        pick_typed(a, <float*>a.x, <float*>a.y, False)
    else:
        pick_typed(a, <double*>a.x, <double*>a.y, False)
    return 0


cdef int pick_backward_kernel(void* args, char* errmsg) noexcept nogil:
    """dx := 0 (unless req add); dx[o, idx[o, j], j] += dy[o, j]."""
    cdef PickArgs* a = <PickArgs*>args
    if a.dtype == DT_FLOAT32:
        pick_typed(a, <float*>a.x, <float*>a.y, True)
    else:
        pick_typed(a, <double*>a.x, <double*>a.y, True)
    return 0


cdef bytes _B_PICK = b"pick"
cdef bytes _B_PICK_BWD = b"pick_backward"


def push_pick(x, idx, y, int axis, bint wrap, bint backward=False, bint add=False):
    """Forward: y := pick(x, idx) along `axis`. Backward: x (the data gradient, zeroed
    first unless `add`) += y (the head gradient) at the picked spots. x is float32/float64
    with n > 0 along axis; idx and y hold x's shape without the axis (any float/int idx)."""
    cdef PickArgs a
    cdef EVar* reads[2]
    cdef EVar* w
    shape = tuple(x.shape)
    dt = np.dtype(x.dtype)
    if dt not in FLOAT_DTYPES or np.dtype(y.dtype) != dt:
        raise TypeError(f"pick: float32/float64 data and result of one dtype, got "
                        f"{dt.name} and {np.dtype(y.dtype).name}")
    if np.dtype(idx.dtype) not in INDEX_DTYPES:
        raise TypeError(f"pick: index must be float32/float64/int32/int64, got "
                        f"{np.dtype(idx.dtype).name}")
    a.outer = math.prod(shape[:axis])
    a.n = shape[axis]
    a.inner = math.prod(shape[axis + 1:])
    if idx.size != a.outer * a.inner or y.size != idx.size or a.n == 0:
        raise ValueError(f"pick: index of {idx.size} and result of {y.size} elements do "
                         f"not match data {shape} along axis {axis}")
    a.dtype = _NP_CODES[dt]
    a.idx_dtype = _NP_CODES[np.dtype(idx.dtype)]
    a.wrap = wrap
    a.add = add
    written = x if backward else y
    idx = nd_apart(idx, (written,))
    if backward:
        y = nd_apart(y, (x,))
    else:
        x = nd_apart(x, (y,))
    a.x, a.idx, a.y = nd_ptr(x), nd_ptr(idx), nd_ptr(y)
    reads[0] = nd_var(idx)
    reads[1] = nd_var(y if backward else x)
    w = nd_var(written)
    push_kernel(pick_backward_kernel if backward else pick_kernel, &a, sizeof(a), reads, 2,
                &w, 1, 0, _B_PICK_BWD if backward else _B_PICK,
                (FLAG_SMALL if x.size <= 16384 else 0) | nd_wflag(written, 0))


# ---------------------------------------------------------------- sparse softmax cross-entropy
# gluon's SoftmaxCrossEntropyLoss with class-index labels (operator/fused_loss.py): the
# forward as one kernel (log-softmax of each row, then −logp at the label) and the
# backward as one (dy · (softmax − one_hot)), instead of log_softmax, pick, a negation and
# their three backward kernels with two temporaries.

# SparseCEArgs is declared in _ops.pxd: _ndarray pushes these kernels (sparse_ce).


cdef inline int64_t ce_label(SparseCEArgs* a, int64_t i) noexcept nogil:
    cdef int64_t k = <int64_t>load_as_double(a.idx, a.idx_dtype, i)
    if k < 0:
        return 0
    return k if k < a.n else a.n - 1


cdef void sparse_ce_typed(SparseCEArgs* a, real_t* x, real_t* logp, real_t* y) noexcept nogil:
    """logp := log_softmax(x) by rows (inner == 1); y[o] := −logp[o, label[o]]."""
    cdef int64_t o
    if real_t is float:
        mxcy_softmax_rows_f32(x, logp, a.outer, a.n, 1.0, 1, 0)
    else:
        mxcy_softmax_rows_f64(x, logp, a.outer, a.n, 1.0, 1, 0)
    for o in range(a.outer):
        y[o] = -logp[o * a.n + ce_label(a, o)]


cdef void sparse_ce_grad_typed(SparseCEArgs* a, real_t* dx, real_t* logp,
                               real_t* dy) noexcept nogil:
    """dx (write/add) dy[o, j] · (exp(logp[o, :, j]) − one_hot(label[o, j]))."""
    cdef int64_t o, j, i, b, S = a.inner, L = a.n
    cdef real_t g
    for o in range(a.outer):
        for j in range(S):
            g = dy[o * S + j]
            b = o * L * S + j
            if a.add:
                for i in range(L):
                    dx[b + i * S] += g * <real_t>exp(logp[b + i * S])
            else:
                for i in range(L):
                    dx[b + i * S] = g * <real_t>exp(logp[b + i * S])
            dx[b + ce_label(a, o * S + j) * S] -= g


cdef int sparse_ce_kernel(void* args, char* errmsg) noexcept nogil:
    """logp := log_softmax(x) along the rows; y := −logp[label]."""
    cdef SparseCEArgs* a = <SparseCEArgs*>args
    if a.dtype == DT_FLOAT32:
        sparse_ce_typed(a, <float*>a.x, <float*>a.logp, <float*>a.y)
    else:
        sparse_ce_typed(a, <double*>a.x, <double*>a.logp, <double*>a.y)
    return 0


cdef int sparse_ce_grad_kernel(void* args, char* errmsg) noexcept nogil:
    """dx (req) dy · (softmax − one_hot(label)), softmax = exp(logp)."""
    cdef SparseCEArgs* a = <SparseCEArgs*>args
    if a.dtype == DT_FLOAT32:
        sparse_ce_grad_typed(a, <float*>a.x, <float*>a.logp, <float*>a.y)
    else:
        sparse_ce_grad_typed(a, <double*>a.x, <double*>a.logp, <double*>a.y)
    return 0
