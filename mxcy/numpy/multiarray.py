"""``mx.np.ndarray``: NumPy semantics over the same engine and memory as ``mx.nd.NDArray``.

The class is a Python subclass of the Cython NDArray with no state of its own
(``__slots__ = ()``): views and results of NDArray's own code take the class of the array
they come from, so ``a[0]``, ``a.reshape(...)`` and ``a + b`` stay ``mx.np.ndarray``, and
``as_nd_ndarray``/``as_np_ndarray`` share chunk, offset and shape (no copy). What differs
from ``mx.nd`` is written here: zero-dim arrays, NumPy type promotion (MXNet's variant:
float32 is the default float, an int array with a float scalar stays int, int / int is
float32), comparisons giving bool, NumPy indexing (integer, boolean and array keys).

Arithmetic between arrays of one dtype (and with a Python scalar) is NDArray's C path,
recorded by autograd as ``mx.nd`` is; comparisons, bitwise ops and mixed dtypes are one
NumPy-backed engine op (or a recorded Cast first).
"""
import numbers
import re

import numpy as _onp

from mxcy import _ndarray
from mxcy._ndarray import NDArray, _NumpyOperators, dtype_of, new_empty, push_numpy
from mxcy._ops import BINARY_OPS
from mxcy.base import DTYPE_CODES, dtype_code

__all__ = ['ndarray', 'result_dtype', 'new_array', 'as_array', 'wrap_numpy']

_BOOL = 7                           # MXNet's type code of bool
_INT16 = _onp.dtype(_onp.int16)
_DTYPE_OF_CODE = {code: dt for dt, code in DTYPE_CODES.items()}
_BOOL = DTYPE_CODES[_onp.dtype(bool)]
_FLOAT32 = _onp.dtype(_onp.float32)
_DEFAULT_REPR = (_onp.dtype(_onp.float32), _onp.dtype(_onp.bool_))   # printed without dtype
_SHAPE_IN_REPR = re.compile(r',\s*shape=\([0-9, ]*\)')
_HIDDEN_BY_NUMPY = (_onp.dtype(_onp.float64), _onp.dtype(_onp.int64), _onp.dtype(_onp.bool_))


def result_dtype(d1, d2):
    """NumPy's promotion of two supported dtypes, as MXNet's np does it (no int16: int32)."""
    d1, d2 = _onp.dtype(d1), _onp.dtype(d2)
    if d1 == d2:
        return d1
    f1, f2 = d1.kind == 'f', d2.kind == 'f'
    if f1 != f2:                    # MXNet: an int (or bool) with a float gives the float
        return d1 if f1 else d2
    r = _onp.promote_types(d1, d2)
    if r == _INT16:
        return _onp.dtype(_onp.int32)
    if r not in DTYPE_CODES:
        raise TypeError(f"mx.np: no supported result dtype for {d1} and {d2}")
    return r


def new_array(shape, dtype, ctx=None):
    """An uninitialised mx.np.ndarray (shape a tuple of ints, dtype any spelling)."""
    from mxcy.context import current_context
    code = dtype_code(dtype)
    return new_empty(tuple(shape), code, ctx or current_context(), _proto())


_PROTO = []


def _proto():
    if not _PROTO:
        from mxcy.context import cpu
        _PROTO.append(new_empty((0,), 0, cpu())._as_class(ndarray))
    return _PROTO[0]


def as_array(x, ctx=None, dtype=None):
    """`x` as an mx.np.ndarray: itself, a view of an NDArray, or a copy of array-like data
    (lists and Python scalars default to float32, NumPy arrays keep their dtype)."""
    if isinstance(x, NDArray):
        x = x if type(x) is ndarray else x._as_class(ndarray)
        if dtype is not None and _onp.dtype(dtype) != x.dtype:
            x = x.astype(dtype)
        return x
    if isinstance(x, _onp.ndarray) or isinstance(x, _onp.generic):
        src = _onp.asarray(x)
        if dtype is None:
            dtype = src.dtype
    else:
        src = _onp.asarray(x)
        if dtype is None:
            dtype = _FLOAT32 if src.dtype.kind in 'fiub' else src.dtype
    dt = _onp.dtype(dtype)
    if dt not in DTYPE_CODES:
        raise TypeError(f"mx.np.array: unsupported dtype {dt}; supported: "
                        f"{', '.join(str(d) for d in DTYPE_CODES)}")
    out = new_array(src.shape, dt, ctx)
    # copy now: the source may change after we return; a fresh chunk has no pending op
    _onp.copyto(out._np_view(), _onp.asarray(src, dtype=dt))
    return out


def wrap_numpy(value, ctx=None):
    """A NumPy result as mx.np arrays (tuples and lists element-wise; other values kept)."""
    if isinstance(value, _onp.ndarray):
        if value.dtype not in DTYPE_CODES:
            value = value.astype(_supported(value.dtype))
        return as_array(value, ctx)
    if isinstance(value, tuple):
        return tuple(wrap_numpy(v, ctx) for v in value)
    if isinstance(value, list):
        return [wrap_numpy(v, ctx) for v in value]
    return value            # NumPy scalars stay scalars, as MXNet's fallbacks return them


def _supported(dt):
    """The nearest supported dtype of a NumPy result dtype (int16 -> int32 ...)."""
    if dt.kind == 'b':
        return _onp.bool_
    if dt.kind in 'iu':
        return _onp.int64 if dt.itemsize > 4 or (dt.kind == 'u' and dt.itemsize == 4) \
            else _onp.int32 if dt.itemsize > 1 or dt.kind == 'i' and dt.itemsize > 1 \
            else _onp.int8 if dt.kind == 'i' else _onp.uint8
    if dt.kind == 'f':
        return _onp.float64
    raise TypeError(f"mx.np: NumPy returned dtype {dt}, which mx.np arrays cannot hold")


def _unwrap_key(key):
    """An index key with mx arrays as NumPy arrays (boolean masks stay boolean)."""
    if isinstance(key, tuple):
        return tuple(_unwrap_key(k) for k in key)
    if isinstance(key, NDArray):
        a = key.asnumpy()
        return a if a.dtype == _onp.bool_ else a.astype(_onp.int64)
    return key


def _binary_numpy(name, fn, x, y, out_dtype=None):
    """fn(x, y) as one NumPy-backed engine op into a new array (comparisons, bitwise)."""
    if isinstance(y, NDArray):
        shape = _onp.broadcast_shapes(x.shape, y.shape) if x.shape != y.shape else x.shape
        dt = out_dtype or result_dtype(x.dtype, y.dtype)
        out = new_array(shape, dt, x.context)
        if y._chunk is out._chunk:
            y = y.copy()

        def run(a, b, o):
            o[...] = fn(a, b)
        push_numpy(run, [x, y], [out], name)
        return out
    if isinstance(y, (numbers.Number, _onp.generic)):
        out = new_array(x.shape, out_dtype or x.dtype, x.context)

        def run_scalar(a, o):
            o[...] = fn(a, y)
        push_numpy(run_scalar, [x], [out], name)
        return out
    if isinstance(y, (list, tuple, _onp.ndarray)):
        return _binary_numpy(name, fn, x, as_array(y, x.context), out_dtype)
    return NotImplemented


_CAST = []


def _cast(x, dtype):
    """x as `dtype` through the registry's Cast (recorded by autograd)."""
    if not _CAST:
        from mxcy.numpy._ops import _op
        _CAST.append(_op('Cast'))
    return _CAST[0](x, dtype=_onp.dtype(dtype).name)


def _promote(x, y, name):
    """(x, y) converted to one dtype for a differentiable binary op."""
    if isinstance(y, NDArray):
        if dtype_of(y) == dtype_of(x) and not (name == 'divide' and dtype_of(x) > 2):
            return x, y
        dt = result_dtype(x.dtype, y.dtype)
        if name == 'divide' and dt.kind not in 'f':
            dt = _FLOAT32
        return (x if x.dtype == dt else _cast(x, dt)), (y if y.dtype == dt else _cast(y, dt))
    if isinstance(y, bool):
        return x, int(y)
    if isinstance(y, (list, tuple, _onp.ndarray)):
        return _promote(x, as_array(y, x.context), name)
    if isinstance(y, _onp.generic):
        y = y.item()
    if name == 'divide' and x.dtype.kind in 'iub':
        return _cast(x, _FLOAT32), y
    if x.dtype == _onp.bool_ and isinstance(y, numbers.Number):
        return _cast(x, _onp.int64), y          # MXNet: bool array with a scalar: int64
    return x, y


_B = BINARY_OPS
# op code -> (name for promotion, NumPy ufunc, NDArray dunder, operands swapped)
_HOOK = {
    _B['add']: ('add', _onp.add, NDArray.__add__, False),
    _B['subtract']: ('subtract', _onp.subtract, NDArray.__sub__, False),
    _B['multiply']: ('multiply', _onp.multiply, NDArray.__mul__, False),
    _B['divide']: ('divide', _onp.true_divide, NDArray.__truediv__, False),
    _B['modulo']: ('mod', _onp.mod, NDArray.__mod__, False),
    _B['power']: ('power', _onp.power, NDArray.__pow__, False),
    _B['rsubtract']: ('subtract', _onp.subtract, NDArray.__sub__, True),
    _B['rdivide']: ('divide', _onp.true_divide, NDArray.__truediv__, True),
    _B['rmodulo']: ('mod', _onp.mod, NDArray.__mod__, True),
    _B['rpower']: ('power', _onp.power, NDArray.__pow__, True),
}
_INPLACE = {_B['add']: NDArray.__iadd__, _B['subtract']: NDArray.__isub__,
            _B['multiply']: NDArray.__imul__, _B['divide']: NDArray.__itruediv__,
            _B['modulo']: NDArray.__imod__}
_COMPARE = {_B['equal']: ('equal', _onp.equal), _B['not_equal']: ('not_equal', _onp.not_equal),
            _B['greater']: ('greater', _onp.greater),
            _B['greater_equal']: ('greater_equal', _onp.greater_equal),
            _B['lesser']: ('less', _onp.less), _B['lesser_equal']: ('less_equal',
                                                                   _onp.less_equal)}
_OPERANDS = (NDArray, numbers.Number, _onp.ndarray, _onp.generic, list, tuple)


def _np_arith(x, other, op, out):
    """NDArray's C dunders hand an mx.np array here when NumPy semantics are needed
    (_ndarray_autograd.pxi `_np_special`): comparisons give bool; mixed dtypes, bool
    arrays and integer division are promoted (through the recorded Cast), then the
    operation goes back to the C path on operands of one dtype."""
    if not isinstance(other, _OPERANDS):
        return NotImplemented
    cmp = _COMPARE.get(op)
    if cmp is not None:
        return _binary_numpy(cmp[0], cmp[1], x, other, _onp.bool_)
    if out is not None:                     # x OP= other: the result keeps x's dtype
        if x.dtype == _onp.bool_:
            raise TypeError(f"mx.np.ndarray: in-place {_HOOK[op][0]} on a bool array is "
                            f"not supported")
        if isinstance(other, NDArray) and other.dtype != x.dtype:
            other = _cast(other, x.dtype)
        elif not isinstance(other, (NDArray, numbers.Number)):
            other = as_array(other, x.context, x.dtype)
        if x.dtype.kind != 'f' and op == _B['divide']:
            raise TypeError("mx.np.ndarray: in-place true division of an integer array "
                            "would need a float result; use a = a / b")
        return _INPLACE[op](x, other)
    name, ufunc, nd_op, swapped = _HOOK[op]
    x2, y2 = _promote(x, other, name)
    if x2.dtype == _onp.bool_ and (not isinstance(y2, NDArray) or y2.dtype == _onp.bool_):
        if swapped:
            return _binary_numpy(name, lambda a, b: ufunc(b, a), x2, y2)
        return _binary_numpy(name, ufunc, x2, y2)
    if swapped:
        if isinstance(y2, NDArray):
            return nd_op(y2, x2)
        return _RDUNDER[op](x2, y2)
    return nd_op(x2, y2)


_RDUNDER = {_B['rsubtract']: NDArray.__rsub__, _B['rdivide']: NDArray.__rtruediv__,
            _B['rmodulo']: NDArray.__rmod__, _B['rpower']: NDArray.__rpow__}


class ndarray(_NumpyOperators):
    """An array with NumPy semantics (``mx.np.ndarray``), on mxcy's engine and memory."""
    __slots__ = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _ndarray._keep_c_operators(cls)     # + - * / stay C slots in subclasses too

    @property
    def dtype(self):
        """The NumPy dtype (``dtype('float32')``; mx.nd gives the type, np.float32)."""
        return _DTYPE_OF_CODE[dtype_of(self)]

    # ------------------------------------------------------------ printing, scalars
    def __repr__(self):
        a = self.asnumpy()
        text = _onp.array_repr(a)
        if a.size:      # NumPy >= 2.2 adds the shape of a summarised array; MXNet does not
            text = _SHAPE_IN_REPR.sub('', text)
        dt = a.dtype
        if dt in _DEFAULT_REPR:
            if dt not in _HIDDEN_BY_NUMPY:
                text = text.replace(f', dtype={dt.name}', '').replace(
                    f',\n{" " * 6}dtype={dt.name}', '')
        elif dt in _HIDDEN_BY_NUMPY:
            text = text[:-1] + f', dtype={dt.name})'
        return text

    def __str__(self):
        return str(self.asnumpy())

    def __format__(self, spec):
        return format(self.asnumpy().item() if self.size == 1 and not self.ndim else
                      self.asnumpy(), spec) if spec else str(self)

    def item(self, *args):
        """A Python scalar (the one element, or the one at `args`)."""
        return self.asnumpy().item(*args)

    def tolist(self):
        return self.asnumpy().tolist()

    def asscalar(self):
        if self.size != 1:
            raise ValueError(f"asscalar: the array must have one element, it has shape "
                             f"{self.shape}")
        return self.asnumpy().reshape(-1)[0]

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.kind not in 'iu':
            raise TypeError("only integer arrays can be used as an index")
        return int(self.item())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self.item())

    def __hash__(self):
        raise TypeError("unhashable type: 'mxnet.numpy.ndarray'")

    def __reduce__(self):
        return (_from_pickle, (self.asnumpy(),))

    # ------------------------------------------------------------ NumPy's protocols
    def __array_function__(self, func, types, args, kwargs):
        """``numpy.f(mx_array)``: mx.np.f when mx.np has it, else NumPy on the values
        (arrays come back as mx.np arrays, scalars as NumPy scalars), as MXNet 1.9.1."""
        from mxcy.numpy._interop import array_function
        return array_function(func, args, kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from mxcy.numpy._interop import array_ufunc
        return array_ufunc(ufunc, method, inputs, kwargs)

    # ------------------------------------------------------------ conversions
    def as_nd_ndarray(self):
        return self._as_class(NDArray)

    def as_np_ndarray(self):
        return self

    def astype(self, dtype, order='K', casting='unsafe', subok=True, copy=True):
        if order not in ('K', 'C', 'A'):
            raise ValueError(f"astype: order={order!r} is not supported (only 'C')")
        return NDArray.astype(self, _onp.float32 if dtype is None else dtype, copy)

    def copy(self, order='C'):
        return NDArray.copy(self)

    def as_in_ctx(self, ctx):
        return self.as_in_context(ctx)

    # ------------------------------------------------------------ indexing
    def __getitem__(self, key):
        t = type(key)
        if t is int:
            if len(self.shape) == 1:
                v = NDArray.__getitem__(self, key)
                return v.reshape(())
            return NDArray.__getitem__(self, key)
        if t is slice or t is tuple and _basic_ints(key, len(self.shape)):
            if t is tuple:
                v = self
                for k in key:
                    v = v[k]
                return v
            return NDArray.__getitem__(self, key)
        if key is None:
            return self.reshape((1,) + self.shape)
        if isinstance(key, NDArray) and key.dtype == _onp.bool_ and key.shape == self.shape \
                and not self.shape:
            return NDArray.__getitem__(self, _unwrap_key(key))
        return NDArray.__getitem__(self, _unwrap_key(key))

    def __setitem__(self, key, value):
        if isinstance(value, (list, tuple)) or isinstance(value, _onp.ndarray):
            value = as_array(value, self.context, self.dtype)
        elif isinstance(value, NDArray) and value.dtype != self.dtype:
            value = value.astype(self.dtype)
        if type(key) is tuple and key == ():
            key = slice(None)
        NDArray.__setitem__(self, _unwrap_key(key), value)

    # ------------------------------------------------------------ arithmetic
    # + - * / % ** and comparisons: NDArray's C dunders, with `_np_arith` as their hook

    def __neg__(self):
        if dtype_of(self) == _BOOL:
            raise TypeError("negative: the numpy boolean negative, the `-` operator, is "
                            "not supported, use the `~` operator or logical_not instead")
        return NDArray.__neg__(self)

    def __abs__(self):
        return self if dtype_of(self) == _BOOL else NDArray.__abs__(self)

    def __invert__(self):
        return _unary_numpy('invert', _onp.invert, self)

    def __and__(self, other):
        return _binary_numpy('bitwise_and', _onp.bitwise_and, self, other)

    def __or__(self, other):
        return _binary_numpy('bitwise_or', _onp.bitwise_or, self, other)

    def __xor__(self, other):
        return _binary_numpy('bitwise_xor', _onp.bitwise_xor, self, other)

    __rand__ = __and__
    __ror__ = __or__
    __rxor__ = __xor__

    def __floordiv__(self, other):
        return _binary_numpy('floor_divide', _onp.floor_divide, self, other)

    def __matmul__(self, other):
        from mxcy.numpy import matmul
        return matmul(self, other)

    def __rmatmul__(self, other):
        from mxcy.numpy import matmul
        return matmul(as_array(other, self.context), self)

    # ------------------------------------------------------------ views and shapes
    @property
    def T(self):
        return self.transpose()

    def reshape(self, *args, **kwargs):
        """A view with a new shape (NumPy's rules: one -1 is inferred)."""
        fast = args[0] if len(args) == 1 else args
        if not kwargs and type(fast) is tuple and fast and min(fast) >= -1 and \
                0 not in fast and fast.count(-1) < 2:
            # positive sizes and at most one -1 mean the same to NDArray.reshape (whose
            # 0, -2, -3, -4 are MXNet's codes, never reached here)
            return NDArray.reshape(self, fast)
        order = kwargs.pop('order', 'C')
        if order != 'C':
            raise ValueError(f"reshape: order={order!r} is not supported, only 'C'")
        if 'newshape' in kwargs:
            args = (kwargs.pop('newshape'),)
        if kwargs:
            raise TypeError(f"reshape: unexpected keyword arguments {sorted(kwargs)}")
        shape = args[0] if len(args) == 1 else args
        if isinstance(shape, numbers.Integral):
            shape = (int(shape),)
        shape = tuple(int(d) for d in shape)
        return NDArray.reshape(self, _np_shape(self.shape, shape))

    def reshape_view(self, *shape, **kwargs):
        return self.reshape(*shape, **kwargs)


ndarray.__module__ = 'mxcy.numpy'
_ndarray._keep_c_operators(ndarray)
_ndarray._plain_dealloc(ndarray)        # not subclasses: one of them may add __del__ later
_ndarray._set_np_arith_hook(_np_arith)


def _basic_ints(key, ndim):
    """Whether a tuple key is all ints (a view of one element or sub-array)."""
    if len(key) > ndim:
        return False
    for k in key:
        if type(k) is not int:
            return False
    return True


def _np_shape(src, shape):
    """NumPy's reshape target: at most one -1, no other negative value."""
    size = 1
    for d in src:
        size *= d
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension, got {shape}")
    known = 1
    for d in shape:
        if d < -1:
            raise ValueError(f"reshape: negative dimension {d} in {shape}")
        if d != -1:
            known *= d
    if -1 in shape:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if d == -1 else d for d in shape)
    elif known != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return shape


def _unary_numpy(name, fn, x):
    out = new_array(x.shape, fn(_onp.zeros((), x.dtype)).dtype, x.context)

    def run(a, o):
        o[...] = fn(a)
    push_numpy(run, [x], [out], name)
    return out


def _from_pickle(data):
    return as_array(data)

