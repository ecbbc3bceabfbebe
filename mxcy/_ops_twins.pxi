# Part of mxcy/_ops.pyx (textually included there): NumPy twins of the kernels (for tests) and the op-code tables.
# ---------------------------------------------------------------- test twins (NumPy in/out)
_NP_CODES = {np.dtype(np.float32): DT_FLOAT32, np.dtype(np.float64): DT_FLOAT64,
             np.dtype(np.int32): DT_INT32, np.dtype(np.int64): DT_INT64,
             np.dtype(np.int8): DT_INT8, np.dtype(np.uint8): DT_UINT8}


cdef char* np_ptr(object arr):
    cdef cnp.ndarray a = <cnp.ndarray?>arr
    if not a.flags['C_CONTIGUOUS']:
        raise ValueError("kernel twins take C-contiguous arrays")
    return <char*>cnp.PyArray_DATA(a)


def _raise_rc(int rc, char* msg):
    if rc:
        from mxcy._engine import _ERROR_TYPES
        raise _ERROR_TYPES.get(rc, RuntimeError)(msg.decode())


def binary_np(int op, cnp.ndarray x, y, cnp.ndarray out):
    """Run binary_kernel on same-shape arrays, or with a scalar `y`."""
    cdef BinaryArgs a
    cdef char msg[256]
    msg[0] = 0
    a.x = np_ptr(x)
    a.out = np_ptr(out)
    a.n = out.size
    a.dtype = _NP_CODES[x.dtype]
    a.op = op
    a.ndim = 0
    if isinstance(y, np.ndarray):
        a.y = np_ptr(y)
        a.scalar = 0
    else:
        a.y = NULL
        a.scalar = float(y)
    _raise_rc(binary_kernel(&a, msg), msg)
    return out


def unary_np(int op, cnp.ndarray x, cnp.ndarray out):
    cdef UnaryArgs a
    cdef char msg[256]
    a.x = np_ptr(x)
    a.out = np_ptr(out)
    a.n = out.size
    a.dtype = _NP_CODES[x.dtype]
    a.op = op
    _raise_rc(unary_kernel(&a, msg), msg)
    return out


def gemm_np(cnp.ndarray a, cnp.ndarray b, bint trans_a=False, bint trans_b=False):
    """op(a) · op(b) for 2-D float32/float64 arrays through gemm_kernel."""
    cdef GemmArgs g
    cdef char msg[256]
    m = a.shape[1] if trans_a else a.shape[0]
    k = a.shape[0] if trans_a else a.shape[1]
    n = b.shape[0] if trans_b else b.shape[1]
    c = np.empty((m, n), dtype=a.dtype)
    g.a = np_ptr(a)
    g.b = np_ptr(b)
    g.c = np_ptr(c)
    g.dtype = _NP_CODES[a.dtype]
    g.m, g.n, g.k = m, n, k
    g.trans_a, g.trans_b = trans_a, trans_b
    g.batch = 1
    g.stride_a = g.stride_b = g.stride_c = 0
    g.alpha, g.beta = 1.0, 0.0
    _raise_rc(gemm_kernel(&g, msg), msg)
    return c


# ---------------------------------------------------------------- codes for Python callers
BINARY_OPS = {'add': OP_ADD, 'subtract': OP_SUB, 'multiply': OP_MUL, 'divide': OP_DIV,
              'modulo': OP_MOD, 'power': OP_POW, 'maximum': OP_MAX, 'minimum': OP_MIN,
              'equal': OP_EQ, 'not_equal': OP_NE, 'greater': OP_GT, 'greater_equal': OP_GE,
              'lesser': OP_LT, 'lesser_equal': OP_LE, 'rsubtract': OP_RSUB,
              'rdivide': OP_RDIV, 'rmodulo': OP_RMOD, 'rpower': OP_RPOW, 'hypot': OP_HYPOT}
UNARY_OPS = {'negative': U_NEG, 'abs': U_ABS, 'sign': U_SIGN, 'square': U_SQUARE,
             'sqrt': U_SQRT, 'exp': U_EXP, 'log': U_LOG, 'relu': U_RELU,
             'sigmoid': U_SIGMOID, 'tanh': U_TANH, 'rsqrt': U_RSQRT, 'floor': U_FLOOR,
             'ceil': U_CEIL, 'round': U_ROUND, 'log1p': U_LOG1P, 'expm1': U_EXPM1,
             'sin': U_SIN, 'cos': U_COS, 'reciprocal': U_RECIPROCAL,
             'softrelu': U_SOFTRELU, 'softsign': U_SOFTSIGN, 'trunc': U_TRUNC,
             'log2': U_LOG2, 'log10': U_LOG10, 'cbrt': U_CBRT, 'arctan': U_ARCTAN,
             'tan': U_TAN, 'gelu': U_GELU}

GRAD_OPS = {'relu': G_RELU, 'sigmoid': G_SIGMOID, 'tanh': G_TANH, 'softrelu': G_SOFTRELU,
            'softsign': G_SOFTSIGN, 'square': G_SQUARE, 'sqrt': G_SQRT, 'exp': G_EXP,
            'log': G_LOG, 'abs': G_ABS, 'identity': G_IDENTITY, 'softrelu_y': G_SOFTRELU_Y,
            'softsign_y': G_SOFTSIGN_Y, 'gelu': G_GELU}


def grad_np(int op, v, dy, dx, int req=1):
    """Run grad_kernel on NumPy arrays (v may be None for G_IDENTITY)."""
    cdef GradArgs a
    cdef char msg[256]
    a.v = np_ptr(v) if v is not None else NULL
    a.dy = np_ptr(dy)
    a.dx = np_ptr(dx)
    a.n = dx.size
    a.dtype = _NP_CODES[dx.dtype]
    a.op = op
    a.req = req
    _raise_rc(grad_kernel(&a, msg), msg)
    return dx


def softmax_np(x, out, int axis=-1, double temperature=1.0, bint log=False,
               dy=None, int req=1):
    """Forward softmax of x into out, or (dy given, x = y) its backward into out."""
    cdef SoftmaxArgs a
    cdef char msg[256]
    shape = x.shape
    if axis < 0:                # not `axis % ndim`: cdivision makes -1 % 2 == -1 here
        axis += len(shape)
    a.outer = int(np.prod(shape[:axis], dtype=np.int64))
    a.length = shape[axis]
    a.inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    a.x = np_ptr(x)
    a.dy = np_ptr(dy) if dy is not None else NULL
    a.out = np_ptr(out)
    a.dtype = _NP_CODES[x.dtype]
    a.log = log
    a.backward = dy is not None
    a.req = req
    a.temperature = temperature
    _raise_rc(softmax_kernel(&a, msg), msg)
    return out
