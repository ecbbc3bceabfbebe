"""``mx.util``: MXNet 1.9.1's utility namespace (NumPy-semantics switches, environment,
decorators), without the GPU queries.

NumPy semantics come in two parts in MXNet:

* **shape** (``set_np_shape`` / ``np_shape`` / ``use_np_shape``): ``()`` is the shape of a
  scalar and a ``0`` in a shape means a zero-size axis, not "unknown". mxcy arrays always
  accept scalar and zero-size shapes, so the switch only records the request; it is kept
  per thread and ``is_np_shape()`` reports it, as code written for MXNet checks it.
* **array** (``np_array`` / ``use_np_array`` / ``set_np(array=True)``): Gluon returns
  ``mx.np.ndarray`` (Parameter.data(), blocks, losses, DataLoader batches) and a hybridized
  block traces with ``F.np``/``F.npx``. Kept per thread, as MXNet keeps it.

``use_np`` / ``use_np_shape`` / ``use_np_array`` decorate a function or a class (every
method defined in its body); the switches are on while it runs and restored after.
"""
import functools
import inspect
import os
import threading

import numpy as np


__all__ = ['is_np_array', 'is_np_shape', 'np_array', 'np_shape', 'set_np', 'reset_np',
           'set_np_shape', 'use_np', 'use_np_array', 'use_np_shape', 'getenv', 'setenv',
           'set_module', 'np_ufunc_legal_option', 'wrap_np_unary_func',
           'wrap_np_binary_func', 'get_gpu_count', 'py_str']

_STATE = threading.local()


def is_np_shape():
    """Whether NumPy shape semantics are requested in this thread."""
    return getattr(_STATE, 'shape', False)


def is_np_array():
    """Whether NumPy array semantics are on in this thread (``npx.set_np()``)."""
    return getattr(_STATE, 'array', False)


def set_np_shape(active):
    """Request (or drop) NumPy shape semantics in this thread; returns the previous state."""
    previous = is_np_shape()
    _STATE.shape = bool(active)
    return previous


def _set_np_array(active):
    """Turn NumPy array semantics on or off in this thread; returns the previous state."""
    previous = is_np_array()
    _STATE.array = bool(active)
    return previous


def set_np(shape=True, array=True):
    """Turn NumPy shape and array semantics on or off (see the module docstring)."""
    if array and not shape:
        raise ValueError("set_np: NumPy array semantics need NumPy shape semantics "
                         "(shape=True)")
    set_np_shape(shape)
    _set_np_array(array)


def reset_np():
    """Turn NumPy shape and array semantics off."""
    set_np(shape=False, array=False)


class _Scope:
    """A ``with`` scope that sets one switch and restores it on exit."""

    def __init__(self, setter, active):
        self._setter = setter
        self._active = bool(active)
        self._previous = None

    def __enter__(self):
        self._previous = self._setter(self._active)
        return self

    def __exit__(self, *exc):
        self._setter(self._previous)


def np_shape(active=True):
    """A ``with`` scope with NumPy shape semantics on (or off, `active=False`)."""
    return _Scope(set_np_shape, active)


def np_array(active=True):
    """A ``with`` scope with NumPy array semantics on (or off, `active=False`)."""
    return _Scope(_set_np_array, active)


def _decorate(func, scopes, where):
    if inspect.isclass(func):
        for name, member in list(vars(func).items()):
            if inspect.isfunction(member):
                setattr(func, name, _decorate(member, scopes, where))
        return func
    if not callable(func):
        raise TypeError(f"{where}: expected a function or a class, got "
                        f"{type(func).__name__}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with scopes[0]():
            if len(scopes) > 1:
                with scopes[1]():
                    return func(*args, **kwargs)
            return func(*args, **kwargs)
    return wrapper


def use_np_shape(func):
    """Run `func` (or every method of a class) with NumPy shape semantics on."""
    return _decorate(func, [np_shape], 'use_np_shape')


def use_np_array(func):
    """Run `func` (or every method of a class) with NumPy array semantics on."""
    return _decorate(func, [np_array], 'use_np_array')


def use_np(func):
    """``use_np_shape(use_np_array(func))``."""
    return _decorate(func, [np_shape, np_array], 'use_np')


def getenv(name):
    """The value of environment variable `name`, or None."""
    return os.environ.get(name)


def setenv(name, value):
    """Set environment variable `name` to `value` (str); None removes it."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def set_module(module):
    """Decorator setting ``__module__`` of a function or class (how it is displayed)."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


# the NumPy ufunc keywords MXNet accepts, with the values its operators support
_UFUNC_OPTIONS = {'casting': ('no', 'equiv', 'safe', 'same_kind', 'unsafe'),
                  'order': None, 'subok': None, 'where': None,
                  'dtype': ('float16', 'float32', 'float64', 'int8', 'uint8', 'int32',
                            'int64')}
_UFUNC_DEFAULTS = {'casting': 'same_kind', 'order': 'K', 'where': True, 'subok': True,
                   'dtype': None}


def np_ufunc_legal_option(key, value):
    """Whether `key=value` is a NumPy ufunc option MXNet's operators understand."""
    if key not in _UFUNC_OPTIONS:
        return False
    legal = _UFUNC_OPTIONS[key]
    if key == 'dtype':
        return isinstance(value, str) and value in legal or (
            isinstance(value, np.dtype) and value.name in legal) or (
            inspect.isclass(value) and issubclass(value, np.generic)
            and np.dtype(value).name in legal)
    return legal is None or value in legal


def _wrap_ufunc(func):
    @functools.wraps(func)
    def wrapper(*args, out=None, **kwargs):
        for key, value in kwargs.items():
            if key not in _UFUNC_DEFAULTS:
                raise TypeError(f"{key} is an invalid keyword to function "
                                f"'{func.__name__}'")
            default = _UFUNC_DEFAULTS[key]
            if value is not default and value != default:
                raise ValueError(f"{func.__name__}: {key}={value} is not supported; "
                                 f"only {key}={default} is")
        return func(*args, out=out) if out is not None else func(*args)
    return wrapper


def wrap_np_unary_func(func):
    """Decorate a unary ufunc-like `func(x, out=None)`: NumPy's ufunc keywords are
    accepted at their defaults and refused (ValueError) otherwise."""
    return _wrap_ufunc(func)


def wrap_np_binary_func(func):
    """Decorate a binary ufunc-like `func(x1, x2, out=None)` (see wrap_np_unary_func)."""
    return _wrap_ufunc(func)


def get_gpu_count():
    """The number of GPUs mxcy can use: 0 (mxcy runs on CPUs)."""
    return 0


def py_str(x):
    """`x` as a str (bytes are decoded as UTF-8)."""
    return x.decode('utf-8') if isinstance(x, bytes) else str(x)
