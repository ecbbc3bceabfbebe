# Included by _ndarray.pyx: pushing the C kernels (fill, copy, assign, binary with
# broadcasting, unary, gemm) and Python ops (push_numpy) for NDArrays.
# Shapes and dtypes are validated here, before the push: kernels never see bad input.

# ---------------------------------------------------------------- pushing kernels
cdef inline int _flags(int64_t n):
    return FLAG_SMALL if n <= SMALL_LIMIT else 0


cdef inline int _wflag(NDArray out):
    """FLAG_PARTIAL0 when `out`, the op's one write, is a view of part of its chunk."""
    return 0 if out._offset == 0 and out._nbytes() == out._chunk.nbytes else FLAG_PARTIAL0


cdef inline NDArray _apart(NDArray x, NDArray out, bint same_place_ok):
    """x, or a copy of it when it overlaps `out` (see _ndptr.nd_apart): kernels split in
    parts, or walking a broadcast input, would otherwise read what they already wrote."""
    if x is None or x._chunk is not out._chunk:
        return x
    if spans_clash(<size_t>x._ptr(), x._nbytes(), <size_t>out._ptr(), out._nbytes(),
                   same_place_ok):
        return <NDArray>x.copy()
    return x


cdef int _fill(NDArray out, value) except -1:
    cdef FillArgs a
    cdef EVar* w = out._chunk.cvar
    if out._dtype == DT_FLOAT16 or out._dtype == DT_BOOL:
        _push_numpy(_fill_into(value if out._dtype == DT_BOOL else float(value)), [],
                    [out], 'fill')
        return 0
    a.out = out._ptr()
    a.n = out._size
    a.dtype = out._dtype
    a.value = float(value)
    push_kernel(fill_kernel, &a, sizeof(a), NULL, 0, &w, 1, 0, _B_FILL,
                _flags(a.n) | _wflag(out))
    return 0


cdef int _copy(NDArray dst, NDArray src) except -1:
    """dst := src, same dtype and size."""
    cdef CopyArgs a
    cdef EVar* r = src._chunk.cvar
    cdef EVar* w = dst._chunk.cvar
    a.src = src._ptr()
    a.dst = dst._ptr()
    a.nbytes = dst._nbytes()
    push_kernel(copy_kernel, &a, sizeof(a), &r, 1, &w, 1, 0, _B_COPY,
                _flags(dst._size) | _wflag(dst))
    return 0


cdef int _assign(NDArray target, value) except -1:
    """target[:] = value, for a scalar, an NDArray (broadcast, cast) or array-like."""
    cdef NDArray src
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        return _fill(target, value)
    if isinstance(value, bool):
        return _fill(target, int(value))
    if not isinstance(value, NDArray):
        value = from_numpy_copy(np.asarray(value), target._ctx, CODE_DTYPES[target._dtype])
    src = <NDArray>value
    if src._shape == target._shape and src._dtype == target._dtype:
        return _copy(target, src)
    try:
        np.broadcast_shapes(src._shape, target._shape)
        if np.broadcast_shapes(src._shape, target._shape) != target._shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"cannot assign an array of shape {src._shape} to a target of "
                         f"shape {target._shape}") from None
    _push_numpy(_copy_into, [src], [target], 'assign')
    return 0


cdef tuple _bcast_shape(tuple xs, tuple ys, str name):
    cdef int nd = max(len(xs), len(ys))
    out = []
    xs_p = (1,) * (nd - len(xs)) + xs
    ys_p = (1,) * (nd - len(ys)) + ys
    for a, b in zip(xs_p, ys_p):
        if a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        else:
            raise ValueError(f"{name}: operands could not be broadcast together with shapes "
                             f"{xs} and {ys}")
    return tuple(out)


cdef void _bcast_strides(tuple shape, tuple out_shape, int64_t* strides):
    """Element strides of `shape` inside `out_shape` (0 on broadcast axes)."""
    cdef int nd = len(out_shape), pad = nd - len(shape), i
    cdef int64_t s = 1
    i = nd - 1
    while i >= 0:
        if i < pad or shape[i - pad] == 1:
            strides[i] = 0
        else:
            strides[i] = s
            s *= shape[i - pad]
        i -= 1


cdef object _binary(NDArray x, other, int op, int rop, object out):
    """x OP other (array or scalar), into `out` when given (in-place), else a new array."""
    cdef BinaryArgs a
    cdef NDArray y, o
    cdef EVar* vs[3]
    cdef tuple oshape
    cdef int i
    cdef bint same = True       # operands of one shape (no broadcasting)
    if isinstance(other, NDArray):
        y = <NDArray>other
        if y._dtype != x._dtype:
            raise TypeError(f"{_BINARY_NAMES[op]}: operands have different dtypes "
                            f"{_NP_TYPES[x._dtype].__name__} and "
                            f"{_NP_TYPES[y._dtype].__name__}; convert one with astype()")
        same = PyObject_RichCompareBool(y._shape, x._shape, Py_EQ)     # `is` first
        if same:
            oshape = x._shape
        else:
            oshape = _bcast_shape(x._shape, y._shape, _BINARY_NAMES[op])
    elif isinstance(other, (int, float, numbers.Real)) and not isinstance(other, bool):
        y = None
        oshape = x._shape
    elif isinstance(other, bool):
        return _binary(x, int(other), op, rop, out)
    elif isinstance(other, np.ndarray) or isinstance(other, (list, tuple)):
        return _binary(x, from_numpy_copy(other, x._ctx, _NP_TYPES[x._dtype]), op, rop, out)
    else:
        return NotImplemented
    if out is None:
        o = _empty_as(x, oshape, x._dtype, x._ctx)
    else:
        o = <NDArray?>out
        if o._shape != oshape:
            raise ValueError(f"{_BINARY_NAMES[op]}: in-place result of shape {oshape} does "
                             f"not fit the target of shape {o._shape}")
        if o._dtype != x._dtype:
            raise TypeError(f"{_BINARY_NAMES[op]}: out has dtype "
                            f"{_NP_TYPES[o._dtype].__name__}, the operands "
                            f"{_NP_TYPES[x._dtype].__name__}")
    if x._dtype == DT_FLOAT16 or x._dtype == DT_BOOL:
        _push_numpy(_binary_np(op, None if y is not None else other),
                    [x] if y is None else [x, y], [o], _BINARY_NAMES[op])
        return o
    x = _apart(x, o, True)
    y = _apart(y, o, True)
    a.x = x._ptr()
    a.out = o._ptr()
    a.n = o._size
    a.dtype = x._dtype
    a.op = op
    a.scalar = 0
    a.ndim = 0
    vs[0] = o._chunk.cvar
    vs[1] = x._chunk.cvar
    if y is None:
        a.y = NULL
        a.scalar = float(other)
        push_kernel(binary_kernel, &a, sizeof(a), &vs[1], 1, &vs[0], 1, 0, _B_BINARY,
                    _flags(a.n) | _wflag(o))
        return o
    a.y = y._ptr()
    if not same:
        if len(oshape) > MAX_DIM:
            raise ValueError(f"{_BINARY_NAMES[op]}: broadcasting supports at most "
                             f"{MAX_DIM} dimensions, got {len(oshape)}")
        if o._size == 0:
            return o
        a.ndim = len(oshape)
        for i in range(a.ndim):
            a.shape[i] = oshape[i]
        _bcast_strides(x._shape, oshape, a.xstride)
        _bcast_strides(y._shape, oshape, a.ystride)
    vs[2] = y._chunk.cvar
    push_kernel(binary_kernel, &a, sizeof(a), &vs[1], 2, &vs[0], 1, 0, _B_BINARY,
                _flags(a.n) | _wflag(o))
    return o


def binary(x, other, int op, out=None):
    """Elementwise x OP other with MXNet broadcasting; `op` is an OP_* code from _ops."""
    if not isinstance(x, NDArray):
        raise TypeError(f"expected an NDArray, got {type(x).__name__}")
    return _binary(<NDArray>x, other, op, op, out)


def unary(x, int op, out=None):
    """out := f(x) for a U_* code from _ops."""
    if not isinstance(x, NDArray):
        raise TypeError(f"expected an NDArray, got {type(x).__name__}")
    return _unary(<NDArray>x, op, out)


cdef NDArray _unary(NDArray xx, int op, object out):
    cdef UnaryArgs a
    cdef NDArray o
    cdef EVar* r
    cdef EVar* w
    if out is None:
        o = _empty_as(xx, xx._shape, xx._dtype, xx._ctx)
    else:
        o = <NDArray?>out
        if o._shape != xx._shape or o._dtype != xx._dtype:
            raise ValueError(f"unary op: out has shape {o._shape} and dtype "
                             f"{_NP_TYPES[o._dtype].__name__}, expected {xx._shape} "
                             f"{_NP_TYPES[xx._dtype].__name__}")
    if xx._dtype == DT_FLOAT16 or xx._dtype == DT_BOOL:
        _push_numpy(_unary_np(op), [xx], [o], 'unary')
        return o
    xx = _apart(xx, o, True)
    a.x = xx._ptr()
    a.out = o._ptr()
    a.n = o._size
    a.dtype = xx._dtype
    a.op = op
    r = xx._chunk.cvar
    w = o._chunk.cvar
    push_kernel(unary_kernel, &a, sizeof(a), &r, 1, &w, 1, 0, _B_UNARY,
                _flags(a.n) | _wflag(o))
    return o


def gemm(a, b, c, int m, int n, int k, bint trans_a=False, bint trans_b=False,
         int batch=1, double alpha=1.0, double beta=0.0):
    """Push c := alpha · op(a) · op(b) + beta · c through BLAS (float32/float64).

    `batch` products of (m×k)·(k×n) stored back to back; the caller has checked shapes:
    a holds batch·m·k, b batch·k·n and c batch·m·n elements of one float dtype.
    """
    cdef GemmArgs g
    cdef NDArray x = <NDArray?>a, y = <NDArray?>b, z = <NDArray?>c
    cdef EVar* vs[3]
    if x._dtype != y._dtype or x._dtype != z._dtype or x._dtype not in (DT_FLOAT32,
                                                                         DT_FLOAT64):
        raise TypeError(f"gemm: needs float32 or float64 operands of one dtype, got "
                        f"{x.dtype.__name__}, {y.dtype.__name__}, {z.dtype.__name__}")
    if (x._size != <int64_t>batch * m * k or y._size != <int64_t>batch * k * n
            or z._size != <int64_t>batch * m * n or m < 0 or n < 0 or k < 0 or batch < 1):
        raise ValueError(f"gemm: sizes {x._size}, {y._size}, {z._size} do not match "
                         f"batch={batch}, m={m}, n={n}, k={k}")
    x = _apart(x, z, False)     # BLAS reads a and b while it writes c
    y = _apart(y, z, False)
    g.a = x._ptr()
    g.b = y._ptr()
    g.c = z._ptr()
    g.dtype = x._dtype
    g.m = m
    g.n = n
    g.k = k
    g.trans_a = trans_a
    g.trans_b = trans_b
    g.batch = batch
    g.stride_a = <int64_t>m * k
    g.stride_b = <int64_t>k * n
    g.stride_c = <int64_t>m * n
    g.alpha = alpha
    g.beta = beta
    vs[0] = z._chunk.cvar
    vs[1] = x._chunk.cvar
    vs[2] = y._chunk.cvar
    push_kernel(gemm_kernel, &g, sizeof(g), &vs[1], 2, &vs[0], 1, 0, _B_GEMM,
                _flags(<int64_t>batch * m * n * k // 64) | _wflag(z))
    return c


def push_numpy(fn, inputs, outputs, name):
    """Push `fn(*input_views, *output_views)` as an engine op (a Python op, takes the GIL).

    The views are NumPy arrays over the arrays' memory, valid only inside the op.
    """
    _push_numpy(fn, inputs, outputs, name)


cdef _push_numpy(fn, list inputs, list outputs, str name):
    def run():
        fn(*[(<NDArray>x)._np_view() for x in inputs],
           *[(<NDArray>o)._np_view() for o in outputs])
    # the arrays themselves as writes: the engine tells a view's partial write from them
    _engine.push(run, [(<NDArray>x)._chunk for x in inputs], outputs, 0, name)


def new_empty(shape, dtype, ctx, like=None):
    """An uninitialised array from an already validated shape tuple and dtype code, of
    the class of `like` (an array) when given."""
    if like is None:
        return _empty(shape, dtype, ctx)
    return _empty_as(<NDArray?>like, shape, dtype, ctx)


def dtype_of(NDArray x):
    return x._dtype


cdef bytes _B_SPARSE_CE = b"sparse_softmax_ce"
cdef bytes _B_SPARSE_CE_BWD = b"sparse_softmax_ce_backward"


def sparse_ce(x, logp, label, y, int axis, bint backward=False, bint add=False):
    """Push gluon's sparse softmax cross-entropy (kernels in _ops_pick.pxi; pushed from
    here, where the arrays' fields are C fields: a recorded loss pays for this push on
    the thread that feeds the engine, twice a step).

    Forward (the class axis last): logp := log_softmax(x) along `axis`, y := −logp[label].
    Backward (any axis): x, the data gradient, (written, or added to with `add`) :=
    y · (exp(logp) − one_hot(label)), y the head gradient. x and logp: float32/float64 of
    one shape and dtype with n > 0 classes along axis; label and y: x's shape without the
    axis (label any float/int dtype, y x's); labels are clipped into [0, n)."""
    cdef SparseCEArgs a
    cdef NDArray d = <NDArray?>x, lp = <NDArray?>logp, lab = <NDArray?>label
    cdef NDArray out = <NDArray?>y
    cdef EVar* reads[3]
    cdef EVar* w[2]
    cdef int i
    shape = d._shape
    if d._dtype not in (DT_FLOAT32, DT_FLOAT64) or out._dtype != d._dtype or \
            lp._dtype != d._dtype:
        raise TypeError(f"sparse softmax cross-entropy: float32/float64 data, "
                        f"log-probabilities and loss of one dtype, got {d.dtype.__name__}, "
                        f"{lp.dtype.__name__} and {out.dtype.__name__}")
    if lab._dtype not in (DT_FLOAT32, DT_FLOAT64, DT_INT32, DT_INT64):
        raise TypeError(f"sparse softmax cross-entropy: label must be float32/float64/int32/"
                        f"int64, got {lab.dtype.__name__}")
    if not 0 <= axis < len(shape):
        raise ValueError(f"sparse softmax cross-entropy: axis {axis} out of range for data "
                         f"{shape}")
    a.outer = 1
    a.inner = 1
    for i in range(len(shape)):
        if i < axis:
            a.outer *= shape[i]
        elif i > axis:
            a.inner *= shape[i]
    a.n = shape[axis]
    if lp._shape != shape or lab._size != a.outer * a.inner or out._size != lab._size \
            or a.n == 0:
        raise ValueError(f"sparse softmax cross-entropy: log-probabilities {lp._shape}, "
                         f"label of {lab._size} and loss of {out._size} elements do not "
                         f"match data {shape} along axis {axis}")
    if not backward and a.inner != 1:
        raise ValueError(f"sparse softmax cross-entropy: the forward kernel takes the class "
                         f"axis last, got axis {axis} of {shape}")
    a.dtype = d._dtype
    a.idx_dtype = lab._dtype
    a.add = add
    if backward:                # d is the gradient written; out the head gradient
        lp = _apart(lp, d, False)
        lab = _apart(lab, d, False)
        out = _apart(out, d, False)
        reads[0], reads[1], reads[2] = lp._chunk.cvar, lab._chunk.cvar, out._chunk.cvar
        w[0] = d._chunk.cvar
        a.x, a.logp, a.idx, a.y = d._ptr(), lp._ptr(), lab._ptr(), out._ptr()
        push_kernel(sparse_ce_grad_kernel, &a, sizeof(a), reads, 3, w, 1, 0,
                    _B_SPARSE_CE_BWD, _flags(d._size) | _wflag(d))
        return
    if lp._chunk is out._chunk:
        raise ValueError("sparse softmax cross-entropy: log-probabilities and loss must be "
                         "separate arrays")
    d = _apart(_apart(d, lp, False), out, False)
    lab = _apart(_apart(lab, lp, False), out, False)
    reads[0], reads[1] = d._chunk.cvar, lab._chunk.cvar
    w[0], w[1] = lp._chunk.cvar, out._chunk.cvar
    a.x, a.logp, a.idx, a.y = d._ptr(), lp._ptr(), lab._ptr(), out._ptr()
    push_kernel(sparse_ce_kernel, &a, sizeof(a), reads, 2, w, 2, 0, _B_SPARSE_CE,
                _flags(d._size) | _wflag(lp) | (_wflag(out) << 1))
