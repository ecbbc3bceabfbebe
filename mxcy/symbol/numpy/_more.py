"""More of ``mx.sym.np`` over registry operators: cumsum, diag/trace, outer/vdot/inner,
append, fliplr/flipud, moveaxis, the stacking helpers (vstack, hstack, dstack,
column_stack), eye/identity/linspace, empty/empty_like. Those whose NumPy meaning
depends on the operands' number of dimensions read it from the shapes known while a
block traces, and say so when it is unknown."""
import numpy as _onp

from mxcy.symbol.numpy import _cast, _ndim, _node, _reduce, _reshape, _sym, binary, dtypes
from mxcy.symbol.numpy._shapes import (concatenate, flip, split, transpose, zeros,
                                       zeros_like)

__all__ = ['cumsum', 'diag', 'trace', 'outer', 'vdot', 'inner', 'append', 'fliplr',
           'flipud', 'moveaxis', 'vstack', 'row_stack', 'hstack', 'dstack', 'column_stack',
           'eye', 'identity', 'linspace', 'empty', 'empty_like', 'vsplit', 'hsplit',
           'dsplit', 'tensordot', 'array_split']


def _shape_of(x, fname):
    from mxcy.symbol.numpy._dtypes import traced_shape
    shape = traced_shape(x)
    if shape is None:
        raise ValueError(f"mx.sym.np.{fname}: the result depends on the operand's shape, "
                         "which is unknown here (only known while a hybridized block "
                         "traces with initialized parameters)")
    return shape


def _ndim_of(x, fname):
    n = _ndim(x)
    if n is None:
        raise ValueError(f"mx.sym.np.{fname}: the result depends on the operand's number "
                         "of dimensions, which is unknown here (only known while a "
                         "hybridized block traces with initialized parameters)")
    return n


def cumsum(a, axis=None, dtype=None, out=None):
    a = _sym(a, 'cumsum', 'a')
    if axis is None:
        a, axis = _reshape(a, (-1,)), 0
    dt = dtypes(a)[0]
    if dtype is not None and dt != _onp.dtype(dtype):
        a = _cast(a, dtype)
    elif dtype is None and dt == _onp.dtype(_onp.bool_):
        a = _cast(a, _onp.int64)
    return _node('cumsum', (a,), axis=int(axis))


def diag(array, k=0):
    return _node('diag', (_sym(array, 'diag', 'array'),), k=int(k))


def trace(a, offset=0, axis1=0, axis2=1, out=None):
    d = _node('diag', (_sym(a, 'trace', 'a'),), k=int(offset), axis1=int(axis1),
              axis2=int(axis2))
    return _reduce(d, 'sum', -1, False) if _ndim(a) != 2 else _reduce(d, 'sum', None, False)


def outer(a, b):
    return binary('multiply', _reshape(_sym(a, 'outer', 'a'), (-1, 1)),
                  _reshape(_sym(b, 'outer', 'b'), (1, -1)))


def vdot(a, b):
    return _reduce(binary('multiply', _reshape(_sym(a, 'vdot', 'a'), (-1,)),
                          _reshape(_sym(b, 'vdot', 'b'), (-1,))), 'sum', None, False)


def inner(a, b):
    """Sum of products over the last axes: a's last axis against b's last axis."""
    a, b = _sym(a, 'inner', 'a'), _sym(b, 'inner', 'b')
    nb = _ndim_of(b, 'inner')
    if nb <= 1:
        return _reduce(binary('multiply', a, b), 'sum', -1, False)
    from mxcy.symbol.numpy._shapes import dot     # the dot operator: a's last axis
    return dot(a, transpose(b, (nb - 1,) + tuple(range(nb - 1))))   # with b's first


def append(arr, values, axis=None):
    arr, values = _sym(arr, 'append', 'arr'), _sym(values, 'append', 'values')
    if axis is None:
        return concatenate([_reshape(arr, (-1,)), _reshape(values, (-1,))], 0)
    return concatenate([arr, values], axis)


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def moveaxis(a, source, destination):
    n = _ndim_of(_sym(a, 'moveaxis', 'a'), 'moveaxis')
    src, dst = int(source) % n, int(destination) % n
    order = [i for i in range(n) if i != src]
    order.insert(dst, src)
    return transpose(a, tuple(order))


def vstack(arrays, out=None):
    arrays = list(arrays)
    return concatenate([_reshape(a, (1, -1)) if _ndim_of(a, 'vstack') < 2 else a
                        for a in arrays], 0)


row_stack = vstack


def hstack(arrays):
    arrays = list(arrays)
    nd = _ndim_of(arrays[0], 'hstack')
    arrays = [_reshape(a, (1,)) if _ndim_of(a, 'hstack') == 0 else a for a in arrays]
    return concatenate(arrays, 0 if nd <= 1 else 1)


def dstack(arrays):
    shapes = {0: (1, 1, 1), 1: (1, -1, 1), 2: (-2, -2, 1)}
    return concatenate([_reshape(a, shapes[n]) if (n := _ndim_of(a, 'dstack')) < 3 else a
                        for a in arrays], 2)


def column_stack(tup):
    return concatenate([_reshape(a, (-1, 1)) if _ndim_of(a, 'column_stack') < 2 else a
                        for a in tup], 1)


def eye(N, M=None, k=0, dtype=_onp.float32, **kwargs):
    return _node('_eye', (), N=int(N), M=0 if M is None else int(M), k=int(k),
                 dtype=_onp.dtype(_onp.float32 if dtype is None else dtype).name)


def identity(n, dtype=None, ctx=None):
    return eye(n, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             ctx=None):
    if retstep or axis != 0:
        raise ValueError("mx.sym.np.linspace: retstep and axis != 0 have no symbolic form")
    return _node('_linspace', (), start=float(start), stop=float(stop), num=int(num),
                 endpoint=bool(endpoint),
                 dtype=_onp.dtype(_onp.float32 if dtype is None else dtype).name)


def empty(shape, dtype=_onp.float32, order='C', ctx=None):
    return zeros(shape, dtype)


def empty_like(prototype, dtype=None, order='C', subok=False, shape=None):
    return zeros_like(prototype, dtype)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0)


def hsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0 if _ndim_of(ary, 'hsplit') == 1 else 1)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 2)


def tensordot(a, b, axes=2):
    """Sum of products over `axes` (an int: a's last and b's first; or two lists):
    transposes and reshapes around the ``dot`` operator, as mx.np does."""
    from mxcy.symbol.numpy._shapes import dot
    sa = _shape_of(_sym(a, 'tensordot', 'a'), 'tensordot')
    sb = _shape_of(_sym(b, 'tensordot', 'b'), 'tensordot')
    if isinstance(axes, int):
        axa, axb = list(range(len(sa) - axes, len(sa))), list(range(axes))
    else:
        axa, axb = ([x] if isinstance(x, int) else list(x) for x in axes)
    axa, axb = [x % len(sa) for x in axa], [x % len(sb) for x in axb]
    for i, j in zip(axa, axb):
        if sa[i] != sb[j]:
            raise ValueError(f"mx.sym.np.tensordot: shape-mismatch for sum ({sa} axis {i}, "
                             f"{sb} axis {j})")
    free_a = [i for i in range(len(sa)) if i not in axa]
    free_b = [j for j in range(len(sb)) if j not in axb]
    k = int(_onp.prod([sa[i] for i in axa]))
    at = transpose(a, tuple(free_a + axa)) if len(sa) > 1 else a
    bt = transpose(b, tuple(axb + free_b)) if len(sb) > 1 else b
    res = dot(_reshape(at, (-1, k)), _reshape(bt, (k, -1)))
    return _reshape(res, tuple(sa[i] for i in free_a) + tuple(sb[j] for j in free_b))


def array_split(ary, indices_or_sections, axis=0):
    """NumPy's array_split: `n` pieces whose sizes differ by at most one (the first
    ones larger), or pieces between indices."""
    if not isinstance(indices_or_sections, int):
        return split(ary, indices_or_sections, axis)
    n = indices_or_sections
    size = _shape_of(_sym(ary, 'array_split', 'ary'), 'array_split')[axis]
    each, extra = divmod(size, n)
    bounds, at = [], 0
    for i in range(n - 1):
        at += each + (1 if i < extra else 0)
        bounds.append(at)
    return split(ary, bounds, axis)
