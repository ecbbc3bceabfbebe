"""Array operators of MXNet 1.9.1 computed in NumPy (`NumpyOp`): ElementWiseSum (add_n),
moments, _histogram, _split_v2, cumsum, khatri_rao, amp_cast/amp_multicast, all_finite,
multi_all_finite, multi_sum_sq.

Gradients (dy the head gradient):
* ElementWiseSum: dy to every input;
* moments (mean m, variance v over `axes`, n elements each): dx = dm/n + dv·2(x - m)/n;
* _split_v2: the pieces' gradients joined back; cumsum: reversed cumsum of dy;
* khatri_rao (column-wise Kronecker of (I_k, J) matrices -> (prod I_k, J)): for input k,
  dA_k[i, j] = sum of dy[., j] times the other inputs' entries of that row;
* amp_cast: dy cast back to the input dtype; amp_multicast: each dy cast back.
"""
import numpy as np

from mxcy.operator._numpy_op import NumpyOp, push_multi
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op
from mxcy.operator.tensor import Cast, check_axis, unify_types


class _Variadic(NumpyOp):
    variadic = 'num_args'

    def arguments(self, p):
        n = getattr(p, self.variadic)
        if n < 1:
            raise ValueError(f"{self.name}: parameter '{self.variadic}' must be >= 1, got {n}")
        return [f'arg{i}' for i in range(n)]


@register_op
class ElementWiseSum(_Variadic):
    """The sum of all inputs (equal shapes)."""
    name = 'ElementWiseSum'
    aliases = ('add_n', '_sparse_ElementWiseSum')
    params = ParamSchema(Param('num_args', 'int'))
    backward_needs = ('out_grads',)

    def infer_shape(self, p, in_shapes):
        known = next((tuple(s) for s in in_shapes if s is not None), None)
        for i, s in enumerate(in_shapes):
            if s is not None and tuple(s) != known:
                raise self.shape_error(f'arg{i}', known, tuple(s), 'all inputs must have '
                                       'the same shape')
        return [known] * len(in_shapes), [known], []

    def infer_type(self, p, in_types):
        types, known = unify_types(self, p, in_types, range(len(in_types)))
        return types, [known], []

    def compute(self, p, *xs):
        out = xs[0].copy()
        for x in xs[1:]:
            out += x
        return out

    def grad(self, p, dys, xs, ys):
        return [dys[0]] * p.num_args


def _axes(op, p, shape):
    if not p.axes:
        return tuple(range(len(shape)))
    return tuple(sorted({check_axis(op, a, shape, 'axes') for a in p.axes}))


@register_op
class moments(NumpyOp):
    """Mean and variance of data over `axes` (all when empty)."""
    name = 'moments'
    params = ParamSchema(Param('axes', 'shape', None, optional=True),
                         Param('keepdims', 'bool', False))

    def outputs(self, p):
        return ['mean', 'var']

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None, None], []
        axes = _axes(self, p, s)
        out = tuple(1 if i in axes else d for i, d in enumerate(s)) if p.keepdims else \
            tuple(d for i, d in enumerate(s) if i not in axes)
        return [tuple(s)], [out, out], []

    def compute(self, p, x):
        axes = _axes(self, p, x.shape)
        m = x.mean(axis=axes, keepdims=True)
        v = ((x - m) ** 2).mean(axis=axes, keepdims=p.keepdims)
        return (m if p.keepdims else m.reshape(v.shape)), v

    def grad(self, p, dys, xs, ys):
        x = xs[0]
        axes = _axes(self, p, x.shape)
        kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        n = x.size // max(1, int(np.prod(kept)))
        m = x.mean(axis=axes, keepdims=True)
        dm, dv = dys[0].reshape(kept), dys[1].reshape(kept)
        return (dm / n + dv * 2 * (x - m) / n,)


@register_op
class _histogram(NumpyOp):
    """Counts of data in `bin_cnt` equal bins over `range`, or between the edges `bins`
    (an input); outputs the counts (int64) and the edges."""
    name = '_histogram'
    params = ParamSchema(Param('bin_cnt', 'int', None, optional=True),
                         Param('range', 'any', None, optional=True))
    has_backward = False

    def arguments(self, p):
        return ['data'] if p.bin_cnt is not None else ['data', 'bins']

    def outputs(self, p):
        return ['hist', 'bin_edges']

    def infer_shape(self, p, in_shapes):
        if p.bin_cnt is not None:
            if p.range is None or len(tuple(p.range)) != 2:
                raise ValueError(f"{self.name}: parameter 'range' must be (min, max) with "
                                 f"bin_cnt, got {p.range!r}")
            return list(in_shapes), [(p.bin_cnt,), (p.bin_cnt + 1,)], []
        b = in_shapes[1]
        if b is not None and (len(b) != 1 or b[0] < 2):
            raise self.shape_error('bins', '(n,) with n >= 2 edges', tuple(b))
        return list(in_shapes), [None if b is None else (b[0] - 1,), b], []

    def infer_type(self, p, in_types):
        edges = in_types[1] if len(in_types) > 1 else in_types[0]
        return list(in_types), ['int64', edges], []

    def compute(self, p, x, bins=None):
        if bins is None:        # NumPy's equal-bin path: the same counts as with the
            lo, hi = (float(v) for v in p.range)     # linspace edges, no binary search
            return np.histogram(x.astype(np.float64), p.bin_cnt, (lo, hi))
        hist, edges = np.histogram(x.astype(np.float64), bins.astype(np.float64))
        return hist, edges


@register_op
class _split_v2(NumpyOp):
    """data split along `axis` into `sections` equal parts or at `indices` (the first
    being 0), each squeezed on the axis when squeeze_axis (then of size 1)."""
    name = '_split_v2'
    params = ParamSchema(Param('indices', 'shape', ()), Param('axis', 'int', 0),
                         Param('squeeze_axis', 'bool', False), Param('sections', 'int', 0))
    backward_needs = ('out_grads', 'inputs')

    def outputs(self, p):
        n = p.sections if p.sections > 0 else len(p.indices)
        return [f'output{i}' for i in range(max(n, 1))]

    def _bounds(self, p, shape):
        ax = check_axis(self, p.axis, shape)
        size = shape[ax]
        if p.sections > 0:
            if size % p.sections:
                raise self.shape_error('data', f'axis {ax} divisible into {p.sections} '
                                       'sections', tuple(shape))
            step = size // p.sections
            starts = list(range(0, size, step)) if step else [0] * p.sections
        else:
            starts = list(p.indices)
            if starts != sorted(starts) or any(i > size for i in starts):
                raise self.shape_error('data', f'axis {ax} to hold the increasing indices '
                                       f'{tuple(starts[1:])}', tuple(shape))
        return ax, list(zip(starts, starts[1:] + [size]))

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None] * len(self.outputs(p)), []
        s = tuple(s)
        ax, bounds = self._bounds(p, s)
        outs = []
        for lo, hi in bounds:
            if p.squeeze_axis and hi - lo != 1:
                raise self.shape_error('data', 'pieces of size 1 on the axis with '
                                       'squeeze_axis=True', s)
            piece = s[:ax] + (hi - lo,) + s[ax + 1:]
            outs.append(s[:ax] + s[ax + 1:] if p.squeeze_axis else piece)
        return [s], outs, []

    def compute(self, p, x):
        ax, bounds = self._bounds(p, x.shape)
        key = (slice(None),) * ax
        return tuple(x[key + (slice(lo, hi),)].reshape(o) for (lo, hi), o in
                     zip(bounds, self.infer_shape(p, [x.shape])[1]))

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        shape = ins[0].shape
        ax, bounds = self._bounds(p, shape)

        def run(*dys):
            pieces = [dy.reshape(shape[:ax] + (hi - lo,) + shape[ax + 1:])
                      for dy, (lo, hi) in zip(dys, bounds)]
            return (np.concatenate(pieces, axis=ax),)
        push_multi(run, list(out_grads), in_grads, req, self.name + '_backward')


@register_op
class cumsum(NumpyOp):
    """Cumulative sum along `axis` (of the flattened array when axis is None)."""
    name = 'cumsum'
    aliases = ('_np_cumsum',)
    params = ParamSchema(Param('axis', 'int', None, optional=True),
                         Param('dtype', 'dtype', None, optional=True))
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['a']

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        if p.axis is None:
            return [tuple(s)], [(int(np.prod(s)),)], []
        check_axis(self, p.axis, s)
        return [tuple(s)], [tuple(s)], []

    def infer_type(self, p, in_types):
        return list(in_types), [p.dtype or in_types[0]], []

    def compute(self, p, a):
        return np.cumsum(a, axis=p.axis)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        shape, axis = ins[0].shape, p.axis

        def run(dy):
            if axis is None:
                return (np.cumsum(dy[::-1])[::-1].reshape(shape),)
            rev = np.flip(dy, axis)
            return (np.flip(np.cumsum(rev, axis=axis), axis),)
        push_multi(run, [out_grads[0]], in_grads, req, self.name + '_backward')


@register_op
class khatri_rao(_Variadic):
    """Column-wise Kronecker product of (I_k, J) matrices -> (prod I_k, J)."""
    name = 'khatri_rao'
    params = ParamSchema(Param('num_args', 'int'))
    backward_needs = ('out_grads', 'inputs')

    def infer_shape(self, p, in_shapes):
        if any(s is None for s in in_shapes):
            return list(in_shapes), [None], []
        cols = in_shapes[0][1] if len(in_shapes[0]) == 2 else None
        for i, s in enumerate(in_shapes):
            if len(s) != 2 or s[1] != cols:
                raise self.shape_error(f'arg{i}', f'a matrix with {cols} columns', tuple(s))
        return [tuple(s) for s in in_shapes], [(int(np.prod([s[0] for s in in_shapes])),
                                                cols)], []

    def compute(self, p, *xs):
        out = xs[0]
        for x in xs[1:]:
            out = (out[:, None, :] * x[None, :, :]).reshape(-1, x.shape[1])
        return out

    def grad(self, p, dys, xs, ys):
        rows = [x.shape[0] for x in xs]
        dy = dys[0].reshape(rows + [xs[0].shape[1]])
        grads = []
        for k in range(len(xs)):
            t = dy
            for m in reversed(range(len(xs))):
                if m != k:
                    shape = [1] * len(xs) + [xs[m].shape[1]]
                    shape[m] = rows[m]
                    t = t * xs[m].reshape(shape)
            axes = tuple(m for m in range(len(xs)) if m != k)
            grads.append(t.sum(axis=axes))
        return grads


@register_op
class amp_cast(OpSpec):
    """data cast to `dtype` (MXNet's mixed-precision cast; the gradient casts back): one
    pass into the output, as Cast. As MXNet, only float16/float32 data is cast; float64 and
    integer data pass through unchanged."""
    name = 'amp_cast'
    params = ParamSchema(Param('dtype', 'dtype'))
    backward_needs = ('out_grads',)
    forward = Cast.forward
    backward = Cast.backward

    def infer_type(self, p, in_types):
        t = in_types[0]
        if t is not None and np.dtype(t) not in (np.float16, np.float32):
            return list(in_types), [t], []
        return list(in_types), [p.dtype], []


@register_op
class amp_multicast(_Variadic):
    """Every input cast to the widest floating dtype among them (the narrowest with
    cast_narrow); one output per input."""
    name = 'amp_multicast'
    variadic = 'num_outputs'
    params = ParamSchema(Param('num_outputs', 'int'), Param('cast_narrow', 'bool', False))
    backward_needs = ('out_grads',)

    def outputs(self, p):
        return [f'output{i}' for i in range(p.num_outputs)]

    def infer_shape(self, p, in_shapes):
        return list(in_shapes), list(in_shapes), []

    def infer_type(self, p, in_types):
        known = [np.dtype(t) for t in in_types if t is not None]
        if not known:
            return list(in_types), [None] * len(in_types), []
        pick = min if p.cast_narrow else max
        target = pick(known, key=lambda d: d.itemsize).name
        return list(in_types), [target] * len(in_types), []

    def compute(self, p, *xs):
        return xs

    def grad(self, p, dys, xs, ys):
        return dys


class _Finite(NumpyOp):
    params = ParamSchema(Param('init_output', 'bool', True))
    has_backward = False

    def infer_shape(self, p, in_shapes):
        return list(in_shapes), [(1,)], []

    def infer_type(self, p, in_types):
        return list(in_types), ['float32'], []


@register_op
class all_finite(_Finite):
    """[1.] when every element of data is finite, else [0.]."""
    name = 'all_finite'

    def compute(self, p, x):
        return np.array([float(np.isfinite(x).all())])


@register_op
class multi_all_finite(_Finite, _Variadic):
    """[1.] when every element of every input is finite, else [0.]."""
    name = 'multi_all_finite'
    variadic = 'num_arrays'
    params = ParamSchema(Param('num_arrays', 'int', 1), Param('init_output', 'bool', True))

    def compute(self, p, *xs):
        return np.array([float(all(np.isfinite(x).all() for x in xs))])


@register_op
class multi_sum_sq(_Variadic):
    """The sum of squares of each input, as one (num_arrays,) float32 array."""
    name = 'multi_sum_sq'
    variadic = 'num_arrays'
    params = ParamSchema(Param('num_arrays', 'int'))
    has_backward = False

    def infer_shape(self, p, in_shapes):
        return list(in_shapes), [(p.num_arrays,)], []

    def infer_type(self, p, in_types):
        return list(in_types), ['float32'], []

    def compute(self, p, *xs):
        # accumulated in float64 by einsum's buffered cast (no float64 copy of each input)
        return np.array([float(np.einsum('i,i->', x.ravel(), x.ravel(), dtype=np.float64))
                         for x in xs])
