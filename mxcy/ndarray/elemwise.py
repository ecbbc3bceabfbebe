"""Elementwise ``mx.nd`` functions: unary math, binary arithmetic and comparison,
broadcasting, ``clip``, ``where`` and ``softmax`` (MXNet 1.x names, arguments, semantics).

Contract:
* every function validates its arguments (types, shapes, dtypes, ``out=``) before it
  pushes anything, and returns at once: results are computed by engine ops;
* results are fresh NDArrays, or the NDArray given as ``out=`` (same shape and dtype as
  the result, checked), never a view of an input;
* the output dtype is the input's (no promotion: mixed dtypes raise TypeError), as in
  MXNet 1.x; integer inputs of float functions compute in double and truncate back;
* float32/float64/int use the C kernels of ``mxcy._ops``; float16 and the functions
  without a kernel run NumPy inside the op (``push_numpy``), an explicit branch.

The small helpers at the top (``check_nd``, ``prepare_out``, ``norm_axis``,
``norm_axes``) are shared by the other function modules of ``mx.nd``.
"""
import numbers

import numpy as np

from mxcy._ndarray import NDArray, binary, empty, push_numpy, unary
from mxcy._ops import BINARY_OPS, UNARY_OPS

_FLOAT_TYPES = (np.float16, np.float32, np.float64)


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


# ---------------------------------------------------------------- unary math
# NOTE: rint and round follow MXNet, not NumPy: round halves away from zero
# (round(2.5) = 3), rint halves down (rint(2.5) = 2, rint(-2.5) = -3).
def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _rint_half_down(x):
    f = np.floor(x)
    return np.where(x - f <= 0.5, f, f + 1)


# Unary functions without a C kernel (or whose float16 path must match the kernel).
_NUMPY_UNARY = {
    'rint': _rint_half_down, 'round': _round_half_away,
    'arcsin': np.arcsin, 'arccos': np.arccos, 'sinh': np.sinh, 'cosh': np.cosh,
    'arcsinh': np.arcsinh, 'arccosh': np.arccosh, 'arctanh': np.arctanh,
    'degrees': np.degrees, 'radians': np.radians,
}
_UNARY_ALIASES = {'fix': 'trunc'}


def _unary_numpy(f, fname):
    def run(x, out):
        with np.errstate(all='ignore'):
            out[...] = f(x.astype(np.float64) if x.dtype.kind in 'iu' else x)
    run.__name__ = fname
    return run


def _make_unary(name):
    code = UNARY_OPS.get(_UNARY_ALIASES.get(name, name))
    np_fn = _NUMPY_UNARY.get(name)

    def fn(data, out=None):
        check_nd(data, name)
        if np_fn is not None and (code is None or data.dtype == np.float16):
            res = prepare_out(out, data.shape, data.dtype, data.context, name)
            push_numpy(_unary_numpy(np_fn, name), [data], [res], name)
            return res
        if out is not None:
            prepare_out(out, data.shape, data.dtype, data.context, name)
        return unary(data, code, out)
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name}(data) (MXNet 1.x ``mx.nd.{name}``)."
    return fn


exp = _make_unary('exp')
log = _make_unary('log')
sqrt = _make_unary('sqrt')
rsqrt = _make_unary('rsqrt')
square = _make_unary('square')
abs = _make_unary('abs')
sign = _make_unary('sign')
relu = _make_unary('relu')
sigmoid = _make_unary('sigmoid')
tanh = _make_unary('tanh')
floor = _make_unary('floor')
ceil = _make_unary('ceil')
round = _make_unary('round')
rint = _make_unary('rint')
fix = _make_unary('fix')
trunc = _make_unary('trunc')
log1p = _make_unary('log1p')
expm1 = _make_unary('expm1')
log2 = _make_unary('log2')
log10 = _make_unary('log10')
sin = _make_unary('sin')
cos = _make_unary('cos')
tan = _make_unary('tan')
arctan = _make_unary('arctan')
reciprocal = _make_unary('reciprocal')
cbrt = _make_unary('cbrt')
negative = _make_unary('negative')
softsign = _make_unary('softsign')
arcsin = _make_unary('arcsin')
arccos = _make_unary('arccos')
sinh = _make_unary('sinh')
cosh = _make_unary('cosh')
arcsinh = _make_unary('arcsinh')
arccosh = _make_unary('arccosh')
arctanh = _make_unary('arctanh')
degrees = _make_unary('degrees')
radians = _make_unary('radians')


# ---------------------------------------------------------------- binary
# name -> (op code, code when the scalar comes first)
_REVERSED = {'subtract': 'rsubtract', 'divide': 'rdivide', 'modulo': 'rmodulo',
             'power': 'rpower', 'greater': 'lesser', 'greater_equal': 'lesser_equal',
             'lesser': 'greater', 'lesser_equal': 'greater_equal'}
_PY_OPS = {'add': lambda a, b: a + b, 'subtract': lambda a, b: a - b,
           'multiply': lambda a, b: a * b, 'divide': lambda a, b: a / b,
           'modulo': lambda a, b: a % b, 'power': lambda a, b: a ** b,
           'maximum': max, 'minimum': min, 'equal': lambda a, b: int(a == b),
           'not_equal': lambda a, b: int(a != b), 'greater': lambda a, b: int(a > b),
           'greater_equal': lambda a, b: int(a >= b), 'lesser': lambda a, b: int(a < b),
           'lesser_equal': lambda a, b: int(a <= b), 'hypot': np.hypot}


def _binary_out(lhs, rhs, code, fname, out):
    """Validate `out` against the broadcast result of lhs OP rhs, then push the kernel."""
    if isinstance(rhs, NDArray):
        if rhs.dtype != lhs.dtype:
            raise TypeError(f"{fname}: lhs has dtype {np.dtype(lhs.dtype)} and rhs "
                            f"{np.dtype(rhs.dtype)}; convert one with astype()")
        try:
            shape = np.broadcast_shapes(lhs.shape, rhs.shape)
        except ValueError:
            raise ValueError(f"{fname}: operands could not be broadcast together: lhs "
                             f"{lhs.shape} and rhs {rhs.shape}") from None
    else:
        shape = lhs.shape
    if out is not None:
        prepare_out(out, shape, lhs.dtype, lhs.context, fname)
    return binary(lhs, rhs, code, out)


def _make_binary(name):
    code = BINARY_OPS[name]
    rcode = BINARY_OPS[_REVERSED.get(name, name)]

    def fn(lhs, rhs, out=None):
        if isinstance(lhs, NDArray):
            if not (isinstance(rhs, NDArray) or _is_scalar(rhs)):
                raise TypeError(f"{name}: rhs must be an NDArray or a number, got "
                                f"{type(rhs).__name__}")
            return _binary_out(lhs, rhs, code, name, out)
        if isinstance(rhs, NDArray):
            if not _is_scalar(lhs):
                raise TypeError(f"{name}: lhs must be an NDArray or a number, got "
                                f"{type(lhs).__name__}")
            return _binary_out(rhs, lhs, rcode, name, out)
        if _is_scalar(lhs) and _is_scalar(rhs):
            return _PY_OPS[name](lhs, rhs)
        raise TypeError(f"{name}: operands must be NDArrays or numbers, got "
                        f"{type(lhs).__name__} and {type(rhs).__name__}")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {name} of an NDArray and an NDArray (broadcasting) or a "
                  f"number (MXNet 1.x ``mx.nd.{name}``).")
    return fn


def _make_strict(name, op, fname, same_shape):
    """broadcast_* (two NDArrays, broadcasting) and elemwise_* (two equal shapes)."""
    code = BINARY_OPS[op]

    def fn(lhs, rhs, out=None):
        check_nd(lhs, fname, 'lhs')
        check_nd(rhs, fname, 'rhs')
        if same_shape and lhs.shape != rhs.shape:
            raise ValueError(f"{fname}: lhs and rhs must have the same shape, got "
                             f"{lhs.shape} and {rhs.shape} (use broadcast_{name} to "
                             f"broadcast)")
        return _binary_out(lhs, rhs, code, fname, out)
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"Elementwise {name} of two NDArrays (MXNet 1.x ``mx.nd.{fname}``)."
    return fn


add = _make_binary('add')
subtract = _make_binary('subtract')
multiply = _make_binary('multiply')
divide = _make_binary('divide')
modulo = _make_binary('modulo')
power = _make_binary('power')
maximum = _make_binary('maximum')
minimum = _make_binary('minimum')
equal = _make_binary('equal')
not_equal = _make_binary('not_equal')
greater = _make_binary('greater')
greater_equal = _make_binary('greater_equal')
lesser = _make_binary('lesser')
lesser_equal = _make_binary('lesser_equal')

broadcast_add = broadcast_plus = _make_strict('add', 'add', 'broadcast_add', False)
broadcast_sub = broadcast_minus = _make_strict('sub', 'subtract', 'broadcast_sub', False)
broadcast_mul = _make_strict('mul', 'multiply', 'broadcast_mul', False)
broadcast_div = _make_strict('div', 'divide', 'broadcast_div', False)
broadcast_mod = _make_strict('mod', 'modulo', 'broadcast_mod', False)
broadcast_power = _make_strict('power', 'power', 'broadcast_power', False)
broadcast_maximum = _make_strict('maximum', 'maximum', 'broadcast_maximum', False)
broadcast_minimum = _make_strict('minimum', 'minimum', 'broadcast_minimum', False)
broadcast_equal = _make_strict('equal', 'equal', 'broadcast_equal', False)
broadcast_not_equal = _make_strict('not_equal', 'not_equal', 'broadcast_not_equal', False)
broadcast_greater = _make_strict('greater', 'greater', 'broadcast_greater', False)
broadcast_greater_equal = _make_strict('greater_equal', 'greater_equal',
                                       'broadcast_greater_equal', False)
broadcast_lesser = _make_strict('lesser', 'lesser', 'broadcast_lesser', False)
broadcast_lesser_equal = _make_strict('lesser_equal', 'lesser_equal',
                                      'broadcast_lesser_equal', False)
broadcast_hypot = _make_strict('hypot', 'hypot', 'broadcast_hypot', False)
elemwise_add = _make_strict('add', 'add', 'elemwise_add', True)
elemwise_sub = _make_strict('sub', 'subtract', 'elemwise_sub', True)
elemwise_mul = _make_strict('mul', 'multiply', 'elemwise_mul', True)
elemwise_div = _make_strict('div', 'divide', 'elemwise_div', True)


# ---------------------------------------------------------------- clip, where
def clip(data, a_min, a_max, out=None):
    """Clip values to [a_min, a_max] (bounds cast to the data's dtype; NaN stays NaN)."""
    check_nd(data, 'clip')
    for arg, v in (('a_min', a_min), ('a_max', a_max)):
        if not _is_scalar(v):
            raise TypeError(f"clip: {arg} must be a number, got {type(v).__name__} {v!r}")
    res = prepare_out(out, data.shape, data.dtype, data.context, 'clip')
    lo, hi = np.array(a_min).astype(data.dtype), np.array(a_max).astype(data.dtype)

    def run(x, o):
        np.clip(x, lo, hi, out=o)
    push_numpy(run, [data], [res], 'clip')
    return res


def where(condition, x, y, out=None):
    """x where condition is non-zero, else y.

    `condition` has x's shape, or is 1-D of length x.shape[0] (then it selects whole rows);
    x and y have the same shape and dtype; condition may have any dtype.
    """
    check_nd(condition, 'where', 'condition')
    check_nd(x, 'where', 'x')
    check_nd(y, 'where', 'y')
    if x.shape != y.shape:
        raise ValueError(f"where: x and y must have the same shape, got {x.shape} and "
                         f"{y.shape}")
    if x.dtype != y.dtype:
        raise TypeError(f"where: x and y must have the same dtype, got "
                        f"{np.dtype(x.dtype)} and {np.dtype(y.dtype)}")
    if condition.shape == x.shape:
        cshape = x.shape
    elif len(condition.shape) == 1 and x.shape and condition.shape[0] == x.shape[0]:
        cshape = condition.shape + (1,) * (len(x.shape) - 1)
    else:
        raise ValueError(f"where: condition must have the shape of x {x.shape} or be 1-D "
                         f"of length {x.shape[0] if x.shape else 1}, got "
                         f"{condition.shape}")
    res = prepare_out(out, x.shape, x.dtype, x.context, 'where')

    def run(c, a, b, o):
        np.copyto(o, np.where(c.reshape(cshape) != 0, a, b))
    push_numpy(run, [condition, x, y], [res], 'where')
    return res


# ---------------------------------------------------------------- broadcasting
def _broadcast_into(data, shape, fname, out):
    res = prepare_out(out, shape, data.dtype, data.context, fname)

    def run(x, o):
        np.copyto(o, x)
    push_numpy(run, [data], [res], fname)
    return res


def _check_broadcast(src, target, fname):
    if len(src) != len(target) or any(s != t and s != 1 for s, t in zip(src, target)):
        raise ValueError(f"{fname}: cannot broadcast an array of shape {src} to {target} "
                         f"(each dimension must be equal or 1, with the same number of "
                         f"dimensions)")


def broadcast_to(data, shape, out=None):
    """Broadcast size-1 dims to `shape` (a 0 in `shape` keeps that input dim)."""
    check_nd(data, 'broadcast_to')
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 0
            for d in shape):
        raise TypeError(f"broadcast_to: shape must be a tuple of non-negative ints, got "
                        f"{shape!r}")
    if len(shape) != len(data.shape):
        raise ValueError(f"broadcast_to: shape {tuple(shape)} must have as many dimensions "
                         f"as the input {data.shape}")
    target = tuple(int(d) if d else s for d, s in zip(shape, data.shape))
    _check_broadcast(data.shape, target, 'broadcast_to')
    return _broadcast_into(data, target, 'broadcast_to', out)


def broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None, out=None):
    """Broadcast lhs to rhs's shape, or only lhs_axes of lhs to the sizes of rhs_axes."""
    check_nd(lhs, 'broadcast_like', 'lhs')
    check_nd(rhs, 'broadcast_like', 'rhs')
    if lhs_axes is None and rhs_axes is None:
        target = rhs.shape
    else:
        if lhs_axes is None or rhs_axes is None:
            raise ValueError("broadcast_like: give both lhs_axes and rhs_axes, or neither")
        la = [norm_axis(a, len(lhs.shape), 'broadcast_like', 'lhs_axes')
              for a in ((lhs_axes,) if isinstance(lhs_axes, numbers.Integral) else lhs_axes)]
        ra = [norm_axis(a, len(rhs.shape), 'broadcast_like', 'rhs_axes')
              for a in ((rhs_axes,) if isinstance(rhs_axes, numbers.Integral) else rhs_axes)]
        if len(la) != len(ra):
            raise ValueError(f"broadcast_like: lhs_axes {lhs_axes} and rhs_axes {rhs_axes} "
                             f"have different lengths")
        target = list(lhs.shape)
        for i, j in zip(la, ra):
            target[i] = rhs.shape[j]
        target = tuple(target)
    _check_broadcast(lhs.shape, target, 'broadcast_like')
    return _broadcast_into(lhs, target, 'broadcast_like', out)


def broadcast_axis(data, axis=(), size=(), out=None):
    """Broadcast the size-1 dims `axis` of data to `size` (ints or equal-length tuples)."""
    check_nd(data, 'broadcast_axis')
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    sizes = (size,) if isinstance(size, numbers.Integral) else tuple(size)
    if len(axes) != len(sizes):
        raise ValueError(f"broadcast_axis: axis {axis!r} and size {size!r} must have the "
                         f"same length")
    target = list(data.shape)
    for a, s in zip(axes, sizes):
        a = norm_axis(a, len(data.shape), 'broadcast_axis')
        if data.shape[a] != 1:
            raise ValueError(f"broadcast_axis: axis {a} of the input {data.shape} has size "
                             f"{data.shape[a]}; only size-1 axes can be broadcast")
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 0:
            raise ValueError(f"broadcast_axis: size must contain non-negative ints, got "
                             f"{size!r}")
        target[a] = int(s)
    return _broadcast_into(data, tuple(target), 'broadcast_axis', out)


broadcast_axes = broadcast_axis


# ---------------------------------------------------------------- softmax family
def _softmax_args(data, axis, temperature, dtype, fname):
    check_nd(data, fname)
    if data.dtype not in _FLOAT_TYPES:
        raise TypeError(f"{fname}: needs a float16/float32/float64 input, got "
                        f"{np.dtype(data.dtype)}")
    axis = norm_axis(axis, len(data.shape), fname)
    if temperature is not None:
        if not _is_scalar(temperature):
            raise TypeError(f"{fname}: temperature must be a number or None, got "
                            f"{temperature!r}")
        if temperature == 0:
            raise ValueError(f"{fname}: temperature must not be zero")
    odtype = data.dtype if dtype is None else np.dtype(dtype).type
    if odtype not in _FLOAT_TYPES:
        raise TypeError(f"{fname}: dtype must be float16, float32 or float64, got "
                        f"{np.dtype(odtype)}")
    return axis, odtype


def _shifted(x, axis, temperature, odtype, mask=None):
    """(x/t - max) where `mask` holds (else -inf), in at least float32 and the output's
    precision, so exp never overflows; an all-masked row gets max 0, not -inf."""
    work = np.result_type(x.dtype, odtype, np.float32)
    z = x.astype(work, copy=False)
    if temperature is not None and temperature != 1:
        z = z / work.type(temperature)
    if mask is not None:
        z = np.where(mask, z, -np.inf)
    peak = np.max(z, axis=axis, keepdims=True) if z.size else 0
    return z - np.where(np.isfinite(peak), peak, 0)


def _length_mask(lens, axis, n, shape):
    """mask[..., i, ...] = i < length, for lengths of `shape` without `axis`."""
    lens = np.expand_dims(lens.reshape(shape[:axis] + shape[axis + 1:]), axis)
    if lens.size and (lens.min() < 0 or lens.max() > n):
        raise ValueError(f"softmax: length values must be in [0, {n}] for axis of size "
                         f"{n}, got values from {lens.min()} to {lens.max()}")
    return np.arange(n).reshape((n,) + (1,) * (len(shape) - axis - 1)) < lens


def softmax(data, axis=-1, temperature=None, dtype=None, use_length=False, length=None,
            out=None):
    """exp(x/t) / sum(exp(x/t)) along `axis`, numerically stable.

    With use_length=True, `length` (an integer NDArray of data's shape without `axis`)
    keeps the first `length` entries of each row; the rest are 0. An out-of-range length
    is an error raised at the next wait. NOTE: MXNet >= 1.6 put `length` second; here, as
    in MXNet 1.x before it, `axis` is second, so pass `length=` by keyword.
    """
    axis, odtype = _softmax_args(data, axis, temperature, dtype, 'softmax')
    inputs = [data]
    if use_length:
        check_nd(length, 'softmax', 'length')
        lshape = data.shape[:axis] + data.shape[axis + 1:]
        if length.shape != lshape and not (lshape == () and length.shape == (1,)):
            raise ValueError(f"softmax: length must have shape {lshape} (data {data.shape} "
                             f"without axis {axis}), got {length.shape}")
        if np.dtype(length.dtype).kind not in 'iu':
            raise TypeError(f"softmax: length must be an integer array, got "
                            f"{np.dtype(length.dtype)}")
        inputs.append(length)
    res = prepare_out(out, data.shape, odtype, data.context, 'softmax')
    n = data.shape[axis]

    def run(x, *rest):
        mask = _length_mask(rest[0], axis, n, x.shape) if use_length else None
        e = np.exp(_shifted(x, axis, temperature, odtype, mask))
        s = np.sum(e, axis=axis, keepdims=True)
        rest[-1][...] = e / np.where(s > 0, s, 1)
    push_numpy(run, inputs, [res], 'softmax')
    return res


def log_softmax(data, axis=-1, temperature=None, dtype=None, use_length=False, out=None):
    """log(softmax(x)) along `axis`, computed as (x - max) - log(sum(exp(x - max)))."""
    axis, odtype = _softmax_args(data, axis, temperature, dtype, 'log_softmax')
    if use_length:
        raise ValueError("log_softmax: use_length=True is not supported (MXNet 1.x "
                         "log_softmax takes no length input)")
    res = prepare_out(out, data.shape, odtype, data.context, 'log_softmax')

    def run(x, o):
        z = _shifted(x, axis, temperature, odtype)
        o[...] = z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))
    push_numpy(run, [data], [res], 'log_softmax')
    return res


def softmin(data, axis=-1, temperature=None, dtype=None, out=None):
    """softmax(-x) along `axis`."""
    axis, odtype = _softmax_args(data, axis, temperature, dtype, 'softmin')
    res = prepare_out(out, data.shape, odtype, data.context, 'softmin')

    def run(x, o):
        e = np.exp(_shifted(-x, axis, temperature, odtype))
        o[...] = e / np.sum(e, axis=axis, keepdims=True)
    push_numpy(run, [data], [res], 'softmin')
    return res

__all__ = [
    'exp', 'log', 'sqrt', 'rsqrt', 'square', 'abs', 'sign', 'relu', 'sigmoid', 'tanh',
    'floor', 'ceil', 'round', 'rint', 'fix', 'trunc', 'log1p', 'expm1', 'log2', 'log10',
    'sin', 'cos', 'tan', 'arctan', 'reciprocal', 'cbrt', 'negative', 'softsign', 'arcsin',
    'arccos', 'sinh', 'cosh', 'arcsinh', 'arccosh', 'arctanh', 'degrees', 'radians',
    'add', 'subtract', 'multiply', 'divide', 'modulo', 'power', 'maximum', 'minimum',
    'equal', 'not_equal', 'greater', 'greater_equal', 'lesser', 'lesser_equal',
    'broadcast_add', 'broadcast_plus', 'broadcast_sub', 'broadcast_minus', 'broadcast_mul',
    'broadcast_div', 'broadcast_mod', 'broadcast_power', 'broadcast_maximum',
    'broadcast_minimum', 'broadcast_equal', 'broadcast_not_equal', 'broadcast_greater',
    'broadcast_greater_equal', 'broadcast_lesser', 'broadcast_lesser_equal',
    'broadcast_hypot', 'elemwise_add', 'elemwise_sub', 'elemwise_mul', 'elemwise_div',
    'clip', 'where', 'broadcast_to', 'broadcast_like', 'broadcast_axis', 'broadcast_axes',
    'softmax', 'log_softmax', 'softmin',
]
