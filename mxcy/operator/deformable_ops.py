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

Gradients flow to data, offset (the derivative of the bilinear weights in h and w),
mask, weight and bias. Shapes: offset (N, 2·dg·K, OH, OW), mask (N, dg·K, OH, OW),
weight (num_filter, C / num_group, kh, kw), bias (num_filter,).
"""
import numpy as np

from mxcy.operator._conv_numpy import conv_out_size
from mxcy.operator._numpy_op import NumpyOp
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op, unify_shape

# corner (dh, dw) of the bilinear stencil and the derivative signs of its weight:
# weight = (lh if dh else 1 - lh) * (lw if dw else 1 - lw)
_CORNERS = ((0, 0), (0, 1), (1, 0), (1, 1))


def bilinear_taps(h, w, height, width, clamp):
    """The 4 bilinear taps at positions (h, w): a list of (flat index, weight,
    d weight/dh, d weight/dw). Without `clamp` (DCNv2 sampling), pixels outside the image
    read 0 and positions outside (−1, H) × (−1, W) get zero weights. With `clamp` (MXNet's
    DeformableConvolution sampling), positions outside [0, H) × [0, W) get zero weights
    and one in [H − 1, H) reads row H − 1 only (likewise for columns), so it does not
    move with h there."""
    if clamp:
        inside = (h >= 0) & (w >= 0) & (h < height) & (w < width)
        free_h, free_w = h < height - 1, w < width - 1
        h, w = np.where(free_h, h, height - 1), np.where(free_w, w, width - 1)
    else:
        inside = (h > -1) & (w > -1) & (h < height) & (w < width)
        free_h = free_w = True
    h0, w0 = np.floor(h), np.floor(w)
    lh, lw = h - h0, w - w0
    h0, w0 = h0.astype(np.int64), w0.astype(np.int64)
    taps = []
    for dh, dw in _CORNERS:
        hh, ww = h0 + dh, w0 + dw
        ok = inside & (hh >= 0) & (hh < height) & (ww >= 0) & (ww < width)
        fh, fw = (lh if dh else 1 - lh), (lw if dw else 1 - lw)
        sh, sw = (1 if dh else -1), (1 if dw else -1)
        idx = np.clip(hh, 0, height - 1) * width + np.clip(ww, 0, width - 1)
        taps.append((idx, fh * fw * ok, sh * fw * (ok & free_h), sw * fh * (ok & free_w)))
    return taps


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

    def _columns(self, p, x, offset, mask):
        """The sampled, masked columns (N, dg, Cg, K·P), the unmasked samples, the taps
        and the output size."""
        stride, pad, dilate = self.geometry(p)
        n, c, height, width = x.shape
        kh, kw = p.kernel
        dg = p.num_deformable_group
        oh, ow = offset.shape[2:]
        grid_h = (np.arange(oh) * stride[0] - pad[0])[None, :, None] + \
            (np.arange(kh) * dilate[0]).repeat(kw)[:, None, None]
        grid_w = (np.arange(ow) * stride[1] - pad[1])[None, None, :] + \
            np.tile(np.arange(kw) * dilate[1], kh)[:, None, None]
        off = offset.reshape(n, dg, kh * kw, 2, oh, ow)
        h = (grid_h + off[:, :, :, 0]).reshape(n, dg, 1, -1)
        w = (grid_w + off[:, :, :, 1]).reshape(n, dg, 1, -1)
        taps = bilinear_taps(h, w, height, width, self.clamp)
        xf = x.reshape(n, dg, c // dg, height * width)
        val = sum(np.take_along_axis(xf, idx, axis=3) * wt for idx, wt, _, _ in taps)
        m = mask.reshape(n, dg, 1, -1) if mask is not None else None
        return (val * m if m is not None else val), val, taps, (oh, ow)

    def _split(self, p, xs):
        mask = xs[2] if self.modulated else None
        k = 3 if self.modulated else 2
        return xs[0], xs[1], mask, xs[k], (None if p.no_bias else xs[k + 1])

    def compute(self, p, *xs):
        x, offset, mask, weight, bias = self._split(p, xs)
        cols, _, _, (oh, ow) = self._columns(p, x, offset, mask)
        n, g = x.shape[0], p.num_group
        cols = cols.reshape(n, g, -1, oh * ow)       # (N, G, Cg·K, P)
        wg = weight.reshape(g, p.num_filter // g, -1)
        y = np.einsum('gfk,ngkp->ngfp', wg, cols).reshape(n, p.num_filter, oh, ow)
        return y if bias is None else y + bias.reshape(1, -1, 1, 1)

    def grad(self, p, dys, xs, ys):
        x, offset, mask, weight, bias = self._split(p, xs)
        cols, val, taps, (oh, ow) = self._columns(p, x, offset, mask)
        n, c, height, width = x.shape
        g, dg = p.num_group, p.num_deformable_group
        dy = dys[0].reshape(n, g, p.num_filter // g, oh * ow)
        wg = weight.reshape(g, p.num_filter // g, -1)
        dw = np.einsum('ngfp,ngkp->gfk', dy, cols.reshape(n, g, -1, oh * ow))
        dcols = np.einsum('gfk,ngfp->ngkp', wg, dy).reshape(val.shape)  # (N, dg, Cg, L)
        dmask = None
        if mask is not None:
            dmask = (dcols * val).sum(axis=2).reshape(mask.shape)
            dcols = dcols * mask.reshape(n, dg, 1, -1)
        # data: scatter each tap's share back through one bincount over flat indices
        base = (np.arange(n * c) * height * width).reshape(n, dg, c // dg, 1)
        dx = np.zeros(n * c * height * width)
        dh = dwid = 0
        xf = x.reshape(n, dg, c // dg, height * width)
        for idx, wt, wt_h, wt_w in taps:
            dx += np.bincount((base + idx).ravel(), (dcols * wt).ravel(), dx.size)
            v = (dcols * np.take_along_axis(xf, idx, axis=3)).sum(axis=2)
            dh = dh + v * wt_h[:, :, 0]
            dwid = dwid + v * wt_w[:, :, 0]
        kk = p.kernel[0] * p.kernel[1]
        doff = np.stack([dh.reshape(n, dg, kk, oh, ow), dwid.reshape(n, dg, kk, oh, ow)], 3)
        grads = [dx.reshape(x.shape), doff.reshape(offset.shape)]
        grads += [dmask] if self.modulated else []
        grads.append(dw.reshape(weight.shape))
        if bias is not None:
            grads.append(dys[0].sum(axis=(0, 2, 3)))
        return tuple(grads)


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
