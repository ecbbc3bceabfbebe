"""mx.np shape functions and products through the operator registry (recorded by
autograd): reshape, transpose, concatenate, stack, split, where, clip, dot, matmul ..."""
import numbers

import numpy as _onp

from mxcy._ndarray import NDArray
from mxcy.numpy._ops import _arr, _axes, _op, _to_out
from mxcy.numpy.multiarray import _cast, as_array, result_dtype


def _same_dtype(arrays, fname):
    arrays = [_arr(a, fname, 'arrays') for a in arrays]
    if not arrays:
        raise ValueError(f"{fname}: needs at least one array")
    dt = arrays[0].dtype
    for a in arrays[1:]:
        dt = result_dtype(dt, a.dtype)
    return [a if a.dtype == dt else _cast(a, dt) for a in arrays]


def reshape(a, newshape, order='C', out=None):
    return _to_out(_arr(a, 'reshape', 'a').reshape(newshape, order=order), out, 'reshape')


def ravel(x, order='C'):
    return _arr(x, 'ravel').reshape(-1, order=order)


def transpose(a, axes=None):
    a = _arr(a, 'transpose', 'a')
    if a.ndim < 2 and axes is None:
        return a.copy()
    axes = tuple(range(a.ndim))[::-1] if axes is None else tuple(_axes(ax, a.ndim,
                                                                        'transpose')[0]
                                                                  for ax in axes)
    return _op('transpose')(a, axes=axes)


def swapaxes(a, axis1, axis2):
    a = _arr(a, 'swapaxes', 'a')
    return _op('swapaxes')(a, dim1=_axes(axis1, a.ndim, 'swapaxes')[0],
                           dim2=_axes(axis2, a.ndim, 'swapaxes')[0])


def moveaxis(a, source, destination):
    a = _arr(a, 'moveaxis', 'a')
    axes = list(range(a.ndim))
    src = [source] if isinstance(source, numbers.Integral) else list(source)
    dst = [destination] if isinstance(destination, numbers.Integral) else list(destination)
    src = [_axes(s, a.ndim, 'moveaxis')[0] for s in src]
    dst = [_axes(d, a.ndim, 'moveaxis')[0] for d in dst]
    rest = [ax for ax in axes if ax not in src]
    for d, s in sorted(zip(dst, src)):
        rest.insert(d, s)
    return transpose(a, rest)


def expand_dims(a, axis):
    a = _arr(a, 'expand_dims', 'a')
    if not -a.ndim - 1 <= axis <= a.ndim:
        raise ValueError(f"expand_dims: axis {axis} is out of bounds for an array of "
                         f"dimension {a.ndim + 1}")
    ax = axis % (a.ndim + 1)
    return a.reshape(a.shape[:ax] + (1,) + a.shape[ax:])


def squeeze(a, axis=None, out=None):
    a = _arr(a, 'squeeze', 'a')
    axes = tuple(i for i, d in enumerate(a.shape) if d == 1) if axis is None else \
        _axes(axis, a.ndim, 'squeeze')
    for ax in axes:
        if a.shape[ax] != 1:
            raise ValueError(f"squeeze: cannot select an axis to squeeze out which has "
                             f"size not equal to one (axis {ax}, shape {a.shape})")
    return _to_out(a.reshape(tuple(d for i, d in enumerate(a.shape) if i not in axes)),
                   out, 'squeeze')


def broadcast_to(array, shape):
    a = _arr(array, 'broadcast_to', 'array')
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if a.ndim > len(shape):
        raise ValueError(f"broadcast_to: input shape {a.shape} cannot be broadcast to "
                         f"{shape}")
    _onp.broadcast_shapes(a.shape, shape)
    if a.shape == shape:
        return a.copy()
    a = a.reshape((1,) * (len(shape) - a.ndim) + a.shape)
    return _op('broadcast_to')(a, shape=shape)


def broadcast_arrays(*args):
    shape = _onp.broadcast_shapes(*[_arr(a, 'broadcast_arrays').shape for a in args])
    return [broadcast_to(a, shape) for a in args]


def tile(A, reps):
    a = _arr(A, 'tile', 'A')
    reps = (reps,) if isinstance(reps, numbers.Integral) else tuple(reps)
    if not a.ndim:
        a = a.reshape(1)
    return _op('tile')(a, reps=reps)


def repeat(a, repeats, axis=None):
    a = _arr(a, 'repeat', 'a')
    if axis is None:
        a, axis = a.reshape(-1), 0
    return _op('repeat')(a, repeats=int(repeats), axis=_axes(axis, a.ndim, 'repeat')[0])


def flip(m, axis=None, out=None):
    m = _arr(m, 'flip', 'm')
    if not m.ndim:
        return _to_out(m.copy(), out, 'flip')
    return _to_out(_op('flip')(m, axis=_axes(axis, m.ndim, 'flip')), out, 'flip')


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def concatenate(seq, axis=0, out=None):
    arrays = _same_dtype(seq, 'concatenate')
    if axis is None:
        arrays, axis = [a.reshape(-1) for a in arrays], 0
    nd = arrays[0].ndim
    if not nd:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    for i, a in enumerate(arrays):
        if a.ndim != nd:
            raise ValueError(f"concatenate: all the input arrays must have the same number "
                             f"of dimensions, array 0 has {nd}, array {i} has {a.ndim}")
    return _to_out(_op('concat')(*arrays, dim=_axes(axis, nd, 'concatenate')[0]), out,
                   'concatenate')


def append(arr, values, axis=None):
    return concatenate([arr, values], axis)


def stack(arrays, axis=0, out=None):
    arrays = _same_dtype(arrays, 'stack')
    shape = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != shape:
            raise ValueError(f"stack: all input arrays must have the same shape, array 0 "
                             f"has {shape}, array {i} has {a.shape}")
    ax = _axes(axis, len(shape) + 1, 'stack')[0]
    return _to_out(concatenate([a.reshape(shape[:ax] + (1,) + shape[ax:]) for a in arrays],
                               ax), out, 'stack')


def vstack(arrays, out=None):
    arrays = [_arr(a, 'vstack') for a in arrays]
    return concatenate([a.reshape(1, -1) if a.ndim < 2 else a for a in arrays], 0, out)


row_stack = vstack


def hstack(arrays):
    arrays = [_arr(a, 'hstack') for a in arrays]
    arrays = [a.reshape(1) if not a.ndim else a for a in arrays]
    return concatenate(arrays, 0 if arrays[0].ndim == 1 else 1)


def dstack(arrays):
    arrays = [_arr(a, 'dstack') for a in arrays]
    fixed = []
    for a in arrays:
        if a.ndim == 0:
            a = a.reshape(1, 1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, -1, 1)
        elif a.ndim == 2:
            a = a.reshape(a.shape + (1,))
        fixed.append(a)
    return concatenate(fixed, 2)


def column_stack(tup):
    arrays = [_arr(a, 'column_stack') for a in tup]
    return concatenate([a.reshape(-1, 1) if a.ndim < 2 else a for a in arrays], 1)


def _split(ary, indices_or_sections, axis, fname, even):
    a = _arr(ary, fname, 'ary')
    ax = _axes(axis, a.ndim, fname)[0]
    n = a.shape[ax]
    if isinstance(indices_or_sections, numbers.Integral):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError(f"{fname}: number sections must be larger than 0")
        if even and n % k:
            raise ValueError(f"{fname}: array split does not result in an equal division "
                             f"({n} into {k})")
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        bounds = list(_onp.cumsum([0] + sizes))
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo, hi = int(_onp.clip(lo, 0, n)), int(_onp.clip(hi, 0, n))
        parts.append(_op('slice_axis')(a, axis=ax, begin=lo, end=max(lo, hi)))
    return parts


def split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, 'split', True)


def array_split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, 'array_split', False)


def hsplit(ary, indices_or_sections):
    a = _arr(ary, 'hsplit', 'ary')
    return split(a, indices_or_sections, 0 if a.ndim == 1 else 1)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 2)


def where(condition, x=None, y=None):
    if x is None and y is None:
        from mxcy.numpy import nonzero
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    c = _arr(condition, 'where', 'condition')
    ctx = c.context
    xa = x if isinstance(x, NDArray) else as_array(x, ctx, None if not isinstance(
        y, NDArray) else (y.dtype if isinstance(x, numbers.Number) else None))
    ya = y if isinstance(y, NDArray) else as_array(y, ctx, xa.dtype if isinstance(
        y, numbers.Number) else None)
    xa, ya = _same_dtype([xa, ya], 'where')
    shape = _onp.broadcast_shapes(c.shape, xa.shape, ya.shape)
    c, xa, ya = [a if a.shape == shape else broadcast_to(a, shape) for a in (c, xa, ya)]
    if c.dtype != xa.dtype:
        c = _cast(c, xa.dtype)
    return _op('where')(c, xa, ya)


def clip(a, a_min, a_max, out=None):
    a = _arr(a, 'clip', 'a')
    if a_min is None and a_max is None:
        raise ValueError("clip: one of max or min must be given")
    lo = -_onp.inf if a_min is None else float(a_min)
    hi = _onp.inf if a_max is None else float(a_max)
    return _to_out(_op('clip')(a, a_min=lo, a_max=hi), out, 'clip')


# ---------------------------------------------------------------- products
def _float_pair(a, b, fname):
    a, b = _arr(a, fname, 'a'), _arr(b, fname, 'b')
    dt = result_dtype(a.dtype, b.dtype)
    if dt.kind != 'f':
        dt = _onp.dtype(_onp.float32)
    return (a if a.dtype == dt else _cast(a, dt)), (b if b.dtype == dt else _cast(b, dt))


def dot(a, b, out=None):
    a, b = _float_pair(a, b, 'dot')
    if not a.ndim or not b.ndim:
        return _to_out(a * b, out, 'dot')
    if a.shape[-1] != b.shape[0 if b.ndim == 1 else -2]:
        raise ValueError(f"dot: shapes {a.shape} and {b.shape} not aligned")
    if a.ndim == 1 and b.ndim == 1:
        res = _op('dot')(a, b).reshape(())
    elif b.ndim <= 2:
        res = _op('dot')(a, b)
    else:
        res = tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))
    return _to_out(res, out, 'dot')


def vdot(a, b):
    return dot(ravel(_arr(a, 'vdot', 'a')), ravel(_arr(b, 'vdot', 'b')))


def inner(a, b):
    a, b = _float_pair(a, b, 'inner')
    if not a.ndim or not b.ndim:
        return a * b
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def outer(a, b):
    a, b = _float_pair(a, b, 'outer')
    return a.reshape(-1, 1) * b.reshape(1, -1)


def matmul(a, b, out=None, **kwargs):
    a, b = _float_pair(a, b, 'matmul')
    if not a.ndim or not b.ndim:
        raise ValueError("matmul: input operand does not have enough dimensions")
    va, vb = a.ndim == 1, b.ndim == 1
    if va:
        a = a.reshape(1, -1)
    if vb:
        b = b.reshape(-1, 1)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: mismatch in its core dimension: {a.shape} and {b.shape}")
    if a.ndim == 2 and b.ndim == 2:
        res = _op('dot')(a, b)
    else:
        batch = _onp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = broadcast_to(a, batch + a.shape[-2:]) if a.shape[:-2] != batch else a
        b = broadcast_to(b, batch + b.shape[-2:]) if b.shape[:-2] != batch else b
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        res = _op('batch_dot')(a.reshape(-1, m, k), b.reshape(-1, k, n)).reshape(
            batch + (m, n))
    if va:
        res = res.reshape(res.shape[:-2] + res.shape[-1:])
    if vb:
        res = res.reshape(res.shape[:-1])
    return _to_out(res, out, 'matmul')


def tensordot(a, b, axes=2):
    a, b = _float_pair(a, b, 'tensordot')
    if isinstance(axes, numbers.Integral):
        axa = list(range(a.ndim - axes, a.ndim))
        axb = list(range(axes))
    else:
        axa, axb = axes
        axa = [axa] if isinstance(axa, numbers.Integral) else list(axa)
        axb = [axb] if isinstance(axb, numbers.Integral) else list(axb)
    axa = [x % a.ndim for x in axa]
    axb = [x % b.ndim for x in axb]
    for i, j in zip(axa, axb):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: shape-mismatch for sum ({a.shape} axis {i}, "
                             f"{b.shape} axis {j})")
    free_a = [i for i in range(a.ndim) if i not in axa]
    free_b = [j for j in range(b.ndim) if j not in axb]
    k = int(_onp.prod([a.shape[i] for i in axa]))
    at = transpose(a, free_a + axa) if a.ndim > 1 else a
    bt = transpose(b, axb + free_b) if b.ndim > 1 else b
    res = _op('dot')(at.reshape(-1, k), bt.reshape(k, -1))
    return res.reshape(tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b))


# ---------------------------------------------------------------- gathers and diagonals
def take(a, indices, axis=None, mode='raise', out=None):
    """Elements of `a` at `indices` along `axis` (flattened when None), recorded by
    autograd. mode 'raise' checks the indices first (they are read: a wait)."""
    a = _arr(a, 'take', 'a')
    if mode not in ('raise', 'wrap', 'clip'):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    idx = indices if isinstance(indices, NDArray) else as_array(
        _onp.asarray(indices), a.context, _onp.int64)
    if axis is None:
        a, axis = a.reshape(-1), 0
    ax = _axes(axis, a.ndim, 'take')[0]
    if mode == 'raise':
        n = a.shape[ax]
        values = idx.asnumpy()
        if values.size and (values.min() < -n or values.max() >= n):
            bad = int(values.max() if values.max() >= n else values.min())
            raise IndexError(f"take: index {bad} is out of bounds for axis {ax} with size "
                             f"{n}")
        if values.size and values.min() < 0:
            idx = as_array(_onp.where(values < 0, values + n, values), a.context, idx.dtype)
    res = _op('take')(a, idx, axis=ax, mode='clip' if mode == 'raise' else mode)
    return _to_out(res, out, 'take')


def diag(array, k=0):
    """The k-th diagonal of a 2-D array, or a 2-D array with a 1-D one on it (autograd)."""
    a = _arr(array, 'diag', 'array')
    if a.ndim not in (1, 2):
        raise ValueError(f"diag: input must be 1- or 2-d, got {a.ndim} dimensions")
    return _op('diag')(a, k=int(k))


def trace(a, offset=0, axis1=0, axis2=1, out=None):
    """Sum along a diagonal (axes 0, 1 of a 2-D array through the registry)."""
    a = _arr(a, 'trace', 'a')
    ax1, ax2 = _axes(axis1, a.ndim, 'trace')[0], _axes(axis2, a.ndim, 'trace')[0]
    d = _op('diag')(a, k=int(offset), axis1=ax1, axis2=ax2)
    return _to_out(_op('sum')(d, axis=-1).reshape(d.shape[:-1]), out, 'trace')


def tril(m, k=0):
    """The lower triangle of (the last two axes of) `m`, zeros above (autograd: a mask)."""
    m = _arr(m, 'tril', 'm')
    if m.ndim < 2:
        raise ValueError(f"tril: input must have at least 2 dimensions, got {m.ndim}")
    mask = as_array(_onp.tril(_onp.ones(m.shape[-2:]), k), m.context, m.dtype)
    return m * mask


def einsum(*operands, **kwargs):
    """Einstein summation through the registry (broadcast products and sums, recorded by
    autograd); subscripts with '...' or a letter repeated within one operand (diagonals)
    are computed by NumPy (`_fallback`)."""
    out = kwargs.pop('out', None)
    kwargs.pop('optimize', None)
    if not operands or not isinstance(operands[0], str):
        raise TypeError("einsum: the first argument must be the subscripts string")
    spec, arrays = operands[0].replace(' ', ''), operands[1:]
    inputs, _, output = spec.partition('->')
    terms = inputs.split(',')
    if kwargs or '...' in spec or len(terms) != len(arrays) or \
            any(len(set(t)) != len(t) for t in terms):
        from mxcy.numpy._fallback import numpy_function
        res = numpy_function('einsum', _onp.einsum, '*operands **kwargs')(*operands,
                                                                          **kwargs)
        return _to_out(res, out, 'einsum')
    if '->' not in spec:
        counts = {c: inputs.count(c) for c in inputs if c != ','}
        output = ''.join(sorted(c for c, n in counts.items() if n == 1))
    order = list(output) + sorted({c for t in terms for c in t} - set(output))
    prod = None
    for term, a in zip(terms, arrays):
        a = _arr(a, 'einsum', 'operands')
        if a.ndim != len(term):
            raise ValueError(f"einsum: operand has {a.ndim} dimensions, subscripts "
                             f"'{term}' name {len(term)}")
        present = [c for c in order if c in term]
        if len(term) > 1:
            a = transpose(a, [term.index(c) for c in present])
        sizes = dict(zip(present, a.shape))
        a = a.reshape(tuple(sizes.get(c, 1) for c in order))
        prod = a if prod is None else prod * a
    summed = tuple(range(len(output), len(order)))
    res = _op('sum')(prod, axis=summed).reshape(prod.shape[:len(output)]) if summed \
        else prod
    return _to_out(res, out, 'einsum')
