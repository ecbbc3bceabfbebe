"""Detection box operators of MXNet's contrib namespace in NumPy: box_nms (alias
box_non_maximum_suppression).

box_nms(data (..., N, K)): per batch, rows with score (column score_index) above
valid_thresh (and, with id_index set, whose class is not background_id, default -1)
are sorted by score, cut to the topk best (topk > 0), and greedily kept unless a kept
row of the same class (any class with force_suppress or id_index < 0) overlaps them with
IoU > overlap_thresh. The output has data's shape: the kept rows in score order (boxes
converted from in_format to out_format), then rows of -1. The gradient of each kept row
flows back to its input row (through the format conversion); other rows get zero.
"""
import numpy as np

from mxcy.operator._numpy_op import NumpyOp, check_roi_shapes
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op


def _corner(b, fmt):
    if fmt == 'corner':
        return b
    return np.concatenate([b[..., :2] - b[..., 2:] / 2, b[..., :2] + b[..., 2:] / 2], -1)


def _convert(b, src, dst):
    if src == dst:
        return b
    if dst == 'corner':
        return _corner(b, src)
    return np.concatenate([(b[..., :2] + b[..., 2:]) / 2, b[..., 2:] - b[..., :2]], -1)


def _convert_grad(g, src, dst):
    """Gradient through _convert(b, src, dst) (a linear map of the 4 coordinates)."""
    if src == dst:
        return g
    if dst == 'center':       # (c, s) = ((lo + hi) / 2, hi - lo)
        return np.concatenate([g[..., :2] / 2 - g[..., 2:], g[..., :2] / 2 + g[..., 2:]], -1)
    # (lo, hi) = (c - s / 2, c + s / 2)
    return np.concatenate([g[..., :2] + g[..., 2:], (g[..., 2:] - g[..., :2]) / 2], -1)


def _iou(a, b):
    lo = np.maximum(a[:2], b[:, :2])
    hi = np.minimum(a[2:], b[:, 2:])
    inter = np.prod(np.clip(hi - lo, 0, None), axis=1)
    area = lambda x: np.prod(np.clip(x[..., 2:] - x[..., :2], 0, None), axis=-1)
    union = area(a) + area(b) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0)


@register_op
class _contrib_box_nms(NumpyOp):
    """Non-maximum suppression of scored boxes (see the module docstring)."""
    name = '_contrib_box_nms'
    aliases = ('_contrib_box_non_maximum_suppression',)
    params = ParamSchema(Param('overlap_thresh', 'float', 0.5),
                         Param('valid_thresh', 'float', 0.0), Param('topk', 'int', -1),
                         Param('coord_start', 'int', 2), Param('score_index', 'int', 1),
                         Param('id_index', 'int', -1), Param('background_id', 'int', -1),
                         Param('force_suppress', 'bool', False),
                         Param('in_format', 'str', 'corner', choices=('corner', 'center')),
                         Param('out_format', 'str', 'corner', choices=('corner', 'center')))
    backward_needs = ('out_grads', 'inputs')

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        if d is not None:
            k = d[-1] if d else 0
            cols = [p.coord_start + 3, p.score_index] + ([p.id_index] if p.id_index >= 0
                                                          else [])
            if len(d) < 2 or max(cols) >= k or min(cols) < 0:
                raise self.shape_error('data', f'(..., N, K) rows with columns {cols}',
                                       tuple(d))
        return [d and tuple(d)], [d and tuple(d)], []

    def _keep(self, p, rows):
        """Input row indices kept, in output order."""
        scores = rows[:, p.score_index]
        valid = scores > p.valid_thresh
        if p.id_index >= 0:     # MXNet drops the background class, -1 (its default) too
            valid &= rows[:, p.id_index] != p.background_id
        order = [i for i in np.argsort(-scores, kind='stable') if valid[i]]
        if p.topk > 0:
            order = order[:p.topk]
        boxes = _corner(rows[:, p.coord_start:p.coord_start + 4], p.in_format)
        kept = []
        for i in order:
            rivals = [j for j in kept if p.force_suppress or p.id_index < 0 or
                      rows[j, p.id_index] == rows[i, p.id_index]]
            if rivals and np.any(_iou(boxes[i], boxes[rivals]) > p.overlap_thresh):
                continue
            kept.append(i)
        return kept

    def compute(self, p, x):
        flat = x.reshape((-1,) + x.shape[-2:])
        out = -np.ones_like(flat)
        c = slice(p.coord_start, p.coord_start + 4)
        for b, rows in enumerate(flat):
            kept = self._keep(p, rows)
            out[b, :len(kept)] = rows[kept]
            out[b, :len(kept), c] = _convert(rows[kept, c], p.in_format, p.out_format)
        return out.reshape(x.shape)

    def grad(self, p, dys, xs, ys):
        x = xs[0]
        flat = x.reshape((-1,) + x.shape[-2:])
        dy = dys[0].reshape(flat.shape)
        g = np.zeros(flat.shape, np.float64)
        c = slice(p.coord_start, p.coord_start + 4)
        for b, rows in enumerate(flat):
            kept = self._keep(p, rows)
            g[b, kept] = dy[b, :len(kept)]
            g[b, kept, c] = _convert_grad(dy[b, :len(kept), c], p.in_format, p.out_format)
        return (g.reshape(x.shape),)


def _bilinear_taps(y, x, h, w):
    """Detectron's bilinear taps at (y, x): [(row, col, weight)], none outside."""
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return []
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    return [(y0, x0, hy * hx), (y0, x1, hy * lx), (y1, x0, ly * hx), (y1, x1, ly * lx)]


@register_op
class _contrib_ROIAlign(NumpyOp):
    """ROIAlign: each of the pooled_size bins of a region (rois (R, 5) = batch index, x1,
    y1, x2, y2, scaled by spatial_scale; shifted by -0.5 when aligned) is the mean of
    bilinear samples on a sample_ratio² grid (ceil(bin size) per axis when <= 0);
    position_sensitive takes channel group (i, j) for bin (i, j)."""
    name = '_contrib_ROIAlign'
    aliases = ()
    params = ParamSchema(Param('pooled_size', 'shape'), Param('spatial_scale', 'float'),
                         Param('sample_ratio', 'int', -1),
                         Param('position_sensitive', 'bool', False),
                         Param('aligned', 'bool', False))
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'rois']

    def infer_shape(self, p, in_shapes):
        d, r = check_roi_shapes(self, in_shapes)
        if d is None or r is None:
            return list(in_shapes), [None], []
        ph, pw = p.pooled_size
        c = d[1]
        if p.position_sensitive:
            if c % (ph * pw):
                raise self.shape_error('data', f'channels a multiple of {ph * pw} '
                                       '(position_sensitive)', tuple(d))
            c //= ph * pw
        return [tuple(d), tuple(r)], [(r[0], c, ph, pw)], []

    def _samples(self, p, data, rois):
        """Yield (roi, out channel slice, in channel slice, i, j, batch, taps, count)."""
        n, c, h, w = data.shape
        ph, pw = p.pooled_size
        cout = c // (ph * pw) if p.position_sensitive else c
        off = 0.5 if p.aligned else 0.0
        for r, roi in enumerate(rois):
            b = int(roi[0])
            if not 0 <= b < n:
                raise IndexError(f"{self.name}: rois[{r}] names batch {b}, data has {n}")
            x1, y1, x2, y2 = (v * p.spatial_scale - off for v in roi[1:])
            rw, rh = x2 - x1, y2 - y1
            if not p.aligned:
                rw, rh = max(rw, 1.0), max(rh, 1.0)
            bh, bw = rh / ph, rw / pw
            gh = p.sample_ratio if p.sample_ratio > 0 else int(np.ceil(rh / ph))
            gw = p.sample_ratio if p.sample_ratio > 0 else int(np.ceil(rw / pw))
            count = max(gh * gw, 1)
            for i in range(ph):
                for j in range(pw):
                    cin = slice((i * pw + j) * cout, (i * pw + j + 1) * cout) \
                        if p.position_sensitive else slice(None)
                    taps = []
                    for iy in range(gh):
                        y = y1 + i * bh + (iy + 0.5) * bh / gh
                        for ix in range(gw):
                            x = x1 + j * bw + (ix + 0.5) * bw / gw
                            taps += _bilinear_taps(y, x, h, w)
                    yield r, cin, i, j, b, taps, count

    def compute(self, p, data, rois):
        out = np.zeros(self.infer_shape(p, [data.shape, rois.shape])[1][0], np.float64)
        for r, cin, i, j, b, taps, count in self._samples(p, data, rois):
            for yy, xx, wt in taps:
                out[r, :, i, j] += wt * data[b, cin, yy, xx]
            out[r, :, i, j] /= count
        return out

    def grad(self, p, dys, xs, ys):
        data, rois = xs
        g = np.zeros(data.shape, np.float64)
        for r, cin, i, j, b, taps, count in self._samples(p, data, rois):
            for yy, xx, wt in taps:
                g[b, cin, yy, xx] += wt * dys[0][r, :, i, j] / count
        return g, None


def _center(b):
    return (b[..., 0] + b[..., 2]) / 2, (b[..., 1] + b[..., 3]) / 2, \
        b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]


@register_op
class _contrib_box_encode(NumpyOp):
    """SSD training targets: for each positive sample (samples == 1) with anchor a and
    matched reference g (both corner boxes), ((gx - ax) / aw, (gy - ay) / ah,
    log(gw / aw), log(gh / ah)), minus means, over stds; zero elsewhere. Outputs the
    targets and their masks (1 where positive), both (B, N, 4). No gradient."""
    name = '_contrib_box_encode'
    aliases = ()
    has_backward = False

    def arguments(self, p):
        return ['samples', 'matches', 'anchors', 'refs', 'means', 'stds']

    def outputs(self, p):
        return ['output', 'mask']

    def infer_shape(self, p, in_shapes):
        s, m, a, r, mu, sd = in_shapes
        if a is None:
            return list(in_shapes), [None, None], []
        if len(a) != 3 or a[2] != 4:
            raise self.shape_error('anchors', '(B, N, 4)', tuple(a))
        for name, shape, want in (('samples', s, tuple(a[:2])), ('matches', m, tuple(a[:2])),
                                  ('means', mu, (4,)), ('stds', sd, (4,))):
            if shape is not None and tuple(shape) != want:
                raise self.shape_error(name, want, tuple(shape))
        return [tuple(a[:2]), tuple(a[:2]), tuple(a), r and tuple(r), (4,), (4,)], \
            [tuple(a), tuple(a)], []

    def infer_type(self, p, in_types):
        t = in_types[2]
        return list(in_types), [t, t], []

    def compute(self, p, samples, matches, anchors, refs, means, stds):
        b = np.arange(anchors.shape[0])[:, None]
        g = refs[b, np.clip(matches.astype(np.int64), 0, refs.shape[1] - 1)]
        ax, ay, aw, ah = _center(anchors.astype(np.float64))
        gx, gy, gw, gh = _center(g.astype(np.float64))
        with np.errstate(all='ignore'):
            t = np.stack([(gx - ax) / aw, (gy - ay) / ah, np.log(gw / aw),
                          np.log(gh / ah)], -1)
        pos = (samples > 0.5)[..., None]
        return np.where(pos, (t - means) / stds, 0), np.broadcast_to(pos, t.shape)


@register_op
class _contrib_box_decode(NumpyOp):
    """Boxes (B, N, 4) in corner form from predicted offsets and anchors (1, N, 4) in
    `format`: centre = offset · std · anchor size + anchor centre, size = exp(offset ·
    std, capped at clip when clip > 0) · anchor size. As in MXNet, the gradients are
    zero (decoding is post-processing)."""
    name = '_contrib_box_decode'
    aliases = ()
    params = ParamSchema(*(Param(f'std{i}', 'float', 1.0) for i in range(4)),
                         Param('clip', 'float', -1.0),
                         Param('format', 'str', 'center', choices=('center', 'corner')))
    backward_needs = ()

    def arguments(self, p):
        return ['data', 'anchors']

    def infer_shape(self, p, in_shapes):
        d, a = in_shapes
        if d is not None and (len(d) != 3 or d[2] != 4):
            raise self.shape_error('data', '(B, N, 4)', tuple(d))
        if d is not None and a is not None and (len(a) != 3 or a[0] != 1 or a[1:] != d[1:]):
            raise self.shape_error('anchors', (1,) + tuple(d[1:]), tuple(a))
        return list(in_shapes), [d and tuple(d)], []

    def _parts(self, p, data, anchors):
        a = anchors.astype(np.float64)
        ax, ay, aw, ah = _center(a) if p.format == 'corner' else (a[..., 0], a[..., 1],
                                                                   a[..., 2], a[..., 3])
        std = (p.std0, p.std1, p.std2, p.std3)
        tw, th = data[..., 2] * std[2], data[..., 3] * std[3]
        if p.clip > 0:
            tw, th = np.minimum(tw, p.clip), np.minimum(th, p.clip)
        return ax, ay, aw, ah, std, tw, th

    def compute(self, p, data, anchors):
        ax, ay, aw, ah, std, tw, th = self._parts(p, data, anchors)
        x = data[..., 0] * std[0] * aw + ax
        y = data[..., 1] * std[1] * ah + ay
        w, h = np.exp(tw) * aw / 2, np.exp(th) * ah / 2
        return np.stack([x - w, y - h, x + w, y + h], -1)
