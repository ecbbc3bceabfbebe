"""``mx.sym.np``: MXNet's NumPy-interface functions as Symbols — what ``F.np`` is while a
hybridized block traces under ``npx.set_np()``.

Each function is a node (or a few) of the same registry operator the imperative ``mx.np``
function pushes (`mxcy.numpy._ops` shares its unary and reduction tables with this
module), so a traced graph runs the same kernels and gradients and saves operator names
MXNet 1.9.1 loads. NumPy's dtype rules, which ``mx.np`` applies by looking at its
arrays, are applied here from the dtypes known while tracing (the block's inputs and its
parameters' ``__dtype__``): mixed operands get a ``Cast`` to the promoted dtype,
comparisons a ``Cast`` to bool, integer division a ``Cast`` to float32. Where no dtype is
known (a bare ``mx.sym.np`` graph), the operands are taken as one dtype, and the
operators' own type inference rejects a mismatch naming the operator.

Functions ``mx.np`` computes with NumPy (sorting, set operations, ...) have no symbolic
form: here they raise, naming the function (`no_symbol`).
"""
import numbers

import numpy as _onp

from mxcy.numpy._ops import FLOAT_UNARY, SAME_UNARY, UNARY_ALIASES, REDUCE_OPS
from mxcy.numpy.multiarray import result_dtype
from mxcy.symbol._gen import make_op_symbol
from mxcy.symbol.symbol import Symbol

_F32 = _onp.dtype(_onp.float32)
_BOOL = _onp.dtype(_onp.bool_)
_I64 = _onp.dtype(_onp.int64)


def _node(op, args, **params):
    return make_op_symbol(op, tuple(args), params)


def _sym(x, fname, arg='x'):
    if not isinstance(x, Symbol):
        raise TypeError(f"mx.sym.np.{fname}: {arg} must be a Symbol, got "
                        f"{type(x).__name__}")
    return x


def dtypes(*symbols):
    """The dtypes of `symbols` inferred from what the tracing block knows (None where
    unknown)."""
    from mxcy.symbol.numpy._dtypes import traced_dtypes
    return traced_dtypes(symbols)


def _cast(x, dt):
    return _node('Cast', (x,), dtype=_onp.dtype(dt).name)


def _reshape(x, newshape):
    return _node('_npx_reshape', (x,), newshape=tuple(newshape), reverse=False, order='C')


# ---------------------------------------------------------------- elementwise
def _unary(name, op):
    def fn(x, out=None, name=None, **kwargs):
        x = _sym(x, fname)
        if dtypes(x)[0] == _BOOL:
            x = _cast(x, _F32)
        return _node(op, (x,))
    fname = name
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} as a Symbol (the {op} operator)."
    return fn


for _n in FLOAT_UNARY + SAME_UNARY:
    globals()[_n] = _unary(_n, _n)
for _n, _base in UNARY_ALIASES.items():
    globals()[_n] = _unary(_n, _base)

# NumPy name: (broadcast operator, scalar operator, scalar-first operator)
BINARY = {'add': ('broadcast_add', '_PlusScalar', '_PlusScalar'),
          'subtract': ('broadcast_sub', '_MinusScalar', '_RMinusScalar'),
          'multiply': ('broadcast_mul', '_MulScalar', '_MulScalar'),
          'divide': ('broadcast_div', '_DivScalar', '_RDivScalar'),
          'true_divide': ('broadcast_div', '_DivScalar', '_RDivScalar'),
          'mod': ('broadcast_mod', '_ModScalar', '_RModScalar'),
          'remainder': ('broadcast_mod', '_ModScalar', '_RModScalar'),
          'power': ('broadcast_power', '_PowerScalar', '_RPowerScalar'),
          'maximum': ('broadcast_maximum', '_MaximumScalar', '_MaximumScalar'),
          'minimum': ('broadcast_minimum', '_MinimumScalar', '_MinimumScalar'),
          'hypot': ('broadcast_hypot', '_hypot_scalar', '_hypot_scalar'),
          'equal': ('broadcast_equal', '_equal_scalar', '_equal_scalar'),
          'not_equal': ('broadcast_not_equal', '_not_equal_scalar', '_not_equal_scalar'),
          'greater': ('broadcast_greater', '_greater_scalar', '_lesser_scalar'),
          'greater_equal': ('broadcast_greater_equal', '_greater_equal_scalar',
                            '_lesser_equal_scalar'),
          'less': ('broadcast_lesser', '_lesser_scalar', '_greater_scalar'),
          'less_equal': ('broadcast_lesser_equal', '_lesser_equal_scalar',
                         '_greater_equal_scalar')}
_COMPARE = ('equal', 'not_equal', 'greater', 'greater_equal', 'less', 'less_equal')
_DIVIDE = ('divide', 'true_divide')

# Symbol's dunders (legacy operator names) under npx.set_np(): the NumPy functions
DUNDERS = {'_Plus': 'add', '_Minus': 'subtract', '_Mul': 'multiply', '_Div': 'divide',
           '_Mod': 'mod', '_Power': 'power', '_equal': 'equal', '_not_equal': 'not_equal',
           '_greater': 'greater', '_greater_equal': 'greater_equal', '_lesser': 'less',
           '_lesser_equal': 'less_equal'}


def binary(fname, x1, x2):
    """NumPy's `fname` of two operands (Symbols or one Symbol and a scalar)."""
    bop, sop, rop = BINARY[fname]
    if isinstance(x1, Symbol) and isinstance(x2, Symbol):
        d1, d2 = dtypes(x1, x2)
        if d1 is not None and d2 is not None:
            dt = result_dtype(d1, d2)
            if fname in _DIVIDE and dt.kind != 'f':
                dt = _F32
            x1 = x1 if d1 == dt else _cast(x1, dt)
            x2 = x2 if d2 == dt else _cast(x2, dt)
        out = _node(bop, (x1, x2))
    else:
        arr, scalar, op = (x1, x2, sop) if isinstance(x1, Symbol) else (x2, x1, rop)
        if not isinstance(arr, Symbol):
            raise TypeError(f"mx.sym.np.{fname}: one operand must be a Symbol, got "
                            f"{type(x1).__name__} and {type(x2).__name__}")
        if isinstance(scalar, _onp.generic):
            scalar = scalar.item()
        if not isinstance(scalar, numbers.Number):
            raise TypeError(f"mx.sym.np.{fname}: the other operand must be a Symbol or a "
                            f"scalar, got {type(scalar).__name__}")
        dt = dtypes(arr)[0]
        if dt is not None and fname in _DIVIDE and dt.kind != 'f':
            arr = _cast(arr, _F32)          # int / scalar is float32 (mx.np)
        elif dt == _BOOL and fname not in _COMPARE:
            arr = _cast(arr, _I64)          # bool with a scalar computes in int64 (mx.np)
        out = _node(op, (arr,), scalar=float(scalar))
    return _cast(out, _BOOL) if fname in _COMPARE else out


def dunder(x, other, op, reverse):
    """``x <op> other`` (``other <op> x`` when `reverse`) with NumPy semantics."""
    if not isinstance(other, (Symbol, numbers.Number, _onp.generic)):
        return NotImplemented
    fname = DUNDERS[op]
    return binary(fname, other, x) if reverse else binary(fname, x, other)


def _binary_fn(fname):
    def fn(x1, x2, out=None, **kwargs):
        return binary(fname, x1, x2)
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"NumPy's {fname} (broadcasting, type promotion) as a Symbol."
    return fn


for _n in BINARY:
    globals()[_n] = _binary_fn(_n)


# ---------------------------------------------------------------- reductions
def _ndim(x):
    from mxcy.symbol.numpy._dtypes import traced_ndim
    return traced_ndim(x)


def _axes(axis):
    if axis is None:
        return None
    return (int(axis),) if isinstance(axis, numbers.Integral) else tuple(int(a) for a in axis)


def _reduce(a, fname, axis, keepdims):
    a = _sym(a, fname, 'a')
    axes = _axes(axis)
    if axes == ():
        return _node('_copy', (a,))
    params = {'keepdims': bool(keepdims)}
    if axes is not None:
        params['axis'] = axes
    res = _node(REDUCE_OPS[fname], (a,), **params)
    if not keepdims and (axes is None or len(axes) == _ndim(a)):
        res = _reshape(res, ())         # NumPy: a full reduction is zero-dim
    return res


def _with_dtype(a, dtype, fname, bool_to=None):
    dt = dtypes(a)[0]
    if dtype is not None:
        return a if dt == _onp.dtype(dtype) else _cast(a, dtype)
    if bool_to is not None and dt is not None and dt.kind in bool_to[0]:
        return _cast(a, bool_to[1])
    return a


def sum(a, axis=None, dtype=None, keepdims=False, initial=None, out=None):  # noqa: A001
    a = _with_dtype(_sym(a, 'sum', 'a'), dtype, 'sum', ('b', _I64))
    res = _reduce(a, 'sum', axis, keepdims)
    return res if initial is None else binary('add', res, initial)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    a = _with_dtype(_sym(a, 'prod', 'a'), dtype, 'prod', ('b', _I64))
    res = _reduce(a, 'prod', axis, keepdims)
    return res if initial is None else binary('multiply', res, initial)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    a = _with_dtype(_sym(a, 'mean', 'a'), dtype, 'mean', ('biu', _F32))
    return _reduce(a, 'mean', axis, keepdims)


def _minmax(fname):
    def fn(a, axis=None, keepdims=False, out=None):
        return _reduce(a, fname, axis, keepdims)
    fn.__name__ = fn.__qualname__ = fname
    return fn


max = _minmax('max')  # noqa: A001
min = _minmax('min')  # noqa: A001
amax = _minmax('amax')
amin = _minmax('amin')


def _arg(fname):
    def fn(a, axis=None, out=None):
        a = _sym(a, fname, 'a')
        if axis is None:
            a, axis = _reshape(a, (-1,)), 0
        return _cast(_node(REDUCE_OPS[fname], (a,), axis=int(axis), keepdims=False), _I64)
    fn.__name__ = fn.__qualname__ = fname
    return fn


argmax = _arg('argmax')
argmin = _arg('argmin')


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance of a floating Symbol (mean of squared deviations, `ddof` as NumPy)."""
    a = _with_dtype(_sym(a, 'var', 'a'), dtype, 'var', ('biu', _F32))
    centred = binary('subtract', a, _reduce(a, 'mean', axis, True))
    res = _reduce(binary('multiply', centred, centred), 'mean', axis, keepdims)
    if ddof:
        n = _node('_copy', (_reduce(_node('ones_like', (a,)), 'sum', axis, keepdims),))
        res = binary('divide', binary('multiply', res, n), binary('subtract', n, ddof))
    return res


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _node('sqrt', (var(a, axis, dtype, None, ddof, keepdims),))


from mxcy.symbol.numpy._shapes import *  # noqa: E402,F401,F403
from mxcy.symbol.numpy._shapes import __all__ as _SHAPES  # noqa: E402
from mxcy.symbol.numpy._more import *  # noqa: E402,F401,F403
from mxcy.symbol.numpy._more import __all__ as _MORE  # noqa: E402
from mxcy.symbol.numpy import linalg  # noqa: E402
from mxcy.symbol.numpy._nosym import install as _install_nosym  # noqa: E402
from mxcy.symbol.numpy import _methods  # noqa: E402

__all__ = sorted(list(BINARY) + list(FLOAT_UNARY + SAME_UNARY) + list(UNARY_ALIASES) +
                 ['sum', 'prod', 'mean', 'max', 'min', 'amax', 'amin', 'argmax',
                  'argmin', 'var', 'std', 'linalg'] + list(_SHAPES) + list(_MORE))
__all__ += _install_nosym(globals())
del _n, _base
_methods.install(Symbol)
