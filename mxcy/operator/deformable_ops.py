"""Deformable convolutions of MXNet 1.9.1's contrib namespace in NumPy (registered as
``_contrib_DeformableConvolution`` and ``_contrib_ModulatedDeformableConvolution``).

A 2-D convolution whose kernel taps read the input at learned fractional positions:
for output pixel (oh, ow), kernel tap k = (i, j) and deformable group g, the tap reads

    h = oh·stride_h − pad_h + i·dilate_h + offset[n, g·2·K + 2k,     oh, ow]
    w = ow·stride_w − pad_w + j·dilate_w + offset[n, g·2·K + 2k + 1, oh, ow]

(K = kh·kw taps; input channel c belongs to deformable group c // (C / groups)) by
bilinear interpolation that treats pixels outside the image as 0 and returns 0 when the
position lies outside (−1, H) × (−1, W). The modulated variant (DCNv2) multiplies each
sample by mask[n, g·K + k, oh, ow]. The sampled columns then meet the weight as in an
ordinary grouped convolution (num_group), plus bias.

The sampling (and its scatter back) is `mxcy._sampling.deform_im2col`/`deform_col2im`
in C; the contraction with the weight one batched GEMM. Gradients flow to data, offset
(the derivative of the bilinear weights in h and w), mask, weight and bias.
Shapes: offset (N, 2·dg·K, OH, OW), mask (N, dg·K, OH, OW),
weight (num_filter, C / num_group, kh, kw), bias (num_filter,).
"""
import numpy as np

from mxcy import _sampling
from mxcy.operator._conv_numpy import conv_out_size
from mxcy.operator._kernel_op import push_kernel
from mxcy.operator._numpy_op import NumpyOp
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op, unify_shape

_PARAMS = (Param('kernel', 'shape'), Param('stride', 'shape', ()),
           Param('dilate', 'shape', ()), Param('pad', 'shape', ()),
           Param('num_filter', 'int'), Param('num_group', 'int', 1),
           Param('num_deformable_group', 'int', 1), Param('workspace', 'int', 1024),
           Param('no_bias', 'bool', False))
_LAYOUT = Param('layout', 'str', None, optional=True, choices=('NCW', 'NCHW', 'NCDHW'))


class _DeformableConv(NumpyOp):
    """Shared inference and compute; `modulated` adds the mask input."""
    modulated = False
    clamp = True
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        names = ['data', 'offset'] + (['mask'] if self.modulated else []) + ['weight']
        return names + ([] if p.no_bias else ['bias'])

    def geometry(self, p):
        if p.layout not in (None, 'NCHW'):
            raise ValueError(f"{self.name}: only 2-D layout 'NCHW' is supported, "
                             f"got layout={p.layout!r}")
        if len(p.kernel) != 2:
            raise ValueError(f"{self.name}: parameter 'kernel' must have 2 dimensions "
                             f"(kh, kw), got {p.kernel}")
        for name in ('stride', 'dilate', 'pad'):
            v = getattr(p, name)
            if v and len(v) != 2:
                raise ValueError(f"{self.name}: parameter '{name}' must have 2 dimensions, "
                                 f"got {v}")
        for name in ('num_filter', 'num_group', 'num_deformable_group'):
            if getattr(p, name) < 1:
                raise ValueError(f"{self.name}: parameter '{name}' must be positive, got "
                                 f"{getattr(p, name)}")
        return (tuple(p.stride) or (1, 1), tuple(p.pad) or (0, 0),
                tuple(p.dilate) or (1, 1))

    def infer_shape(self, p, in_shapes):
        stride, pad, dilate = self.geometry(p)
        shapes = list(in_shapes)
        names = self.arguments(p)
        d = shapes[0]
        if d is None:
            return shapes, [None], []
        d = tuple(d)
        if len(d) != 4:
            raise self.shape_error('data', '4-D (N, C, H, W)', d)
        n, c = d[:2]
        if c % p.num_group or p.num_filter % p.num_group:
            raise self.shape_error('data', f'channels divisible by num_group={p.num_group} '
                                   f'(and num_filter={p.num_filter} too)', d)
        if c % p.num_deformable_group:
            raise self.shape_error('data', 'channels divisible by num_deformable_group='
                                   f'{p.num_deformable_group}', d)
        out = tuple(conv_out_size(*a) for a in zip(d[2:], p.kernel, stride, pad, dilate))
        if min(out) < 1:
            raise self.shape_error('data', f'spatial size large enough for kernel={p.kernel}',
                                   d, f'pad={pad}, dilate={dilate}')
        taps = p.kernel[0] * p.kernel[1] * p.num_deformable_group
        want = {'offset': (n, 2 * taps) + out, 'mask': (n, taps) + out,
                'weight': (p.num_filter, c // p.num_group) + tuple(p.kernel),
                'bias': (p.num_filter,)}
        for i, name in enumerate(names[1:], 1):
            shapes[i] = unify_shape(self, name, want[name], shapes[i])
        return shapes, [(n, p.num_filter) + out], []

    def _split(self, p, xs):
        mask = xs[2] if self.modulated else None
        k = 3 if self.modulated else 2
        return xs[0], xs[1], mask, xs[k], (None if p.no_bias else xs[k + 1])

    def _geo(self, p):
        stride, pad, dilate = self.geometry(p)
        return tuple(p.kernel) + stride + pad + dilate

    def _columns(self, p, x, offset, mask):
        """The sampled (and masked) columns (N, C·K, P)."""
        n, c = x.shape[:2]
        cols = np.empty((n, c * p.kernel[0] * p.kernel[1], offset.shape[2] * offset.shape[3]),
                        x.dtype)
        _sampling.deform_im2col(x, offset, mask, cols, *self._geo(p),
                                p.num_deformable_group, self.clamp)
        return cols

    def forward(self, p, is_train, req, ins, outs, aux):
        def run(xs, bufs, adds):
            x, offset, mask, weight, bias = self._split(p, xs)
            n, g, (oh, ow) = x.shape[0], p.num_group, offset.shape[2:]
            cols = self._columns(p, x, offset, mask).reshape(n, g, -1, oh * ow)
            wg = weight.reshape(g, p.num_filter // g, -1)
            y = bufs[0].reshape(n, g, p.num_filter // g, oh * ow)     # a view: C-contiguous
            for i in range(n):
                for j in range(g):
                    _sampling.gemm(wg[j], cols[i, j], y[i, j])
            if bias is not None:
                bufs[0] += bias.reshape(1, -1, 1, 1)
        push_kernel(run, ins, outs, req, self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        def run(xs, bufs, adds):
            dy, (x, offset, mask, weight, bias) = xs[0], self._split(p, xs[1:])
            n, g, (oh, ow) = x.shape[0], p.num_group, offset.shape[2:]
            f = p.num_filter // g
            dyg = dy.reshape(n, g, f, oh * ow)
            wg = weight.reshape(g, f, -1)
            dcols = np.empty((n, g, wg.shape[2], oh * ow), x.dtype)
            for i in range(n):
                for j in range(g):
                    _sampling.gemm(wg[j], dyg[i, j], dcols[i, j], trans_a=True)
            names = self.arguments(p)
            grads = {k: (bufs[i] if bufs[i] is not None else np.empty(xs[1 + i].shape, x.dtype))
                     for i, k in enumerate(names)}
            _sampling.deform_col2im(x, offset, mask, dcols.reshape(n, -1, oh * ow),
                                    grads['data'], grads['offset'], grads.get('mask'),
                                    *self._geo(p), p.num_deformable_group, self.clamp)
            if bufs[names.index('weight')] is not None:
                cols = self._columns(p, x, offset, mask).reshape(n, g, -1, oh * ow)
                dw = grads['weight'].reshape(g, f, -1)
                for i in range(n):
                    for j in range(g):
                        _sampling.gemm(dyg[i, j], cols[i, j], dw[j], trans_b=True,
                                       beta=1.0 if i else 0.0)
            if bias is not None and bufs[-1] is not None:
                grads['bias'][...] = dy.sum(axis=(0, 2, 3))
        push_kernel(run, list(out_grads[:1]) + list(ins), in_grads, req,
                    self.name + '_backward')


@register_op
class _contrib_DeformableConvolution(_DeformableConv):
    """Deformable convolution (Dai et al. 2017): see the module docstring."""
    name = '_contrib_DeformableConvolution'
    params = ParamSchema(*_PARAMS, _LAYOUT)


@register_op
class _contrib_ModulatedDeformableConvolution(_DeformableConv):
    """Modulated deformable convolution (DCNv2, Zhu et al. 2019): each sample is scaled by
    its mask value. im2col_step, the images per im2col batch, must divide the batch size
    once capped at it; it does not change the result."""
    name = '_contrib_ModulatedDeformableConvolution'
    params = ParamSchema(*_PARAMS, Param('im2col_step', 'int', 64), _LAYOUT)
    modulated = True
    clamp = False

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        if d is not None and len(d) >= 1:
            step = min(p.im2col_step, d[0])
            if step < 1 or d[0] % step:
                raise self.shape_error('data', 'a batch size divisible by im2col_step='
                                       f'{p.im2col_step}', tuple(d))
        if p.num_filter % max(p.num_deformable_group, 1):
            raise ValueError(f"{self.name}: parameter 'num_filter' ({p.num_filter}) must be "
                             f"divisible by num_deformable_group={p.num_deformable_group}")
        return super().infer_shape(p, in_shapes)
