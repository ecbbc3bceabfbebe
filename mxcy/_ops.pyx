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
                        erf, NAN)
from libc.stdint cimport int8_t, uint8_t, uint16_t, int32_t, int64_t
from libc.stdio cimport snprintf
from libc.string cimport memcpy, memmove, memset, strncpy
from scipy.linalg.cython_blas cimport sgemm, dgemm

from mxcy._engine cimport ERR_ZERO_DIVISION, ERR_VALUE, ERR_INDEX, run_parts

import math

# the vector loops of _vecmath.h and _vecmath_elem.h (AVX-512/AVX2/baseline picked at load)
include "_ops_vecmath.pxi"

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
    if op == U_GELU:
        return 0.5 * a * (1.0 + erf(a * 0.7071067811865476))
    return NAN


# ---------------------------------------------------------------- typed loops
cdef int binary_flat(num_t* x, num_t* y, num_t* out, int64_t n, int op,
                     double scalar) noexcept nogil:
    """out[i] := x[i] OP y[i]  (or x[i] OP scalar when y is NULL)."""
    cdef int64_t i
    cdef num_t s = <num_t>scalar
    cdef int rc
    if num_t is float:
        if op == OP_POW or op == OP_HYPOT:     # float32: vector loops in double
            if y == NULL:
                y = &s
            if op == OP_POW:
                mxcy_vpow_f32(x, y, 0 if y == &s else 1, out, n)
            else:
                mxcy_vhypot_f32(x, y, 0 if y == &s else 1, out, n)
            return 0
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
            if op == OP_MAX:
                for i in range(n):
                    out[i] = x[i] if x[i] >= y[i] else y[i]
                return 0
            if op == OP_MIN:
                for i in range(n):
                    out[i] = x[i] if x[i] <= y[i] else y[i]
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
            if op == OP_MAX:
                for i in range(n):
                    out[i] = x[i] if x[i] >= s else s
                return 0
            if op == OP_MIN:
                for i in range(n):
                    out[i] = x[i] if x[i] <= s else s
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


cdef inline bint num_is_float(num_t* p) noexcept nogil:
    if num_t is float or num_t is double:
        return True
    return False


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
        if xs == 1 and ys == 1:         # contiguous rows (a bias over rows): the flat loops
            rc = binary_flat(x + xo, y + yo, out + o, inner, a.op, 0)
        elif xs == 1 and ys == 0 and num_is_float(x):   # one y value per row (exact in a
            rc = binary_flat(x + xo, <num_t*>NULL, out + o, inner, a.op, <double>y[yo])
        else:                                            # double only for float dtypes)
            rc = 0
            for i in range(inner):
                rc = binop(x[xo + i * xs], y[yo + i * ys], a.op, &out[o + i])
                if rc:
                    break
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


cdef bint unary_vector(num_t* x, num_t* out, int64_t n, int op) noexcept nogil:
    """out[i] := f(x[i]) by a vector loop of _vecmath.h; False when there is none."""
    if num_t is float:
        if op == U_EXP:
            mxcy_vexp_f32(x, out, n)
        elif op == U_SIGMOID:
            mxcy_vsigmoid_f32(x, out, n)
        elif op == U_TANH:
            mxcy_vtanh_f32(x, out, n)
        elif op == U_SOFTRELU:
            mxcy_vsoftrelu32_f32(x, out, n)
        elif op == U_GELU:
            mxcy_vgelu32_f32(x, out, n)
        elif op == U_SIN:
            mxcy_vsin_f32(x, out, n)
        elif op == U_COS:
            mxcy_vcos_f32(x, out, n)
        elif op == U_LOG:
            mxcy_vlog_f32(x, out, n)
        elif op == U_SQRT:
            mxcy_vsqrt_f32(x, out, n)
        else:
            return False
        return True
    elif num_t is double:
        if op == U_EXP:
            mxcy_vexp_f64(x, out, n)
        elif op == U_SIGMOID:
            mxcy_vsigmoid_f64(x, out, n)
        elif op == U_TANH:
            mxcy_vtanh_f64(x, out, n)
        elif op == U_SOFTRELU:
            mxcy_vsoftrelu_f64(x, out, n)
        elif op == U_GELU:
            mxcy_vgelu_f64(x, out, n)
        elif op == U_SQRT:
            mxcy_vsqrt_f64(x, out, n)
        else:
            return False
        return True
    return False


cdef void unary_typed(num_t* x, num_t* out, int64_t n, int op) noexcept nogil:
    """out[i] := f(x[i])."""
    cdef int64_t i
    if unary_vector(x, out, n, op):
        return
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
    if num_t is float or num_t is double:
        if op == U_SOFTSIGN:            # unop's value, in a loop that vectorises
            for i in range(n):
                out[i] = <num_t>(<double>x[i] / (1.0 + fabs(<double>x[i])))
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


cdef enum:
    PAR_ELEMS = 1 << 18       # flat float ops this long are shared with idle workers


cdef inline void part_range(int64_t n, int part, int nparts,
                            int64_t* lo, int64_t* hi) noexcept nogil:
    """[lo, hi) of part `part` of n elements, in 16-element (cache-line) blocks."""
    cdef int64_t step = ((n + nparts - 1) // nparts + 15) & ~(<int64_t>15)
    lo[0] = min(n, part * step)
    hi[0] = min(n, lo[0] + step)


cdef void binary_flat_part(void* args, int part, int nparts) noexcept nogil:
    """One part of a flat float32/float64 binary op (they cannot fail)."""
    cdef BinaryArgs* a = <BinaryArgs*>args
    cdef int64_t lo, hi
    part_range(a.n, part, nparts, &lo, &hi)
    if hi <= lo:
        return
    if a.dtype == DT_FLOAT32:
        binary_flat((<float*>a.x) + lo, (<float*>a.y) + lo if a.y != NULL else NULL,
                    (<float*>a.out) + lo, hi - lo, a.op, a.scalar)
    else:
        binary_flat((<double*>a.x) + lo, (<double*>a.y) + lo if a.y != NULL else NULL,
                    (<double*>a.out) + lo, hi - lo, a.op, a.scalar)


cdef int binary_kernel(void* args, char* errmsg) noexcept nogil:
    cdef BinaryArgs* a = <BinaryArgs*>args
    cdef int rc
    if a.ndim == 0 and a.n >= PAR_ELEMS and (a.dtype == DT_FLOAT32 or a.dtype == DT_FLOAT64):
        run_parts(binary_flat_part, args, 4)
        return 0
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


cdef void unary_float_part(void* args, int part, int nparts) noexcept nogil:
    """One part of a float32/float64 unary op (they cannot fail)."""
    cdef UnaryArgs* a = <UnaryArgs*>args
    cdef int64_t lo, hi
    part_range(a.n, part, nparts, &lo, &hi)
    if hi <= lo:
        return
    if a.dtype == DT_FLOAT32:
        unary_typed((<float*>a.x) + lo, (<float*>a.out) + lo, hi - lo, a.op)
    else:
        unary_typed((<double*>a.x) + lo, (<double*>a.out) + lo, hi - lo, a.op)


cdef int unary_kernel(void* args, char* errmsg) noexcept nogil:
    cdef UnaryArgs* a = <UnaryArgs*>args
    if a.n >= PAR_ELEMS and (a.dtype == DT_FLOAT32 or a.dtype == DT_FLOAT64):
        run_parts(unary_float_part, args, 4)
        return 0
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


cdef void gemm_block(GemmArgs* g, int m0, int m1, int n0, int n1) noexcept nogil:
    """Block [m0, m1) × [n0, n1) of C := alpha · op(A) · op(B) + beta · C (row-major, as
    the column-major Bᵀ·Aᵀ)."""
    cdef char ta = b'T' if g.trans_a else b'N'
    cdef char tb = b'T' if g.trans_b else b'N'
    cdef int lda = g.m if g.trans_a else g.k
    cdef int ldb = g.k if g.trans_b else g.n
    cdef int ldc = g.n
    cdef int m = m1 - m0, n = n1 - n0, k = g.k, i
    cdef int64_t a_off = m0 if g.trans_a else <int64_t>m0 * g.k
    cdef int64_t b_off = <int64_t>n0 * g.k if g.trans_b else n0
    cdef int64_t c_off = <int64_t>m0 * g.n + n0
    cdef float fa = <float>g.alpha, fb = <float>g.beta
    if m <= 0 or n <= 0:
        return
    if lda < 1:
        lda = 1
    if ldb < 1:
        ldb = 1
    for i in range(g.batch):
        if g.dtype == DT_FLOAT32:
            sgemm(&tb, &ta, &n, &m, &k, &fa, (<float*>g.b) + i * g.stride_b + b_off, &ldb,
                  (<float*>g.a) + i * g.stride_a + a_off, &lda, &fb,
                  (<float*>g.c) + i * g.stride_c + c_off, &ldc)
        else:
            dgemm(&tb, &ta, &n, &m, &k, &g.alpha, (<double*>g.b) + i * g.stride_b + b_off,
                  &ldb, (<double*>g.a) + i * g.stride_a + a_off, &lda, &g.beta,
                  (<double*>g.c) + i * g.stride_c + c_off, &ldc)


cdef void gemm_part(void* args, int part, int nparts) noexcept nogil:
    """Part `part` of `nparts` of the product, split along the longer side of C (column
    blocks stay multiples of 16 so each part's stores remain vector-aligned)."""
    cdef GemmArgs* g = <GemmArgs*>args
    cdef int lo, hi, step
    if g.m >= g.n:
        lo = <int>(<int64_t>g.m * part // nparts)
        hi = <int>(<int64_t>g.m * (part + 1) // nparts)
        gemm_block(g, lo, hi, 0, g.n)
    else:
        step = ((g.n + nparts - 1) // nparts + 15) & ~15
        lo = min(g.n, part * step)
        hi = min(g.n, lo + step)
        gemm_block(g, 0, g.m, lo, hi)


cdef enum:
    SPLIT_MACS = 1 << 21      # GEMMs above this many multiply-adds are shared with idle
                              # workers (below it the parts cost more than they save)
    SPLIT_PARTS = 2           # parts per shared GEMM: 4 cost more in packing than a late
                              # helper loses (measured: FC forward 1.66 -> 1.18 ms)


cdef int gemm_kernel(void* args, char* errmsg) noexcept nogil:
    """C := alpha · op(A) · op(B) + beta · C; a big one is shared with idle workers."""
    cdef GemmArgs* g = <GemmArgs*>args
    if g.dtype != DT_FLOAT32 and g.dtype != DT_FLOAT64:
        return set_error(errmsg, b"gemm: only float32 and float64", ERR_VALUE)
    if max(g.m, g.n) >= 64 and <int64_t>g.batch * g.m * g.n * g.k >= SPLIT_MACS:
        run_parts(gemm_part, args, SPLIT_PARTS)
    else:
        gemm_block(g, 0, g.m, 0, g.n)
    return 0

include "_ops_nn.pxi"
include "_ops_twins.pxi"
include "_ops_metric.pxi"
include "_ops_optim.pxi"
include "_ops_index.pxi"
include "_ops_pick.pxi"
include "_ops_bn.pxi"
