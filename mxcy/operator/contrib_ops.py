"""CPU operators of MXNet's ``contrib`` namespace (registered as ``_contrib_<name>``;
``mx.nd.contrib.<name>``/``mx.sym.contrib.<name>`` drop the prefix), computed in NumPy.

* isnan/isinf/isfinite: 1/0 in data's dtype;  allclose(a, b, rtol, atol, equal_nan): a
  0-d 1/0;  box_iou(lhs, rhs, format): IoU of every pair of boxes (corner or center);
* index_array(data, axes): each element's index (on `axes`), int64, shape data.shape +
  (len(axes),);  arange_like(data, start, step, repeat, axis): arange in data's shape
  (or of data.shape[axis]);
* index_copy(old, index, new): old with rows `index` replaced by new (d old = dy with
  those rows zeroed, d new = dy[index]);
* div_sqrt_dim(data) = data / sqrt(data.shape[-1]);  quadratic(data, a, b, c) =
  a x^2 + b x + c (d = 2 a x + b);  gradientmultiplier(data, scalar): identity, gradient
  scaled;  round_ste / sign_ste: round / sign forward, identity (straight-through)
  gradient.
"""
import numpy as np

from mxcy import _detect, _ndarray
from mxcy.operator._numpy_op import NumpyOp
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op
from mxcy.operator.tensor import check_axis


def _contrib(cls):
    cls.name = '_contrib_' + cls.__name__
    cls.aliases = ()
    return register_op(cls)


class _Check(NumpyOp):
    has_backward = False

    def compute(self, p, x):
        return self.test(x)


@_contrib
class isnan(_Check):
    """1 where data is NaN."""
    test = staticmethod(np.isnan)


@_contrib
class isinf(_Check):
    """1 where data is +-inf."""
    test = staticmethod(np.isinf)


@_contrib
class isfinite(_Check):
    """1 where data is finite."""
    test = staticmethod(np.isfinite)


@_contrib
class allclose(NumpyOp):
    """1 when |a - b| <= atol + rtol |b| everywhere (a (1,) uint8 output, as MXNet's)."""
    params = ParamSchema(Param('rtol', 'float', 1e-5), Param('atol', 'float', 1e-8),
                         Param('equal_nan', 'bool', True))
    has_backward = False

    def arguments(self, p):
        return ['a', 'b']

    def infer_shape(self, p, in_shapes):
        a, b = in_shapes
        if a is not None and b is not None:
            try:
                np.broadcast_shapes(tuple(a), tuple(b))
            except ValueError:
                raise self.shape_error('b', f'a shape broadcastable with a {tuple(a)}',
                                       tuple(b)) from None
        return list(in_shapes), [(1,)], []

    def infer_type(self, p, in_types):
        return list(in_types), ['uint8'], []

    def compute(self, p, a, b):
        return np.array([np.allclose(a, b, p.rtol, p.atol, p.equal_nan)], dtype=np.uint8)


@_contrib
class box_iou(NumpyOp):
    """IoU of every lhs box (..., 4) with every rhs box: shape lhs[:-1] + rhs[:-1]."""
    params = ParamSchema(Param('format', 'str', 'corner', choices=('corner', 'center')))
    has_backward = False

    def arguments(self, p):
        return ['lhs', 'rhs']

    def infer_shape(self, p, in_shapes):
        lhs, rhs = in_shapes
        for name, s in (('lhs', lhs), ('rhs', rhs)):
            if s is not None and (not s or s[-1] != 4):
                raise self.shape_error(name, '(..., 4) boxes', tuple(s))
        if lhs is None or rhs is None:
            return list(in_shapes), [None], []
        return [tuple(lhs), tuple(rhs)], [tuple(lhs[:-1]) + tuple(rhs[:-1])], []

    def compute(self, p, lhs, rhs):
        a, b = lhs.reshape(-1, 4).astype(np.float64), rhs.reshape(-1, 4).astype(np.float64)
        if p.format == 'center':
            a = np.concatenate([a[:, :2] - a[:, 2:] / 2, a[:, :2] + a[:, 2:] / 2], 1)
            b = np.concatenate([b[:, :2] - b[:, 2:] / 2, b[:, :2] + b[:, 2:] / 2], 1)
        out = np.empty((len(a), len(b)), lhs.dtype if lhs.dtype in (np.float32, np.float64)
                       else np.float64)
        _detect.box_iou_pairs(np.ascontiguousarray(a), np.ascontiguousarray(b), out)
        return out.reshape(lhs.shape[:-1] + rhs.shape[:-1])


@_contrib
class index_array(NumpyOp):
    """Each element's index on `axes` (all when None): data.shape + (len(axes),)."""
    params = ParamSchema(Param('axes', 'shape', None, optional=True))
    has_backward = False

    def _axes(self, p, shape):
        if p.axes is None:
            return list(range(len(shape)))
        return [check_axis(self, a, shape, 'axes') for a in p.axes]

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        return [tuple(s)], [tuple(s) + (len(self._axes(p, s)),)], []

    def infer_type(self, p, in_types):
        return list(in_types), ['int64'], []

    def compute(self, p, x):
        idx = np.indices(x.shape)
        return np.stack([idx[a] for a in self._axes(p, x.shape)], axis=-1)


@_contrib
class arange_like(NumpyOp):
    """start + step * i (each repeated `repeat` times) in data's shape, or along axis."""
    params = ParamSchema(Param('start', 'float', 0.0), Param('step', 'float', 1.0),
                         Param('repeat', 'int', 1), Param('ctx', 'any', None, optional=True),
                         Param('axis', 'int', None, optional=True))
    has_backward = False

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        if p.axis is None:
            return [tuple(s)], [tuple(s)], []
        return [tuple(s)], [(s[check_axis(self, p.axis, s)],)], []

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0]], []

    def compute(self, p, x):
        n = x.size if p.axis is None else x.shape[check_axis(self, p.axis, x.shape)]
        values = np.arange(n, dtype=np.float64)     # in float64, updated in place
        if p.repeat > 1:                            # floor(i / repeat): exact below 2^53
            values /= p.repeat                      # (int64 // does not vectorise)
            np.floor(values, out=values)
        values *= p.step
        values += p.start
        return values.reshape(x.shape if p.axis is None else (n,))


@_contrib
class index_copy(NumpyOp):
    """old_tensor with the rows at index_vector replaced by new_tensor's rows."""
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['old_tensor', 'index_vector', 'new_tensor']

    def infer_shape(self, p, in_shapes):
        old, idx, new = in_shapes
        if old is not None and idx is not None and new is not None:
            want = (idx[0],) + tuple(old[1:])
            if tuple(new) != want:
                raise self.shape_error('new_tensor', want, tuple(new), f'old_tensor '
                                       f'{tuple(old)}, index_vector {tuple(idx)}')
        return list(in_shapes), [old and tuple(old)], []

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0]], []

    def _idx(self, old, idx):
        i = idx.astype(np.int64)
        if i.size and (i.min() < 0 or i.max() >= old.shape[0]):
            raise IndexError(f"{self.name}: index_vector holds rows outside [0, "
                             f"{old.shape[0]})")
        return i

    def compute(self, p, old, idx, new):
        out = old.copy()
        out[self._idx(old, idx)] = new
        return out

    def grad(self, p, dys, xs, ys):
        old, idx, _ = xs
        i = self._idx(old, idx)
        d_old = dys[0].copy()
        d_old[i] = 0
        return d_old, None, dys[0][i]


class _Elemwise(NumpyOp):
    backward_needs = ('out_grads', 'inputs')


@_contrib
class div_sqrt_dim(_Elemwise):
    """data / sqrt(data.shape[-1])."""

    def compute(self, p, x):
        return x / np.sqrt(x.shape[-1])

    def grad(self, p, dys, xs, ys):
        return (dys[0] / np.sqrt(xs[0].shape[-1]),)


@_contrib
class quadratic(_Elemwise):
    """a * data**2 + b * data + c."""
    params = ParamSchema(Param('a', 'float', 0.0), Param('b', 'float', 0.0),
                         Param('c', 'float', 0.0))

    def compute(self, p, x):          # (a x + b) x + c: one temporary, updated in place
        return self._horner(p, x, np.multiply(x, p.a))

    @staticmethod
    def _horner(p, x, t):               # t holds a x
        t += p.b
        t *= x
        t += p.c
        return t

    def forward(self, p, is_train, req, ins, outs, aux):
        if req[0] != 'write' or ins[0].dtype != outs[0].dtype or \
                np.dtype(ins[0].dtype).kind != 'f':
            NumpyOp.forward(self, p, is_train, req, ins, outs, aux)
            return

        def run(x, o):                  # straight into the output (no copy of a result)
            if np.shares_memory(x, o):
                o[...] = self.compute(p, x)
            else:
                self._horner(p, x, np.multiply(x, p.a, out=o))
        _ndarray.push_numpy(run, [ins[0]], [outs[0]], self.name)

    def grad(self, p, dys, xs, ys):
        t = np.multiply(xs[0], 2 * p.a)
        t += p.b
        t *= dys[0]
        return (t,)


@_contrib
class gradientmultiplier(_Elemwise):
    """data unchanged; its gradient multiplied by `scalar`."""
    params = ParamSchema(Param('scalar', 'float', 1.0), Param('is_int', 'bool', True))

    def compute(self, p, x):
        return x

    def grad(self, p, dys, xs, ys):
        return (dys[0] * p.scalar,)


@_contrib
class round_ste(_Elemwise):
    """round(data) with a straight-through (identity) gradient."""

    def compute(self, p, x):
        return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))

    def grad(self, p, dys, xs, ys):
        return (dys[0],)


@_contrib
class sign_ste(_Elemwise):
    """sign(data) with a straight-through (identity) gradient."""

    def compute(self, p, x):
        return np.sign(x)

    def grad(self, p, dys, xs, ys):
        return (dys[0],)


@_contrib
class MultiBoxPrior(NumpyOp):
    """SSD anchor boxes (1, H·W·A, 4) in corner form for a (N, C, H, W) feature map: at
    each cell centre ((i + offsets[0]) · steps[0], (j + offsets[1]) · steps[1]) (steps
    -1: 1/H, 1/W) one box per size with ratios[0], then one per further ratio with
    sizes[0]; half-width s·H/W·sqrt(r)/2, half-height s/sqrt(r)/2; clip to [0, 1]."""
    params = ParamSchema(Param('sizes', 'any', (1.0,)), Param('ratios', 'any', (1.0,)),
                         Param('clip', 'bool', False), Param('steps', 'any', (-1.0, -1.0)),
                         Param('offsets', 'any', (0.5, 0.5)))
    has_backward = False

    def _floats(self, p, name):
        v = getattr(p, name)
        if isinstance(v, str):
            import ast
            v = ast.literal_eval(v)
        v = tuple(float(x) for x in (v if isinstance(v, (tuple, list)) else (v,)))
        if not v:
            raise ValueError(f"{self.name}: parameter '{name}' must not be empty")
        return v

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None], []
        if len(d) != 4:
            raise self.shape_error('data', 'a 4-D (N, C, H, W) shape', tuple(d))
        a = len(self._floats(p, 'sizes')) + len(self._floats(p, 'ratios')) - 1
        return [tuple(d)], [(1, d[2] * d[3] * a, 4)], []

    # (parameters, H, W[, dtype]) -> the anchors as a NumPy array / an NDArray: they depend
    # on data's shape alone, so a call copies them from an array made once (a C copy
    # pushed to the engine, no Python op)
    _cache = {}
    _nd_cache = {}

    def forward(self, p, is_train, req, ins, outs, aux):
        if req[0] != 'write':
            return super().forward(p, is_train, req, ins, outs, aux)
        from mxcy import ndarray as nd
        key = self._key(p, ins[0].shape[2:]) + (str(outs[0].dtype), str(outs[0].context))
        src = self._nd_cache.get(key)
        if src is None:
            if len(self._nd_cache) >= 64:
                self._nd_cache.clear()
            src = self._nd_cache[key] = nd.array(self._boxes(p, *ins[0].shape[2:]),
                                                 ctx=outs[0].context, dtype=outs[0].dtype)
        src.copyto(outs[0])

    def _key(self, p, hw):
        return tuple(self._floats(p, k) for k in ('sizes', 'ratios', 'steps', 'offsets')) \
            + (bool(p.clip),) + tuple(hw)

    def compute(self, p, x):
        return self._boxes(p, *x.shape[2:])

    def _boxes(self, p, h, w):
        key = self._key(p, (h, w))
        boxes = self._cache.get(key)
        if boxes is None:
            if len(self._cache) >= 64:
                self._cache.clear()
            boxes = self._cache[key] = self._anchors(p, h, w)
            boxes.flags.writeable = False
        return boxes

    def _anchors(self, p, h, w):
        sizes, ratios = self._floats(p, 'sizes'), self._floats(p, 'ratios')
        sy, sx = self._floats(p, 'steps')
        oy, ox = self._floats(p, 'offsets')
        sy, sx = (1.0 / h if sy <= 0 else sy), (1.0 / w if sx <= 0 else sx)
        shapes = [(s * h / w * np.sqrt(ratios[0]) / 2, s / np.sqrt(ratios[0]) / 2)
                  for s in sizes]
        shapes += [(sizes[0] * h / w * np.sqrt(r) / 2, sizes[0] / np.sqrt(r) / 2)
                   for r in ratios[1:]]
        cy = (np.arange(h)[:, None, None] + oy) * sy
        cx = (np.arange(w)[None, :, None] + ox) * sx
        hw = np.array([s[0] for s in shapes])[None, None, :]
        hh = np.array([s[1] for s in shapes])[None, None, :]
        cy, cx = np.broadcast_arrays(cy, cx)
        boxes = np.stack(np.broadcast_arrays(cx - hw, cy - hh, cx + hw, cy + hh), axis=-1)
        if p.clip:
            boxes = np.clip(boxes, 0, 1)
        return boxes.reshape(1, -1, 4)


@_contrib
class bipartite_matching(NumpyOp):
    """Greedy matching of a (..., N, M) score matrix: best pairs first (lowest with
    is_ascend), each row and column at most once, scores beyond threshold (below it with
    is_ascend) skipped, at most topk pairs; outputs each row's column and each column's
    row (-1: unmatched)."""
    params = ParamSchema(Param('is_ascend', 'bool', False), Param('threshold', 'float'),
                         Param('topk', 'int', -1))
    has_backward = False

    def outputs(self, p):
        return ['output', 'col_match']

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None, None], []
        if len(d) < 2:
            raise self.shape_error('data', 'a (..., N, M) score matrix', tuple(d))
        return [tuple(d)], [tuple(d[:-1]), tuple(d[:-2]) + (d[-1],)], []

    def compute(self, p, x):
        lead, (n, m) = x.shape[:-2], x.shape[-2:]
        flat = x.reshape(-1, n, m)
        rows = -np.ones((flat.shape[0], n))
        cols = -np.ones((flat.shape[0], m))
        for b, s in enumerate(flat):
            order = np.argsort(s, axis=None, kind='stable')
            order = order if p.is_ascend else order[::-1]
            vals = s.reshape(-1)[order]
            # the scan stops at the first pair past the threshold (NaN does not stop it)
            ok = ~(vals >= p.threshold) if p.is_ascend else ~(vals <= p.threshold)
            stop = len(ok) if ok.all() else int(np.argmin(ok))
            row_free, col_free = [True] * n, [True] * m
            count, limit = 0, min(n, m)
            for k in order[:stop].tolist():
                i, j = divmod(k, m)
                if row_free[i] and col_free[j]:
                    row_free[i] = col_free[j] = False
                    rows[b, i], cols[b, j] = j, i
                    count += 1
                    if count == limit or 0 < p.topk <= count:
                        break
        return rows.reshape(lead + (n,)), cols.reshape(lead + (m,))
