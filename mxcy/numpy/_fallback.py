"""mx.np functions computed by NumPy itself, as MXNet 1.9.1 does for its ``fallback``
names (``polyval``, ``unique``, ``searchsorted`` ...) and as mxcy does for the long tail
(sorting, set operations, histograms, ``einsum``): the inputs are read (waiting for
their pending writes), NumPy computes, and the results come back as new mx.np arrays.
These are not recorded by autograd: called while recording on an array of a graph, a
function with a float result raises (its gradient would be lost silently otherwise);
integer and boolean results (argsort, nonzero, comparisons) have no gradient to lose.

Each function carries MXNet's ``inspect.signature`` (parameter names from
`_signatures`); arguments are passed to NumPy by position up to the first one left out,
then by name, with MXNet's own ``ctx``/``out`` handled here.
"""
import inspect

import numpy as _onp

from mxcy import autograd as _autograd
from mxcy._ndarray import NDArray
from mxcy.base import MXNetError
from mxcy.numpy.multiarray import wrap_numpy

_AG_STATE = _autograd._STATE

_P = inspect.Parameter
_ABSENT = _P.empty


class _Default:
    """The default of a parameter whose value mxcy leaves to NumPy."""
    __slots__ = ()

    def __repr__(self):
        return '<default>'


DEFAULT = _Default()


def signature(spec):
    """An inspect.Signature from a `_signatures` spec string ('a b= *args | c= **kw')."""
    params, kwonly = [], False
    for part in spec.split():
        if part == '|':
            kwonly = True
        elif part.startswith('**'):
            params.append(_P(part[2:], _P.VAR_KEYWORD))
        elif part.startswith('*'):
            params.append(_P(part[1:], _P.VAR_POSITIONAL))
            kwonly = True
        else:
            name = part.rstrip('=')
            params.append(_P(name, _P.KEYWORD_ONLY if kwonly else _P.POSITIONAL_OR_KEYWORD,
                             default=DEFAULT if part.endswith('=') else _ABSENT))
    return inspect.Signature(params)


def to_numpy(value):
    """mx arrays (also inside lists and tuples) as NumPy arrays; other values kept."""
    if isinstance(value, NDArray):
        return value.asnumpy()
    if isinstance(value, (list, tuple)) and any(isinstance(v, (NDArray, list, tuple))
                                                for v in value):
        return type(value)(to_numpy(v) for v in value)
    return value


def _has_symbol(args, kwargs):
    from mxcy.symbol.symbol import Symbol
    return any(isinstance(v, Symbol) or isinstance(v, (list, tuple)) and
               any(isinstance(w, Symbol) for w in v)
               for v in list(args) + list(kwargs.values()))


def _context(args, kwargs):
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, NDArray):
            return v.context
        if isinstance(v, (list, tuple)):
            for w in v:
                if isinstance(w, NDArray):
                    return w.context
    return None


def numpy_function(name, impl, spec, wrap=True, scalars=False):
    """An mx.np function with MXNet's signature `spec` computed by NumPy's `impl`.

    Array results come back as mx.np arrays; a NumPy scalar result stays a NumPy scalar
    when `scalars` (MXNet's own fallback names do that), else becomes a 0-d array."""
    sig = signature(spec)
    try:
        impl_params = inspect.signature(impl).parameters
    except (TypeError, ValueError):
        impl_params = None
    takes_kw = impl_params is None or any(p.kind is _P.VAR_KEYWORD
                                          for p in impl_params.values())

    def fn(*args, **kwargs):
        if _has_symbol(args, kwargs):
            from mxcy.symbol.numpy._nosym import no_symbol_error
            raise no_symbol_error(name)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}: {e}") from None
        values = bound.arguments
        ctx = values.pop('ctx', None)
        out = values.pop('out', None)
        if ctx is None:
            ctx = _context(args, kwargs)
        pos, kw, gap = [], {}, False
        for p in sig.parameters.values():
            if p.name not in values or values[p.name] is DEFAULT:
                if p.name not in ('ctx', 'out'):
                    gap = True
                continue
            v = values[p.name]
            if p.kind is _P.VAR_POSITIONAL:
                pos.extend(to_numpy(x) for x in v)
            elif p.kind is _P.VAR_KEYWORD:
                kw.update({k: to_numpy(x) for k, x in v.items()})
            elif impl_params is not None and p.name in impl_params and \
                    impl_params[p.name].kind is not _P.POSITIONAL_ONLY:
                kw[p.name] = to_numpy(v)        # by name: MXNet's order may differ
            elif not gap and not kw and p.kind is _P.POSITIONAL_OR_KEYWORD:
                pos.append(to_numpy(v))
            elif takes_kw:
                kw[p.name] = to_numpy(v)
            elif v is not None:
                raise TypeError(f"{name}: argument {p.name}={v!r} is not supported")
        with _onp.errstate(all='ignore'):
            res = impl(*pos, **kw)
        if _AG_STATE.recording and _in_graph(list(args) + list(kwargs.values())) and \
                _has_float(res):
            raise MXNetError(f"mx.np.{name}: mxcy computes it with NumPy, outside "
                             f"autograd's graph, so a gradient through it would be lost; "
                             f"call it outside autograd.record() or on detach()ed inputs")
        if not wrap:
            return res
        if not scalars:
            res = _scalars_as_arrays(res)
        res = wrap_numpy(res, ctx)
        if out is not None:
            out[...] = res
            return out
        return res
    fn.__name__ = fn.__qualname__ = name
    fn.__signature__ = sig
    fn.__doc__ = (f"mx.np.{name}: NumPy's {getattr(impl, '__name__', name)} on the values "
                  f"(not recorded by autograd).")
    return fn


def _in_graph(values):
    """Whether an mx array among `values` (or inside lists) is part of autograd's graph."""
    for v in values:
        if isinstance(v, NDArray) and v._ag is not None:
            return True
        if isinstance(v, (list, tuple)) and _in_graph(v):
            return True
    return False


def _has_float(res):
    if isinstance(res, (tuple, list)):
        return any(_has_float(r) for r in res)
    return isinstance(res, (_onp.ndarray, _onp.generic)) and res.dtype.kind == 'f'


def _scalars_as_arrays(res):
    if isinstance(res, _onp.generic):
        return _onp.asarray(res)
    if isinstance(res, tuple):
        return tuple(_scalars_as_arrays(r) for r in res)
    return res


def _msort(a):
    return _onp.sort(a, axis=0)


def _in1d(ar1, ar2, assume_unique=False, invert=False):
    return _onp.isin(_onp.ravel(ar1), ar2, assume_unique=assume_unique, invert=invert)


def _around(x, decimals=0):
    return _onp.around(x, decimals)


# NumPy 2 names of functions NumPy 1.23 (MXNet's) spelled differently
RENAMED = {'alltrue': _onp.all, 'sometrue': _onp.any, 'product': _onp.prod,
           'msort': _msort, 'trapz': getattr(_onp, 'trapezoid', None), 'in1d': _in1d,
           'row_stack': _onp.vstack, 'round_': _around}


def numpy_impl(name, module=_onp):
    """NumPy's function for `name` (None when there is none)."""
    impl = RENAMED.get(name) if module is _onp else None
    return impl if impl is not None else getattr(module, name, None)
