"""mx.np functions computed by the operator registry: recorded by autograd, pushed to the
engine. Each is a thin NumPy-semantics layer (promotion, zero-dim results, axis=None)
over the registered operator MXNet's nd front end uses (``exp``, ``broadcast_add``,
``sum``, ``dot``, ``Concat`` ...); nothing is computed here.
"""
import builtins
import numbers

import numpy as _onp

from mxcy._ndarray import NDArray
from mxcy._ndarray import np_unary as _np_unary
from mxcy._ops import UNARY_OPS
from mxcy.ndarray import _gen
from mxcy.numpy.multiarray import _cast, as_array, ndarray, result_dtype

_F32 = _onp.dtype(_onp.float32)

# unary functions (registry ops of the same name); MXNet 1.9.1's np keeps an integer
# input's dtype (exp(int32) is int32), only bool inputs become float32
_FLOAT_UNARY = ('exp', 'log', 'log2', 'log10', 'log1p', 'expm1', 'sqrt', 'cbrt', 'sin',
                'cos', 'tan', 'arcsin', 'arccos', 'arctan', 'sinh', 'cosh', 'tanh',
                'arcsinh', 'arccosh', 'arctanh', 'reciprocal', 'degrees', 'radians')
_SAME_UNARY = ('abs', 'sign', 'floor', 'ceil', 'trunc', 'fix', 'rint', 'square',
               'negative')
_ALIASES = {'absolute': 'abs', 'fabs': 'abs', 'deg2rad': 'radians', 'rad2deg': 'degrees'}
# the tables mx.sym.np builds the same functions from (mxcy/symbol/numpy)
FLOAT_UNARY, SAME_UNARY, UNARY_ALIASES = _FLOAT_UNARY, _SAME_UNARY, _ALIASES
# reduction function -> registry operator
REDUCE_OPS = {'sum': 'sum', 'mean': 'mean', 'prod': 'prod', 'max': 'max', 'min': 'min',
              'amax': 'max', 'amin': 'min', 'argmax': 'argmax', 'argmin': 'argmin'}


def _op(name):
    """The registry operator `name` called on mx.nd views of mx.np arrays (same memory),
    its results viewed back as mx.np arrays: the recorded graph holds NDArrays, so a
    backward that compares arrays (the mask of maximum, max) keeps mx.nd semantics."""
    fn = _OPS.get(name)
    if fn is None:
        fn = _OPS[name] = _nd_call(_gen.function(name))
    return fn


_OPS = {}


def _nd_call(fn):
    def call(*args, **kwargs):
        args = [a._as_class(NDArray) if type(a) is ndarray else a for a in args]
        res = fn(*args, **kwargs)
        if isinstance(res, NDArray):
            return res._as_class(ndarray)
        return [r._as_class(ndarray) for r in res]
    return call


def _arr(x, fname, arg='x'):
    if isinstance(x, ndarray):
        return x
    if isinstance(x, NDArray):
        return x.as_np_ndarray()
    if isinstance(x, (numbers.Number, list, tuple, _onp.ndarray, _onp.generic)):
        return as_array(x)
    raise TypeError(f"{fname}: {arg} must be an mx.np.ndarray or array-like, got "
                    f"{type(x).__name__}")


def _to_out(res, out, fname):
    if out is None:
        return res
    if not isinstance(out, NDArray):
        raise TypeError(f"{fname}: out must be an mx.np.ndarray, got {type(out).__name__}")
    if out.shape != res.shape:
        raise ValueError(f"{fname}: out has shape {out.shape}, the result {res.shape}")
    out[...] = res
    return out


def _unary(name, nd_name):
    fn_nd = _op(nd_name)
    code = UNARY_OPS.get(nd_name)

    def fn(x, out=None, **kwargs):
        if not isinstance(x, NDArray) and isinstance(x, (numbers.Number, _onp.generic)):
            return getattr(_onp, name)(x)
        x = _arr(x, name)
        if x.dtype == _onp.bool_:
            x = _cast(x, _F32)
        return _to_out(fn_nd(x), out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (NumPy semantics; recorded by autograd)."
    if code is None:
        return fn
    # a float array, no out, not recording: straight to the C kernel, as mx.nd's op runs it
    return _np_unary(ndarray, code, fn, name)


def install_unary(namespace):
    for name in _FLOAT_UNARY + _SAME_UNARY:
        namespace[name] = _unary(name, name)
    for name, base in _ALIASES.items():
        namespace[name] = _unary(name, base)


def _binary(name, dunder, rdunder):
    def fn(x1, x2, out=None, **kwargs):
        if isinstance(x1, NDArray):
            res = getattr(_arr(x1, name, 'x1'), dunder)(x2)
        elif isinstance(x2, NDArray):
            res = getattr(_arr(x2, name, 'x2'), rdunder)(x1)
        else:
            return getattr(_onp, name)(x1, x2)
        if res is NotImplemented:
            raise TypeError(f"{name}: unsupported operands {type(x1).__name__} and "
                            f"{type(x2).__name__}")
        return _to_out(res, out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with NumPy broadcasting and type promotion."
    return fn


_BINARY = {'add': ('__add__', '__radd__'), 'subtract': ('__sub__', '__rsub__'),
           'multiply': ('__mul__', '__rmul__'), 'divide': ('__truediv__', '__rtruediv__'),
           'true_divide': ('__truediv__', '__rtruediv__'), 'mod': ('__mod__', '__rmod__'),
           'remainder': ('__mod__', '__rmod__'), 'power': ('__pow__', '__rpow__'),
           'equal': ('__eq__', '__eq__'), 'not_equal': ('__ne__', '__ne__'),
           'greater': ('__gt__', '__lt__'), 'greater_equal': ('__ge__', '__le__'),
           'less': ('__lt__', '__gt__'), 'less_equal': ('__le__', '__ge__'),
           'bitwise_and': ('__and__', '__rand__'), 'bitwise_or': ('__or__', '__ror__'),
           'bitwise_xor': ('__xor__', '__rxor__')}


def install_binary(namespace):
    for name, (d, r) in _BINARY.items():
        namespace[name] = _binary(name, d, r)


def _extremum(name, nd_name):
    def fn(x1, x2, out=None, **kwargs):
        from mxcy.ndarray import elemwise     # mx.nd.maximum: broadcast or scalar op
        fn_nd = _nd_call(getattr(elemwise, nd_name))
        if not isinstance(x1, NDArray) and not isinstance(x2, NDArray):
            return getattr(_onp, name)(x1, x2)
        if not isinstance(x1, NDArray):
            x1, x2 = x2, x1
        x1 = _arr(x1, name, 'x1')
        if not isinstance(x2, NDArray) and not isinstance(x2, numbers.Number):
            x2 = as_array(x2, x1.context)
        if isinstance(x2, NDArray):
            dt = result_dtype(x1.dtype, x2.dtype)
            x1 = x1 if x1.dtype == dt else _cast(x1, dt)
            x2 = x2 if x2.dtype == dt else _cast(_arr(x2, name, 'x2'), dt)
        return _to_out(fn_nd(x1, x2), out, name)
    fn.__name__ = fn.__qualname__ = name
    return fn


def hypot(x1, x2, out=None, **kwargs):
    """sqrt(x1**2 + x2**2), elementwise with broadcasting (recorded by autograd)."""
    if not isinstance(x1, NDArray) and not isinstance(x2, NDArray):
        return _onp.hypot(x1, x2)
    if not isinstance(x1, NDArray):
        x1, x2 = x2, x1
    x1 = _arr(x1, 'hypot', 'x1')
    if x1.dtype.kind != 'f':
        x1 = _cast(x1, _F32)
    return _to_out(_op('sqrt')(x1 * x1 + x2 * x2), out, 'hypot')


maximum = _extremum('maximum', 'maximum')
minimum = _extremum('minimum', 'minimum')


# ---------------------------------------------------------------- reductions
def _axes(axis, ndim, fname):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    out = []
    for ax in axes:
        if not -ndim <= ax < builtins.max(ndim, 1):
            raise ValueError(f"{fname}: axis {ax} is out of bounds for an array of "
                             f"dimension {ndim}")
        out.append(ax % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: duplicate value in axis {axis}")
    return tuple(out)


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduce(a, nd_name, axis, keepdims, fname):
    a = _arr(a, fname, 'a')
    axes = _axes(axis, a.ndim, fname)
    if not a.ndim or not axes:      # a scalar, or axis=(): nothing to reduce (NumPy)
        return _op('_copy')(a)      # recorded: a reduction of a scalar is the scalar
    res = _op(nd_name)(a, axis=axes, keepdims=bool(keepdims))
    want = _reduced_shape(a.shape, axes, keepdims)
    return res if res.shape == want else res.reshape(want)


def sum(a, axis=None, dtype=None, keepdims=False, initial=None, out=None):  # noqa: A001
    a = _arr(a, 'sum', 'a')
    if dtype is not None:
        a = a if a.dtype == _onp.dtype(dtype) else _cast(a, dtype)
    elif a.dtype == _onp.bool_:
        a = _cast(a, _onp.int64)
    res = _reduce(a, 'sum', axis, keepdims, 'sum')
    if initial is not None:
        res = res + initial
    return _to_out(res, out, 'sum')


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    a = _arr(a, 'mean', 'a')
    want = _onp.dtype(dtype) if dtype is not None else \
        (a.dtype if a.dtype.kind == 'f' else _F32)
    if a.dtype != want:
        a = _cast(a, want)
    return _to_out(_reduce(a, 'mean', axis, keepdims, 'mean'), out, 'mean')


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    a = _arr(a, 'prod', 'a')
    if dtype is not None and a.dtype != _onp.dtype(dtype):
        a = _cast(a, dtype)
    elif a.dtype == _onp.bool_:
        a = _cast(a, _onp.int64)
    res = _reduce(a, 'prod', axis, keepdims, 'prod')
    if initial is not None:
        res = res * initial
    return _to_out(res, out, 'prod')


def _minmax(nd_name, fname):
    def fn(a, axis=None, keepdims=False, out=None):
        return _to_out(_reduce(a, nd_name, axis, keepdims, fname), out, fname)
    fn.__name__ = fn.__qualname__ = fname
    return fn


max = _minmax(REDUCE_OPS['max'], 'max')  # noqa: A001
min = _minmax(REDUCE_OPS['min'], 'min')  # noqa: A001
amax = _minmax(REDUCE_OPS['amax'], 'amax')
amin = _minmax(REDUCE_OPS['amin'], 'amin')


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance; as MXNet 1.9.1, an integer input gives a result of its dtype."""
    a = _arr(a, 'var', 'a')
    if a.dtype.kind != 'f' and dtype is None:
        return _to_out(_cast(_int_var(a, axis, ddof, keepdims), a.dtype), out, 'var')
    if a.dtype.kind != 'f' or (dtype is not None and a.dtype != _onp.dtype(dtype)):
        a = _cast(a, _F32 if dtype is None else dtype)
    axes = _axes(axis, a.ndim, 'var')
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    centred = a - _reduce(a, 'mean', axes, True, 'var')
    scale = 1.0 / (n - ddof) if n > ddof else float('nan')
    return _to_out(_reduce(centred * centred, 'sum', axes, keepdims, 'var') * scale, out,
                   'var')


def _int_var(a, axis, ddof, keepdims):
    """MXNet 1.9.1's variance of an integer array: integer arithmetic (the mean and the
    mean square deviation truncated), returned as float32 holding those integers."""
    af = _cast(a, _F32)
    axes = _axes(axis, a.ndim, 'var')
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    d = af - _op('trunc')(_reduce(af, 'mean', axes, True, 'var'))
    return _op('trunc')(_reduce(d * d, 'sum', axes, keepdims, 'var') * (1.0 / (n - ddof)))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    a = _arr(a, 'std', 'a')
    if a.dtype.kind != 'f' and dtype is None:
        v = _int_var(a, axis, ddof, keepdims)
        return _to_out(_cast(_op('trunc')(_op('sqrt')(v)), a.dtype), out, 'std')
    return _to_out(_op('sqrt')(var(a, axis, dtype, None, ddof, keepdims)), out, 'std')


def _arg(nd_name, fname):
    def fn(a, axis=None, out=None):
        a = _arr(a, fname, 'a')
        if axis is None:
            a = a.reshape(-1)
            axis = 0
        ax = _axes(axis, a.ndim, fname)[0]
        res = _cast(_op(nd_name)(a, axis=ax), _onp.int64)
        want = _reduced_shape(a.shape, (ax,), False)
        return _to_out(res if res.shape == want else res.reshape(want), out, fname)
    fn.__name__ = fn.__qualname__ = fname
    return fn


argmax = _arg(REDUCE_OPS['argmax'], 'argmax')
argmin = _arg(REDUCE_OPS['argmin'], 'argmin')


def cumsum(a, axis=None, dtype=None, out=None):
    a = _arr(a, 'cumsum', 'a')
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    if dtype is not None and a.dtype != _onp.dtype(dtype):
        a = _cast(a, dtype)
    elif a.dtype == _onp.bool_:
        a = _cast(a, _onp.int64)
    return _to_out(_op('cumsum')(a, axis=axis), out, 'cumsum')
