# Part of mxcy/_ops.pyx (textually included there): activation gradients and softmax, and their push wrappers.
# ---------------------------------------------------------------- activation gradients
cdef inline double dact(double v, int op) noexcept nogil:
    """f'(·) in terms of v, the input or the output as the code says (see _ops.pxd)."""
    cdef double s
    if op == G_RELU:
        return 1.0 if v > 0 else 0.0
    if op == G_SIGMOID:
        return v * (1.0 - v)
    if op == G_TANH:
        return 1.0 - v * v
    if op == G_SOFTRELU:
        return 1.0 / (1.0 + exp(-v))
    if op == G_SOFTSIGN:
        s = 1.0 + fabs(v)
        return 1.0 / (s * s)
    if op == G_SQUARE:
        return 2.0 * v
    if op == G_SQRT:
        return 0.5 / v
    if op == G_EXP:
        return v
    if op == G_LOG:
        return 1.0 / v
    if op == G_ABS:
        return 1.0 if v > 0 else (-1.0 if v < 0 else 0.0)
    if op == G_SOFTRELU_Y:
        return -expm1(-v)
    if op == G_SOFTSIGN_Y:
        s = 1.0 - fabs(v)
        return s * s
    if op == G_GELU:
        return (0.5 * (1.0 + erf(v * 0.7071067811865476)) +
                v * exp(-0.5 * v * v) * 0.3989422804014327)
    return 1.0


cdef void grad_simple(real_t* v, real_t* dy, real_t* dx, int64_t n, int op,
                      int add) noexcept nogil:
    """dx (= or +=) dy · f'(v) for square, sqrt, log and exp (_vecmath_elem.h)."""
    if real_t is float:
        if op == G_SQUARE:
            mxcy_vgrad_square_f32(v, dy, dx, n, add)
        elif op == G_SQRT:
            mxcy_vgrad_sqrt_f32(v, dy, dx, n, add)
        elif op == G_LOG:
            mxcy_vgrad_log_f32(v, dy, dx, n, add)
        else:
            mxcy_vgrad_exp_f32(v, dy, dx, n, add)
    else:
        if op == G_SQUARE:
            mxcy_vgrad_square_f64(v, dy, dx, n, add)
        elif op == G_SQRT:
            mxcy_vgrad_sqrt_f64(v, dy, dx, n, add)
        elif op == G_LOG:
            mxcy_vgrad_log_f64(v, dy, dx, n, add)
        else:
            mxcy_vgrad_exp_f64(v, dy, dx, n, add)


cdef void grad_typed(real_t* v, real_t* dy, real_t* dx, int64_t n, int op,
                     int req) noexcept nogil:
    """dx (req) dy · f'(v)."""
    cdef int64_t i
    cdef real_t g
    cdef bint add = req == 2
    if op == G_SOFTRELU and v != NULL:          # the exp-based factors: vector loops
        if real_t is float:
            mxcy_vsoftrelu32_grad_x_f32(v, dy, dx, n, add)
        else:
            mxcy_vsoftrelu_grad_x_f64(v, dy, dx, n, add)
        return
    if op == G_SOFTRELU_Y and v != NULL:
        if real_t is float:
            mxcy_vsoftrelu32_grad_y_f32(v, dy, dx, n, add)
        else:
            mxcy_vsoftrelu_grad_y_f64(v, dy, dx, n, add)
        return
    if op == G_GELU and v != NULL:
        if real_t is float:
            mxcy_vgelu32_grad_f32(v, dy, dx, n, add)
        else:
            mxcy_vgelu_grad_f64(v, dy, dx, n, add)
        return
    if v != NULL and (op == G_SQUARE or op == G_SQRT or op == G_LOG or op == G_EXP):
        grad_simple(v, dy, dx, n, op, add)      # dact's factor, in loops that vectorise
        return
    # The common factors in the element type, one loop per req (no per-element dispatch),
    # so they vectorise.
    if op == G_TANH and v != NULL:
        if add:
            for i in range(n):
                dx[i] += dy[i] * (1 - v[i] * v[i])
        else:
            for i in range(n):
                dx[i] = dy[i] * (1 - v[i] * v[i])
        return
    if op == G_SIGMOID and v != NULL:
        if add:
            for i in range(n):
                dx[i] += dy[i] * (v[i] * (1 - v[i]))
        else:
            for i in range(n):
                dx[i] = dy[i] * (v[i] * (1 - v[i]))
        return
    if op == G_RELU:
        # dy is loaded whatever the sign (a select, not a branch): a conditional load
        # keeps GCC from if-converting, and half-zero activations then mispredict half the
        # time (7 ns an element instead of a vector loop)
        if add:
            for i in range(n):
                g = dy[i]
                dx[i] += g if v[i] > 0 else 0
        else:
            for i in range(n):
                g = dy[i]
                dx[i] = g if v[i] > 0 else 0
        return
    cdef double d
    if op == G_SOFTSIGN_Y and v != NULL:       # dact's value, in a loop that vectorises
        if add:
            for i in range(n):
                d = 1.0 - fabs(<double>v[i])
                dx[i] = <real_t>(dy[i] * (d * d)) + dx[i]
        else:
            for i in range(n):
                d = 1.0 - fabs(<double>v[i])
                dx[i] = <real_t>(dy[i] * (d * d))
        return
    for i in range(n):
        g = <real_t>(dy[i] * dact(v[i], op)) if v != NULL else dy[i]
        dx[i] = g + dx[i] if add else g


cdef void grad_part(void* args, int part, int nparts) noexcept nogil:
    cdef GradArgs* a = <GradArgs*>args
    cdef int64_t lo, hi
    part_range(a.n, part, nparts, &lo, &hi)
    if hi <= lo:
        return
    if a.dtype == DT_FLOAT32:
        grad_typed(<float*>a.v + lo if a.v != NULL else NULL, <float*>a.dy + lo,
                   <float*>a.dx + lo, hi - lo, a.op, a.req)
    else:
        grad_typed(<double*>a.v + lo if a.v != NULL else NULL, <double*>a.dy + lo,
                   <double*>a.dx + lo, hi - lo, a.op, a.req)


cdef int grad_kernel(void* args, char* errmsg) noexcept nogil:
    cdef GradArgs* a = <GradArgs*>args
    if a.dtype != DT_FLOAT32 and a.dtype != DT_FLOAT64:
        return set_error(errmsg, b"activation gradient: float32 or float64 only", ERR_VALUE)
    run_parts(grad_part, args, 4 if a.n >= PAR_ELEMS else 1)
    return 0


# ---------------------------------------------------------------- softmax
cdef bint softmax_rows(SoftmaxArgs* a, real_t* x, real_t* dy, real_t* out) noexcept nogil:
    """softmax_typed over contiguous rows (inner == 1, the last axis) by the vector loops of
    _vecmath.h; False when the axis is strided."""
    cdef double inv_t = 1.0 / a.temperature
    cdef int add = a.req == 2
    if a.inner != 1:
        return False
    if real_t is float:
        if a.backward:
            mxcy_softmax_grad_rows_f32(x, dy, out, a.outer, a.length, inv_t, a.log, add)
        else:
            mxcy_softmax_rows_f32(x, out, a.outer, a.length, inv_t, a.log, add)
    else:
        if a.backward:
            mxcy_softmax_grad_rows_f64(x, dy, out, a.outer, a.length, inv_t, a.log, add)
        else:
            mxcy_softmax_rows_f64(x, out, a.outer, a.length, inv_t, a.log, add)
    return True


cdef void softmax_typed(SoftmaxArgs* a, real_t* x, real_t* dy, real_t* out) noexcept nogil:
    """Along the middle axis of (outer, length, inner):
    forward  y = softmax(x / T) (or its log);
    backward dx = y (dy − Σ dy·y) / T  (log: dx = (dy − exp(y) Σ dy) / T)."""
    cdef int64_t o, i, j, base, L = a.length, S = a.inner
    cdef double m, s, t, inv_t = 1.0 / a.temperature, r
    if softmax_rows(a, x, dy, out):
        return
    for o in range(a.outer):
        for j in range(S):
            base = o * L * S + j
            if not a.backward:
                m = x[base]
                for i in range(1, L):
                    if x[base + i * S] > m:
                        m = x[base + i * S]
                s = 0
                for i in range(L):
                    s += exp((x[base + i * S] - m) * inv_t)
                if a.log:
                    t = log(s)
                    for i in range(L):
                        r = (x[base + i * S] - m) * inv_t - t
                        out[base + i * S] = <real_t>(r + out[base + i * S] if a.req == 2 else r)
                else:
                    for i in range(L):
                        r = exp((x[base + i * S] - m) * inv_t) / s
                        out[base + i * S] = <real_t>(r + out[base + i * S] if a.req == 2 else r)
            else:
                s = 0
                if a.log:
                    for i in range(L):
                        s += dy[base + i * S]
                    for i in range(L):
                        r = (dy[base + i * S] - exp(x[base + i * S]) * s) * inv_t
                        out[base + i * S] = <real_t>(r + out[base + i * S] if a.req == 2 else r)
                else:
                    for i in range(L):
                        s += dy[base + i * S] * x[base + i * S]
                    for i in range(L):
                        r = x[base + i * S] * (dy[base + i * S] - s) * inv_t
                        out[base + i * S] = <real_t>(r + out[base + i * S] if a.req == 2 else r)


cdef void softmax_part(void* args, int part, int nparts) noexcept nogil:
    """Softmax over the outer indices [lo, hi) of part `part` (the outer slices are
    independent)."""
    cdef SoftmaxArgs a = (<SoftmaxArgs*>args)[0]
    cdef int64_t lo = a.outer * part // nparts, hi = a.outer * (part + 1) // nparts
    cdef int64_t offset = lo * a.length * a.inner * (4 if a.dtype == DT_FLOAT32 else 8)
    if hi <= lo:
        return
    a.outer = hi - lo
    a.x += offset
    a.out += offset
    if a.dy != NULL:
        a.dy += offset
    if a.dtype == DT_FLOAT32:
        softmax_typed(&a, <float*>a.x, <float*>a.dy, <float*>a.out)
    else:
        softmax_typed(&a, <double*>a.x, <double*>a.dy, <double*>a.out)


cdef int softmax_kernel(void* args, char* errmsg) noexcept nogil:
    cdef SoftmaxArgs* a = <SoftmaxArgs*>args
    if a.dtype != DT_FLOAT32 and a.dtype != DT_FLOAT64:
        return set_error(errmsg, b"softmax: float32 or float64 only", ERR_VALUE)
    if a.outer >= 4 and a.outer * a.length * a.inner >= PAR_ELEMS:
        run_parts(softmax_part, args, 4)       # shared with idle workers, as binary ops
    else:
        softmax_part(args, 0, 1)
    return 0


# ---------------------------------------------------------------- pushing to the engine
from mxcy._engine cimport EVar, push_kernel, FLAG_SMALL
from mxcy._ndptr cimport nd_ptr, nd_var, nd_apart, nd_wflag

cdef bytes _B_GRAD = b"activation_backward"
cdef bytes _B_SOFTMAX = b"softmax"
_REQ = {'null': 0, 'write': 1, 'inplace': 1, 'add': 2}


def push_grad(int op, v, dy, dx, str req='write'):
    """Push dx (req) dy · f'(v) (NDArrays of one float dtype and size; v None for identity)."""
    cdef GradArgs a
    cdef EVar* reads[2]
    cdef EVar* w
    cdef int nr = 1
    a.req = _REQ[req]
    if a.req == 0:
        return
    dy = nd_apart(dy, (dx,), True)      # elementwise: in place is safe
    v = nd_apart(v, (dx,), True)
    a.dy = nd_ptr(dy)
    a.dx = nd_ptr(dx)
    reads[0] = nd_var(dy)
    a.v = NULL
    if v is not None:
        a.v = nd_ptr(v)
        reads[1] = nd_var(v)
        nr = 2
    a.n = dx.size
    a.dtype = _NP_CODES[np.dtype(dx.dtype)]
    a.op = op
    w = nd_var(dx)
    push_kernel(grad_kernel, &a, sizeof(a), reads, nr, &w, 1, 0, _B_GRAD,
                (FLAG_SMALL if a.n <= 16384 else 0) | nd_wflag(dx, 0))


cdef void softmax_output_grad_typed(SoftmaxOutputGradArgs* a, real_t* y, real_t* label,
                                    real_t* dx) noexcept nogil:
    """dx (req) scale · (y − smoothed one_hot(label)) / norm; ignored labels give 0."""
    cdef int64_t o, i, j, base, L = a.length, S = a.inner, valid = 0, cls
    cdef double norm = 1.0, g, lab, on = 1.0 - a.smooth_alpha
    cdef double off = a.smooth_alpha / (L - 1) if L > 1 else 0.0
    cdef int skip
    for o in range(a.outer):
        for j in range(S):
            lab = label[o * S + j]
            if not (a.use_ignore and lab == a.ignore_label):
                valid += 1
    if a.normalization == 1:
        norm = <double>a.batch
    elif a.normalization == 2:
        norm = <double>(valid if valid > 0 else 1)
    for o in range(a.outer):
        for j in range(S):
            lab = label[o * S + j]
            skip = a.use_ignore and lab == a.ignore_label
            cls = <int64_t>lab
            if cls < 0:
                cls = 0
            if cls >= L:
                cls = L - 1
            base = o * L * S + j
            for i in range(L):
                if skip:
                    g = 0
                else:
                    g = (y[base + i * S] - (on if i == cls else off)) * a.scale / norm
                if a.req == 2:
                    dx[base + i * S] += <real_t>g
                else:
                    dx[base + i * S] = <real_t>g


cdef int softmax_output_grad_kernel(void* args, char* errmsg) noexcept nogil:
    cdef SoftmaxOutputGradArgs* a = <SoftmaxOutputGradArgs*>args
    if a.dtype == DT_FLOAT32:
        softmax_output_grad_typed(a, <float*>a.y, <float*>a.label, <float*>a.dx)
    elif a.dtype == DT_FLOAT64:
        softmax_output_grad_typed(a, <double*>a.y, <double*>a.label, <double*>a.dx)
    else:
        return set_error(errmsg, b"SoftmaxOutput: float32 or float64 only", ERR_VALUE)
    return 0


cdef bytes _B_SOFTMAX_OUTPUT_GRAD = b"SoftmaxOutput_backward"


def push_softmax_output_grad(y, label, dx, int axis, double scale, bint use_ignore,
                             double ignore_label, str normalization, double smooth_alpha,
                             str req='write'):
    """Push SoftmaxOutput's gradient (class axis `axis` of y; label has y's shape without
    that axis, same dtype)."""
    cdef SoftmaxOutputGradArgs a
    cdef EVar* reads[2]
    cdef EVar* w
    shape = y.shape
    a.req = _REQ[req]
    if a.req == 0:
        return
    a.outer = math.prod(shape[:axis])
    a.length = shape[axis]
    a.inner = math.prod(shape[axis + 1:])
    y = nd_apart(y, (dx,))
    label = nd_apart(label, (dx,))
    a.y = nd_ptr(y)
    a.label = nd_ptr(label)
    a.dx = nd_ptr(dx)
    a.dtype = _NP_CODES[np.dtype(y.dtype)]
    a.use_ignore = use_ignore
    a.ignore_label = ignore_label
    a.normalization = {'null': 0, 'batch': 1, 'valid': 2}[normalization]
    a.scale = scale
    a.smooth_alpha = smooth_alpha
    a.batch = shape[0]
    reads[0] = nd_var(y)
    reads[1] = nd_var(label)
    w = nd_var(dx)
    push_kernel(softmax_output_grad_kernel, &a, sizeof(a), reads, 2, &w, 1, 0,
                _B_SOFTMAX_OUTPUT_GRAD,
                (FLAG_SMALL if y.size <= 16384 else 0) | nd_wflag(dx, 0))


def push_softmax(x, out, int axis, double temperature=1.0, bint log=False, dy=None,
                 str req='write'):
    """Push softmax(x) along axis into out, or (dy given, x = y) its backward into out."""
    cdef SoftmaxArgs a
    cdef EVar* reads[2]
    cdef EVar* w
    cdef int nr = 1
    shape = x.shape
    a.outer = math.prod(shape[:axis])
    a.length = shape[axis]
    a.inner = math.prod(shape[axis + 1:])
    a.req = _REQ[req]
    if a.req == 0:
        return
    # each line is read whole before it is written: in place is safe (the memory plan's
    # in-place softmax), any other overlap is not
    x = nd_apart(x, (out,), True)
    dy = nd_apart(dy, (out,), True)
    a.x = nd_ptr(x)
    reads[0] = nd_var(x)
    a.dy = NULL
    if dy is not None:
        a.dy = nd_ptr(dy)
        reads[1] = nd_var(dy)
        nr = 2
    a.out = nd_ptr(out)
    a.dtype = _NP_CODES[np.dtype(x.dtype)]
    a.log = log
    a.backward = dy is not None
    a.temperature = temperature
    w = nd_var(out)
    push_kernel(softmax_kernel, &a, sizeof(a), reads, nr, &w, 1, 0, _B_SOFTMAX,
                (FLAG_SMALL if x.size <= 16384 else 0) | nd_wflag(out, 0))
