"""Index operators of MXNet 1.9.1 computed in NumPy (`NumpyOp`): batch_take, gather_nd,
scatter_nd, ravel_multi_index, unravel_index, choose_element_0index (legacy pick) and
fill_element_0index.

Indices may have any dtype (they are truncated to integers); the output takes the data's
dtype. Gradients: batch_take and gather_nd scatter-add dy into zeros of the data's shape;
scatter_nd gathers dy at the indices; fill_element_0index passes dy to lhs except at the
filled spots, whose dy goes to mhs. Index inputs get zero gradients.
"""
import numpy as np

from mxcy.operator._numpy_op import NumpyOp
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op
from mxcy.operator.indexing import pick


class _IndexTypes:
    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0]], []


def _nd_key(idx):
    return tuple(idx.astype(np.int64))


@register_op
class batch_take(_IndexTypes, NumpyOp):
    """out[i] = a[i, indices[i]] for a of shape (N, M) (indices clipped to [0, M))."""
    name = 'batch_take'
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['a', 'indices']

    def infer_shape(self, p, in_shapes):
        a, idx = in_shapes
        if a is None:
            return list(in_shapes), [idx and tuple(idx)], []
        if len(a) != 2:
            raise self.shape_error('a', 'a matrix (N, M)', tuple(a))
        if idx is not None and tuple(idx) != (a[0],):
            raise self.shape_error('indices', (a[0],), tuple(idx), f'one index per row of a '
                                   f'{tuple(a)}')
        return [tuple(a), (a[0],)], [(a[0],)], []

    def _cols(self, a, idx):
        return np.clip(idx.astype(np.int64), 0, a.shape[1] - 1)

    def compute(self, p, a, idx):
        return a[np.arange(a.shape[0]), self._cols(a, idx)]

    def grad(self, p, dys, xs, ys):
        a, idx = xs
        g = np.zeros(a.shape, dys[0].dtype)
        np.add.at(g, (np.arange(a.shape[0]), self._cols(a, idx)), dys[0])
        return g, None


@register_op
class gather_nd(_IndexTypes, NumpyOp):
    """out[y...] = data[indices[0, y...], ..., indices[M-1, y...]]: indices (M, Y...) picks
    the first M axes; out has shape Y + data.shape[M:]."""
    name = 'gather_nd'
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'indices']

    def infer_shape(self, p, in_shapes):
        d, idx = in_shapes
        if d is None or idx is None:
            return list(in_shapes), [None], []
        if not idx or idx[0] > len(d):
            raise self.shape_error('indices', f'(M, ...) with M <= {len(d)} (data {tuple(d)})',
                                   tuple(idx))
        return [tuple(d), tuple(idx)], [tuple(idx[1:]) + tuple(d[idx[0]:])], []

    def compute(self, p, data, idx):
        self._check(data, idx)
        return data[_nd_key(idx)]

    def _check(self, data, idx):
        i = idx.astype(np.int64)
        for k in range(i.shape[0]):
            if i[k].size and (i[k].min() < -data.shape[k] or i[k].max() >= data.shape[k]):
                raise IndexError(f"{self.name}: indices[{k}] holds values outside "
                                 f"[{-data.shape[k]}, {data.shape[k]}) for data of shape "
                                 f"{data.shape}")

    def grad(self, p, dys, xs, ys):
        data, idx = xs
        g = np.zeros(data.shape, dys[0].dtype)
        np.add.at(g, _nd_key(idx), dys[0])
        return g, None


@register_op
class scatter_nd(_IndexTypes, NumpyOp):
    """zeros of `shape` with out[indices[:, y...]] = data[y...] (gather_nd's inverse)."""
    name = 'scatter_nd'
    params = ParamSchema(Param('shape', 'shape'))
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'indices']

    def infer_shape(self, p, in_shapes):
        d, idx = in_shapes
        shape = tuple(p.shape)
        if d is not None and idx is not None:
            want = tuple(idx[1:]) + shape[idx[0]:]
            if tuple(d) != want:
                raise self.shape_error('data', want, tuple(d), f'indices {tuple(idx)}, '
                                       f'shape {shape}')
        return [d and tuple(d), idx and tuple(idx)], [shape], []

    def compute(self, p, data, idx):
        out = np.zeros(tuple(p.shape), data.dtype)
        out[_nd_key(idx)] = data
        return out

    def grad(self, p, dys, xs, ys):
        return dys[0][_nd_key(xs[1])], None


class _RavelBase(NumpyOp):
    params = ParamSchema(Param('shape', 'shape'))
    has_backward = False


@register_op
class ravel_multi_index(_RavelBase):
    """Flat indices of the (N, ...) coordinates in data for an array of `shape`."""
    name = 'ravel_multi_index'
    aliases = ('_ravel_multi_index',)

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        if d is not None and (not d or d[0] != len(p.shape)):
            raise self.shape_error('data', f'({len(p.shape)}, ...) coordinates for shape '
                                   f'{tuple(p.shape)}', tuple(d))
        return [d and tuple(d)], [None if d is None else tuple(d[1:])], []

    def compute(self, p, data):
        strides = np.cumprod((tuple(p.shape[1:]) + (1,))[::-1])[::-1]
        return np.tensordot(strides, data.astype(np.int64), axes=1)


@register_op
class unravel_index(_RavelBase):
    """Coordinates (len(shape), ...) of the flat indices in data for `shape`."""
    name = 'unravel_index'
    aliases = ('_unravel_index',)

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        return [d and tuple(d)], [None if d is None else (len(p.shape),) + tuple(d)], []

    def compute(self, p, data):
        # MXNet's loop: from the last axis, coordinate = rest % n and rest = rest / n with
        # C's truncating division; the first axis keeps what is left (so an index outside
        # the shape gives a first coordinate outside it, and a negative one negative ones)
        out = np.empty((len(p.shape),) + data.shape, data.dtype)
        if data.dtype.kind == 'f' or data.dtype.itemsize < 8:
            # in float64: trunc(rest / n) is exact for integers below 2^53 (every float32
            # index, every int32), and a division that vectorises (int64 // does not)
            rest = np.trunc(data, dtype=np.float64)
            for i in range(len(p.shape) - 1, 0, -1):
                q = np.trunc(rest / p.shape[i])
                np.subtract(rest, q * p.shape[i], out=out[i], casting='unsafe')
                rest = q
        else:
            rest = data.astype(np.int64)
            for i in range(len(p.shape) - 1, 0, -1):
                r = np.fmod(rest, p.shape[i])
                out[i] = r
                rest = (rest - r) // p.shape[i]
        out[0] = rest
        return out


@register_op
class choose_element_0index(pick):
    """Legacy name of pick (MXNet 1.x keeps it)."""
    name = 'choose_element_0index'
    aliases = ()


@register_op
class fill_element_0index(NumpyOp):
    """out = lhs with out[i, rhs[i]] = mhs[i] (lhs (N, M), mhs and rhs (N,))."""
    name = 'fill_element_0index'
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['lhs', 'mhs', 'rhs']

    def infer_shape(self, p, in_shapes):
        lhs, mhs, rhs = in_shapes
        if lhs is None:
            return list(in_shapes), [None], []
        if len(lhs) != 2:
            raise self.shape_error('lhs', 'a matrix (N, M)', tuple(lhs))
        for name, s in (('mhs', mhs), ('rhs', rhs)):
            if s is not None and tuple(s) != (lhs[0],):
                raise self.shape_error(name, (lhs[0],), tuple(s))
        return [tuple(lhs), (lhs[0],), (lhs[0],)], [tuple(lhs)], []

    def infer_type(self, p, in_types):
        known = in_types[0] or in_types[1]
        return [known, known, in_types[2]], [known], []

    def _key(self, lhs, rhs):
        return np.arange(lhs.shape[0]), np.clip(rhs.astype(np.int64), 0, lhs.shape[1] - 1)

    def compute(self, p, lhs, mhs, rhs):
        out = lhs.copy()
        out[self._key(lhs, rhs)] = mhs
        return out

    def grad(self, p, dys, xs, ys):
        lhs, _, rhs = xs
        key = self._key(lhs, rhs)
        dl = dys[0].copy()
        dl[key] = 0
        return dl, dys[0][key], None
