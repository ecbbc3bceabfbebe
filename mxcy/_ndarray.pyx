# cython: language_level=3, boundscheck=True, wraparound=True
"""NDArray: an asynchronous array whose every op is pushed to the engine.

Invariants:
* an array is a C-contiguous window (`_offset`, `_shape`, dtype) on a memory chunk that
  is also its engine variable (`_chunk`); views (`a[i]`, `a[i:j]`, `reshape`) share the
  chunk, so every op on a view is ordered with every op on its base;
* arithmetic validates shapes and dtypes here, before the push, so kernels never see
  bad input; errors inside kernels come back at the next wait;
* float16 and bool have no C kernel: their elementwise ops run `mxcy._reference` (NumPy,
  the same semantics as the C kernels) in a Python op, an explicit branch (`_binary_np`,
  `_unary_np` in _ndarray_index.pxi), covered by tests/ndarray/test_arith.py;
* views and results take the class of the array they come from (`mx.np.ndarray`, a
  Python subclass, stays itself through a[i], reshape, a + b); NDArray is the fast path;
* index keys and NumPy values are copied at the call, since the op runs later.

The push helpers live in _ndarray_push.pxi, the NumPy paths and reshape rules in
_ndarray_index.pxi (included below; one extension module).
"""
cimport cython
cimport numpy as cnp
from cpython.object cimport PyObject_RichCompareBool, Py_EQ
from cpython.ref cimport Py_INCREF, Py_REFCNT
from libc.stdint cimport int64_t
from libc.string cimport memcpy, memset

from mxcy._engine cimport (Var, EVar, new_chunk, push_kernel, wait_var, kernel_fn,
                           FLAG_SMALL, FLAG_PARTIAL0)
from mxcy._ndptr cimport spans_clash
from mxcy._ops cimport (BinaryArgs, UnaryArgs, FillArgs, CopyArgs, GemmArgs, SparseCEArgs,
                        sparse_ce_kernel, sparse_ce_grad_kernel, DT_INT32, DT_INT64,
                        binary_kernel,
                        unary_kernel, fill_kernel, copy_kernel, gemm_kernel, DT_FLOAT32,
                        DT_FLOAT64, DT_FLOAT16, OP_ADD, OP_SUB,
                        OP_MUL, OP_DIV, OP_MOD, OP_POW, OP_MAX, OP_MIN, OP_EQ, OP_NE, OP_GT,
                        OP_GE, OP_LT, OP_LE, OP_RSUB, OP_RDIV, OP_RMOD, OP_RPOW, OP_HYPOT,
                        MAX_DIM)

import numbers

import numpy as np

from mxcy import _engine, _reference
from mxcy.base import CODE_DTYPES, DTYPE_CODES, MXNetError, dtype_code, as_shape
from mxcy.context import Context, current_context, check_usable

cnp.import_array()

cdef int64_t SMALL_LIMIT = 1 << 14      # kernels this small may run inline when free
cdef int DT_BOOL = 7                   # MXNet's kBool: no C kernel, NumPy paths only
cdef int NP_TYPENUM[8]
NP_TYPENUM[:] = [cnp.NPY_FLOAT32, cnp.NPY_FLOAT64, cnp.NPY_FLOAT16, cnp.NPY_UINT8,
                 cnp.NPY_INT32, cnp.NPY_INT8, cnp.NPY_INT64, cnp.NPY_BOOL]
cdef int ITEMSIZE[8]
ITEMSIZE[:] = [4, 8, 2, 1, 4, 1, 8, 1]
_NP_TYPES = [np.float32, np.float64, np.float16, np.uint8, np.int32, np.int8, np.int64,
             np.bool_]
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


cdef class NDArray


cdef extern from *:
    """
    static PyObject* mxcy_tp_new(PyObject* cls, PyObject* args) {
        return ((PyTypeObject*)cls)->tp_new((PyTypeObject*)cls, args, NULL);
    }
    """
    object mxcy_tp_new(object cls, object args)

cdef tuple _NO_ARGS = ()


cdef inline NDArray _new_of(type cls):
    """A bare instance of `cls` (NDArray or a subclass): its own C constructor (tp_new),
    which for a Python subclass without a __new__ is its C base's, called directly rather
    than through a lookup of `cls.__new__` (a subclass that defines __new__ has CPython's
    slot, which calls it)."""
    if cls is NDArray:
        return NDArray.__new__(NDArray)
    return <NDArray?>mxcy_tp_new(cls, _NO_ARGS)


cdef class NDArray:
    """An n-dimensional array on a device; ops on it are asynchronous."""
    cdef readonly Var _chunk
    cdef int64_t _offset
    cdef tuple _shape
    cdef int64_t _size
    cdef int _dtype
    cdef object _ctx
    cdef object __weakref__
    # autograd's record of this array: None, or a variable's gradient buffer / the recorded
    # op that produced it (mxcy.autograd); the array itself never reads it
    cdef public object _ag

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

    def _span(self):
        """(address, bytes) of this array's window on its chunk."""
        return <size_t>self._ptr(), <size_t>self._nbytes()

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
        return _np_copy(self)

    def asscalar(self):
        """The value of a shape-(1,) array as a NumPy scalar (MXNet 1.x: only shape (1,))."""
        if self._shape != (1,):
            raise ValueError(f"asscalar: the array must have shape (1,), it has shape "
                             f"{self._shape}; use reshape((1,)) or asnumpy()")
        return self.asnumpy()[0]

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
            out = _empty_as(self, self._shape, self._dtype, other)
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
        out = _empty_as(self, self._shape, code, self._ctx)
        _push_numpy(_cast_into, [self], [out], 'astype')
        return out

    def reshape(self, *shape, **kwargs):
        """A view with a new shape (MXNet's special values 0, -1, -2, -3, -4 accepted)."""
        reverse = kwargs.pop('reverse', False)
        if 'shape' in kwargs:
            shape = kwargs.pop('shape')
            if isinstance(shape, numbers.Integral):
                shape = (shape,)
        if kwargs:
            raise TypeError(f"reshape: unexpected keyword arguments {sorted(kwargs)}")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        elif not shape:
            raise TypeError("reshape: a target shape is required, e.g. a.reshape((2, -1))")
        new_shape = infer_reshape(self._shape, tuple(shape), reverse)
        if g_recording_threads and self._ag is not None and _AG.recording():
            return _AG.reshape(self, new_shape)     # recorded as Reshape
        return self._view(self._offset, new_shape)

    def reshape_like(self, other):
        return self.reshape(other.shape)

    cdef NDArray _view(self, int64_t offset, tuple shape):
        cdef NDArray v = _new_of(type(self))
        v._chunk = self._chunk
        v._offset = offset
        v._shape = shape
        v._size = _prod(shape)
        v._dtype = self._dtype
        v._ctx = self._ctx
        return v

    def _as_class(self, cls):
        """The same memory (chunk, offset, shape, dtype) as an instance of `cls`, a
        subclass of NDArray, sharing autograd's record (MXNet shares the handle)."""
        cdef NDArray v
        if not (isinstance(cls, type) and issubclass(cls, NDArray)):
            raise TypeError(f"_as_class: {cls!r} is not a subclass of NDArray")
        v = _new_of(cls)
        v._chunk = self._chunk
        v._offset = self._offset
        v._shape = self._shape
        v._size = self._size
        v._dtype = self._dtype
        v._ctx = self._ctx
        v._ag = self._ag
        return v

    def as_np_ndarray(self):
        """This array as an ``mx.np.ndarray``, without a copy (same memory)."""
        from mxcy.numpy import ndarray
        return self if type(self) is ndarray else self._as_class(ndarray)

    def as_nd_ndarray(self):
        """This array as an ``mx.nd.NDArray``, without a copy (same memory)."""
        return self if type(self) is NDArray else self._as_class(NDArray)

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
        if g_recording_threads and self._ag is not None and _AG.recording():
            return _AG.getitem(self, key)       # recorded as slicing ops
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]     # x[(0,)] behaves exactly as x[0]
        if isinstance(key, numbers.Integral) and not isinstance(key, bool):
            return self._at(key)
        if isinstance(key, slice) and self._shape:
            if key.step is None or key.step == 1:
                start, stop, _ = key.indices(self._shape[0])
                return self._slice(start, max(start, stop))
        return _getitem_copy(self, _frozen_key(key))

    def __setitem__(self, key, value):
        if g_recording_threads and self._ag is not None:
            _AG.check_not_in_graph(self, 'x[key] = value')
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
            _setitem_numpy(self, _frozen_key(key), value)
            return
        _assign(<NDArray>target, value)

    # ------------------------------------------------------------ arithmetic
    def __add__(self, other):
        return _arith(self, other, OP_ADD, OP_ADD, None)

    def __radd__(self, other):
        return _arith(self, other, OP_ADD, OP_ADD, None)

    def __sub__(self, other):
        return _arith(self, other, OP_SUB, OP_RSUB, None)

    def __rsub__(self, other):
        return _arith(self, other, OP_RSUB, OP_SUB, None)

    def __mul__(self, other):
        return _arith(self, other, OP_MUL, OP_MUL, None)

    def __rmul__(self, other):
        return _arith(self, other, OP_MUL, OP_MUL, None)

    def __truediv__(self, other):
        return _arith(self, other, OP_DIV, OP_RDIV, None)

    def __rtruediv__(self, other):
        return _arith(self, other, OP_RDIV, OP_DIV, None)

    def __mod__(self, other):
        return _arith(self, other, OP_MOD, OP_RMOD, None)

    def __rmod__(self, other):
        return _arith(self, other, OP_RMOD, OP_MOD, None)

    def __pow__(self, other, modulo=None):
        return _arith(self, other, OP_POW, OP_RPOW, None)

    def __rpow__(self, other, modulo=None):
        return _arith(self, other, OP_RPOW, OP_POW, None)

    def __iadd__(self, other):
        return _arith(self, other, OP_ADD, OP_ADD, self)

    def __isub__(self, other):
        return _arith(self, other, OP_SUB, OP_RSUB, self)

    def __imul__(self, other):
        return _arith(self, other, OP_MUL, OP_MUL, self)

    def __itruediv__(self, other):
        return _arith(self, other, OP_DIV, OP_RDIV, self)

    def __imod__(self, other):
        return _arith(self, other, OP_MOD, OP_RMOD, self)

    def __neg__(self):
        if g_recording_threads and self._ag is not None:
            return _AG.negative(self)
        return unary(self, 0, None)

    def __pos__(self):
        return self

    def __abs__(self):
        if g_recording_threads and self._ag is not None:
            return _AG.absolute(self)
        return unary(self, 1, None)

    def __eq__(self, other):
        if other is None:
            return False
        return _arith(self, other, OP_EQ, OP_EQ, None)

    def __ne__(self, other):
        if other is None:
            return True
        return _arith(self, other, OP_NE, OP_NE, None)

    def __gt__(self, other):
        return _arith(self, other, OP_GT, OP_LT, None)

    def __ge__(self, other):
        return _arith(self, other, OP_GE, OP_LE, None)

    def __lt__(self, other):
        return _arith(self, other, OP_LT, OP_GT, None)

    def __le__(self, other):
        return _arith(self, other, OP_LE, OP_GE, None)

    # ------------------------------------------------------------ autograd (mxcy.autograd)
    def attach_grad(self, grad_req='write', stype=None):
        """Give this array a gradient buffer (zeros): it becomes a variable of autograd."""
        _autograd().attach_grad(self, grad_req, stype)

    @property
    def grad(self):
        """The gradient buffer attached by attach_grad (None without one)."""
        return _autograd().grad_of(self)

    @property
    def _fresh_grad(self):
        """Whether a backward wrote this variable's gradient since the flag was cleared."""
        return _autograd().fresh_grad(self)

    @_fresh_grad.setter
    def _fresh_grad(self, value):
        _autograd().set_fresh_grad(self, value)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Gradients of this recorded output into the attached buffers of its variables."""
        _autograd().backward([self], None if out_grad is None else [out_grad],
                             retain_graph, train_mode)

    def detach(self):
        """The same memory, outside any recorded graph (no gradient flows through it)."""
        return self._view(self._offset, self._shape)

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


include "_ndarray_autograd.pxi"

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
cdef inline NDArray _allocated(NDArray a, tuple shape, int dtype, ctx):
    """`a` (fresh from __new__) given its own memory for `shape` and `dtype`."""
    a._shape = shape
    a._size = _prod(shape)
    a._dtype = dtype
    a._ctx = ctx
    a._offset = 0
    a._chunk = new_chunk(a._size * ITEMSIZE[dtype])
    return a


cdef NDArray _empty(tuple shape, int dtype, ctx):
    return _allocated(NDArray.__new__(NDArray), shape, dtype, ctx)


cdef NDArray _empty_as(NDArray like, tuple shape, int dtype, ctx):
    """A new array of `like`'s class (NDArray: the fast path)."""
    if type(like) is NDArray:
        return _empty(shape, dtype, ctx)
    return _allocated(_new_of(type(like)), shape, dtype, ctx)


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
    _fill(<NDArray?>out, val)
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
    # copy now, on this thread: `source` may change after we return. No wait is needed (a
    # fresh chunk has no pending ops), and none is allowed: this also runs inside engine
    # ops (a custom op's forward calling mx.nd.array), where a wait raises.
    np.copyto((<NDArray>out)._np_view(), src)
    return out


def _from_pickle(data, device_type, device_id):
    return from_numpy_copy(data, Context(device_type, device_id))


include "_ndarray_push.pxi"
include "_ndarray_index.pxi"
include "_ndarray_numpy.pxi"
