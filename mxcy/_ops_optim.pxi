# Part of mxcy/_ops.pyx (textually included there): fused optimizer updates. One pass over
# weight, gradient and state per parameter instead of five or six elementwise ops with
# temporaries: MXNet's sgd_update / sgd_mom_update / adam_update kernels.

cdef enum:
    OPT_SGD = 0
    OPT_SGD_MOM = 1
    OPT_ADAM = 2

cdef struct OptimArgs:
    char* w
    char* g
    char* s1              # momentum, or Adam's mean
    char* s2              # Adam's variance
    int64_t n
    int dtype
    int kind
    double lr
    double wd
    double rescale
    double clip           # <= 0: no clipping
    double momentum
    double beta1
    double beta2
    double eps


cdef void optim_typed(real_t* w, real_t* g, real_t* s1, real_t* s2, OptimArgs* a,
                      int64_t lo, int64_t hi) noexcept nogil:
    # Every setting is copied into a local first and each rule has its own branch-free
    # loop: the build has -fno-strict-aliasing, so a field read through `a` inside a loop
    # that stores through w would be reloaded every element and keep the loop scalar.
    cdef int64_t i
    cdef real_t lr = <real_t>a.lr, wd = <real_t>a.wd, rs = <real_t>a.rescale
    cdef real_t c = <real_t>a.clip, mom = <real_t>a.momentum
    cdef real_t b1 = <real_t>a.beta1, b2 = <real_t>a.beta2, eps = <real_t>a.eps
    cdef real_t gi, mi
    cdef int kind = a.kind
    cdef bint clipping = a.clip > 0
    if kind == OPT_SGD:
        # g = clip(rescale * g) + wd * w; w -= lr * g
        if clipping:
            for i in range(lo, hi):
                gi = rs * g[i]
                gi = c if gi > c else (-c if gi < -c else gi)
                w[i] = w[i] - lr * (gi + wd * w[i])
        else:
            for i in range(lo, hi):
                w[i] = w[i] - lr * (rs * g[i] + wd * w[i])
    elif kind == OPT_SGD_MOM:
        # m = mom * m - lr * (clip(rescale * g) + wd * w); w += m
        if clipping:
            for i in range(lo, hi):
                gi = rs * g[i]
                gi = c if gi > c else (-c if gi < -c else gi)
                mi = mom * s1[i] - lr * (gi + wd * w[i])
                s1[i] = mi
                w[i] = w[i] + mi
        else:
            for i in range(lo, hi):
                mi = mom * s1[i] - lr * (rs * g[i] + wd * w[i])
                s1[i] = mi
                w[i] = w[i] + mi
    else:
        # g = clip(rescale * g + wd * w); m, v moving moments; w -= lr * m / (sqrt(v) + eps)
        for i in range(lo, hi):
            gi = rs * g[i] + wd * w[i]
            if clipping:
                gi = c if gi > c else (-c if gi < -c else gi)
            s1[i] = b1 * s1[i] + (1 - b1) * gi
            s2[i] = b2 * s2[i] + (1 - b2) * gi * gi
            w[i] = w[i] - lr * s1[i] / (sqrt(s2[i]) + eps)


cdef void optim_part(void* args, int part, int nparts) noexcept nogil:
    cdef OptimArgs* a = <OptimArgs*>args
    cdef int64_t lo, hi
    part_range(a.n, part, nparts, &lo, &hi)
    if a.dtype == DT_FLOAT32:
        optim_typed(<float*>a.w, <float*>a.g, <float*>a.s1, <float*>a.s2, a, lo, hi)
    else:
        optim_typed(<double*>a.w, <double*>a.g, <double*>a.s1, <double*>a.s2, a, lo, hi)


cdef int optim_kernel(void* args, char* errmsg) noexcept nogil:
    cdef OptimArgs* a = <OptimArgs*>args
    if a.n >= PAR_ELEMS:
        run_parts(optim_part, args, 4)
    else:
        optim_part(args, 0, 1)
    return 0


cdef bytes _B_SGD = b"sgd_update"
cdef bytes _B_SGD_MOM = b"sgd_mom_update"
cdef bytes _B_ADAM = b"adam_update"


def push_optimizer_update(str kind, weight, grad, states, double lr, double wd=0.0,
                          double rescale_grad=1.0, clip_gradient=None, double momentum=0.0,
                          double beta1=0.9, double beta2=0.999, double epsilon=1e-8):
    """Push one fused update of `weight` (and its `states`, updated in place) from `grad`.

    kind 'sgd' (no state), 'sgd_mom' (states = (mom,)) or 'adam' (states = (mean, var)).
    All arrays must be contiguous float32 or float64 of one shape and dtype.
    """
    cdef OptimArgs a
    cdef EVar* reads[1]
    cdef EVar* writes[3]
    cdef int nstates = {'sgd': 0, 'sgd_mom': 1, 'adam': 2}.get(kind, -1)
    if nstates < 0:
        raise ValueError(f"push_optimizer_update: kind must be 'sgd', 'sgd_mom' or 'adam', "
                         f"got {kind!r}")
    states = tuple(states)
    if len(states) != nstates:
        raise ValueError(f"{kind}_update: needs {nstates} state array(s), got {len(states)}")
    # dtypes compared as the NumPy scalar types NDArray.dtype gives (np.dtype() costs a
    # microsecond a call, and this runs once per parameter per step)
    wdt, shape = weight.dtype, weight.shape
    if wdt is not np.float32 and wdt is not np.float64:
        raise TypeError(f"{kind}_update: weight must be float32 or float64, got "
                        f"{np.dtype(wdt).name}")
    if grad.dtype is not wdt or grad.shape != shape or any(
            st.dtype is not wdt or st.shape != shape for st in states):
        for name, arr in (('grad', grad),) + tuple((f'state {i}', st)
                                                   for i, st in enumerate(states)):
            if arr.shape != shape or np.dtype(arr.dtype) != np.dtype(wdt):
                raise ValueError(f"{kind}_update: {name} has {np.dtype(arr.dtype).name}"
                                 f"{tuple(arr.shape)}, the weight "
                                 f"{np.dtype(wdt).name}{tuple(shape)}")
    a.kind = (OPT_SGD, OPT_SGD_MOM, OPT_ADAM)[nstates]
    grad = nd_apart(grad, (weight,) + states, True)     # elementwise: in place is safe
    a.w = nd_ptr(weight)
    a.g = nd_ptr(grad)
    a.s1 = nd_ptr(states[0]) if nstates > 0 else NULL
    a.s2 = nd_ptr(states[1]) if nstates > 1 else NULL
    a.n = weight.size
    a.dtype = DT_FLOAT32 if wdt is np.float32 else DT_FLOAT64
    a.lr = lr
    a.wd = wd
    a.rescale = rescale_grad
    a.clip = clip_gradient if clip_gradient is not None and clip_gradient > 0 else -1.0
    a.momentum = momentum
    a.beta1 = beta1
    a.beta2 = beta2
    a.eps = epsilon
    reads[0] = nd_var(grad)
    writes[0] = nd_var(weight)
    flags = (FLAG_SMALL if a.n <= 16384 else 0) | nd_wflag(weight, 0)
    for i in range(nstates):
        writes[1 + i] = nd_var(states[i])
        flags |= nd_wflag(states[i], 1 + i)
    push_kernel(optim_kernel, &a, sizeof(a), reads, 1, writes, 1 + nstates, 0,
                (_B_SGD, _B_SGD_MOM, _B_ADAM)[nstates], flags)
