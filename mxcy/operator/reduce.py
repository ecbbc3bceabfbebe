"""Operators along axes: reductions (sum, mean, max, min, prod, nansum, nanprod, norm),
arg-reductions and sorting (argmax, argmin, argmax_channel, topk, sort, argsort) and
softmax / log_softmax, with MXNet 1.x semantics:

* ``axis`` None or () reduces every axis; ``exclude=True`` reduces all axes but those
  given; a full reduction has shape (1,) (MXNet has no 0-d arrays); the dtype is kept
  (integer sums wrap, integer means truncate);
* backward broadcasts the head gradient back: max/min send it to every position equal
  to the result (MXNet's rule), prod to the product of the other elements (exact with
  zeros), norm (ord 2) as x / ‖x‖, nansum/nanprod skip NaNs;
* argmax/argmin/argsort have no gradient; sort and topk (values) scatter the head
  gradient through their hidden index output;
* softmax/log_softmax run the C kernel (`mxcy._ops.push_softmax`) for float32/float64 and
  NumPy otherwise (float16, a different output ``dtype``, ``use_length``).
"""
import numpy as np

from mxcy import _ndarray
from mxcy.base import MXNetError
from mxcy.operator._compute import gemm_reduce, nd
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._sorting import first_k, sort_order
from mxcy.operator._spec import DTypeError, OpSpec, register_op, unify_shape
from mxcy.operator.tensor import check_axes, check_axis, prod, push_scatter, push_value, \
    zero_grads

_BLAS = ('float32', 'float64')
_BLAS_TYPES = (np.float32, np.float64)


# ---------------------------------------------------------------- reductions
def exclusive_prod(x, axes):
    """For each element, the product of the OTHER elements of its reduced group."""
    keep = [a for a in range(x.ndim) if a not in axes]
    order = keep + list(axes)
    t = np.transpose(x, order)
    flat = t.reshape(t.shape[:len(keep)] + (-1,))
    if flat.shape[-1] == 0:
        return np.zeros_like(x)
    one = np.ones(flat.shape[:-1] + (1,), dtype=flat.dtype)
    left = np.cumprod(np.concatenate([one, flat[..., :-1]], -1), -1)
    right = np.cumprod(np.concatenate([one, flat[..., :0:-1]], -1), -1)[..., ::-1]
    return np.transpose((left * right).reshape(t.shape), np.argsort(order))


class _Reduce(OpSpec):
    """One row of the reduction table: np_fn(x, axes) forward, grad(x, y, dy) backward."""
    params = ParamSchema(Param('axis', 'shape', None, optional=True),
                         Param('keepdims', 'bool', False), Param('exclude', 'bool', False))
    np_fn = None
    grad = None
    nonempty = False
    graph_mean = None       # sum (False) and mean (True) have a grad_graph

    def grad_graph(self, p, out_grads, ins, outs):
        if self.graph_mean is None:
            raise MXNetError(f"{self.name}: its gradient is a NumPy kernel, not "
                             "differentiable again (create_graph=True)")
        axes, _, kept = self._shapes(p, ins[0].shape)
        dy = out_grads[0].reshape(kept)
        if self.graph_mean:
            dy = dy / max(1, prod(ins[0].shape[a] for a in axes))
        return [nd('broadcast_to')(dy, shape=ins[0].shape)]

    def _axes(self, p, shape):
        if p.axis is None or len(p.axis) == 0:
            return tuple(range(len(shape)))
        axes = check_axes(self, p.axis, shape)
        if p.exclude:
            axes = tuple(a for a in range(len(shape)) if a not in axes)
        return axes

    def _shapes(self, p, shape):
        """(reduced axes, output shape, it with reduced axes as 1), kept per call shape."""
        key = (p.axis, p.keepdims, getattr(p, 'exclude', False), tuple(shape))
        cache = self.__dict__.setdefault('_shape_cache', {})
        if key not in cache:
            if len(cache) > 4096:
                cache.clear()
            axes = self._axes(p, shape)
            kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
            out = kept if p.keepdims else \
                (tuple(d for i, d in enumerate(shape) if i not in axes) or (1,))
            cache[key] = (axes, out, kept)
        return cache[key]

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        s = tuple(s)
        axes, out, _ = self._shapes(p, s)
        if self.nonempty:
            empty = [a for a in axes if s[a] == 0]
            if empty:
                raise self.shape_error('data', 'non-empty reduced axes', s,
                                       f'cannot reduce axis {empty[0]} of size 0: '
                                       f'{self.name} of an empty set is undefined')
        return [s], [out], []

    def forward(self, p, is_train, req, ins, outs, aux):
        axes, out, _ = self._shapes(p, ins[0].shape)
        if self.graph_mean is not None and gemm_reduce(ins[0], outs[0], axes,
                                                        self.graph_mean, req[0], False):
            return
        fn = self.np_fn
        push_value(lambda x: np.asarray(fn(x, axis=axes)).reshape(out), ins, outs[0],
                   req[0], self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        axes, _, kept = self._shapes(p, ins[0].shape)
        if self.graph_mean is not None and gemm_reduce(in_grads[0], out_grads[0], axes,
                                                        self.graph_mean, req[0], True):
            return
        grad, n = self.grad, prod(ins[0].shape[a] for a in axes)
        if self.backward_needs == ('out_grads',):
            push_value(lambda dy: grad(None, None, dy.reshape(kept), axes, n), out_grads,
                       in_grads[0], req[0], self.name + '_backward')
        else:
            push_value(lambda x, y, dy: grad(x, y.reshape(kept), dy.reshape(kept), axes, n),
                       [ins[0], outs[0], out_grads[0]], in_grads[0], req[0],
                       self.name + '_backward')


def _nanprod_grad(x, y, dy, axes, n):
    clean = np.where(np.isnan(x), 1, x)
    return np.where(np.isnan(x), 0, dy * exclusive_prod(clean, axes))


# name, aliases, forward, gradient (x, y kept, dy kept, axes, n), reads only dy, nonempty
_REDUCE_ROWS = [
    ('sum', ('sum_axis',), np.sum, lambda x, y, dy, axes, n: dy, True, False),
    ('mean', (), np.mean, lambda x, y, dy, axes, n: dy / max(n, 1), True, False),
    ('max', ('max_axis',), np.max, lambda x, y, dy, axes, n: dy * (x == y), False, True),
    ('min', ('min_axis',), np.min, lambda x, y, dy, axes, n: dy * (x == y), False, True),
    ('prod', (), np.prod, lambda x, y, dy, axes, n: dy * exclusive_prod(x, axes), False,
     False),
    ('nansum', (), np.nansum, lambda x, y, dy, axes, n: np.where(np.isnan(x), 0, dy), False,
     False),
    ('nanprod', (), np.nanprod, _nanprod_grad, False, False),
]

for _name, _aliases, _fn, _grad, _dy_only, _nonempty in _REDUCE_ROWS:
    register_op(type(_name, (_Reduce,), {
        'name': _name, 'aliases': _aliases, 'np_fn': staticmethod(_fn),
        'grad': staticmethod(_grad), 'nonempty': _nonempty,
        'graph_mean': {'sum': False, 'mean': True}.get(_name),
        'backward_needs': ('out_grads',) if _dy_only else ('out_grads', 'inputs', 'outputs'),
        '__doc__': f"{_name} over ``axis`` (None/(): all), with ``keepdims`` and "
                   f"``exclude``; a full reduction has shape (1,)."}))


@register_op
class Norm(_Reduce):
    """The L1 (ord=1) or L2 (ord=2) norm over ``axis`` (None: all elements, shape (1,));
    the result dtype is ``out_dtype`` or the input's. Gradient: sign(x) or x / ‖x‖."""
    name = 'norm'
    params = ParamSchema(Param('ord', 'int', 2, choices=(1, 2)),
                         Param('axis', 'shape', None, optional=True),
                         Param('out_dtype', 'dtype', None, optional=True),
                         Param('keepdims', 'bool', False))
    backward_needs = ('out_grads', 'inputs', 'outputs')

    def _axes(self, p, shape):
        if p.axis is None or len(p.axis) == 0:
            return tuple(range(len(shape)))
        return check_axes(self, p.axis, shape)

    def infer_type(self, p, in_types):
        return list(in_types), [p.out_dtype or in_types[0]], []

    def forward(self, p, is_train, req, ins, outs, aux):
        axes, out, _ = self._shapes(p, ins[0].shape)
        order = p.ord

        def fn(x):
            # NOTE: float16 and integers accumulate in float64 (a float16 sum of squares
            # overflows at 65504)
            x = x if x.dtype in (np.float32, np.float64) else x.astype(np.float64)
            r = np.sum(np.abs(x), axis=axes) if order == 1 else \
                np.sqrt(np.sum(np.square(x), axis=axes))
            return np.asarray(r).reshape(out)
        push_value(fn, ins, outs[0], req[0], 'norm')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        _, _, kept = self._shapes(p, ins[0].shape)
        order = p.ord

        def grad(x, y, dy):
            y, dy = y.reshape(kept).astype(x.dtype), dy.reshape(kept).astype(x.dtype)
            if order == 1:
                return dy * np.sign(x)
            return dy * np.where(y != 0, x / np.where(y != 0, y, 1), 0)
        push_value(grad, [ins[0], outs[0], out_grads[0]], in_grads[0], req[0],
                   'norm_backward')


# ---------------------------------------------------------------- arg-reductions, sorting
class _NoGrad(OpSpec):
    has_backward = False
    backward_needs = ()


class _ArgReduce(_NoGrad):
    """Index of the max/min along ``axis`` (flattened when None), in the input's dtype;
    the first on ties."""
    params = ParamSchema(Param('axis', 'int', None, optional=True),
                         Param('keepdims', 'bool', False))
    np_fn = None

    def _out(self, p, s):
        if p.axis is None:
            return None, ((1,) * len(s) if p.keepdims and s else (1,))
        ax = check_axis(self, p.axis, s)
        return ax, s[:ax] + ((1,) if p.keepdims else ()) + s[ax + 1:] or (1,)

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        s = tuple(s)
        ax, out = self._out(p, s)
        if (s[ax] if ax is not None else prod(s)) == 0:
            raise self.shape_error('data', 'a non-empty axis', s)
        return [s], [out], []

    def forward(self, p, is_train, req, ins, outs, aux):
        ax, out = self._out(p, ins[0].shape)
        fn = self.np_fn
        push_value(lambda x: np.asarray(fn(x, axis=ax)).reshape(out), ins, outs[0], req[0],
                   self.name)


register_op(type('argmax', (_ArgReduce,), {'name': 'argmax', 'np_fn': staticmethod(np.argmax),
                                           '__doc__': _ArgReduce.__doc__}))
register_op(type('argmin', (_ArgReduce,), {'name': 'argmin', 'np_fn': staticmethod(np.argmin),
                                           '__doc__': _ArgReduce.__doc__}))


@register_op
class argmax_channel(_ArgReduce):
    """argmax along the last axis."""
    name = 'argmax_channel'
    params = ParamSchema()
    np_fn = staticmethod(np.argmax)

    def _out(self, p, s):
        return len(s) - 1, s[:-1] or (1,)


_EXACT_INDEX = {'float16': 2 ** 11, 'float32': 2 ** 24, 'float64': 2 ** 53, 'uint8': 255,
                'int8': 127, 'int32': 2 ** 31 - 1, 'int64': 2 ** 63 - 1}


class _SortBase(OpSpec):
    """Shared by topk/sort/argsort: axis None works on the flattened array."""

    def _check_index_dtype(self, p, s):
        n = prod(s) if p.axis is None else s[self._axis(p, s)]
        if n - 1 > _EXACT_INDEX[p.dtype]:
            raise ValueError(f"{self.name}: parameter dtype={p.dtype} cannot represent the "
                             f"indices 0..{n - 1} of input shape {s} exactly")

    def _axis(self, p, s):
        return None if p.axis is None else check_axis(self, p.axis, s)

    def _k(self, p, s):
        n = prod(s) if p.axis is None else s[self._axis(p, s)]
        k = getattr(p, 'k', 0)
        if k > n:
            raise self.shape_error('data', f'at least k={k} elements along axis {p.axis}', s,
                                   f'k={k} is larger than the {n} elements there')
        return n if k <= 0 else k

    def _value_shape(self, p, s):
        if p.axis is None:
            return (self._k(p, s),)
        ax = self._axis(p, s)
        return s[:ax] + (self._k(p, s),) + s[ax + 1:]

    def _push_sorted(self, p, req, ins, outs, ret, ascend):
        """One op: the first k of the sorted order as values (+ indices) or a mask."""
        ax, k = self._axis(p, ins[0].shape), self._k(p, ins[0].shape)
        live = [(i, r) for i, r in enumerate(req) if r != 'null']

        def run(x, *views):
            idx, flat, axis = first_k(x, ax, ascend, k)
            if ret == 'mask':
                results = [np.zeros(flat.shape, dtype=x.dtype)]
                np.put_along_axis(results[0], idx, 1, axis=axis)
            elif ret == 'indices':
                results = [idx]
            else:
                results = [np.take_along_axis(flat, idx, axis=axis), idx]
            for (i, r), o in zip(live, views):
                v = results[i].reshape(o.shape)
                if r == 'add':
                    np.add(o, v, out=o, casting='unsafe')
                else:
                    np.copyto(o, v, casting='unsafe')
        if live:
            _ndarray.push_numpy(run, [ins[0]], [outs[i] for i, _ in live], self.name)

    def _scatter_grad(self, p, req, out_grads, ins, outs, in_grads):
        """dx[indices] += dy: the head gradient of the values back to their positions."""
        ax = self._axis(p, ins[0].shape)

        def scatter(idx, dy, acc):
            idx = idx.astype(np.int64)
            if ax is None:
                np.add.at(acc.reshape(-1), idx.reshape(-1), dy.reshape(-1))
            else:
                vals = np.take_along_axis(acc, idx, axis=ax) + dy   # indices are distinct
                np.put_along_axis(acc, idx, vals, axis=ax)
        push_scatter(scatter, [outs[1], out_grads[0]], in_grads[0], req[0],
                     self.name + '_backward')


@register_op
class topk(_SortBase):
    """The k largest (or, with ``is_ascend``, smallest) along ``axis``: ret_typ 'indices'
    (as ``dtype``), 'value', 'both' ([value, indices]) or 'mask' (1 at the chosen
    positions); k <= 0 takes all. Only values carry a gradient."""
    name = 'topk'
    params = ParamSchema(Param('axis', 'int', -1, optional=True), Param('k', 'int', 1),
                         Param('ret_typ', 'str', 'indices',
                               choices=('value', 'indices', 'mask', 'both')),
                         Param('is_ascend', 'bool', False),
                         Param('dtype', 'dtype', 'float32'))
    backward_needs = ('out_grads', 'outputs')

    def outputs(self, p):
        return ['output'] if p.ret_typ in ('indices', 'mask') else ['output0', 'output1']

    def num_visible_outputs(self, p):
        return 2 if p.ret_typ == 'both' else 1

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        n_out = len(self.outputs(p))
        if s is None:
            return [None], [None] * n_out, []
        s = tuple(s)
        self._check_index_dtype(p, s)
        out = s if p.ret_typ == 'mask' else self._value_shape(p, s)
        return [s], [out] * n_out, []

    def infer_type(self, p, in_types):
        t = in_types[0]
        outs = {'indices': [p.dtype], 'mask': [t], 'value': [t, p.dtype],
                'both': [t, p.dtype]}[p.ret_typ]
        return [t], outs, []

    def forward(self, p, is_train, req, ins, outs, aux):
        self._push_sorted(p, req, ins, outs, p.ret_typ, p.is_ascend)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if p.ret_typ in ('indices', 'mask'):
            zero_grads(req, in_grads)
        else:
            self._scatter_grad(p, req, out_grads, ins, outs, in_grads)


@register_op
class sort(_SortBase):
    """Sorted values along ``axis`` (stable; ascending unless ``is_ascend=False``); a
    hidden second output holds the source indices for backward."""
    name = 'sort'
    params = ParamSchema(Param('axis', 'int', -1, optional=True),
                         Param('is_ascend', 'bool', True))
    backward_needs = ('out_grads', 'outputs')

    def outputs(self, p):
        return ['output0', 'output1']

    def num_visible_outputs(self, p):
        return 1

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        out = None if s is None else self._value_shape(p, tuple(s))
        return [s], [out, out], []

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0], 'int64'], []     # exact indices for any input

    def forward(self, p, is_train, req, ins, outs, aux):
        self._push_sorted(p, req, ins, outs, 'value', p.is_ascend)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        self._scatter_grad(p, req, out_grads, ins, outs, in_grads)


@register_op
class argsort(_NoGrad, _SortBase):
    """Indices that sort ``axis`` (stable), as ``dtype``."""
    name = 'argsort'
    params = ParamSchema(Param('axis', 'int', -1, optional=True),
                         Param('is_ascend', 'bool', True), Param('dtype', 'dtype', 'float32'))

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        self._check_index_dtype(p, tuple(s))
        return [tuple(s)], [self._value_shape(p, tuple(s))], []

    def infer_type(self, p, in_types):
        return list(in_types), [p.dtype], []

    def forward(self, p, is_train, req, ins, outs, aux):
        ax, ascend, shape = self._axis(p, ins[0].shape), p.is_ascend, outs[0].shape
        push_value(lambda x: sort_order(x, ax, ascend)[0].reshape(shape), ins, outs[0],
                   req[0], 'argsort')


# ---------------------------------------------------------------- softmax
def _softmax_np(x, axis, t, log, odtype, mask=None):
    """Stable softmax / log_softmax of x / t (NumPy, inside an op)."""
    work = np.result_type(x.dtype, odtype, np.float32)
    z = x.astype(work) / t
    if mask is not None:
        z = np.where(mask, z, -np.inf)
    peak = np.max(z, axis=axis, keepdims=True) if z.size else 0
    z = z - np.where(np.isfinite(peak), peak, 0)
    s = np.sum(np.exp(z), axis=axis, keepdims=True)
    if log:
        return z - np.log(s)
    return np.exp(z) / np.where(s > 0, s, 1)


def _softmax_grad_np(y, dy, axis, t, log, dtype):
    y, dy = y.astype(np.result_type(y.dtype, np.float32)), dy.astype(np.float32 if
                                                                       dy.dtype == np.float16
                                                                       else dy.dtype)
    if log:
        return ((dy - np.exp(y) * dy.sum(axis=axis, keepdims=True)) / t).astype(dtype)
    return (y * (dy - (dy * y).sum(axis=axis, keepdims=True)) / t).astype(dtype)


class _SoftmaxBase(OpSpec):
    log = False
    negate = False      # softmin: softmax of -x
    backward_needs = ('out_grads', 'outputs')
    inplace_ok = True

    def arguments(self, p):
        return ['data', 'length'] if getattr(p, 'use_length', False) else ['data']

    def infer_shape(self, p, in_shapes):
        if p.temperature == 0:
            raise ValueError(f"{self.name}: parameter 'temperature' must not be zero")
        s = in_shapes[0]
        if s is None:
            return list(in_shapes), [None], []
        s = tuple(s)
        ax = check_axis(self, p.axis, s)
        shapes = [s]
        if len(in_shapes) > 1:
            want = s[:ax] + s[ax + 1:] or (1,)
            shapes.append(unify_shape(self, 'length', want,
                                      None if in_shapes[1] is None else tuple(in_shapes[1])))
        return shapes, [s], []

    def infer_type(self, p, in_types):
        out = p.dtype or in_types[0]
        if in_types[0] is not None and np.dtype(in_types[0]).kind != 'f':
            raise DTypeError(f"{self.name}: argument 'data' must be float16/32/64, got "
                             f"{in_types[0]}")
        return list(in_types), [out], []

    def forward(self, p, is_train, req, ins, outs, aux):
        x, y = ins[0], outs[0]
        ax = check_axis(self, p.axis, x.shape)
        t = 1.0 if p.temperature is None else p.temperature
        if len(ins) == 1 and x.dtype == y.dtype and x.dtype in _BLAS_TYPES and \
                not self.negate:
            from mxcy._ops import push_softmax
            push_softmax(x, y, ax, t, self.log, None, req[0])
            return
        log, odtype, name, sign = self.log, np.dtype(y.dtype), self.name, \
            (-1 if self.negate else 1)

        def value(x, *length):
            mask = None
            if length:
                n = x.shape[ax]
                lens = np.expand_dims(length[0].reshape(x.shape[:ax] + x.shape[ax + 1:]), ax)
                if lens.size and (lens.min() < 0 or lens.max() > n):
                    raise ValueError(f"{name}: length values must be in [0, {n}] (the size "
                                     f"of axis {ax}), got values from {lens.min()} to "
                                     f"{lens.max()}")
                mask = np.arange(n).reshape((n,) + (1,) * (x.ndim - ax - 1)) < lens
            return _softmax_np(x * sign if sign < 0 else x, ax, t, log, odtype, mask)
        push_value(value, ins, y, req[0], self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        y, dy, dx = outs[0], out_grads[0], in_grads[0]
        ax = check_axis(self, p.axis, y.shape)
        t = 1.0 if p.temperature is None else p.temperature
        if len(in_grads) > 1:
            zero_grads(req, in_grads, which=(1,))
        if dx is None or req[0] == 'null':
            return
        if y.dtype == dx.dtype == dy.dtype and y.dtype in _BLAS_TYPES and \
                not self.negate:
            from mxcy._ops import push_softmax
            push_softmax(y, dx, ax, t, self.log, dy, req[0])
            return
        log, dtype = self.log, np.dtype(dx.dtype)
        t = -t if self.negate else t        # d softmax(-x/t) / dx = -(d softmax(z/t) / dz)
        push_value(lambda y, g: _softmax_grad_np(y, g, ax, t, log, dtype), [y, dy], dx,
                   req[0], self.name + '_backward')

    def grad_graph(self, p, out_grads, ins, outs):
        if len(ins) > 1 or self.negate:
            raise MXNetError(f"{self.name}: the gradient with a length input or of softmin "
                             "is not differentiable again (create_graph=True)")
        y, dy, ax = outs[0], out_grads[0], p.axis
        t = 1.0 if p.temperature is None else p.temperature
        if self.log:
            dx = dy - nd('exp')(y) * nd('sum')(dy, axis=ax, keepdims=True)
        else:
            dx = y * (dy - nd('sum')(dy * y, axis=ax, keepdims=True))
        return [dx if t == 1.0 else dx / t]


_SOFTMAX_PARAMS = ParamSchema(Param('axis', 'int', -1),
                              Param('temperature', 'float', None, optional=True),
                              Param('dtype', 'dtype', None, optional=True,
                                    choices=('float16', 'float32', 'float64')),
                              Param('use_length', 'bool', False))


@register_op
class softmax(_SoftmaxBase):
    """exp(x/t) / Σ exp(x/t) along ``axis`` (t = ``temperature``, default 1), output
    dtype ``dtype`` (default: the input's). With ``use_length`` a second input `length`
    (data's shape without the axis) keeps the first length entries of each row, the rest
    0. Backward: dx = y (dy − Σ dy·y) / t."""
    name = 'softmax'
    params = _SOFTMAX_PARAMS


class _NoLength(_SoftmaxBase):
    def arguments(self, p):
        if p.use_length:
            raise ValueError(f"{self.name}: use_length=True is not supported (only softmax "
                             "takes a length input)")
        return ['data']


@register_op
class log_softmax(_NoLength):
    """log(softmax(x/t)) along ``axis``. Backward: dx = (dy − exp(y) Σ dy) / t."""
    name = 'log_softmax'
    log = True
    params = _SOFTMAX_PARAMS


@register_op
class softmin(_NoLength):
    """softmax(−x/t) along ``axis``. Backward: dx = −y (dy − Σ dy·y) / t."""
    name = 'softmin'
    negate = True
    params = _SOFTMAX_PARAMS
