"""Region pooling operators of MXNet 1.9.1's contrib namespace in NumPy:
PSROIPooling, DeformablePSROIPooling (R-FCN, Deformable ConvNets) and RROIAlign.

ROIs are rows (batch_index, x1, y1, x2, y2) in image coordinates (rotated ROIs:
(batch_index, center_x, center_y, width, height, angle in degrees)); ``spatial_scale``
maps them onto the feature map. Coordinates of (x1, y1, x2, y2) are rounded half away
from zero before scaling.

* PSROIPooling(data (N, output_dim·g², H, W), rois (R, 5)) -> (R, output_dim, P, P):
  the ROI [x1, x2 + 1)·scale is cut into P × P bins; bin (i, j) averages the integer
  pixels [floor(start), ceil(end)) of channel (d·g + gi)·g + gj, where gi = floor(i·g/P)
  (g = group_size, or P when 0); an empty bin is 0. d data gets each bin's gradient
  spread evenly over its pixels; rois get none.
* DeformablePSROIPooling(data, rois, trans (R, 2·classes, part, part)): as above, but
  bins start at (x1·scale − 0.5, ...), are shifted by trans_std·trans·(ROI size) (per
  class: output channel d uses class d // (output_dim / classes)), and average
  sample_per_part² bilinear samples (samples outside [−0.5, size − 0.5] are skipped,
  the rest clamped into the image). Gradients: data, and trans as MXNet computes it
  (the bilinear slope at the clamped sample); rois none. no_trans=True drops trans.
* RROIAlign(data, rois (R, 6)) -> (R, C, ph, pw): the rotated box is cut into ph × pw
  bins, each the average of a grid of sampling_ratio² (or ceil(bin size)²) bilinear
  samples; x = xx·cos θ + yy·sin θ + cx, y = yy·cos θ − xx·sin θ + cy for box-frame
  (xx, yy). MXNet gives it no gradient.
"""
import numpy as np

from mxcy import _detect
from mxcy.operator._numpy_op import NumpyOp
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op, unify_shape


def _round(v):
    """C's round(): halves away from zero."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _group_channels(p, group):
    """(output_dim, P, P) channel read by each output cell."""
    size = p.pooled_size
    g = np.clip(np.floor(np.arange(size) * group / size).astype(np.int64), 0, group - 1)
    d = np.arange(p.output_dim)[:, None, None]
    return (d * group + g[None, :, None]) * group + g[None, None, :]


class _RoiOp(NumpyOp):
    roi_cols = 5
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'rois']

    def check_params(self, p):
        for name in ('output_dim', 'pooled_size'):
            if getattr(p, name) < 1:
                raise ValueError(f"{self.name}: parameter '{name}' must be positive, got "
                                 f"{getattr(p, name)}")

    def channels(self, p):
        return None

    def out_shape(self, p, d, r):
        return (r[0], p.output_dim, p.pooled_size, p.pooled_size)

    def infer_shape(self, p, in_shapes):
        self.check_params(p)
        shapes = list(in_shapes)
        d, r = shapes[0], shapes[1]
        if d is not None:
            want = self.channels(p)
            if len(d) != 4 or (want is not None and d[1] != want):
                raise self.shape_error('data', f'(N, {want or "C"}, H, W)', tuple(d))
        if r is not None and (len(r) != 2 or r[1] != self.roi_cols):
            raise self.shape_error('rois', f'(num_rois, {self.roi_cols})', tuple(r))
        if d is None or r is None:
            return shapes, [None], []
        return shapes, [self.out_shape(p, tuple(d), tuple(r))], []

    def batch_index(self, data, rois):
        b = rois[:, 0].astype(np.int64)
        if b.size and (b.min() < 0 or b.max() >= data.shape[0]):
            raise ValueError(f"{self.name}: rois batch index must lie in [0, "
                             f"{data.shape[0]}), got {rois[:, 0].tolist()}")
        return b


@register_op
class _contrib_PSROIPooling(_RoiOp):
    """Position-sensitive ROI average pooling (see the module docstring)."""
    name = '_contrib_PSROIPooling'
    params = ParamSchema(Param('spatial_scale', 'float'), Param('output_dim', 'int'),
                         Param('pooled_size', 'int'), Param('group_size', 'int', 0))

    def channels(self, p):
        g = p.group_size or p.pooled_size
        return p.output_dim * g * g

    def _bins(self, p, data, rois):
        """Per ROI, the bin edges (hs, he) (R, P) and (ws, we) (R, P), and the indices
        that address (roi batch, channel, bin row, bin column)."""
        height, width = data.shape[2:]
        # NOTE: in the rois' dtype, as MXNet: a float32 bin edge 4/3·3 rounds up past 4
        dt = rois.dtype.type
        size, s = p.pooled_size, dt(p.spatial_scale)
        b = self.batch_index(data, rois)
        x1, y1 = _round(rois[:, 1]) * s, _round(rois[:, 2]) * s
        x2, y2 = (_round(rois[:, 3]) + dt(1)) * s, (_round(rois[:, 4]) + dt(1)) * s
        bin_h = np.maximum(y2 - y1, dt(0.1))[:, None] / dt(size)
        bin_w = np.maximum(x2 - x1, dt(0.1))[:, None] / dt(size)
        k = np.arange(size, dtype=rois.dtype)[None, :]

        def edges(start, step, lim):
            lo = np.clip(np.floor(k * step + start[:, None]), 0, lim)
            hi = np.clip(np.ceil((k + dt(1)) * step + start[:, None]), 0, lim)
            return lo.astype(np.int64), hi.astype(np.int64)
        hs, he = edges(y1, bin_h, height)
        ws, we = edges(x1, bin_w, width)
        c = _group_channels(p, p.group_size or size)[None]
        return b[:, None, None, None], c, (hs, he, ws, we)

    def _kernel_args(self, p, data, rois):
        b, c, (hs, he, ws, we) = self._bins(p, data, rois)
        return b.reshape(-1), np.ascontiguousarray(c[0]), hs, he, ws, we

    def compute(self, p, data, rois):
        args = self._kernel_args(p, data, rois)
        out = np.empty((len(rois), p.output_dim, p.pooled_size, p.pooled_size))
        _detect.psroi_pool(_detect.as_real(data), *args, out)
        return out

    def grad(self, p, dys, xs, ys):
        data, rois = xs
        args = self._kernel_args(p, data, rois)
        dx = np.zeros(data.shape)
        _detect.psroi_pool_grad(_detect.as_real(dys[0]), *args, dx)
        return dx, None


@register_op
class _contrib_DeformablePSROIPooling(_RoiOp):
    """Deformable position-sensitive ROI pooling (see the module docstring)."""
    name = '_contrib_DeformablePSROIPooling'
    params = ParamSchema(Param('spatial_scale', 'float'), Param('output_dim', 'int'),
                         Param('group_size', 'int'), Param('pooled_size', 'int'),
                         Param('part_size', 'int', 0), Param('sample_per_part', 'int', 1),
                         Param('trans_std', 'float', 0.0), Param('no_trans', 'bool', False))

    def arguments(self, p):
        return ['data', 'rois'] + ([] if p.no_trans else ['trans'])

    def check_params(self, p):
        super().check_params(p)
        for name in ('group_size', 'sample_per_part'):
            if getattr(p, name) < 1:
                raise ValueError(f"{self.name}: parameter '{name}' must be positive, got "
                                 f"{getattr(p, name)}")

    def channels(self, p):
        return p.output_dim * p.group_size * p.group_size

    def infer_shape(self, p, in_shapes):
        shapes, outs, aux = super().infer_shape(p, in_shapes[:2])
        if p.no_trans:
            return shapes, outs, aux
        t, r = in_shapes[2], shapes[1]
        part = p.part_size or p.pooled_size
        if t is not None:
            t = tuple(t)
            if (len(t) != 4 or t[2:] != (part, part) or t[1] < 2 or t[1] % 2
                    or p.output_dim % (t[1] // 2)):
                raise self.shape_error('trans', f'(num_rois, 2·classes, {part}, {part}) with '
                                       f'classes dividing output_dim={p.output_dim}', t)
            if r is not None:
                t = unify_shape(self, 'trans', (r[0],) + t[1:], t)
        return shapes + [t], outs, aux

    def _samples(self, p, data, rois, trans):
        """Bilinear samples of every (roi, channel, bin, sample): corner indices, weights,
        the valid mask and the per-roi sizes (for the trans gradient)."""
        height, width = data.shape[2:]
        size, s, k = p.pooled_size, p.spatial_scale, p.sample_per_part
        part = p.part_size or size
        r = rois.shape[0]
        b = self.batch_index(data, rois)
        x1, y1 = _round(rois[:, 1]) * s - 0.5, _round(rois[:, 2]) * s - 0.5
        roi_w = np.maximum((_round(rois[:, 3]) + 1) * s - 0.5 - x1, 0.1)
        roi_h = np.maximum((_round(rois[:, 4]) + 1) * s - 0.5 - y1, 0.1)
        at = (slice(None), None, None, None)
        if p.no_trans:
            tx = ty = np.zeros((r, 1, 1, 1))
            cls = None
        else:
            classes = trans.shape[1] // 2
            cls = np.arange(p.output_dim) // (p.output_dim // classes)
            part_idx = np.floor(np.arange(size) / size * part).astype(np.int64)
            cls = (np.arange(r)[at], 2 * cls[None, :, None, None],
                   part_idx[None, None, :, None], part_idx[None, None, None, :])
            tx = trans[cls] * p.trans_std
            ty = trans[cls[0], cls[1] + 1, cls[2], cls[3]] * p.trans_std
        k_pos = np.arange(size)
        w0 = k_pos[None, None, None, :] * (roi_w / size)[at] + x1[at] + tx * roi_w[at]
        h0 = k_pos[None, None, :, None] * (roi_h / size)[at] + y1[at] + ty * roi_h[at]
        sub = np.arange(k)
        w = w0[..., None, None] + sub[None, :] * (roi_w / size / k)[at + (None, None)]
        h = h0[..., None, None] + sub[:, None] * (roi_h / size / k)[at + (None, None)]
        valid = (w >= -0.5) & (w <= width - 0.5) & (h >= -0.5) & (h <= height - 0.5)
        w, h = np.clip(w, 0, width - 1), np.clip(h, 0, height - 1)
        xl, yl = np.floor(w).astype(np.int64), np.floor(h).astype(np.int64)
        xh, yh = np.ceil(w).astype(np.int64), np.ceil(h).astype(np.int64)
        c = _group_channels(p, p.group_size)[None, ..., None, None]
        bb = b[at + (None, None)]
        return (bb, c, (yl, xl, yh, xh), (w - xl, h - yl), valid, (roi_w, roi_h), cls)

    def compute(self, p, data, rois, trans=None):
        b, c, (yl, xl, yh, xh), (fx, fy), valid, _, _ = self._samples(p, data, rois, trans)
        val = ((1 - fx) * (1 - fy) * data[b, c, yl, xl] + (1 - fx) * fy * data[b, c, yh, xl]
               + fx * (1 - fy) * data[b, c, yl, xh] + fx * fy * data[b, c, yh, xh])
        count = valid.sum(axis=(-2, -1))
        total = np.where(valid, val, 0).sum(axis=(-2, -1))
        return np.where(count > 0, total / np.maximum(count, 1), 0.0)

    def grad(self, p, dys, xs, ys):
        data, rois = xs[:2]
        trans = None if p.no_trans else xs[2]
        b, c, (yl, xl, yh, xh), (fx, fy), valid, (roi_w, roi_h), cls = \
            self._samples(p, data, rois, trans)
        count = valid.sum(axis=(-2, -1))
        share = np.where(count > 0, dys[0] / np.maximum(count, 1), 0.0)
        share = np.where(valid, share[..., None, None], 0.0)
        dx = np.zeros(data.shape)
        for y, x, wt in ((yl, xl, (1 - fx) * (1 - fy)), (yh, xl, (1 - fx) * fy),
                         (yl, xh, fx * (1 - fy)), (yh, xh, fx * fy)):
            np.add.at(dx, tuple(np.broadcast_arrays(b, c, y, x)), share * wt)
        if trans is None:
            return dx, None
        u00, u01 = data[b, c, yl, xl], data[b, c, yh, xl]
        u10, u11 = data[b, c, yl, xh], data[b, c, yh, xh]
        at = (slice(None), None, None, None)
        gx = ((u11 * fy + u10 * (1 - fy) - u01 * fy - u00 * (1 - fy)) * share).sum((-2, -1))
        gy = ((u11 * fx + u01 * (1 - fx) - u10 * fx - u00 * (1 - fx)) * share).sum((-2, -1))
        dt = np.zeros(trans.shape)
        idx = list(np.broadcast_arrays(*cls))
        np.add.at(dt, tuple(idx), gx * p.trans_std * roi_w[at])
        idx[1] = idx[1] + 1
        np.add.at(dt, tuple(idx), gy * p.trans_std * roi_h[at])
        return dx, None, dt


@register_op
class _contrib_RROIAlign(_RoiOp):
    """Rotated ROI align (see the module docstring); no gradient, as in MXNet."""
    name = '_contrib_RROIAlign'
    params = ParamSchema(Param('pooled_size', 'shape'), Param('spatial_scale', 'float'),
                         Param('sampling_ratio', 'int', -1))
    roi_cols = 6
    has_backward = False

    def check_params(self, p):
        if len(p.pooled_size) != 2 or min(p.pooled_size) < 1:
            raise ValueError(f"{self.name}: parameter 'pooled_size' must be 2 positive "
                             f"integers (ph, pw), got {p.pooled_size}")

    def out_shape(self, p, d, r):
        return (r[0], d[1]) + tuple(p.pooled_size)

    def compute(self, p, data, rois):
        ph, pw = p.pooled_size
        b = self.batch_index(data, rois)
        x = _detect.as_real(data)
        out = np.empty((len(rois), data.shape[1], ph, pw), x.dtype)
        _detect.rroi_align(x, np.ascontiguousarray(rois, np.float64), b, p.spatial_scale,
                           p.sampling_ratio, out)
        return out


def _clamped_taps(y, x, height, width):
    """ROIAlign's bilinear taps: zero outside [−1, H] × [−1, W], positions clamped into
    the image (an edge row/column is read alone)."""
    empty = (y < -1) | (y > height) | (x < -1) | (x > width)
    y, x = np.maximum(y, 0), np.maximum(x, 0)
    yl = np.minimum(np.floor(y).astype(np.int64), height - 1)
    xl = np.minimum(np.floor(x).astype(np.int64), width - 1)
    y, x = np.where(yl >= height - 1, yl, y), np.where(xl >= width - 1, xl, x)
    yh, xh = np.minimum(yl + 1, height - 1), np.minimum(xl + 1, width - 1)
    ly, lx = y - yl, x - xl
    keep = ~empty
    return [(yl * width + xl, (1 - ly) * (1 - lx) * keep), (yl * width + xh, (1 - ly) * lx * keep),
            (yh * width + xl, ly * (1 - lx) * keep), (yh * width + xh, ly * lx * keep)]
