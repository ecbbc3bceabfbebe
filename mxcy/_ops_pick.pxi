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

cdef struct SparseCEArgs:
    char* x              # forward: the data; backward: the data gradient written
    char* logp           # log_softmax(data), (outer, n, inner): forward writes, backward reads
    char* idx            # (outer, inner) class indices, float or int (clipped into [0, n))
    char* y              # (outer, inner): forward writes −logp[label]; backward reads dy
    int64_t outer
    int64_t n
    int64_t inner
    int dtype
    int idx_dtype
    int add              # backward with req 'add'


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


cdef bytes _B_SPARSE_CE = b"sparse_softmax_ce"
cdef bytes _B_SPARSE_CE_BWD = b"sparse_softmax_ce_backward"


def push_sparse_ce(x, logp, label, y, int axis, bint backward=False, bint add=False):
    """Forward (the class axis last, contiguous rows): logp := log_softmax(x) along
    `axis`, y := −logp[label]. Backward (any axis): x, the data gradient, (written, or
    added to with `add`) := y · (exp(logp) − one_hot(label)), y the head gradient.
    x and logp are float32/float64 of one shape and dtype with n > 0 classes along axis;
    label and y hold its shape without the axis (label any float/int dtype, y x's)."""
    cdef SparseCEArgs a
    cdef EVar* reads[3]
    cdef EVar* w[2]
    shape = tuple(x.shape)
    dt = np.dtype(x.dtype)
    if dt not in FLOAT_DTYPES or np.dtype(y.dtype) != dt or np.dtype(logp.dtype) != dt:
        raise TypeError(f"sparse softmax cross-entropy: float32/float64 data, log-probabilities "
                        f"and loss of one dtype, got {dt.name}, {np.dtype(logp.dtype).name} "
                        f"and {np.dtype(y.dtype).name}")
    if np.dtype(label.dtype) not in INDEX_DTYPES:
        raise TypeError(f"sparse softmax cross-entropy: label must be float32/float64/int32/"
                        f"int64, got {np.dtype(label.dtype).name}")
    if not 0 <= axis < len(shape):
        raise ValueError(f"sparse softmax cross-entropy: axis {axis} out of range for data "
                         f"{shape}")
    a.outer = math.prod(shape[:axis])
    a.n = shape[axis]
    a.inner = math.prod(shape[axis + 1:])
    if tuple(logp.shape) != shape or label.size != a.outer * a.inner or \
            y.size != label.size or a.n == 0:
        raise ValueError(f"sparse softmax cross-entropy: log-probabilities {logp.shape}, "
                         f"label of {label.size} and loss of {y.size} elements do not match "
                         f"data {shape} along axis {axis}")
    if not backward and a.inner != 1:
        raise ValueError(f"sparse softmax cross-entropy: the forward kernel takes the class "
                         f"axis last, got axis {axis} of {shape}")
    a.dtype = _NP_CODES[dt]
    a.idx_dtype = _NP_CODES[np.dtype(label.dtype)]
    a.add = add
    if backward:
        logp = nd_apart(logp, (x,))
        label = nd_apart(label, (x,))
        y = nd_apart(y, (x,))
        reads[0], reads[1], reads[2] = nd_var(logp), nd_var(label), nd_var(y)
        w[0] = nd_var(x)
        a.x, a.logp, a.idx, a.y = nd_ptr(x), nd_ptr(logp), nd_ptr(label), nd_ptr(y)
        push_kernel(sparse_ce_grad_kernel, &a, sizeof(a), reads, 3, w, 1, 0,
                    _B_SPARSE_CE_BWD, (FLAG_SMALL if x.size <= 16384 else 0) |
                    nd_wflag(x, 0))
        return
    x = nd_apart(x, (logp, y))
    label = nd_apart(label, (logp, y))
    reads[0], reads[1] = nd_var(x), nd_var(label)
    w[0], w[1] = nd_var(logp), nd_var(y)
    if w[0] == w[1]:
        raise ValueError("sparse softmax cross-entropy: log-probabilities and loss must be "
                         "separate arrays")
    a.x, a.logp, a.idx, a.y = nd_ptr(x), nd_ptr(logp), nd_ptr(label), nd_ptr(y)
    push_kernel(sparse_ce_kernel, &a, sizeof(a), reads, 2, w, 2, 0, _B_SPARSE_CE,
                (FLAG_SMALL if x.size <= 16384 else 0) | nd_wflag(logp, 0) |
                nd_wflag(y, 1))
