"""mx.np array creation: array, zeros, ones, empty, full, arange, *_like, eye, linspace ...

float32 is the default dtype (MXNet's choice), also for Python lists of ints; NumPy
arrays keep their dtype. Filling is one engine op (the C fill kernel).
"""
import math
import numbers

import numpy as _onp

from mxcy import _ndarray
from mxcy._ndarray import NDArray
from mxcy.base import as_shape
from mxcy.numpy.multiarray import as_array, new_array, ndarray

__all__ = ['array', 'asarray', 'zeros', 'ones', 'empty', 'full', 'arange', 'zeros_like',
           'ones_like', 'full_like', 'empty_like', 'eye', 'identity', 'linspace', 'logspace',
           'meshgrid', 'indices', 'hanning', 'hamming', 'blackman']


def _ctx(ctx):
    from mxcy.context import Context, current_context
    if ctx is None:
        return current_context()
    if not isinstance(ctx, Context):
        raise TypeError(f"ctx must be a Context, got {type(ctx).__name__}")
    return ctx


def _order(order, fname):
    if order not in ('C', None):
        raise ValueError(f"{fname}: order={order!r} is not supported, only 'C'")


def array(object, dtype=None, ctx=None):      # noqa: A002  (MXNet's argument name)
    """A new array holding a copy of `object` (float32 unless `object` is a NumPy or mx
    array, whose dtype is kept, or `dtype` is given)."""
    if isinstance(object, NDArray):
        out = new_array(object.shape, object.dtype if dtype is None else dtype,
                        _ctx(ctx or object.context))
        if dtype is None or _onp.dtype(dtype) == object.dtype:
            object.copyto(out)
        else:
            out[...] = object.astype(dtype)
        return out
    return as_array(object, _ctx(ctx), dtype)


def asarray(a, dtype=None, ctx=None):
    """`a` itself when it is already an mx.np.ndarray of that dtype, else `array(a)`."""
    if isinstance(a, ndarray) and (dtype is None or _onp.dtype(dtype) == a.dtype):
        return a
    if isinstance(a, NDArray) and dtype is None:
        return a.as_np_ndarray()
    return array(a, dtype, ctx)


def _filled(shape, value, dtype, ctx, fname):
    out = new_array(as_shape(shape, f"{fname}: shape"), dtype, _ctx(ctx))
    if out.size:
        _ndarray.full(out.shape, value, out=out)
    return out


def zeros(shape, dtype=None, order='C', ctx=None):
    _order(order, 'zeros')
    return _filled(shape, 0, _onp.float32 if dtype is None else dtype, ctx, 'zeros')


def ones(shape, dtype=_onp.float32, order='C', ctx=None):
    _order(order, 'ones')
    return _filled(shape, 1, _onp.float32 if dtype is None else dtype, ctx, 'ones')


def empty(shape, dtype=_onp.float32, order='C', ctx=None):
    _order(order, 'empty')
    return new_array(as_shape(shape, 'empty: shape'), _onp.float32 if dtype is None else
                     dtype, _ctx(ctx))


def full(shape, fill_value, dtype=None, order='C', ctx=None, out=None):
    """An array of `shape` filled with `fill_value` (a scalar or an array broadcast)."""
    _order(order, 'full')
    if isinstance(fill_value, NDArray):
        dt = fill_value.dtype if dtype is None else dtype
        res = out if out is not None else new_array(as_shape(shape, 'full: shape'), dt,
                                                     _ctx(ctx))
        res[...] = fill_value if fill_value.dtype == res.dtype else fill_value.astype(dt)
        return res
    if dtype is None:
        dtype = _onp.bool_ if isinstance(fill_value, (bool, _onp.bool_)) else _onp.float32
    if out is not None:
        _ndarray.full(out.shape, fill_value, out=out)
        return out
    return _filled(shape, fill_value, dtype, ctx, 'full')


def _like(a, fname):
    if not isinstance(a, NDArray):
        a = as_array(a)
    return a


def zeros_like(a, dtype=None, order='C', ctx=None, out=None):
    a = _like(a, 'zeros_like')
    return full(a.shape, 0, a.dtype if dtype is None else dtype, order, ctx or a.context, out)


def ones_like(a, dtype=None, order='C', ctx=None, out=None):
    a = _like(a, 'ones_like')
    return full(a.shape, 1, a.dtype if dtype is None else dtype, order, ctx or a.context, out)


def full_like(a, fill_value, dtype=None, order='C', ctx=None, out=None):
    a = _like(a, 'full_like')
    return full(a.shape, fill_value, a.dtype if dtype is None else dtype, order,
                ctx or a.context, out)


def empty_like(prototype, dtype=None, order='C', subok=False, shape=None):
    a = _like(prototype, 'empty_like')
    return empty(a.shape if shape is None else shape, a.dtype if dtype is None else dtype,
                 order, a.context)


def arange(start, stop=None, step=1, dtype=None, ctx=None):
    """Evenly spaced values in [start, stop) (float32 unless `dtype` is given)."""
    if stop is None:
        start, stop = 0, start
    for name, v in (('start', start), ('stop', stop), ('step', step)):
        if not isinstance(v, numbers.Real):
            raise TypeError(f"arange: {name} must be a number, got {type(v).__name__}")
    if step == 0:
        raise ValueError("arange: step must not be 0")
    n = max(0, int(math.ceil((stop - start) / step)))
    dt = _onp.dtype(_onp.float32 if dtype is None else dtype)
    values = start + step * _onp.arange(n, dtype=_onp.float64)
    return as_array(values.astype(dt), _ctx(ctx), dt)


def eye(N, M=None, k=0, dtype=_onp.float32, **kwargs):
    ctx = kwargs.pop('ctx', None)
    if kwargs:
        raise TypeError(f"eye: unexpected keyword arguments {sorted(kwargs)}")
    return as_array(_onp.eye(N, M, k, dtype=_onp.float32 if dtype is None else dtype),
                    _ctx(ctx))


def identity(n, dtype=None, ctx=None):
    return eye(n, dtype=_onp.float32 if dtype is None else dtype, ctx=ctx)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             ctx=None):
    if isinstance(start, NDArray) or isinstance(stop, NDArray):
        start = start.asnumpy() if isinstance(start, NDArray) else start
        stop = stop.asnumpy() if isinstance(stop, NDArray) else stop
    if not isinstance(num, numbers.Integral) or num < 0:
        raise ValueError(f"linspace: num must be a non-negative integer, got {num!r}")
    dt = _onp.float32 if dtype is None else dtype
    res = _onp.linspace(start, stop, num, endpoint, retstep, axis=axis)
    if retstep:
        return as_array(res[0].astype(dt), _ctx(ctx), dt), res[1]
    return as_array(res.astype(dt), _ctx(ctx), dt)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None):
    dt = _onp.float32 if dtype is None else dtype
    return as_array(_onp.logspace(start, stop, num, endpoint, base, axis=axis).astype(dt),
                    _ctx(ctx), dt)


def meshgrid(*xi, **kwargs):
    indexing = kwargs.pop('indexing', 'xy')
    sparse = kwargs.pop('sparse', False)
    copy = kwargs.pop('copy', True)
    if kwargs:
        raise TypeError(f"meshgrid: unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ('xy', 'ij'):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    ctx = next((x.context for x in xi if isinstance(x, NDArray)), None)
    arrays = [x.asnumpy() if isinstance(x, NDArray) else _onp.asarray(x) for x in xi]
    return [as_array(_onp.ascontiguousarray(g), _ctx(ctx), g.dtype)
            for g in _onp.meshgrid(*arrays, indexing=indexing, sparse=sparse, copy=copy)]


def indices(dimensions, dtype=_onp.int32, ctx=None):
    return as_array(_onp.indices(tuple(dimensions), dtype=dtype), _ctx(ctx), dtype)


def _window(fn, fname):
    def window(M, dtype=_onp.float32, ctx=None):
        if not isinstance(M, numbers.Integral):
            raise TypeError(f"{fname}: M must be an integer, got {type(M).__name__}")
        return as_array(fn(M).astype(dtype), _ctx(ctx), dtype)
    window.__name__ = window.__qualname__ = fname
    return window


hanning = _window(_onp.hanning, 'hanning')
hamming = _window(_onp.hamming, 'hamming')
blackman = _window(_onp.blackman, 'blackman')
