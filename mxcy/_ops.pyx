# cython: language_level=3
"""Elementwise, broadcast, fill, copy and GEMM kernels: `noexcept nogil`, run by the engine.

Every kernel takes a pointer to its argument struct (declared in _ops.pxd) and returns 0,
or an engine error code with a message. Shapes and dtypes are validated by the caller
before the push: bounds checks are off here. Each kernel has a `*_np` twin at the end of
the file that runs it on NumPy arrays, so tests reach the kernels without the engine.
"""
cimport numpy as cnp
from libc.math cimport (sqrt, exp, log, fabs, tanh, floor, ceil, round, log1p, expm1,
                        sin, cos, fmod, pow, trunc, log2, log10, cbrt, atan, tan, hypot,
                        NAN)
from libc.stdint cimport int8_t, uint8_t, int32_t, int64_t
from libc.string cimport memcpy, memmove, strncpy
from scipy.linalg.cython_blas cimport sgemm, dgemm

from mxcy._engine cimport ERR_ZERO_DIVISION, ERR_VALUE

import numpy as np

cnp.import_array()

ctypedef fused real_t:
    float
    double

ctypedef fused num_t:
    float
    double
    int8_t
    uint8_t
    int32_t
    int64_t


# ---------------------------------------------------------------- scalar functions
cdef inline double py_mod(double a, double b) noexcept nogil:
    """a mod b with the sign of b (Python, NumPy and MXNet semantics)."""
    cdef double r
    if b == 0:
        return NAN
    r = fmod(a, b)
    if r != 0 and ((r < 0) != (b < 0)):
        r += b
    return r


cdef inline int binop(num_t a, num_t b, int op, num_t* r) noexcept nogil:
    """r := a OP b; integer division or modulo by zero is an error, never a crash."""
    cdef num_t t
    if op >= OP_RSUB and op <= OP_RPOW:
        t = a
        a = b
        b = t
        op = OP_SUB if op == OP_RSUB else (OP_DIV if op == OP_RDIV else
                                            (OP_MOD if op == OP_RMOD else OP_POW))
    if op == OP_ADD:
        r[0] = a + b
    elif op == OP_SUB:
        r[0] = a - b
    elif op == OP_MUL:
        r[0] = a * b
    elif op == OP_DIV:
        if num_t is float or num_t is double:
            r[0] = a / b
        else:
            if b == 0:
                return ERR_ZERO_DIVISION
            if b == -1:          # NOTE: INT_MIN / -1 traps in C; negate instead (wraps)
                r[0] = <num_t>(0 - a)
            else:
                r[0] = <num_t>(a / b)
    elif op == OP_MOD:
        if num_t is float or num_t is double:
            r[0] = <num_t>py_mod(a, b)
        else:
            if b == 0:
                return ERR_ZERO_DIVISION
            if b == -1:
                r[0] = 0
            else:
                t = <num_t>(a % b)
                if t != 0 and ((t < 0) != (b < 0)):
                    t = <num_t>(t + b)
                r[0] = t
    elif op == OP_POW:
        r[0] = <num_t>pow(<double>a, <double>b)
    elif op == OP_MAX:
        r[0] = a if a >= b else b
    elif op == OP_MIN:
        r[0] = a if a <= b else b
    elif op == OP_EQ:
        r[0] = 1 if a == b else 0
    elif op == OP_NE:
        r[0] = 1 if a != b else 0
    elif op == OP_GT:
        r[0] = 1 if a > b else 0
    elif op == OP_GE:
        r[0] = 1 if a >= b else 0
    elif op == OP_LT:
        r[0] = 1 if a < b else 0
    elif op == OP_LE:
        r[0] = 1 if a <= b else 0
    elif op == OP_HYPOT:
        r[0] = <num_t>hypot(<double>a, <double>b)
    return 0


cdef inline double unop(double a, int op) noexcept nogil:
    if op == U_NEG:
        return -a
    if op == U_ABS:
        return fabs(a)
    if op == U_SIGN:
        return 1.0 if a > 0 else (-1.0 if a < 0 else 0.0)
    if op == U_SQUARE:
        return a * a
    if op == U_SQRT:
        return sqrt(a)
    if op == U_RSQRT:
        return 1.0 / sqrt(a)
    if op == U_EXP:
        return exp(a)
    if op == U_LOG:
        return log(a)
    if op == U_RELU:
        return a if a > 0 else 0.0
    if op == U_SIGMOID:
        return 1.0 / (1.0 + exp(-a))
    if op == U_TANH:
        return tanh(a)
    if op == U_FLOOR:
        return floor(a)
    if op == U_CEIL:
        return ceil(a)
    if op == U_ROUND:
        return round(a)
    if op == U_TRUNC:
        return trunc(a)
    if op == U_LOG1P:
        return log1p(a)
    if op == U_EXPM1:
        return expm1(a)
    if op == U_SIN:
        return sin(a)
    if op == U_COS:
        return cos(a)
    if op == U_TAN:
        return tan(a)
    if op == U_ARCTAN:
        return atan(a)
    if op == U_RECIPROCAL:
        return 1.0 / a
    if op == U_SOFTRELU:
        return a + log1p(exp(-a)) if a > 20 else log1p(exp(a))
    if op == U_SOFTSIGN:
        return a / (1.0 + fabs(a))
    if op == U_LOG2:
        return log2(a)
    if op == U_LOG10:
        return log10(a)
    if op == U_CBRT:
        return cbrt(a)
    return NAN


# ---------------------------------------------------------------- typed loops
cdef int binary_flat(num_t* x, num_t* y, num_t* out, int64_t n, int op,
                     double scalar) noexcept nogil:
    """out[i] := x[i] OP y[i]  (or x[i] OP scalar when y is NULL)."""
    cdef int64_t i
    cdef num_t s = <num_t>scalar
    cdef int rc
    if num_t is float or num_t is double:
        # the common ops as plain loops the compiler vectorises
        if y != NULL:
            if op == OP_ADD:
                for i in range(n):
                    out[i] = x[i] + y[i]
                return 0
            if op == OP_SUB:
                for i in range(n):
                    out[i] = x[i] - y[i]
                return 0
            if op == OP_MUL:
                for i in range(n):
                    out[i] = x[i] * y[i]
                return 0
            if op == OP_DIV:
                for i in range(n):
                    out[i] = x[i] / y[i]
                return 0
        else:
            if op == OP_ADD:
                for i in range(n):
                    out[i] = x[i] + s
                return 0
            if op == OP_SUB:
                for i in range(n):
                    out[i] = x[i] - s
                return 0
            if op == OP_MUL:
                for i in range(n):
                    out[i] = x[i] * s
                return 0
            if op == OP_DIV:
                for i in range(n):
                    out[i] = x[i] / s
                return 0
    if y != NULL:
        for i in range(n):
            rc = binop(x[i], y[i], op, &out[i])
            if rc:
                return rc
    else:
        for i in range(n):
            rc = binop(x[i], s, op, &out[i])
            if rc:
                return rc
    return 0


cdef int binary_bcast(num_t* x, num_t* y, num_t* out, BinaryArgs* a) noexcept nogil:
    """out[idx] := x[idx · xstride] OP y[idx · ystride] over a broadcast index space."""
    cdef int64_t idx[16]
    cdef int nd = a.ndim, d, rc
    cdef int64_t inner = a.shape[nd - 1]
    cdef int64_t xs = a.xstride[nd - 1], ys = a.ystride[nd - 1]
    cdef int64_t xo = 0, yo = 0, o, i
    for d in range(nd):
        idx[d] = 0
    o = 0
    while o < a.n:
        for i in range(inner):
            rc = binop(x[xo + i * xs], y[yo + i * ys], a.op, &out[o + i])
            if rc:
                return rc
        o += inner
        d = nd - 2
        while d >= 0:
            idx[d] += 1
            xo += a.xstride[d]
            yo += a.ystride[d]
            if idx[d] < a.shape[d]:
                break
            xo -= a.xstride[d] * a.shape[d]
            yo -= a.ystride[d] * a.shape[d]
            idx[d] = 0
            d -= 1
    return 0


cdef int binary_typed(num_t* x, num_t* y, num_t* out, BinaryArgs* a) noexcept nogil:
    if a.ndim == 0:
        return binary_flat(x, y, out, a.n, a.op, a.scalar)
    return binary_bcast(x, y, out, a)


cdef void unary_typed(num_t* x, num_t* out, int64_t n, int op) noexcept nogil:
    """out[i] := f(x[i])."""
    cdef int64_t i
    if op == U_NEG:
        for i in range(n):
            out[i] = -x[i]
        return
    if op == U_SQUARE:
        for i in range(n):
            out[i] = x[i] * x[i]
        return
    if op == U_RELU:
        for i in range(n):
            out[i] = x[i] if x[i] > 0 else 0
        return
    if op == U_ABS:
        for i in range(n):
            out[i] = x[i] if x[i] >= 0 else -x[i]
        return
    for i in range(n):
        out[i] = <num_t>unop(<double>x[i], op)


cdef void fill_typed(num_t* out, int64_t n, double value) noexcept nogil:
    """out[i] := value."""
    cdef int64_t i
    cdef num_t v = <num_t>value
    for i in range(n):
        out[i] = v


# ---------------------------------------------------------------- engine entry points
cdef int set_error(char* errmsg, const char* text, int code) noexcept nogil:
    strncpy(errmsg, text, 255)
    errmsg[255] = 0
    return code


cdef int binary_kernel(void* args, char* errmsg) noexcept nogil:
    cdef BinaryArgs* a = <BinaryArgs*>args
    cdef int rc
    if a.dtype == DT_FLOAT32:
        rc = binary_typed(<float*>a.x, <float*>a.y, <float*>a.out, a)
    elif a.dtype == DT_FLOAT64:
        rc = binary_typed(<double*>a.x, <double*>a.y, <double*>a.out, a)
    elif a.dtype == DT_INT32:
        rc = binary_typed(<int32_t*>a.x, <int32_t*>a.y, <int32_t*>a.out, a)
    elif a.dtype == DT_INT64:
        rc = binary_typed(<int64_t*>a.x, <int64_t*>a.y, <int64_t*>a.out, a)
    elif a.dtype == DT_INT8:
        rc = binary_typed(<int8_t*>a.x, <int8_t*>a.y, <int8_t*>a.out, a)
    elif a.dtype == DT_UINT8:
        rc = binary_typed(<uint8_t*>a.x, <uint8_t*>a.y, <uint8_t*>a.out, a)
    else:
        return set_error(errmsg, b"binary kernel: unsupported dtype", ERR_VALUE)
    if rc == ERR_ZERO_DIVISION:
        return set_error(errmsg, b"integer division or modulo by zero", rc)
    return rc


cdef int unary_kernel(void* args, char* errmsg) noexcept nogil:
    cdef UnaryArgs* a = <UnaryArgs*>args
    if a.dtype == DT_FLOAT32:
        unary_typed(<float*>a.x, <float*>a.out, a.n, a.op)
    elif a.dtype == DT_FLOAT64:
        unary_typed(<double*>a.x, <double*>a.out, a.n, a.op)
    elif a.dtype == DT_INT32:
        unary_typed(<int32_t*>a.x, <int32_t*>a.out, a.n, a.op)
    elif a.dtype == DT_INT64:
        unary_typed(<int64_t*>a.x, <int64_t*>a.out, a.n, a.op)
    elif a.dtype == DT_INT8:
        unary_typed(<int8_t*>a.x, <int8_t*>a.out, a.n, a.op)
    elif a.dtype == DT_UINT8:
        unary_typed(<uint8_t*>a.x, <uint8_t*>a.out, a.n, a.op)
    else:
        return set_error(errmsg, b"unary kernel: unsupported dtype", ERR_VALUE)
    return 0


cdef int fill_kernel(void* args, char* errmsg) noexcept nogil:
    cdef FillArgs* a = <FillArgs*>args
    if a.dtype == DT_FLOAT32:
        fill_typed(<float*>a.out, a.n, a.value)
    elif a.dtype == DT_FLOAT64:
        fill_typed(<double*>a.out, a.n, a.value)
    elif a.dtype == DT_INT32:
        fill_typed(<int32_t*>a.out, a.n, a.value)
    elif a.dtype == DT_INT64:
        fill_typed(<int64_t*>a.out, a.n, a.value)
    elif a.dtype == DT_INT8:
        fill_typed(<int8_t*>a.out, a.n, a.value)
    elif a.dtype == DT_UINT8:
        fill_typed(<uint8_t*>a.out, a.n, a.value)
    else:
        return set_error(errmsg, b"fill kernel: unsupported dtype", ERR_VALUE)
    return 0


cdef int copy_kernel(void* args, char* errmsg) noexcept nogil:
    """dst[:nbytes] := src[:nbytes] (the regions may overlap)."""
    cdef CopyArgs* a = <CopyArgs*>args
    if a.src != a.dst and a.nbytes > 0:
        memmove(a.dst, a.src, a.nbytes)
    return 0


cdef int gemm_kernel(void* args, char* errmsg) noexcept nogil:
    """C := alpha · op(A) · op(B) + beta · C, row-major, as the column-major Bᵀ·Aᵀ."""
    cdef GemmArgs* g = <GemmArgs*>args
    cdef char ta = b'T' if g.trans_a else b'N'
    cdef char tb = b'T' if g.trans_b else b'N'
    cdef int lda = g.m if g.trans_a else g.k
    cdef int ldb = g.k if g.trans_b else g.n
    cdef int ldc = g.n
    cdef int m = g.m, n = g.n, k = g.k, i
    cdef float fa = <float>g.alpha, fb = <float>g.beta
    if m == 0 or n == 0:
        return 0
    if lda < 1:
        lda = 1
    if ldb < 1:
        ldb = 1
    for i in range(g.batch):
        if g.dtype == DT_FLOAT32:
            sgemm(&tb, &ta, &n, &m, &k, &fa, (<float*>g.b) + i * g.stride_b, &ldb,
                  (<float*>g.a) + i * g.stride_a, &lda, &fb,
                  (<float*>g.c) + i * g.stride_c, &ldc)
        elif g.dtype == DT_FLOAT64:
            dgemm(&tb, &ta, &n, &m, &k, &g.alpha, (<double*>g.b) + i * g.stride_b, &ldb,
                  (<double*>g.a) + i * g.stride_a, &lda, &g.beta,
                  (<double*>g.c) + i * g.stride_c, &ldc)
        else:
            return set_error(errmsg, b"gemm: only float32 and float64", ERR_VALUE)
    return 0


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
    return 1.0


cdef void grad_typed(real_t* v, real_t* dy, real_t* dx, int64_t n, int op,
                     int req) noexcept nogil:
    """dx (req) dy · f'(v)."""
    cdef int64_t i
    cdef real_t g
    if op == G_RELU:
        for i in range(n):
            g = dy[i] if v[i] > 0 else 0
            dx[i] = g + dx[i] if req == 2 else g
        return
    for i in range(n):
        g = <real_t>(dy[i] * dact(v[i], op)) if v != NULL else dy[i]
        dx[i] = g + dx[i] if req == 2 else g


cdef int grad_kernel(void* args, char* errmsg) noexcept nogil:
    cdef GradArgs* a = <GradArgs*>args
    if a.dtype == DT_FLOAT32:
        grad_typed(<float*>a.v, <float*>a.dy, <float*>a.dx, a.n, a.op, a.req)
    elif a.dtype == DT_FLOAT64:
        grad_typed(<double*>a.v, <double*>a.dy, <double*>a.dx, a.n, a.op, a.req)
    else:
        return set_error(errmsg, b"activation gradient: float32 or float64 only", ERR_VALUE)
    return 0


# ---------------------------------------------------------------- softmax
cdef void softmax_typed(SoftmaxArgs* a, real_t* x, real_t* dy, real_t* out) noexcept nogil:
    """Along the middle axis of (outer, length, inner):
    forward  y = softmax(x / T) (or its log);
    backward dx = y (dy − Σ dy·y) / T  (log: dx = (dy − exp(y) Σ dy) / T)."""
    cdef int64_t o, i, j, base, L = a.length, S = a.inner
    cdef double m, s, t, inv_t = 1.0 / a.temperature, r
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


cdef int softmax_kernel(void* args, char* errmsg) noexcept nogil:
    cdef SoftmaxArgs* a = <SoftmaxArgs*>args
    if a.dtype == DT_FLOAT32:
        softmax_typed(a, <float*>a.x, <float*>a.dy, <float*>a.out)
    elif a.dtype == DT_FLOAT64:
        softmax_typed(a, <double*>a.x, <double*>a.dy, <double*>a.out)
    else:
        return set_error(errmsg, b"softmax: float32 or float64 only", ERR_VALUE)
    return 0


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
             'tan': U_TAN}

GRAD_OPS = {'relu': G_RELU, 'sigmoid': G_SIGMOID, 'tanh': G_TANH, 'softrelu': G_SOFTRELU,
            'softsign': G_SOFTSIGN, 'square': G_SQUARE, 'sqrt': G_SQRT, 'exp': G_EXP,
            'log': G_LOG, 'abs': G_ABS, 'identity': G_IDENTITY, 'softrelu_y': G_SOFTRELU_Y,
            'softsign_y': G_SOFTSIGN_Y}


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
    axis = axis % len(shape)
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


# ---------------------------------------------------------------- pushing to the engine
from mxcy._engine cimport EVar, push_kernel, FLAG_SMALL
from mxcy._ndptr cimport nd_ptr, nd_var

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
                FLAG_SMALL if a.n <= 16384 else 0)


def push_softmax(x, out, int axis, double temperature=1.0, bint log=False, dy=None,
                 str req='write'):
    """Push softmax(x) along axis into out, or (dy given, x = y) its backward into out."""
    cdef SoftmaxArgs a
    cdef EVar* reads[2]
    cdef EVar* w
    cdef int nr = 1
    shape = x.shape
    a.outer = int(np.prod(shape[:axis], dtype=np.int64))
    a.length = shape[axis]
    a.inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    a.req = _REQ[req]
    if a.req == 0:
        return
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
                FLAG_SMALL if x.size <= 16384 else 0)
