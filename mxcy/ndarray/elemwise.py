"""MXNet's ufunc-style ``mx.nd`` dispatchers (``add``, ``subtract``, ``maximum``,
``greater`` ...) and the argument helpers the hand-written ``mx.nd`` functions share.

The elementwise operators themselves (``exp``, ``broadcast_add``, ``_plus_scalar``,
``clip``, ``where``, ``softmax`` ...) are registry operators (`mxcy.operator.elemwise`,
`mxcy.operator.tensor`, `mxcy.operator.reduce`); ``mx.nd`` generates their functions.
As MXNet's ``ndarray.py`` does, ``add(lhs, rhs)`` only chooses one of them: two NDArrays
run ``broadcast_add``, an NDArray and a number ``_plus_scalar`` (``_rminus_scalar`` etc.
when the number comes first), two numbers Python's operator. Errors name the dispatcher.

Registered names are still importable from here (``from mxcy.ndarray.elemwise import
sqrt``): they resolve to the generated ``mx.nd`` functions.
"""
import numbers

import numpy as np

from mxcy._ndarray import NDArray, empty


# ---------------------------------------------------------------- shared helpers
def check_nd(x, fname, arg='data'):
    """Raise a TypeError naming `fname` and `arg` unless `x` is an NDArray."""
    if not isinstance(x, NDArray):
        raise TypeError(f"{fname}: {arg} must be an NDArray, got {type(x).__name__}")
    return x


def prepare_out(out, shape, dtype, ctx, fname):
    """A fresh array of `shape`/`dtype`, or `out` after checking that it fits the result."""
    if out is None:
        return empty(shape, ctx, dtype)
    if not isinstance(out, NDArray):
        raise TypeError(f"{fname}: out must be an NDArray, got {type(out).__name__}")
    if out.shape != tuple(shape) or np.dtype(out.dtype) != np.dtype(dtype):
        raise ValueError(f"{fname}: out has shape {out.shape} and dtype "
                         f"{np.dtype(out.dtype)}, the result has shape {tuple(shape)} and "
                         f"dtype {np.dtype(dtype)}")
    return out


def norm_axis(axis, ndim, fname, arg='axis', extra=0):
    """An axis in [0, ndim + extra) from an int or NumPy integer (negative from the end)."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{fname}: {arg} must be an integer, got {type(axis).__name__} "
                        f"{axis!r}")
    axis, n = int(axis), ndim + extra
    if not -n <= axis < n:
        raise ValueError(f"{fname}: {arg}={axis} is out of range for an array of {ndim} "
                         f"dimensions (valid: {-n} to {n - 1})")
    return axis + n if axis < 0 else axis


def norm_axes(axes, ndim, fname, arg='axis'):
    """A sorted tuple of distinct axes from an int or a tuple/list of ints."""
    if isinstance(axes, numbers.Integral) and not isinstance(axes, bool):
        axes = (axes,)
    if not isinstance(axes, (tuple, list)):
        raise TypeError(f"{fname}: {arg} must be an int or a tuple of ints, got "
                        f"{type(axes).__name__} {axes!r}")
    out = [norm_axis(a, ndim, fname, arg) for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: {arg}={tuple(axes)!r} repeats an axis")
    return tuple(sorted(out))


def _is_scalar(v):
    return isinstance(v, numbers.Real)


# ---------------------------------------------------------------- dispatchers
# name -> (op for two arrays, op for array OP scalar, op for scalar OP array, Python op)
_DISPATCH = {
    'add': ('broadcast_add', '_plus_scalar', '_plus_scalar', lambda a, b: a + b),
    'subtract': ('broadcast_sub', '_minus_scalar', '_rminus_scalar', lambda a, b: a - b),
    'multiply': ('broadcast_mul', '_mul_scalar', '_mul_scalar', lambda a, b: a * b),
    'divide': ('broadcast_div', '_div_scalar', '_rdiv_scalar', lambda a, b: a / b),
    'modulo': ('broadcast_mod', '_mod_scalar', '_rmod_scalar', lambda a, b: a % b),
    'power': ('broadcast_power', '_power_scalar', '_rpower_scalar', lambda a, b: a ** b),
    'maximum': ('broadcast_maximum', '_maximum_scalar', '_maximum_scalar', max),
    'minimum': ('broadcast_minimum', '_minimum_scalar', '_minimum_scalar', min),
    'equal': ('broadcast_equal', '_equal_scalar', '_equal_scalar',
              lambda a, b: int(a == b)),
    'not_equal': ('broadcast_not_equal', '_not_equal_scalar', '_not_equal_scalar',
                  lambda a, b: int(a != b)),
    'greater': ('broadcast_greater', '_greater_scalar', '_lesser_scalar',
                lambda a, b: int(a > b)),
    'greater_equal': ('broadcast_greater_equal', '_greater_equal_scalar',
                      '_lesser_equal_scalar', lambda a, b: int(a >= b)),
    'lesser': ('broadcast_lesser', '_lesser_scalar', '_greater_scalar',
               lambda a, b: int(a < b)),
    'lesser_equal': ('broadcast_lesser_equal', '_lesser_equal_scalar',
                     '_greater_equal_scalar', lambda a, b: int(a <= b)),
    'logical_and': ('broadcast_logical_and', '_logical_and_scalar', '_logical_and_scalar',
                    lambda a, b: int(bool(a) and bool(b))),
    'logical_or': ('broadcast_logical_or', '_logical_or_scalar', '_logical_or_scalar',
                   lambda a, b: int(bool(a) or bool(b))),
    'logical_xor': ('broadcast_logical_xor', '_logical_xor_scalar', '_logical_xor_scalar',
                    lambda a, b: int(bool(a) != bool(b))),
}
_DISPATCH['true_divide'] = _DISPATCH['divide']


def _make_dispatcher(name):
    array_op, scalar_op, rscalar_op, py_op = _DISPATCH[name]
    ops = []     # the generated ops' callers, made on first use (the registry loads later)

    def fn(lhs, rhs, out=None):
        return run(lhs, rhs, out)

    def run(lhs, rhs, out):
        if not ops:
            from mxcy.ndarray._gen import caller
            ops.extend(caller(op, name) for op in (array_op, scalar_op, rscalar_op))
        if isinstance(lhs, NDArray):
            if isinstance(rhs, NDArray):
                return ops[0]((lhs, rhs), {}, out)
            if _is_scalar(rhs):
                return ops[1]((lhs,), {'scalar': float(rhs)}, out)
            raise TypeError(f"{name}: rhs must be an NDArray or a number, got "
                            f"{type(rhs).__name__}")
        if isinstance(rhs, NDArray):
            if _is_scalar(lhs):
                return ops[2]((rhs,), {'scalar': float(lhs)}, out)
            raise TypeError(f"{name}: lhs must be an NDArray or a number, got "
                            f"{type(lhs).__name__}")
        if _is_scalar(lhs) and _is_scalar(rhs):
            return py_op(lhs, rhs)
        raise TypeError(f"{name}: operands must be NDArrays or numbers, got "
                        f"{type(lhs).__name__} and {type(rhs).__name__}")
    if name == 'power':     # MXNet: power(base, exp)
        def fn(base, exp, out=None):
            return run(base, exp, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {name} of NDArrays (broadcasting: {array_op}) or of an "
                  f"NDArray and a number ({scalar_op}) (MXNet 1.x ``mx.nd.{name}``).")
    return fn


add = _make_dispatcher('add')
subtract = _make_dispatcher('subtract')
multiply = _make_dispatcher('multiply')
divide = _make_dispatcher('divide')
modulo = _make_dispatcher('modulo')
power = _make_dispatcher('power')
maximum = _make_dispatcher('maximum')
minimum = _make_dispatcher('minimum')
equal = _make_dispatcher('equal')
not_equal = _make_dispatcher('not_equal')
greater = _make_dispatcher('greater')
greater_equal = _make_dispatcher('greater_equal')
lesser = _make_dispatcher('lesser')
lesser_equal = _make_dispatcher('lesser_equal')
logical_and = _make_dispatcher('logical_and')
logical_or = _make_dispatcher('logical_or')
logical_xor = _make_dispatcher('logical_xor')
true_divide = _make_dispatcher('true_divide')


def __getattr__(name):
    """A registered operator's generated function (``elemwise.sqrt`` is ``mx.nd.sqrt``)."""
    from mxcy.ndarray._gen import module_attr
    return module_attr(__name__, name)


__all__ = list(_DISPATCH)
