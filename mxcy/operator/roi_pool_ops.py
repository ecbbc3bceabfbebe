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

    def compute(self, p, data, rois):
        b, c, (hs, he, ws, we) = self._bins(p, data, rois)
        n, ch, height, width = data.shape
        integral = np.zeros((n, ch, height + 1, width + 1))
        integral[:, :, 1:, 1:] = data.cumsum(2, dtype=np.float64).cumsum(3)
        rows = lambda e: e[:, None, :, None]
        cols = lambda e: e[:, None, None, :]
        total = (integral[b, c, rows(he), cols(we)] - integral[b, c, rows(hs), cols(we)]
                 - integral[b, c, rows(he), cols(ws)] + integral[b, c, rows(hs), cols(ws)])
        area = rows(he - hs) * cols(we - ws)
        return np.where(area > 0, total / np.maximum(area, 1), 0.0)

    def grad(self, p, dys, xs, ys):
        data, rois = xs
        b, c, (hs, he, ws, we) = self._bins(p, data, rois)
        rows = lambda e: e[:, None, :, None]
        cols = lambda e: e[:, None, None, :]
        area = rows(he - hs) * cols(we - ws)
        share = np.where(area > 0, dys[0] / np.maximum(area, 1), 0.0)
        # spread each share over its rectangle: corner marks, then 2-D prefix sums
        n, ch, height, width = data.shape
        marks = np.zeros((n, ch, height + 1, width + 1))
        for h, w, sign in ((hs, ws, 1), (hs, we, -1), (he, ws, -1), (he, we, 1)):
            idx = np.broadcast_arrays(b, c, rows(h), cols(w))
            np.add.at(marks, tuple(idx), sign * share)
        dx = marks.cumsum(2).cumsum(3)[:, :, :height, :width]
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
        """All rois at once: every roi's sample grid padded to the largest (the padding
        weighs 0), four gathered taps per sample."""
        ph, pw = p.pooled_size
        n, c, height, width = data.shape
        b = self.batch_index(data, rois)
        r = rois.astype(np.float64)
        col = lambda v: v[:, None, None]
        cx, cy = r[:, 1] * p.spatial_scale, r[:, 2] * p.spatial_scale
        rw = np.maximum(r[:, 3] * p.spatial_scale, 1.0)
        rh = np.maximum(r[:, 4] * p.spatial_scale, 1.0)
        theta = r[:, 5] * np.pi / 180.0
        if p.sampling_ratio > 0:
            gh = gw = np.full(len(r), p.sampling_ratio, np.int64)
        else:
            gh = np.ceil(rh / ph).astype(np.int64)
            gw = np.ceil(rw / pw).astype(np.int64)
        g_h, g_w = max(int(gh.max(initial=0)), 1), max(int(gw.max(initial=0)), 1)
        yy = (col(-rh / 2) + np.arange(ph)[None, :, None] * col(rh / ph)
              + (np.arange(g_h) + 0.5)[None, None, :] * col(rh / ph / np.maximum(gh, 1))
              )[:, :, None, :, None]                                   # (R, ph, 1, G, 1)
        xx = (col(-rw / 2) + np.arange(pw)[None, :, None] * col(rw / pw)
              + (np.arange(g_w) + 0.5)[None, None, :] * col(rw / pw / np.maximum(gw, 1))
              )[:, None, :, None, :]                                   # (R, 1, pw, 1, G)
        cos = np.cos(theta)[:, None, None, None, None]
        sin = np.sin(theta)[:, None, None, None, None]
        x = xx * cos + yy * sin + cx[:, None, None, None, None]
        y = yy * cos - xx * sin + cy[:, None, None, None, None]
        live = ((np.arange(g_h) < gh[:, None])[:, None, None, :, None]
                & (np.arange(g_w) < gw[:, None])[:, None, None, None, :])
        img = data.reshape(n, c, height * width)
        bb = b[:, None, None, None, None]
        total = sum(img[bb, :, idx] * (wt * live)[..., None]
                    for idx, wt in _clamped_taps(y, x, height, width))   # (R, ph, pw, G, G, C)
        out = total.sum(axis=(3, 4)) / np.maximum(gh * gw, 1)[:, None, None, None]
        return out.transpose(0, 3, 1, 2)


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
