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

from mxcy import _detect
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


# NumPy references of the _detect kernels (the tests compare the two): pairwise_iou is
# box_iou_pairs, greedy_keep over pairwise_iou is nms(..., NMS_BOX).
def pairwise_iou(a, b):
    """(m, n) IoU of corner boxes a (m, 4) with b (n, 4); 0 where the union is empty.
    Width and height are separate (m, n) arrays: no (m, n, 2) temporaries."""
    clip0 = lambda v: np.maximum(v, 0, out=v)
    w = clip0(np.minimum(a[:, None, 2], b[:, 2]) - np.maximum(a[:, None, 0], b[:, 0]))
    h = clip0(np.minimum(a[:, None, 3], b[:, 3]) - np.maximum(a[:, None, 1], b[:, 1]))
    inter = w * h
    area = lambda x: np.maximum(x[:, 2] - x[:, 0], 0) * np.maximum(x[:, 3] - x[:, 1], 0)
    union = area(a)[:, None] + area(b)[None, :] - inter
    with np.errstate(all='ignore'):
        iou = inter / union
    empty = ~(union > 0)
    if empty.any():             # a fix-up only where needed (np.where over every pair is slow)
        iou[empty] = 0
    return iou


def greedy_keep(n, overlaps, block=512):
    """Greedy suppression over n candidates in order: (kept indices, suppressed mask).
    ``overlaps(lo, hi)`` gives the bool (hi - lo, n) rows "candidate i suppresses j";
    i is kept unless a kept candidate before it suppresses it. Rows come in blocks, so
    memory stays block x n."""
    suppressed = np.zeros(n, bool)
    kept = []
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        rows = overlaps(lo, hi)
        for i in range(lo, hi):
            if not suppressed[i]:
                kept.append(i)
                suppressed[i + 1:] |= rows[i - lo, i + 1:]
    return np.array(kept, np.int64), suppressed


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
        order = np.argsort(-scores, kind='stable')
        order = order[valid[order]]
        if p.topk > 0:
            order = order[:p.topk]
        boxes = _detect.as_real(_corner(rows[order, p.coord_start:p.coord_start + 4], p.in_format))
        by_class = not (p.force_suppress or p.id_index < 0)
        ids = rows[order, p.id_index] if by_class else None
        return order[_detect.nms(boxes, ids, p.overlap_thresh, _detect.NMS_BOX)[0]]

    def compute(self, p, x):
        flat = x.reshape((int(np.prod(x.shape[:-2])),) + x.shape[-2:])
        out = -np.ones_like(flat)
        c = slice(p.coord_start, p.coord_start + 4)
        for b, rows in enumerate(flat):
            kept = self._keep(p, rows)
            out[b, :len(kept)] = rows[kept]
            out[b, :len(kept), c] = _convert(rows[kept, c], p.in_format, p.out_format)
        return out.reshape(x.shape)

    def grad(self, p, dys, xs, ys):
        x = xs[0]
        flat = x.reshape((int(np.prod(x.shape[:-2])),) + x.shape[-2:])
        dy = dys[0].reshape(flat.shape)
        g = np.zeros(flat.shape, np.float64)
        c = slice(p.coord_start, p.coord_start + 4)
        for b, rows in enumerate(flat):
            kept = self._keep(p, rows)
            g[b, kept] = dy[b, :len(kept)]
            g[b, kept, c] = _convert_grad(dy[b, :len(kept), c], p.in_format, p.out_format)
        return (g.reshape(x.shape),)


def _axis_weights(start, bin_size, grid, pooled, size):
    """ROIAlign along one axis, per roi: (R, pooled, size) weights whose row i averages the
    bilinear taps of bin i's ``grid`` samples (Detectron's rules: a sample outside
    [-1, size] reads nothing, positions below 0 read 0, at or past size - 1 read the last
    row alone). Bilinear taps and the sample grid are separable, so the 2-D mean over a
    bin is A[i] . image . B[j]^T."""
    r_n = start.shape[0]
    g_max = max(int(grid.max()) if r_n else 0, 1)
    g = np.arange(g_max)[None, None, :]
    gr = grid[:, None, None].astype(np.float64)
    live = g < gr                                                   # (R, 1, G)
    pos = (start[:, None, None] + np.arange(pooled)[None, :, None] * bin_size[:, None, None]
           + (g + 0.5) * bin_size[:, None, None] / np.maximum(gr, 1))  # (R, P, G)
    keep = live & (pos >= -1.0) & (pos <= size)
    pos = np.maximum(pos, 0.0)
    lo = np.minimum(np.floor(pos), size - 1).astype(np.int64)
    edge = lo >= size - 1
    hi = np.where(edge, lo, lo + 1)
    frac = np.where(edge, 0.0, pos - lo)
    share = keep / np.maximum(gr, 1)
    row = (np.arange(r_n)[:, None, None] * pooled + np.arange(pooled)[None, :, None]) * size
    w = np.bincount((row + lo).ravel(), ((1 - frac) * share).ravel(), r_n * pooled * size)
    w += np.bincount((row + hi).ravel(), (frac * share).ravel(), r_n * pooled * size)
    return w.reshape(r_n, pooled, size)


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

    def _weights(self, p, data, rois):
        """(batch of each roi, row weights (R, ph, H), column weights (R, pw, W))."""
        n, c, h, w = data.shape
        ph, pw = p.pooled_size
        rois = rois.astype(np.float64)
        b = rois[:, 0].astype(np.int64)
        bad = np.flatnonzero((b < 0) | (b >= n))
        if bad.size:
            raise IndexError(f"{self.name}: rois[{bad[0]}] names batch {b[bad[0]]}, data "
                             f"has {n}")
        off = 0.5 if p.aligned else 0.0
        x1, y1, x2, y2 = (rois[:, k] * p.spatial_scale - off for k in range(1, 5))
        rw, rh = x2 - x1, y2 - y1
        if not p.aligned:
            rw, rh = np.maximum(rw, 1.0), np.maximum(rh, 1.0)
        if p.sample_ratio > 0:
            gh = gw = np.full(len(rois), p.sample_ratio)
        else:
            gh, gw = np.ceil(rh / ph).astype(np.int64), np.ceil(rw / pw).astype(np.int64)
        return b, _axis_weights(y1, rh / ph, gh, ph, h), _axis_weights(x1, rw / pw, gw, pw, w)

    def _group(self, p, c):
        """position_sensitive: (output channels, in-channel index [i, j, c'])."""
        ph, pw = p.pooled_size
        cout = c // (ph * pw)
        return cout, (np.arange(ph * pw)[:, None] * cout + np.arange(cout)).reshape(ph, pw,
                                                                                   cout)

    def compute(self, p, data, rois):
        n, c, h, w = data.shape
        ph, pw = p.pooled_size
        bs, wy, wx = self._weights(p, data, rois)
        x = _detect.as_real(data)
        full = np.empty((len(rois), c, ph, pw), x.dtype)     # sums in double, stored once
        _detect.roi_align_sep(x, bs, wy, wx, full)
        if not p.position_sensitive:
            return full
        cout, chan = self._group(p, c)
        i, j = np.meshgrid(np.arange(ph), np.arange(pw), indexing='ij')
        # out[r, c', i, j] = full[r, (i pw + j) cout + c', i, j]
        return full[:, chan, i[..., None], j[..., None]].transpose(0, 3, 1, 2)

    def grad(self, p, dys, xs, ys):
        data, rois = xs
        n, c, h, w = data.shape
        ph, pw = p.pooled_size
        bs, wy, wx = self._weights(p, data, rois)
        dy = dys[0].astype(np.float64)
        if p.position_sensitive:
            cout, chan = self._group(p, c)
            full = np.zeros((len(rois), c, ph, pw), np.float64)
            i, j = np.meshgrid(np.arange(ph), np.arange(pw), indexing='ij')
            full[:, chan, i[..., None], j[..., None]] = dy.transpose(0, 2, 3, 1)
            dy = full
        g = np.zeros(data.shape, np.float64)
        _detect.roi_align_sep_grad(np.ascontiguousarray(dy), bs, wy, wx, g)
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
        f64 = lambda a: np.ascontiguousarray(a, np.float64)
        if refs.shape[1] == 0:
            raise ValueError(f"{self.name}: refs has no boxes (shape {refs.shape})")
        dt = anchors.dtype if anchors.dtype in (np.float32, np.float64) else np.float64
        out, mask = np.empty(anchors.shape, dt), np.empty(anchors.shape, dt)
        _detect.box_encode(f64(samples), f64(matches), f64(anchors), f64(refs), f64(means),
                           f64(stds), out, mask)
        return out, mask


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
