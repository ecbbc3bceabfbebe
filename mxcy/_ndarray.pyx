# cython: language_level=3, boundscheck=True, wraparound=True
"""NDArray: an asynchronous array whose every op is pushed to the engine.

Invariants:
* an array is a C-contiguous window (`_offset`, `_shape`, dtype) on a memory chunk that
  is also its engine variable (`_chunk`); views (`a[i]`, `a[i:j]`, `reshape`) share the
  chunk, so every op on a view is ordered with every op on its base;
* arithmetic validates shapes and dtypes here, before the push, so kernels never see
  bad input; errors inside kernels come back at the next wait;
* float16 has no C kernel: its elementwise ops run through NumPy in a Python op, an
  explicit branch (`_numpy_binary`), covered by tests.
"""
cimport numpy as cnp
from cpython.ref cimport Py_INCREF
from libc.stdint cimport int64_t
from libc.string cimport memset

from mxcy._engine cimport (Var, EVar, new_chunk, push_kernel, wait_var, kernel_fn,
                           FLAG_SMALL)
from mxcy._ops cimport (BinaryArgs, UnaryArgs, FillArgs, CopyArgs, GemmArgs, binary_kernel,
                        unary_kernel, fill_kernel, copy_kernel, gemm_kernel, DT_FLOAT32,
                        DT_FLOAT64, DT_FLOAT16, OP_ADD, OP_SUB,
                        OP_MUL, OP_DIV, OP_MOD, OP_POW, OP_MAX, OP_MIN, OP_EQ, OP_NE, OP_GT,
                        OP_GE, OP_LT, OP_LE, OP_RSUB, OP_RDIV, OP_RMOD, OP_RPOW, OP_HYPOT,
                        MAX_DIM)

import numbers

import numpy as np

from mxcy import _engine
from mxcy.base import CODE_DTYPES, DTYPE_CODES, MXNetError, dtype_code, as_shape
from mxcy.context import Context, current_context, check_usable

cnp.import_array()

cdef int64_t SMALL_LIMIT = 1 << 14      # kernels this small may run inline when free
cdef int NP_TYPENUM[7]
NP_TYPENUM[:] = [cnp.NPY_FLOAT32, cnp.NPY_FLOAT64, cnp.NPY_FLOAT16, cnp.NPY_UINT8,
                 cnp.NPY_INT32, cnp.NPY_INT8, cnp.NPY_INT64]
cdef int ITEMSIZE[7]
ITEMSIZE[:] = [4, 8, 2, 1, 4, 1, 8]
_NP_TYPES = [np.float32, np.float64, np.float16, np.uint8, np.int32, np.int8, np.int64]
_BINARY_NAMES = {OP_ADD: 'add', OP_SUB: 'subtract', OP_MUL: 'multiply', OP_DIV: 'divide',
                 OP_MOD: 'mod', OP_POW: 'power', OP_MAX: 'maximum', OP_MIN: 'minimum',
                 OP_EQ: 'equal', OP_NE: 'not_equal', OP_GT: 'greater',
                 OP_GE: 'greater_equal', OP_LT: 'lesser', OP_LE: 'lesser_equal',
                 OP_RSUB: 'rsubtract', OP_RDIV: 'rdivide', OP_RMOD: 'rmod',
                 OP_RPOW: 'rpower', OP_HYPOT: 'hypot'}
cdef bytes _B_BINARY = b"binary"
cdef bytes _B_UNARY = b"unary"
cdef bytes _B_FILL = b"fill"
cdef bytes _B_COPY = b"copy"
cdef bytes _B_GEMM = b"gemm"


cdef int64_t _prod(tuple shape):
    cdef int64_t n = 1
    for d in shape:
        n *= <int64_t>d
    return n


cdef class NDArray:
    """An n-dimensional array on a device; ops on it are asynchronous."""
    cdef readonly Var _chunk
    cdef int64_t _offset
    cdef tuple _shape
    cdef int64_t _size
    cdef int _dtype
    cdef object _ctx
    cdef object __weakref__

    __array_priority__ = 1000.0

    # ------------------------------------------------------------ basic properties
    @property
    def shape(self):
        return self._shape

    @property
    def size(self):
        return self._size

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def dtype(self):
        return _NP_TYPES[self._dtype]

    @property
    def context(self):
        return self._ctx

    @property
    def ctx(self):
        return self._ctx

    @property
    def stype(self):
        return 'default'

    @property
    def handle(self):
        return self._chunk

    @property
    def T(self):
        return _fn('transpose')(self)

    @property
    def writable(self):
        return True

    cdef inline char* _ptr(self):
        return self._chunk.data + self._offset

    cdef inline int64_t _nbytes(self):
        return self._size * ITEMSIZE[self._dtype]

    def _np_view(self):
        """A NumPy view of the memory, without waiting: only for use inside engine ops."""
        cdef cnp.npy_intp dims[32]
        cdef int i, nd = len(self._shape)
        for i in range(nd):
            dims[i] = self._shape[i]
        arr = cnp.PyArray_SimpleNewFromData(nd, dims, NP_TYPENUM[self._dtype],
                                            <void*>self._ptr())
        Py_INCREF(self._chunk)
        cnp.PyArray_SetBaseObject(<cnp.ndarray>arr, self._chunk)
        return arr

    # ------------------------------------------------------------ synchronisation
    def wait_to_read(self):
        """Block until every write pushed to this array has run; raise its error, if any."""
        wait_var(self._chunk.cvar)

    def asnumpy(self):
        """A NumPy copy of the values (waits for pending writes)."""
        wait_var(self._chunk.cvar)
        return self._np_view().copy()

    def asscalar(self):
        if self._size != 1:
            raise ValueError(f"asscalar: the array must have exactly one element, "
                             f"it has shape {self._shape}")
        return self.asnumpy().reshape(())[()]

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d NDArray")
        return self._shape[0]

    def __iter__(self):
        for i in range(self._shape[0] if self._shape else 0):
            yield self[i]

    def __bool__(self):
        if self._size == 0:
            return False
        if self._size == 1:
            return bool(self.asnumpy().reshape(-1)[0])
        raise ValueError("The truth value of an NDArray with more than one element is "
                         "ambiguous.")

    def __hash__(self):
        return id(self)

    def __repr__(self):
        shape_info = 'x'.join(str(d) for d in self._shape)
        return f"\n{self.asnumpy()}\n<NDArray {shape_info} @{self._ctx}>"

    def __reduce__(self):
        return (_from_pickle, (self.asnumpy(), str(self._ctx.device_type),
                               self._ctx.device_id))

    # ------------------------------------------------------------ copies and views
    def copy(self):
        return self.copyto(self._ctx)

    def copyto(self, other):
        """Copy into another NDArray (same shape) or onto a Context (a new array)."""
        if isinstance(other, Context):
            check_usable(other, 'copyto')
            out = _empty(self._shape, self._dtype, other)
        elif isinstance(other, NDArray):
            out = other
            if out is self:
                return out
            if (<NDArray>out)._shape != self._shape:
                raise ValueError(f"copyto: shape mismatch: source {self._shape}, "
                                 f"target {(<NDArray>out)._shape}")
        else:
            raise TypeError(f"copyto: expected an NDArray or a Context, got "
                            f"{type(other).__name__}")
        _assign(<NDArray>out, self)
        return out

    def as_in_context(self, context):
        if context == self._ctx:
            return self
        return self.copyto(context)

    def astype(self, dtype, copy=True):
        cdef int code = dtype_code(dtype, 'astype')
        if code == self._dtype and not copy:
            return self
        out = _empty(self._shape, code, self._ctx)
        _push_numpy(_cast_into, [self], [out], 'astype')
        return out

    def reshape(self, *shape, **kwargs):
        """A view with a new shape (MXNet's special values 0, -1, -2, -3, -4 accepted)."""
        reverse = kwargs.pop('reverse', False)
        if 'shape' in kwargs:
            shape = kwargs.pop('shape')
        if kwargs:
            raise TypeError(f"reshape: unexpected keyword arguments {sorted(kwargs)}")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        new_shape = infer_reshape(self._shape, tuple(shape), reverse)
        return self._view(self._offset, new_shape)

    def reshape_like(self, other):
        return self.reshape(other.shape)

    cdef NDArray _view(self, int64_t offset, tuple shape):
        cdef NDArray v = NDArray.__new__(NDArray)
        v._chunk = self._chunk
        v._offset = offset
        v._shape = shape
        v._size = _prod(shape)
        v._dtype = self._dtype
        v._ctx = self._ctx
        return v

    def _at(self, idx):
        cdef int64_t n
        if not self._shape:
            raise IndexError("cannot index a 0-d NDArray")
        n = self._shape[0]
        i = int(idx)
        if i < -n or i >= n:
            raise IndexError(f"index {i} is out of bounds for axis 0 with size {n}")
        if i < 0:
            i += n
        inner = self._shape[1:] if len(self._shape) > 1 else (1,)
        return self._view(self._offset + i * (self._size // n) * ITEMSIZE[self._dtype],
                          inner)

    def _slice(self, int64_t start, int64_t stop):
        """A view of rows [start, stop) on the first axis."""
        cdef int64_t n = self._shape[0]
        cdef int64_t row = (self._size // n if n else 0) * ITEMSIZE[self._dtype]
        return self._view(self._offset + start * row, (stop - start,) + self._shape[1:])

    # ------------------------------------------------------------ indexing
    def __getitem__(self, key):
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]     # x[(0,)] behaves exactly as x[0]
        if isinstance(key, numbers.Integral) and not isinstance(key, bool):
            return self._at(key)
        if isinstance(key, slice) and self._shape:
            if key.step is None or key.step == 1:
                start, stop, _ = key.indices(self._shape[0])
                return self._slice(start, max(start, stop))
        if isinstance(key, NDArray):
            key = key.asnumpy().astype(np.int64)
        return _getitem_copy(self, key)

    def __setitem__(self, key, value):
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]
        if isinstance(key, slice) and key == slice(None):
            target = self
        elif isinstance(key, numbers.Integral) and not isinstance(key, bool):
            target = self._at(key)
        elif isinstance(key, slice) and self._shape and (key.step is None or key.step == 1):
            start, stop, _ = key.indices(self._shape[0])
            target = self._slice(start, max(start, stop))
        else:
            if isinstance(key, NDArray):
                key = key.asnumpy().astype(np.int64)
            _setitem_numpy(self, key, value)
            return
        _assign(<NDArray>target, value)

    # ------------------------------------------------------------ arithmetic
    def __add__(self, other):
        return _binary(self, other, OP_ADD, OP_ADD, None)

    def __radd__(self, other):
        return _binary(self, other, OP_ADD, OP_ADD, None)

    def __sub__(self, other):
        return _binary(self, other, OP_SUB, OP_RSUB, None)

    def __rsub__(self, other):
        return _binary(self, other, OP_RSUB, OP_SUB, None)

    def __mul__(self, other):
        return _binary(self, other, OP_MUL, OP_MUL, None)

    def __rmul__(self, other):
        return _binary(self, other, OP_MUL, OP_MUL, None)

    def __truediv__(self, other):
        return _binary(self, other, OP_DIV, OP_RDIV, None)

    def __rtruediv__(self, other):
        return _binary(self, other, OP_RDIV, OP_DIV, None)

    def __mod__(self, other):
        return _binary(self, other, OP_MOD, OP_RMOD, None)

    def __rmod__(self, other):
        return _binary(self, other, OP_RMOD, OP_MOD, None)

    def __pow__(self, other, modulo=None):
        return _binary(self, other, OP_POW, OP_RPOW, None)

    def __rpow__(self, other, modulo=None):
        return _binary(self, other, OP_RPOW, OP_POW, None)

    def __iadd__(self, other):
        return _binary(self, other, OP_ADD, OP_ADD, self)

    def __isub__(self, other):
        return _binary(self, other, OP_SUB, OP_RSUB, self)

    def __imul__(self, other):
        return _binary(self, other, OP_MUL, OP_MUL, self)

    def __itruediv__(self, other):
        return _binary(self, other, OP_DIV, OP_RDIV, self)

    def __imod__(self, other):
        return _binary(self, other, OP_MOD, OP_RMOD, self)

    def __neg__(self):
        return unary(self, 0, None)

    def __pos__(self):
        return self

    def __abs__(self):
        return unary(self, 1, None)

    def __eq__(self, other):
        if other is None:
            return False
        return _binary(self, other, OP_EQ, OP_EQ, None)

    def __ne__(self, other):
        if other is None:
            return True
        return _binary(self, other, OP_NE, OP_NE, None)

    def __gt__(self, other):
        return _binary(self, other, OP_GT, OP_LT, None)

    def __ge__(self, other):
        return _binary(self, other, OP_GE, OP_LE, None)

    def __lt__(self, other):
        return _binary(self, other, OP_LT, OP_GT, None)

    def __le__(self, other):
        return _binary(self, other, OP_LE, OP_GE, None)

    # ------------------------------------------------------------ methods delegated to mx.nd
    def __getattr__(self, name):
        fn = _method_table().get(name)
        if fn is None:
            raise AttributeError(f"'NDArray' object has no attribute '{name}'")
        return _bound(fn, self)


class _bound:
    """`arr.sum(...)` calls `mx.nd.sum(arr, ...)`: methods are the module's functions."""
    __slots__ = ('fn', 'arr')

    def __init__(self, fn, arr):
        self.fn = fn
        self.arr = arr

    def __call__(self, *args, **kwargs):
        return self.fn(self.arr, *args, **kwargs)


_METHODS = None


def _method_table():
    """The NDArray methods that are mx.nd functions taking the array first."""
    global _METHODS
    if _METHODS is None:
        from mxcy.ndarray import _methods
        _METHODS = _methods.method_table()
    return _METHODS


def _fn(name):
    return _method_table()[name]


# ---------------------------------------------------------------- construction
cdef NDArray _empty(tuple shape, int dtype, ctx):
    cdef NDArray a = NDArray.__new__(NDArray)
    a._shape = shape
    a._size = _prod(shape)
    a._dtype = dtype
    a._ctx = ctx
    a._offset = 0
    a._chunk = new_chunk(a._size * ITEMSIZE[dtype])
    return a


def empty(shape, ctx=None, dtype=None):
    """An uninitialised array."""
    if ctx is None:
        ctx = current_context()
    check_usable(ctx, 'empty')
    return _empty(as_shape(shape), 0 if dtype is None else dtype_code(dtype), ctx)


def full(shape, val, ctx=None, dtype=None, out=None):
    """An array filled with `val`."""
    if out is None:
        out = empty(shape, ctx, dtype)
    _fill(<NDArray>out, val)
    return out


def zeros(shape, ctx=None, dtype=None, **kwargs):
    return full(shape, 0, ctx, dtype)


def ones(shape, ctx=None, dtype=None, **kwargs):
    return full(shape, 1, ctx, dtype)


def from_numpy_copy(source, ctx=None, dtype=None):
    """A new array holding a copy of a NumPy array (dtype kept unless given)."""
    src = np.asarray(source)
    code = dtype_code(src.dtype if dtype is None else dtype, 'array')
    out = empty(src.shape, ctx, CODE_DTYPES[code])
    src = np.ascontiguousarray(src, dtype=CODE_DTYPES[code])
    # copy now, on this thread: `source` may change after we return
    (<NDArray>out).wait_to_read()
    np.copyto((<NDArray>out)._np_view(), src)
    return out


def _from_pickle(data, device_type, device_id):
    return from_numpy_copy(data, Context(device_type, device_id))


# ---------------------------------------------------------------- pushing kernels
cdef inline int _flags(int64_t n):
    return FLAG_SMALL if n <= SMALL_LIMIT else 0


cdef int _fill(NDArray out, value) except -1:
    cdef FillArgs a
    cdef EVar* w = out._chunk.cvar
    if out._dtype == DT_FLOAT16:
        _push_numpy(_fill_into(float(value)), [], [out], 'fill')
        return 0
    a.out = out._ptr()
    a.n = out._size
    a.dtype = out._dtype
    a.value = float(value)
    push_kernel(fill_kernel, &a, sizeof(a), NULL, 0, &w, 1, 0, _B_FILL, _flags(a.n))
    return 0


cdef int _copy(NDArray dst, NDArray src) except -1:
    """dst := src, same dtype and size."""
    cdef CopyArgs a
    cdef EVar* r = src._chunk.cvar
    cdef EVar* w = dst._chunk.cvar
    a.src = src._ptr()
    a.dst = dst._ptr()
    a.nbytes = dst._nbytes()
    push_kernel(copy_kernel, &a, sizeof(a), &r, 1, &w, 1, 0, _B_COPY, _flags(dst._size))
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
    if isinstance(other, NDArray):
        y = <NDArray>other
        if y._dtype != x._dtype:
            raise TypeError(f"{_BINARY_NAMES[op]}: operands have different dtypes "
                            f"{_NP_TYPES[x._dtype].__name__} and "
                            f"{_NP_TYPES[y._dtype].__name__}; convert one with astype()")
        if y._shape == x._shape:
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
        o = _empty(oshape, x._dtype, x._ctx)
    else:
        o = <NDArray>out
        if o._shape != oshape:
            raise ValueError(f"{_BINARY_NAMES[op]}: in-place result of shape {oshape} does "
                             f"not fit the target of shape {o._shape}")
    if x._dtype == DT_FLOAT16:
        _push_numpy(_binary_np(op, None if y is not None else other),
                    [x] if y is None else [x, y], [o], _BINARY_NAMES[op])
        return o
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
                    _flags(a.n))
        return o
    a.y = y._ptr()
    if y._shape != x._shape:
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
                _flags(a.n))
    return o


def binary(x, other, int op, out=None):
    """Elementwise x OP other with MXNet broadcasting; `op` is an OP_* code from _ops."""
    if not isinstance(x, NDArray):
        raise TypeError(f"expected an NDArray, got {type(x).__name__}")
    return _binary(<NDArray>x, other, op, op, out)


def unary(x, int op, out=None):
    """out := f(x) for a U_* code from _ops."""
    cdef UnaryArgs a
    cdef NDArray xx, o
    cdef EVar* r
    cdef EVar* w
    if not isinstance(x, NDArray):
        raise TypeError(f"expected an NDArray, got {type(x).__name__}")
    xx = <NDArray>x
    if out is None:
        o = _empty(xx._shape, xx._dtype, xx._ctx)
    else:
        o = <NDArray>out
        if o._shape != xx._shape or o._dtype != xx._dtype:
            raise ValueError(f"unary op: out has shape {o._shape} and dtype "
                             f"{_NP_TYPES[o._dtype].__name__}, expected {xx._shape} "
                             f"{_NP_TYPES[xx._dtype].__name__}")
    if xx._dtype == DT_FLOAT16:
        _push_numpy(_unary_np(op), [xx], [o], 'unary')
        return o
    a.x = xx._ptr()
    a.out = o._ptr()
    a.n = o._size
    a.dtype = xx._dtype
    a.op = op
    r = xx._chunk.cvar
    w = o._chunk.cvar
    push_kernel(unary_kernel, &a, sizeof(a), &r, 1, &w, 1, 0, _B_UNARY, _flags(a.n))
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
                _flags(<int64_t>batch * m * n * k // 64))
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
    _engine.push(run, [(<NDArray>x)._chunk for x in inputs],
                 [(<NDArray>o)._chunk for o in outputs], 0, name)


def new_empty(shape, dtype, ctx):
    """An uninitialised array from an already validated shape tuple and dtype code."""
    return _empty(shape, dtype, ctx)


def dtype_of(NDArray x):
    return x._dtype


# ---------------------------------------------------------------- NumPy fallbacks
_NP_BINARY = {OP_ADD: np.add, OP_SUB: np.subtract, OP_MUL: np.multiply,
              OP_DIV: np.true_divide, OP_MOD: np.mod, OP_POW: np.power,
              OP_MAX: np.maximum, OP_MIN: np.minimum, OP_EQ: np.equal, OP_NE: np.not_equal,
              OP_GT: np.greater, OP_GE: np.greater_equal, OP_LT: np.less,
              OP_LE: np.less_equal, OP_HYPOT: np.hypot}
_NP_REVERSED = {OP_RSUB: OP_SUB, OP_RDIV: OP_DIV, OP_RMOD: OP_MOD, OP_RPOW: OP_POW}


def _binary_np(int op, scalar):
    """The float16 path of a binary op: the same semantics through NumPy."""
    reverse = op in _NP_REVERSED
    ufunc = _NP_BINARY[_NP_REVERSED.get(op, op)]

    def run(x, *rest):
        out = rest[-1]
        y = rest[0] if len(rest) == 2 else np.asarray(scalar, dtype=x.dtype)
        a, b = (y, x) if reverse else (x, y)
        out[...] = ufunc(a, b)
    return run


_NP_UNARY = [np.negative, np.abs, np.sign, np.square, np.sqrt, np.exp, np.log,
             lambda v: np.maximum(v, 0), lambda v: 1 / (1 + np.exp(-v)), np.tanh,
             lambda v: 1 / np.sqrt(v), np.floor, np.ceil, np.round, np.log1p, np.expm1,
             np.sin, np.cos, np.reciprocal, lambda v: np.logaddexp(0, v),
             lambda v: v / (1 + np.abs(v)), np.trunc, np.log2, np.log10, np.cbrt,
             np.arctan, np.tan]


def _unary_np(int op):
    f = _NP_UNARY[op]

    def run(x, out):
        out[...] = f(x)
    return run


def _fill_into(value):
    def run(out):
        out[...] = value
    return run


def _copy_into(src, out):
    out[...] = src


def _cast_into(src, out):
    out[...] = src.astype(out.dtype)


def _getitem_copy(NDArray x, key):
    """x[key] for keys that are not first-axis views: a new array (NumPy semantics)."""
    probe = np.broadcast_to(np.empty((), dtype=np.int8), x._shape)
    try:
        shape = probe[key].shape
    except IndexError as e:
        raise IndexError(f"NDArray index {key!r} is invalid for shape {x._shape}: {e}") from None
    if shape == ():
        shape = (1,)        # MXNet 1.x has no 0-d arrays
    out = _empty(shape, x._dtype, x._ctx)

    def run(src, dst):
        dst[...] = np.asarray(src[key]).reshape(dst.shape)
    _push_numpy(run, [x], [out], 'getitem')
    return out


def _setitem_numpy(NDArray x, key, value):
    probe = np.broadcast_to(np.empty((), dtype=np.int8), x._shape)
    try:
        target_shape = probe[key].shape
    except IndexError as e:
        raise IndexError(f"NDArray index {key!r} is invalid for shape {x._shape}: {e}") from None
    if isinstance(value, NDArray):
        src = value
        vshape = value.shape
    elif isinstance(value, numbers.Number):
        src = None
        vshape = ()
    else:
        src = from_numpy_copy(np.asarray(value), x._ctx, _NP_TYPES[x._dtype])
        vshape = src.shape
    try:
        np.broadcast_to(np.empty(vshape, dtype=np.int8), target_shape)
    except ValueError:
        raise ValueError(f"cannot assign a value of shape {vshape} to NDArray index "
                         f"{key!r} of shape {target_shape}") from None
    if src is None:
        def run_scalar(dst):
            dst[key] = value
        _push_numpy(run_scalar, [], [x], 'setitem')
    else:
        def run(v, dst):
            dst[key] = v.astype(dst.dtype, copy=False)
        _push_numpy(run, [src], [x], 'setitem')


# ---------------------------------------------------------------- reshape rules
def infer_reshape(tuple src, tuple target, bint reverse=False):
    """MXNet's Reshape: 0 copies a dim, -1 infers one, -2 copies the rest, -3 merges two,
    -4 splits one into the next two values (one may be -1)."""
    cdef int64_t total = _prod(src)
    for t in target:
        if isinstance(t, bool) or not isinstance(t, numbers.Integral):
            raise TypeError(f"reshape: shape must contain integers, got {target!r}")
    if reverse:
        res = infer_reshape(src[::-1], target[::-1], False)
        return tuple(res[::-1])
    out = []
    i = 0     # index into src
    j = 0
    infer_at = -1
    target = tuple(int(t) for t in target)
    while j < len(target):
        t = target[j]
        if t > 0:
            out.append(t)
            i += 1
        elif t == 0:
            if i >= len(src):
                raise ValueError(f"reshape: 0 at position {j} has no matching input "
                                 f"dimension (input shape {src})")
            out.append(src[i])
            i += 1
        elif t == -1:
            if infer_at >= 0:
                raise ValueError(f"reshape: more than one -1 in {target}")
            infer_at = len(out)
            out.append(1)
            i += 1
        elif t == -2:
            out.extend(src[i:])
            i = len(src)
        elif t == -3:
            if i + 1 >= len(src):
                raise ValueError(f"reshape: -3 needs two input dimensions at {i} "
                                 f"(input shape {src})")
            out.append(src[i] * src[i + 1])
            i += 2
        elif t == -4:
            if j + 2 >= len(target) or i >= len(src):
                raise ValueError(f"reshape: -4 must be followed by two values, in {target}")
            d1, d2 = target[j + 1], target[j + 2]
            if d1 == -1:
                d1 = src[i] // d2 if d2 else 0
            if d2 == -1:
                d2 = src[i] // d1 if d1 else 0
            if d1 * d2 != src[i]:
                raise ValueError(f"reshape: -4 split {d1}x{d2} does not equal input "
                                 f"dimension {src[i]} (input shape {src})")
            out.extend([d1, d2])
            i += 1
            j += 2
        else:
            raise ValueError(f"reshape: invalid value {t} in target shape {target}")
        j += 1
    if infer_at >= 0:
        known = 1
        for k, d in enumerate(out):
            if k != infer_at:
                known *= d
        if known == 0 or total % known:
            raise ValueError(f"reshape: cannot reshape array of shape {src} into {target}")
        out[infer_at] = total // known
    if _prod(tuple(out)) != total:
        raise ValueError(f"reshape: cannot reshape array of shape {src} (size {total}) into "
                         f"{tuple(out)} (size {_prod(tuple(out))})")
    return tuple(out)
