"""SSD and Faster R-CNN detection operators of MXNet's contrib namespace, in NumPy
(registered as ``_contrib_<name>``; ``mx.nd.contrib``/``mx.sym.contrib`` drop the prefix).
They produce training targets or post-process predictions, so, as in MXNet, none has a
gradient (nothing is recorded; the inputs' gradients stay zero).

* MultiBoxTarget(anchor (1, N, 4), label (B, M, 5+) = [class, x1, y1, x2, y2, ...] padded
  with rows of -1, cls_pred (B, C, N)) -> loc_target (B, 4N), loc_mask (B, 4N),
  cls_target (B, N). Per image: greedy bipartite matching (the best remaining anchor/label
  pair while its IoU is positive), then every other anchor whose best IoU exceeds
  overlap_threshold. A matched anchor gets class + 1, mask 1 and the target
  ((gx - ax) / aw / v0, (gy - ay) / ah / v1, log(gw / aw) / v2, log(gh / ah) / v3)
  (centre form, v = variances). With negative_mining_ratio > 0 only the
  int(ratio · positives) (at most all the others) unmatched anchors with best IoU <
  negative_mining_thresh and the lowest softmax background probability become
  negatives (class 0), the rest ignore_label (MXNet 1.9.1's CPU kernel takes
  minimum_negative_samples and does not use it; nor does mxcy); otherwise every
  unmatched anchor is a negative. An image without labels is ignore_label throughout.
* MultiBoxDetection(cls_prob (B, C, N), loc_pred (B, 4N), anchor (1, N, 4)) -> (B, N, 6)
  rows [class id, score, x1, y1, x2, y2]: each anchor's best non-background class (class 0
  is the background, as MXNet's CPU kernel has it: background_id is accepted, not used)
  if its probability reaches threshold, boxes decoded from the anchor (clipped to [0, 1]
  with clip), sorted by score (stable), the first nms_topk (all when -1) suppressed
  greedily (id -1) where a higher-scored box of the same class (any, force_suppress)
  has IoU >= nms_threshold. Rows past nms_topk keep MXNet's layout: the remaining
  detections in anchor order, id -1; then rows of -1.
* Proposal / MultiProposal(cls_prob (B, 2A, H, W), bbox_pred (B, 4A, H, W), im_info
  (B, 3) = (height, width, scale)) -> rois (B · post_n, 5) = [batch, x1, y1, x2, y2]
  (+ scores (B · post_n, 1) with output_score). Anchors of every ratio × scale on a
  feature_stride grid, shifted by the deltas (or, iou_loss, offset corner by corner),
  clipped to the image; boxes beyond the unpadded feature map or smaller than
  rpn_min_size · scale score -1 (small ones also grow by that size); the
  rpn_pre_nms_top_n best go through NMS (IoU > threshold, +1 pixel areas) and the first
  rpn_post_nms_top_n survivors are output, repeated cyclically when fewer survive.
  Proposal takes one image, MultiProposal a batch.
"""
import functools

import numpy as np

from mxcy import _detect
from mxcy.operator._numpy_op import NumpyOp
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op

F32 = np.float32


def _contrib(cls):
    cls.name = '_contrib_' + cls.__name__
    cls.aliases = ()
    return register_op(cls)


def _floats(op, p, name):
    """A tuple of floats from a tuple/list/number or its string form "(0.1, 0.2)"."""
    v = getattr(p, name)
    if isinstance(v, str):
        import ast
        try:
            v = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            raise ValueError(f"{op.name}: parameter '{name}' expects a tuple of numbers, "
                             f"got {v!r}") from None
    v = v if isinstance(v, (tuple, list)) else (v,)
    try:
        return tuple(float(x) for x in v)
    except (TypeError, ValueError):
        raise ValueError(f"{op.name}: parameter '{name}' expects a tuple of numbers, "
                         f"got {v!r}") from None


def _iou_corner(a, b):
    """(m, n) IoU of corner boxes a (m, 4) with b (n, 4) (float32, 0 for empty unions)."""
    w = np.maximum(F32(0), np.minimum(a[:, None, 2], b[:, 2]) - np.maximum(a[:, None, 0],
                                                                          b[:, 0]))
    h = np.maximum(F32(0), np.minimum(a[:, None, 3], b[:, 3]) - np.maximum(a[:, None, 1],
                                                                          b[:, 1]))
    inter = w * h
    union = ((a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]))[:, None] + \
        (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter
    return _ratio_or_zero(inter, union)


def _ratio_or_zero(inter, union):
    """inter / union, 0 where union <= 0 (a fix-up only where needed: np.where over
    every pair costs ten divisions)."""
    with np.errstate(all='ignore'):
        iou = inter / union
    empty = ~(union > 0)
    if empty.any():
        iou[empty] = 0
    return iou


def _center(b):
    w, h = b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]
    return (b[..., 0] + b[..., 2]) / 2, (b[..., 1] + b[..., 3]) / 2, w, h


def _check_variances(op, p):
    v = _floats(op, p, 'variances')
    if len(v) != 4 or min(v) <= 0:
        raise ValueError(f"{op.name}: parameter 'variances' expects 4 positive numbers, "
                         f"got {v}")
    return v


@_contrib
class MultiBoxTarget(NumpyOp):
    """SSD training targets (see the module docstring)."""
    params = ParamSchema(Param('overlap_threshold', 'float', 0.5),
                         Param('ignore_label', 'float', -1.0),
                         Param('negative_mining_ratio', 'float', -1.0),
                         Param('negative_mining_thresh', 'float', 0.5),
                         Param('minimum_negative_samples', 'int', 0),
                         Param('variances', 'any', (0.1, 0.1, 0.2, 0.2)))
    has_backward = False

    def arguments(self, p):
        return ['anchor', 'label', 'cls_pred']

    def outputs(self, p):
        return ['loc_target', 'loc_mask', 'cls_target']

    def infer_shape(self, p, in_shapes):
        _check_variances(self, p)
        a, lab, c = in_shapes
        if a is not None and (len(a) != 3 or a[0] != 1 or a[2] != 4):
            raise self.shape_error('anchor', '(1, num_anchors, 4) (shared by the batch)',
                                   tuple(a))
        if lab is not None and (len(lab) != 3 or lab[2] < 5):
            raise self.shape_error('label', '(batch, num_labels, 5 or more) rows of '
                                   '[class, x1, y1, x2, y2]', tuple(lab))
        if c is not None and len(c) != 3:
            raise self.shape_error('cls_pred', '(batch, num_classes, num_anchors)', tuple(c))
        if a is not None and c is not None and c[2] != a[1]:
            raise self.shape_error('cls_pred', f'(batch, num_classes, {a[1]}) (one column '
                                   'per anchor)', tuple(c))
        if lab is not None and c is not None and lab[0] != c[0]:
            raise self.shape_error('cls_pred', f'batch size {lab[0]} as label', tuple(c))
        batch = lab[0] if lab is not None else (c[0] if c is not None else None)
        if a is None or batch is None:
            return list(in_shapes), [None] * 3, []
        n = a[1]
        return list(in_shapes), [(batch, n * 4), (batch, n * 4), (batch, n)], []

    def compute(self, p, anchor, label, cls_pred):
        var = np.array(_check_variances(self, p), F32)
        anchors = anchor[0].astype(F32)
        b, n = label.shape[0], anchors.shape[0]
        loc = np.zeros((b, n, 4), F32)
        mask = np.zeros((b, n, 4), F32)
        cls = np.full((b, n), p.ignore_label, F32)
        for i in range(b):
            flags, match = self._match(p, anchors, label[i].astype(F32), cls_pred[i])
            if flags is None:
                continue
            gts = label[i].astype(F32)
            pos = flags == 1
            cls[i, flags == 0] = 0
            cls[i, pos] = gts[match[pos], 0] + 1
            mask[i, pos] = 1
            ax, ay, aw, ah = _center(anchors[pos])
            gx, gy, gw, gh = _center(gts[match[pos], 1:5])
            with np.errstate(all='ignore'):
                loc[i, pos] = np.stack([(gx - ax) / aw / var[0], (gy - ay) / ah / var[1],
                                        np.log(gw / aw) / var[2], np.log(gh / ah) / var[3]],
                                       -1)
        return loc.reshape(b, -1), mask.reshape(b, -1), cls

    def _match(self, p, anchors, gts, cls_pred):
        """Per-anchor flags (1 matched, 0 negative, -1 ignored) and matched label rows,
        or (None, None) for an image without labels."""
        valid = 0
        while valid < len(gts) and gts[valid, 0] != -1:
            valid += 1
        if valid == 0:
            return None, None
        n = len(anchors)
        overlaps = _iou_corner(gts[:valid, 1:5], anchors).T
        flags = -np.ones(n, np.int64)
        match = np.zeros(n, np.int64)
        free = overlaps.copy()
        for _ in range(valid):
            j, k = np.unravel_index(np.argmax(free), free.shape)
            if not free[j, k] > 1e-6:
                break
            flags[j], match[j] = 1, k
            free[j, :] = -1
            free[:, k] = -1
        best = overlaps.max(1)
        others = flags != 1
        if p.overlap_threshold > 0:
            take = others & (best > p.overlap_threshold)
            flags[take] = 1
            match[take] = overlaps[take].argmax(1)
        if p.negative_mining_ratio > 0:
            positives = int((flags == 1).sum())
            # minimum_negative_samples is not used, as in MXNet 1.9.1's CPU kernel
            wanted = min(int(positives * p.negative_mining_ratio), n - positives)
            candidates = np.nonzero((flags != 1) & (best < p.negative_mining_thresh))[0]
            if wanted > 0 and len(candidates):
                logits = cls_pred[:, candidates].astype(F32)
                e = np.exp(logits - logits.max(0))
                background = e[0] / e.sum(0)
                order = np.argsort(background, kind='stable')
                flags[candidates[order[:wanted]]] = 0
        else:
            flags[flags != 1] = 0
        return flags, match


@_contrib
class MultiBoxDetection(NumpyOp):
    """SSD detections with NMS (see the module docstring)."""
    params = ParamSchema(Param('clip', 'bool', True), Param('threshold', 'float', 0.01),
                         Param('background_id', 'int', 0),
                         Param('nms_threshold', 'float', 0.5),
                         Param('force_suppress', 'bool', False),
                         Param('variances', 'any', (0.1, 0.1, 0.2, 0.2)),
                         Param('nms_topk', 'int', -1))
    has_backward = False

    def arguments(self, p):
        return ['cls_prob', 'loc_pred', 'anchor']

    def infer_shape(self, p, in_shapes):
        _check_variances(self, p)
        c, loc, a = in_shapes
        if c is not None and (len(c) != 3 or c[1] < 2):
            raise self.shape_error('cls_prob', '(batch, num_classes >= 2, num_anchors)',
                                   tuple(c))
        if a is not None and (len(a) != 3 or a[0] != 1 or a[2] != 4):
            raise self.shape_error('anchor', '(1, num_anchors, 4) (shared by the batch)',
                                   tuple(a))
        if c is not None and a is not None and a[1] != c[2]:
            raise self.shape_error('anchor', (1, c[2], 4), tuple(a),
                                   'one anchor per cls_prob column')
        if c is not None and loc is not None and tuple(loc) != (c[0], c[2] * 4):
            raise self.shape_error('loc_pred', (c[0], c[2] * 4), tuple(loc),
                                   '4 offsets per anchor')
        if c is None:
            return list(in_shapes), [None], []
        return list(in_shapes), [(c[0], c[2], 6)], []

    def compute(self, p, cls_prob, loc_pred, anchor):
        var = np.array(_check_variances(self, p), F32)
        b, _, n = cls_prob.shape
        out = -np.ones((b, n, 6), F32)
        boxes_all = self._decode(p, loc_pred.reshape(b, n, 4).astype(F32),
                                 anchor[0].astype(F32), var)
        for i in range(b):
            probs = cls_prob[i, 1:].astype(F32)
            ids = probs.argmax(0)
            scores = probs[ids, np.arange(n)]
            valid = np.nonzero(scores >= p.threshold)[0]
            rows = np.concatenate([ids[valid, None].astype(F32), scores[valid, None],
                                   boxes_all[i, valid]], 1)
            order = np.argsort(-scores[valid], kind='stable')
            keep = len(valid) if p.nms_topk <= 0 else min(p.nms_topk, len(valid))
            res = out[i]
            res[:len(valid)] = rows
            res[keep:len(valid), 0] = -1
            res[:keep] = rows[order[:keep]]
            self._nms(p, res[:keep])
        return out

    def _decode(self, p, loc, anchors, var):
        ax, ay, aw, ah = _center(anchors)
        x = loc[..., 0] * var[0] * aw + ax
        y = loc[..., 1] * var[1] * ah + ay
        w = np.exp(loc[..., 2] * var[2]) * aw / 2
        h = np.exp(loc[..., 3] * var[3]) * ah / 2
        boxes = np.stack([x - w, y - h, x + w, y + h], -1)
        return np.clip(boxes, 0, 1) if p.clip else boxes

    def _nms(self, p, rows):
        """Rows (sorted by score) overlapping an earlier kept row of their class (any
        class with force_suppress) by IoU >= nms_threshold get class -1."""
        ids = None if p.force_suppress else rows[:, 0].copy()
        gone = _detect.nms(np.ascontiguousarray(rows[:, 2:]), ids, p.nms_threshold,
                           _detect.NMS_MULTIBOX)[1]
        rows[gone, 0] = -1


def first_sorted(key, k):
    """np.argsort(key, kind='stable')[:k] without sorting everything: the keys below the
    k-th smallest (NaN last, as in the sort), then its ties in index order, sorted."""
    n = len(key)
    if k >= n:
        return np.argsort(key, kind='stable')
    v = np.partition(key, k - 1)[k - 1]
    below, tie = (~np.isnan(key), np.isnan(key)) if v != v else (key < v, key == v)
    idx = np.flatnonzero(below)
    idx = np.sort(np.concatenate([idx, np.flatnonzero(tie)[:k - len(idx)]]))
    return idx[np.argsort(key[idx], kind='stable')]


@functools.lru_cache(maxsize=32)
def _grid_anchors(stride, ratios, scales, h, w):
    """Every (row, column, anchor) of an h x w feature map, anchors fastest (read-only)."""
    base = _base_anchors(stride, ratios, scales)
    sy, sx = np.meshgrid(np.arange(h, dtype=F32) * stride,
                         np.arange(w, dtype=F32) * stride, indexing='ij')
    shift = np.stack([sx, sy, sx, sy], -1)[:, :, None, :]
    anchors = (base[None, None] + shift).reshape(-1, 4)
    anchors.flags.writeable = False
    return anchors


def _base_anchors(stride, ratios, scales):
    """The A = len(ratios) · len(scales) anchors (x1, y1, x2, y2) of one cell (float32),
    ratios outer: the stride² area reshaped to each ratio, rounded, then scaled."""
    w = h = F32(stride)
    cx = cy = F32(0.5 * (float(w) - 1.0))
    out = []
    for r in ratios:
        for s in scales:
            size_ratio = np.floor(F32(w * h) / F32(r))
            new_w = F32(np.floor(np.sqrt(size_ratio) + F32(0.5)) * F32(s))
            new_h = F32(np.floor(new_w / F32(s) * F32(r) + F32(0.5)) * F32(s))
            out.append([cx - 0.5 * (float(new_w) - 1.0), cy - 0.5 * (float(new_h) - 1.0),
                        cx + 0.5 * (float(new_w) - 1.0), cy + 0.5 * (float(new_h) - 1.0)])
    return np.array(out, F32)


class _ProposalBase(NumpyOp):
    """Region proposals of a Faster R-CNN RPN (see the module docstring)."""
    params = ParamSchema(Param('rpn_pre_nms_top_n', 'int', 6000),
                         Param('rpn_post_nms_top_n', 'int', 300),
                         Param('threshold', 'float', 0.7), Param('rpn_min_size', 'int', 16),
                         Param('scales', 'any', (4.0, 8.0, 16.0, 32.0)),
                         Param('ratios', 'any', (0.5, 1.0, 2.0)),
                         Param('feature_stride', 'int', 16),
                         Param('output_score', 'bool', False),
                         Param('iou_loss', 'bool', False))
    has_backward = False
    one_image = False

    def arguments(self, p):
        return ['cls_prob', 'bbox_pred', 'im_info']

    def outputs(self, p):
        return ['output', 'score']

    def num_visible_outputs(self, p):
        return 2 if p.output_score else 1

    def _anchor_count(self, p):
        ratios, scales = _floats(self, p, 'ratios'), _floats(self, p, 'scales')
        if not ratios or not scales or min(ratios + scales) <= 0:
            raise ValueError(f"{self.name}: parameters 'ratios' and 'scales' expect "
                             f"non-empty tuples of positive numbers, got ratios={ratios}, "
                             f"scales={scales}")
        if p.rpn_post_nms_top_n < 1 or p.feature_stride < 1:
            raise ValueError(f"{self.name}: rpn_post_nms_top_n and feature_stride must be "
                             f"positive, got {p.rpn_post_nms_top_n} and {p.feature_stride}")
        return len(ratios) * len(scales)

    def infer_shape(self, p, in_shapes):
        c, bb, info = in_shapes
        na = self._anchor_count(p)
        if c is not None and (len(c) != 4 or c[1] != 2 * na):
            raise self.shape_error('cls_prob', f'(batch, 2 * {na} anchors, height, width)',
                                   tuple(c), 'background then foreground per anchor')
        if c is not None and self.one_image and c[0] != 1:
            raise self.shape_error('cls_prob', '(1, ...): Proposal takes one image; use '
                                   'MultiProposal for a batch', tuple(c))
        if c is not None and bb is not None and tuple(bb) != (c[0], 4 * na) + tuple(c[2:]):
            raise self.shape_error('bbox_pred', (c[0], 4 * na) + tuple(c[2:]), tuple(bb))
        if c is not None and info is not None and tuple(info) != (c[0], 3):
            raise self.shape_error('im_info', (c[0], 3), tuple(info),
                                   'one (height, width, scale) per image')
        if c is None:
            return list(in_shapes), [None, None], []
        rows = c[0] * p.rpn_post_nms_top_n
        return list(in_shapes), [(rows, 5), (rows, 1)], []

    def compute(self, p, cls_prob, bbox_pred, im_info):
        post = p.rpn_post_nms_top_n
        rois = np.zeros((cls_prob.shape[0] * post, 5), F32)
        scores = np.zeros((cls_prob.shape[0] * post, 1), F32)
        for i in range(cls_prob.shape[0]):
            boxes, score = self._image(p, cls_prob[i].astype(F32), bbox_pred[i].astype(F32),
                                       im_info[i].astype(F32))
            rois[i * post:(i + 1) * post, 0] = i
            rois[i * post:(i + 1) * post, 1:] = boxes
            scores[i * post:(i + 1) * post, 0] = score
        return rois, scores

    def _image(self, p, cls_prob, deltas, info):
        na = self._anchor_count(p)
        _, h, w = cls_prob.shape
        stride = p.feature_stride
        anchors = _grid_anchors(stride, _floats(self, p, 'ratios'), _floats(self, p, 'scales'),
                                h, w)
        score = cls_prob[na:].transpose(1, 2, 0).reshape(-1).copy()
        d = deltas.reshape(na, 4, h, w).transpose(2, 3, 0, 1).reshape(-1, 4)
        im_h, im_w, im_scale = (float(v) for v in info)
        boxes = self._shift(p, anchors, d, im_h, im_w)
        real_h, real_w = int(im_h / stride), int(im_w / stride)
        rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing='ij')
        outside = ((rows >= real_h) | (cols >= real_w))[:, :, None]
        score[np.broadcast_to(outside, (h, w, na)).reshape(-1)] = -1
        min_size = F32(p.rpn_min_size * im_scale)
        small = ((boxes[:, 2] - boxes[:, 0] + 1 < min_size) |
                 (boxes[:, 3] - boxes[:, 1] + 1 < min_size))
        boxes[small] += np.array([-1, -1, 1, 1], F32) * (min_size / 2)
        score[small] = -1
        pre = len(score) if p.rpn_pre_nms_top_n <= 0 else p.rpn_pre_nms_top_n
        order = first_sorted(-score, pre)
        keep = self._nms(boxes[order], p.threshold, p.rpn_post_nms_top_n)
        pick = order[np.array(keep)[np.arange(p.rpn_post_nms_top_n) % len(keep)]]
        return boxes[pick], score[pick]

    def _shift(self, p, anchors, d, im_h, im_w):
        if p.iou_loss:
            boxes = anchors + d
        else:
            width = anchors[:, 2] - anchors[:, 0] + F32(1)
            height = anchors[:, 3] - anchors[:, 1] + F32(1)
            cx = (anchors[:, 0] + 0.5 * (width - 1.0)).astype(F32)
            cy = (anchors[:, 1] + 0.5 * (height - 1.0)).astype(F32)
            pcx, pcy = d[:, 0] * width + cx, d[:, 1] * height + cy
            pw, ph = np.exp(d[:, 2]) * width, np.exp(d[:, 3]) * height
            boxes = np.stack([pcx - 0.5 * (pw - 1.0), pcy - 0.5 * (ph - 1.0),
                              pcx + 0.5 * (pw - 1.0), pcy + 0.5 * (ph - 1.0)], -1)
        boxes = boxes.astype(F32)
        lim = np.array([im_w - 1, im_h - 1, im_w - 1, im_h - 1], F32)
        return np.maximum(np.minimum(boxes, lim), F32(0))

    @staticmethod
    def _nms(boxes, thresh, limit):
        """Indices kept by greedy NMS (IoU > thresh suppresses; +1 pixel areas), at most
        `limit` of them."""
        return _detect.nms(np.ascontiguousarray(boxes, F32), None, thresh,
                           _detect.NMS_PROPOSAL, limit)[0]


@_contrib
class Proposal(_ProposalBase):
    """Region proposals for one image (see the module docstring)."""
    one_image = True


@_contrib
class MultiProposal(_ProposalBase):
    """Region proposals for each image of a batch (see the module docstring)."""
