"""Shape operators: shape_array, size_array, slice_like, depth_to_space, space_to_depth.

Registry operators (so ``mx.sym`` and autograd have them too); NumPy inside one engine op.
* ``shape_array(data)`` -> int64 (ndim,); ``size_array(data)`` -> int64 (1,); no gradient.
* ``slice_like(data, shape_like, axes=())`` slices data from 0 to shape_like's sizes on
  `axes` (all when empty; negative axes count from the end); the gradient of data is dy
  scattered into zeros, shape_like gets zeros.
* ``depth_to_space`` (N, C·b², H, W) -> (N, C, H·b, W·b) and ``space_to_depth`` its
  inverse; each one's gradient is the other applied to dy.
"""
import builtins

import numpy as np

from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op
from mxcy.operator.tensor import push_value, zero_grads


class _NoGrad(OpSpec):
    backward_needs = ()

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        zero_grads(req, in_grads)


@register_op
class shape_array(_NoGrad):
    """The shape of data as a 1-D int64 array."""
    name = 'shape_array'

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        return [s], [None if s is None else (len(s),)], []

    def infer_type(self, p, in_types):
        return list(in_types), ['int64'], []

    def values(self, data):
        return data.shape

    def forward(self, p, is_train, req, ins, outs, aux):
        value = np.array(self.values(ins[0]), np.int64)
        if req[0] == 'write':
            outs[0][:] = value          # known at the call: a C copy, no NumPy engine op
        else:
            push_value(lambda x: value, ins, outs[0], req[0], self.name)


@register_op
class size_array(shape_array):
    """The number of elements of data as a (1,) int64 array."""
    name = 'size_array'

    def infer_shape(self, p, in_shapes):
        return [in_shapes[0]], [(1,)], []

    def values(self, data):
        return [data.size]


@register_op
class slice_like(OpSpec):
    """data[0:shape_like.shape[a]] on each axis a of `axes` (every axis when empty)."""
    name = 'slice_like'
    params = ParamSchema(Param('axes', 'shape', ()))
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'shape_like']

    def _axes(self, p, dshape, lshape):
        nd = len(dshape)
        if not p.axes:
            if len(lshape) != nd:
                raise self.shape_error('shape_like', f'{nd} dimensions as data {dshape} '
                                       '(axes=())', lshape)
            return range(nd)
        out = []
        for a in p.axes:
            if not -nd <= a < nd:
                raise self.shape_error('data', f'an axis {a} to slice', dshape)
            a = a + nd if a < 0 else a
            if a >= len(lshape):
                raise self.shape_error('shape_like', f'an axis {a}', lshape)
            out.append(a)
        return out

    def infer_shape(self, p, in_shapes):
        d, s = in_shapes
        if d is None or s is None:
            return list(in_shapes), [None], []
        shape = list(d)
        for a in self._axes(p, d, s):
            if s[a] > d[a]:
                raise self.shape_error('shape_like', f'axis {a} at most {d[a]} (data {d})',
                                       tuple(s))
            shape[a] = s[a]
        return [tuple(d), tuple(s)], [tuple(shape)], []

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0]], []

    def forward(self, p, is_train, req, ins, outs, aux):
        key = tuple(builtins.slice(0, n) for n in outs[0].shape)
        push_value(lambda x, s: x[key], ins, outs[0], req[0], self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        key = tuple(builtins.slice(0, n) for n in out_grads[0].shape)
        shape = ins[0].shape

        def scatter(dy):
            g = np.zeros(shape, dy.dtype)
            g[key] = dy
            return g
        push_value(scatter, [out_grads[0]], in_grads[0], req[0], self.name + '_backward')
        zero_grads(req[1:], in_grads[1:])


def _d2s(x, b):
    n, c, h, w = x.shape
    return x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2).reshape(
        n, c // (b * b), h * b, w * b)


def _s2d(x, b):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(
        n, c * b * b, h // b, w // b)


class _Block(OpSpec):
    params = ParamSchema(Param('block_size', 'int'))
    backward_needs = ('out_grads',)

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        b = p.block_size
        if b < 1:
            raise self.shape_error('block_size', 'a positive block size', b)
        if len(s) != 4:
            raise self.shape_error('data', 'a 4-D (N, C, H, W) shape', tuple(s))
        return [tuple(s)], [self.out_shape(tuple(s), b)], []

    def forward(self, p, is_train, req, ins, outs, aux):
        f, b = self.fwd, p.block_size
        push_value(lambda x: f(x, b), ins, outs[0], req[0], self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        f, b = self.bwd, p.block_size
        push_value(lambda dy: f(dy, b), out_grads, in_grads[0], req[0],
                   self.name + '_backward')


@register_op
class depth_to_space(_Block):
    """(N, C·b², H, W) -> (N, C, H·b, W·b): depth blocks moved into space."""
    name = 'depth_to_space'
    fwd, bwd = staticmethod(_d2s), staticmethod(_s2d)

    def out_shape(self, s, b):
        n, c, h, w = s
        if c % (b * b):
            raise self.shape_error('data', f'channels a multiple of block_size**2 = {b * b}',
                                   s)
        return (n, c // (b * b), h * b, w * b)


@register_op
class space_to_depth(_Block):
    """(N, C, H·b, W·b) -> (N, C·b², H, W), the inverse of depth_to_space."""
    name = 'space_to_depth'
    fwd, bwd = staticmethod(_s2d), staticmethod(_d2s)

    def out_shape(self, s, b):
        n, c, h, w = s
        if h % b or w % b:
            raise self.shape_error('data', f'height and width multiples of block_size={b}', s)
        return (n, c * b * b, h // b, w // b)
