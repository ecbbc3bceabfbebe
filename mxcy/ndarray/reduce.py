"""Reductions of ``mx.nd``: sum, mean, max, min, prod, nansum, nanprod, argmax, argmin, norm.

MXNet 1.x semantics, which differ from NumPy's in places:
* ``axis`` is an int, a tuple of ints, None or () (None and () reduce every axis);
  ``exclude=True`` reduces every axis EXCEPT those given;
* a reduction to a scalar has shape (1,), not (); ``keepdims=True`` keeps size-1 axes;
* the result has the input's dtype: integer sums and products wrap in that dtype,
  integer means truncate toward zero; argmax/argmin return indices in the input's dtype
  (float32 indices for float32 data), and with axis=None index the flattened array;
* ``norm`` supports ord=1 and ord=2 only.

Every function validates before it pushes and returns at once (NumPy runs inside the op).
Reducing an empty axis with max/min/argmax/argmin raises at the call.
"""
import numpy as np

from mxcy._ndarray import push_numpy
from mxcy.ndarray.elemwise import check_nd, norm_axes, norm_axis, prepare_out


def _reduce_axes(data, axis, exclude, fname):
    """The sorted axes to reduce."""
    ndim = len(data.shape)
    if axis is None or (isinstance(axis, (tuple, list)) and len(axis) == 0):
        return tuple(range(ndim))
    axes = norm_axes(axis, ndim, fname)
    if exclude:
        axes = tuple(a for a in range(ndim) if a not in axes)
    return axes


def _out_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    kept = tuple(d for i, d in enumerate(shape) if i not in axes)
    return kept or (1,)


def _check_nonempty(data, axes, fname):
    for a in axes:
        if data.shape[a] == 0:
            raise ValueError(f"{fname}: cannot reduce axis {a} of size 0 (input shape "
                             f"{data.shape}): the result is undefined")
    if not axes and data.size == 0:
        raise ValueError(f"{fname}: the input of shape {data.shape} is empty")


def _make_reduction(name, np_fn, int_accumulator, doc):
    """`int_accumulator`: for integer inputs, 'same' accumulates in the input dtype (wraps
    as MXNet does), 'float64' in double (then truncates), None passes no dtype."""
    def fn(data, axis=None, keepdims=False, exclude=False, out=None):
        check_nd(data, name)
        axes = _reduce_axes(data, axis, exclude, name)
        if name in ('max', 'min'):
            _check_nonempty(data, axes, name)
        shape = _out_shape(data.shape, axes, keepdims)
        res = prepare_out(out, shape, data.dtype, data.context, name)
        integer = np.dtype(data.dtype).kind in 'iu'

        def run(x, o):
            if integer and int_accumulator:
                acc = x.dtype if int_accumulator == 'same' else np.float64
                r = np_fn(x, axis=axes, dtype=acc)
            else:
                r = np_fn(x, axis=axes)
            o[...] = np.asarray(r).astype(o.dtype).reshape(o.shape)
        push_numpy(run, [data], [res], name)
        return res
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc + (" over `axis` (int, tuple, or None for all), with MXNet's "
                        "`keepdims` and `exclude`; a full reduction has shape (1,).")
    return fn


# NOTE: NumPy's pairwise summation keeps float32 sums accurate; integer sums and
# products wrap in the input dtype as MXNet's do; integer means truncate.

sum = _make_reduction('sum', np.sum, 'same', "Sum")
mean = _make_reduction('mean', np.mean, 'float64', "Mean")
max = _make_reduction('max', np.max, None, "Maximum")
min = _make_reduction('min', np.min, None, "Minimum")
prod = _make_reduction('prod', np.prod, 'same', "Product")
nansum = _make_reduction('nansum', np.nansum, 'same', "Sum, treating NaN as 0,")
nanprod = _make_reduction('nanprod', np.nanprod, 'same', "Product, treating NaN as 1,")
sum_axis = sum


def _arg_reduce(name, np_fn):
    def fn(data, axis=None, keepdims=False, out=None):
        check_nd(data, name)
        ndim = len(data.shape)
        if axis is None:
            _check_nonempty(data, tuple(range(ndim)), name)
            shape = (1,) * ndim if keepdims and ndim else (1,)
            ax = None
        else:
            ax = norm_axis(axis, ndim, name)
            _check_nonempty(data, (ax,), name)
            shape = _out_shape(data.shape, (ax,), keepdims)
        res = prepare_out(out, shape, data.dtype, data.context, name)

        def run(x, o):
            o[...] = np.asarray(np_fn(x, axis=ax)).astype(o.dtype).reshape(o.shape)
        push_numpy(run, [data], [res], name)
        return res
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Index of the {name[3:]}imum along `axis` (flattened when None), in the "
                  f"input's dtype; the first one on ties and NaN.")
    return fn


argmax = _arg_reduce('argmax', np.argmax)
argmin = _arg_reduce('argmin', np.argmin)


def argmax_channel(data, out=None):
    """argmax along the last axis (MXNet 1.x ``argmax_channel``)."""
    return argmax(data, axis=-1, out=out)


def norm(data, ord=2, axis=None, out_dtype=None, keepdims=False, out=None):
    """The L1 (ord=1) or L2 (ord=2) norm over `axis` (None: all elements, shape (1,)).

    Accumulates in float64 for non-float32/float64 inputs; the result has the input's
    dtype unless `out_dtype` is given.
    """
    check_nd(data, 'norm')
    if ord not in (1, 2) or isinstance(ord, bool):
        raise ValueError(f"norm: ord must be 1 or 2, got {ord!r}")
    axes = _reduce_axes(data, axis, False, 'norm')
    shape = _out_shape(data.shape, axes, keepdims)
    odtype = data.dtype if out_dtype is None else np.dtype(out_dtype).type
    res = prepare_out(out, shape, odtype, data.context, 'norm')
    work = data.dtype if data.dtype in (np.float32, np.float64) else np.float64

    def run(x, o):
        x = x.astype(work, copy=False)
        if ord == 1:
            r = np.sum(np.abs(x), axis=axes)
        else:
            r = np.sqrt(np.sum(np.square(x), axis=axes))
        o[...] = np.asarray(r).astype(o.dtype).reshape(o.shape)
    push_numpy(run, [data], [res], 'norm')
    return res

__all__ = ['sum', 'mean', 'max', 'min', 'prod', 'nansum', 'nanprod', 'sum_axis', 'argmax',
           'argmin', 'argmax_channel', 'norm']
