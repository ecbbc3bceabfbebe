"""Detection box operators of MXNet's contrib namespace in NumPy: box_nms (alias
box_non_maximum_suppression).

box_nms(data (..., N, K)): per batch, rows with score (column score_index) above
valid_thresh (and, with id_index and background_id set, not of the background class)
are sorted by score, cut to the topk best (topk > 0), and greedily kept unless a kept
row of the same class (any class with force_suppress or id_index < 0) overlaps them with
IoU > overlap_thresh. The output has data's shape: the kept rows in score order (boxes
converted from in_format to out_format), then rows of -1. The gradient of each kept row
flows back to its input row (through the format conversion); other rows get zero.
"""
import numpy as np

from mxcy.operator._numpy_op import NumpyOp
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
        if p.id_index >= 0 and p.background_id >= 0:
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
