"""``mx.sym.np``'s shape, joining, selection, product and creation functions: each the
registry operator ``mx.np``'s function of the same name pushes (``_npx_reshape``,
``transpose``, ``Concat``, ``stack``, ``split``, ``slice_axis``, ``where``, ``clip``,
``dot``, ``take``, ``_zeros``, ``_full``, ``_arange``, ``zeros_like`` ...)."""
import numbers

import numpy as _onp

from mxcy.symbol.numpy import _cast, _node, _reshape, _sym, binary, dtypes
from mxcy.numpy.multiarray import result_dtype
from mxcy.symbol.symbol import Symbol

__all__ = ['reshape', 'ravel', 'transpose', 'swapaxes', 'expand_dims', 'squeeze',
           'broadcast_to', 'tile', 'repeat', 'flip', 'concatenate', 'stack', 'split',
           'where', 'clip', 'dot', 'matmul', 'take', 'zeros', 'ones', 'full', 'arange',
           'zeros_like', 'ones_like', 'full_like']

_F32 = _onp.dtype(_onp.float32)


def _shape(shape):
    return (int(shape),) if isinstance(shape, numbers.Integral) else \
        tuple(int(d) for d in shape)


def reshape(a, newshape, order='C', out=None):
    if order != 'C':
        raise ValueError(f"mx.sym.np.reshape: only order='C' is supported, got {order!r}")
    return _reshape(_sym(a, 'reshape', 'a'), _shape(newshape))


def ravel(x, order='C'):
    return reshape(x, (-1,), order)


def transpose(a, axes=None):
    return _node('transpose', (_sym(a, 'transpose', 'a'),),
                 axes=() if axes is None else _shape(axes))


def swapaxes(a, axis1, axis2):
    return _node('SwapAxis', (_sym(a, 'swapaxes', 'a'),), dim1=int(axis1), dim2=int(axis2))


def expand_dims(a, axis):
    return _node('expand_dims', (_sym(a, 'expand_dims', 'a'),), axis=int(axis))


def squeeze(a, axis=None, out=None):
    return _node('squeeze', (_sym(a, 'squeeze', 'a'),),
                 axis=None if axis is None else _shape(axis))


def broadcast_to(array, shape):
    return _node('broadcast_to', (_sym(array, 'broadcast_to', 'array'),),
                 shape=_shape(shape))


def tile(A, reps):
    return _node('tile', (_sym(A, 'tile', 'A'),), reps=_shape(reps))


def repeat(a, repeats, axis=None):
    a = _sym(a, 'repeat', 'a')
    if axis is None:
        a, axis = _reshape(a, (-1,)), 0
    return _node('repeat', (a,), repeats=int(repeats), axis=int(axis))


def flip(m, axis=None, out=None):
    if axis is None:
        raise ValueError("mx.sym.np.flip: give axis (flipping every axis needs the "
                         "Symbol's number of dimensions, unknown while tracing)")
    return _node('flip', (_sym(m, 'flip', 'm'),), axis=_shape(axis))


def _same_dtype(arrays, fname):
    for i, a in enumerate(arrays):
        _sym(a, fname, f'arrays[{i}]')
    known = [d for d in dtypes(*arrays) if d is not None]
    if len(known) < len(arrays) or len(set(known)) < 2:
        return list(arrays)
    dt = known[0]
    for d in known[1:]:
        dt = result_dtype(dt, d)
    return [a if d == dt else _cast(a, dt) for a, d in zip(arrays, known)]


def concatenate(seq, axis=0, out=None):
    arrays = _same_dtype(list(seq), 'concatenate')
    if axis is None:
        arrays, axis = [_reshape(a, (-1,)) for a in arrays], 0
    return _node('Concat', arrays, dim=int(axis), num_args=len(arrays))


def stack(arrays, axis=0, out=None):
    arrays = _same_dtype(list(arrays), 'stack')
    return _node('stack', arrays, axis=int(axis), num_args=len(arrays))


def split(ary, indices_or_sections, axis=0):
    """Equal sections (an int: the ``split`` operator) or pieces between indices
    (``slice_axis`` each); a list of Symbols."""
    ary = _sym(ary, 'split', 'ary')
    if isinstance(indices_or_sections, numbers.Integral):
        n = int(indices_or_sections)
        parts = _node('split', (ary,), num_outputs=n, axis=int(axis), squeeze_axis=False)
        return [parts[i] for i in range(n)] if n > 1 else [parts]
    bounds = [0] + [int(i) for i in indices_or_sections] + [None]
    return [_node('slice_axis', (ary,), axis=int(axis), begin=lo, end=hi)
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def where(condition, x=None, y=None):
    """NumPy's where of same-shape operands. The ``where`` operator does not broadcast,
    and takes a 1-D condition as a choice of rows, which NumPy would broadcast along the
    last axis instead: operands whose traced shapes differ, or are unknown, raise."""
    if x is None or y is None:
        raise TypeError("mx.sym.np.where: x and y are required (the one-argument form's "
                        "output size depends on the values: no symbolic form)")
    cond = _sym(condition, 'where', 'condition')
    x, y = _filled(x, y, 'x'), _filled(y, x, 'y')
    x, y = _same_dtype([x, y], 'where')
    from mxcy.symbol.numpy._dtypes import traced_shape
    shapes = [traced_shape(v) for v in (cond, x, y)]
    if None in shapes or len(set(shapes)) > 1:
        raise ValueError(f"mx.sym.np.where: condition, x and y need one shape known while "
                         f"tracing, got {shapes} (None: unknown)")
    dc, dx = dtypes(cond, x)
    if dc is not None and dx is not None and dc != dx:
        cond = _cast(cond, dx)          # as mx.np does (MXNet's where takes no bool)
    return _node('where', (cond, x, y))


def _filled(v, like, arg):
    if isinstance(v, Symbol):
        return v
    if not isinstance(like, Symbol):
        raise TypeError(f"mx.sym.np.where: {arg} or the other branch must be a Symbol")
    return binary('add', _node('zeros_like', (like,)), v)


def clip(a, a_min, a_max, out=None):
    lo = float('-inf') if a_min is None else float(a_min)
    hi = float('inf') if a_max is None else float(a_max)
    return _node('clip', (_sym(a, 'clip', 'a'),), a_min=lo, a_max=hi)


def dot(a, b, out=None):
    """NumPy's dot for 1-D and 2-D operands (and N-D with a 1-D or 2-D second operand)."""
    a, b = _same_dtype([_sym(a, 'dot', 'a'), _sym(b, 'dot', 'b')], 'dot')
    return _node('dot', (a, b))


def matmul(a, b, out=None, **kwargs):
    """NumPy's matmul where the traced operands' ranks make it one operator: ``dot`` for
    1-D/2-D operands, ``batch_dot`` for two stacks of matrices (3-D); other ranks, or
    ranks unknown outside a trace, raise rather than give dot's different answer."""
    from mxcy.symbol.numpy._dtypes import traced_ndim
    a, b = _sym(a, 'matmul', 'a'), _sym(b, 'matmul', 'b')
    na, nb = traced_ndim(a), traced_ndim(b)
    if na is not None and nb is not None and 0 < na <= 2 and 0 < nb <= 2:
        return dot(a, b)
    if na == nb == 3:
        return _node('batch_dot', _same_dtype([a, b], 'matmul'))
    raise ValueError(f"mx.sym.np.matmul: operands of {na} and {nb} dimensions ('None': "
                     "unknown outside a trace) have no symbolic form here; 1-D/2-D "
                     "operands or two 3-D stacks do (or use npx.batch_dot)")


def take(a, indices, axis=None, mode='raise', out=None):
    a = _sym(a, 'take', 'a')
    if axis is None:
        a, axis = _reshape(a, (-1,)), 0
    if mode not in ('raise', 'clip', 'wrap'):
        raise ValueError(f"mx.sym.np.take: mode must be 'raise', 'clip' or 'wrap', got "
                         f"{mode!r}")
    return _node('take', (a, _sym(indices, 'take', 'indices')), axis=int(axis),
                 mode='clip' if mode == 'raise' else mode)


def _dt(dtype, default=_F32):
    return _onp.dtype(default if dtype is None else dtype).name


def zeros(shape, dtype=None, order='C', ctx=None):
    return _node('_zeros', (), shape=_shape(shape), dtype=_dt(dtype))


def ones(shape, dtype=None, order='C', ctx=None):
    return _node('_ones', (), shape=_shape(shape), dtype=_dt(dtype))


def full(shape, fill_value, dtype=None, order='C', ctx=None, out=None):
    return _node('_full', (), shape=_shape(shape), value=float(fill_value), dtype=_dt(dtype))


def arange(start, stop=None, step=1, dtype=None, ctx=None):
    if stop is None:
        start, stop = 0, start
    return _node('_arange', (), start=float(start), stop=float(stop), step=float(step),
                 dtype=_dt(dtype))


def _like(op, a, dtype, fname):
    res = _node(op, (_sym(a, fname, 'a'),))
    return res if dtype is None else _cast(res, dtype)


def zeros_like(a, dtype=None, order='C', ctx=None, out=None):
    return _like('zeros_like', a, dtype, 'zeros_like')


def ones_like(a, dtype=None, order='C', ctx=None, out=None):
    return _like('ones_like', a, dtype, 'ones_like')


def full_like(a, fill_value, dtype=None, order='C', ctx=None, out=None):
    return _node('_PlusScalar', (zeros_like(a, dtype),), scalar=float(fill_value))
