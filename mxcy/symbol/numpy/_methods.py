"""Symbols under ``npx.set_np()`` follow NumPy's rules, as MXNet 1.9.1's ``_Symbol`` of
``mx.sym.np`` does: arithmetic and comparison operators are ``mx.sym.np``'s functions
(promotion, bool comparisons), ``x[1:, 0]`` slices the array (a multi-output Symbol's
``[i]`` still picks an output), and ``x.sum(axis=1)``, ``x.reshape(2, -1)``, ``x.T`` ...
are the ``mx.sym.np`` functions (``flatten``, ``squeeze``, ``expand_dims``, ``astype``
keep Symbol's own). Outside NumPy mode Symbol is untouched (`install`
wraps its methods with one ``is_np_array()`` test)."""
import numbers

from mxcy.util import is_np_array

# fluent methods that are mx.sym.np functions taking the Symbol first
_METHODS = ('sum', 'mean', 'prod', 'max', 'min', 'argmax', 'argmin', 'var', 'std',
            'transpose', 'swapaxes', 'clip', 'repeat', 'tile',
            'take', 'dot', 'exp', 'log', 'sqrt', 'abs', 'square', 'tanh',
            'ravel', 'flip', 'zeros_like', 'ones_like')


def getitem(x, key):
    """Basic indexing (ints, slices, None) of a single-output Symbol: ``slice`` then an
    ``_npx_reshape`` dropping the integer-indexed axes and adding the None axes."""
    from mxcy.symbol.numpy import _node, _reshape
    key = key if isinstance(key, tuple) else (key,)
    begin, end, step, codes, new_axes = [], [], [], [], []
    for k in key:
        if k is None:
            new_axes.append(len(codes) - codes.count(-3) + len(new_axes))
        elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
            begin.append(int(k))
            end.append(int(k) + 1 if k != -1 else None)
            step.append(1)
            codes.append(-3)
        elif isinstance(k, slice):
            begin.append(k.start)
            end.append(k.stop)
            step.append(k.step)
            codes.append(-2)
        else:
            raise TypeError(f"Symbol index: only ints, slices and None index a Symbol "
                            f"in NumPy mode (no shapes while tracing), got {k!r}")
    out = _node('slice', (x,), begin=tuple(begin), end=tuple(end), step=tuple(step)) \
        if begin else x
    if -3 in codes:
        out = _reshape(out, tuple(codes) + (-4,))
    for axis in new_axes:
        out = _node('expand_dims', (out,), axis=axis)
    return out


def _method(x, name):
    from mxcy.symbol import numpy as np_sym
    if name == 'reshape':
        return lambda *shape, **kw: np_sym.reshape(
            x, shape[0] if len(shape) == 1 else shape, **kw)
    fn = getattr(np_sym, name)
    return lambda *args, **kwargs: fn(x, *args, **kwargs)


def install(symbol_cls):
    binary, getitem_legacy, getattr_legacy = (symbol_cls._binary, symbol_cls.__getitem__,
                                              symbol_cls.__getattr__)

    def _binary(self, other, op, scalar_op, rscalar_op=None, reverse=False):
        if is_np_array():
            from mxcy.symbol import numpy as np_sym
            return np_sym.dunder(self, other, op, reverse)
        return binary(self, other, op, scalar_op, rscalar_op, reverse)

    def __getitem__(self, index):
        if is_np_array() and len(self._outputs) == 1 and not isinstance(index, str):
            return getitem(self, index)
        return getitem_legacy(self, index)

    def __getattr__(self, name):
        if name in _METHODS or name == 'reshape':
            if is_np_array():
                return _method(self, name)
        return getattr_legacy(self, name)

    def T(self):
        if not is_np_array():
            raise AttributeError("'Symbol' object has no attribute 'T' (NumPy mode only)")
        from mxcy.symbol import numpy as np_sym
        return np_sym.transpose(self)

    symbol_cls._binary, symbol_cls.__getitem__, symbol_cls.__getattr__ = (
        _binary, __getitem__, __getattr__)
    symbol_cls.T = property(T)
