"""NumPy's ``__array_function__``/``__array_ufunc__`` protocols for mx.np arrays.

As MXNet 1.9.1: ``numpy.sum(x)`` or ``numpy.exp(x)`` on an mx.np array runs mx.np's
function of that name when mx.np has one; otherwise NumPy computes on the values and
array results come back as mx.np arrays (scalars stay NumPy scalars), without a warning
(MXNet 1.9.1 gives none). A ufunc given a plain NumPy array beside an mx.np array raises
TypeError, as MXNet does (convert one side first).
"""
import numpy as _onp

from mxcy._ndarray import NDArray


def _namespace(func):
    import mxcy.numpy as np
    module = getattr(func, '__module__', '') or ''
    if module.startswith('numpy.linalg'):
        return np.linalg
    if module.startswith('numpy.random'):
        return np.random
    return np


def _context(values):
    for v in values:
        if isinstance(v, NDArray):
            return v.context
        if isinstance(v, (list, tuple)):
            ctx = _context(v)
            if ctx is not None:
                return ctx
    return None


def _back(value, ctx):
    from mxcy.numpy.multiarray import wrap_numpy
    if isinstance(value, _onp.ndarray):
        return wrap_numpy(value, ctx)
    if isinstance(value, (tuple, list)):
        return type(value)(_back(v, ctx) for v in value)
    return value


def _fallback(func, args, kwargs):
    from mxcy.numpy._fallback import to_numpy
    ctx = _context(list(args) + list(kwargs.values()))
    res = func(*[to_numpy(a) for a in args], **{k: to_numpy(v) for k, v in kwargs.items()})
    return _back(res, ctx)


def array_function(func, args, kwargs):
    mx_fn = getattr(_namespace(func), func.__name__, None)
    if callable(mx_fn) and getattr(mx_fn, '__module__', '').startswith('mxcy.numpy'):
        return mx_fn(*args, **kwargs)
    return _fallback(func, args, kwargs)


def array_ufunc(ufunc, method, inputs, kwargs):
    for x in inputs:
        if isinstance(x, _onp.ndarray):
            raise TypeError(f"numpy.{ufunc.__name__}: mixes a numpy.ndarray with an "
                            f"mx.np.ndarray; convert one side (mx.np.array(x) or "
                            f"x.asnumpy()) first")
    if method == '__call__':
        mx_fn = getattr(_namespace(ufunc), ufunc.__name__, None)
        if callable(mx_fn) and getattr(mx_fn, '__module__', '').startswith('mxcy.numpy'):
            return mx_fn(*inputs, **kwargs)
    return _fallback(getattr(ufunc, method), inputs, kwargs)
