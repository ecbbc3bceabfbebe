"""mxcy/_detect.pyx's greedy NMS and pairwise IoU against their NumPy references
(box_ops.pairwise_iou / greedy_keep and a per-row loop of the Proposal formula): same kept
boxes, bit-equal IoU, in float32 and float64, with ties, duplicates, empty, inverted, NaN
and inf boxes, with and without class ids and a limit."""
import numpy as np
import pytest

from mxcy import _detect
from mxcy.operator.box_ops import greedy_keep, pairwise_iou
from mxcy.operator.detection_ops import _iou_corner


def _boxes(rng, n, dtype):
    c = rng.uniform(0, 1, (n, 2))
    c[n // 2:] = c[:n - n // 2] + rng.uniform(-0.02, 0.02, (n - n // 2, 2))   # clusters
    half = rng.uniform(0.01, 0.2, (n, 2))
    b = np.concatenate([c - half, c + half], 1)
    b[::17, 2] = b[::17, 0] - 0.05                     # inverted (empty)
    b[5::23] = b[4::23][:len(b[5::23])]                # duplicates
    b[7] = [0.3, 0.3, 0.3, 0.3]                        # zero area
    b[9, 1] = np.nan
    b[11, 2] = np.inf
    b[13, 0], b[13, 2] = -np.inf, np.inf
    return b.astype(dtype)


def _ref_nms(boxes, ids, thresh, multibox=False):
    """box_nms's (IoU > t, clipped areas) or MultiBoxDetection's (IoU >= t, signed
    areas) greedy NMS in NumPy."""
    def overlaps(lo, hi):
        with np.errstate(all='ignore'):
            if multibox:
                iou = _iou_corner(boxes[lo:hi], boxes)
            else:
                iou = pairwise_iou(boxes[lo:hi], boxes)
        over = iou >= thresh if multibox else iou > thresh
        return over if ids is None else over & (ids[lo:hi, None] == ids[None, :])
    return greedy_keep(len(boxes), overlaps)


def _ref_proposal(boxes, thresh, limit):
    area = (boxes[:, 2] - boxes[:, 0] + 1) * (boxes[:, 3] - boxes[:, 1] + 1)
    gone, keep = np.zeros(len(boxes), bool), []
    for i in range(len(boxes)):
        if gone[i]:
            continue
        keep.append(i)
        if len(keep) >= limit:
            break
        b = boxes[i]
        one = boxes.dtype.type(1)
        w = np.maximum(0, np.minimum(b[2], boxes[i + 1:, 2]) - np.maximum(b[0], boxes[i + 1:, 0])
                       + one)
        h = np.maximum(0, np.minimum(b[3], boxes[i + 1:, 3]) - np.maximum(b[1], boxes[i + 1:, 1])
                       + one)
        with np.errstate(all='ignore'):
            gone[i + 1:] |= w * h / (area[i] + area[i + 1:] - w * h) > thresh
    return np.array(keep, np.int64)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('thresh', [0.0, 0.3, 0.5, 0.7])
def test_nms_box_and_multibox_match_numpy(dtype, thresh):
    rng = np.random.RandomState(int(thresh * 10))
    boxes = _boxes(rng, 300, dtype)
    ids = rng.randint(0, 3, 300).astype(dtype)
    for cls in (None, ids):
        for mode, multibox in ((_detect.NMS_BOX, False), (_detect.NMS_MULTIBOX, True)):
            keep, gone = _detect.nms(boxes, cls, thresh, mode)
            ref_keep, ref_gone = _ref_nms(boxes, cls, thresh, multibox)
            np.testing.assert_array_equal(keep, ref_keep)
            np.testing.assert_array_equal(gone, ref_gone)
    assert 0 < len(keep) < 300


def test_nms_multibox_inverted_boxes_use_signed_areas():
    # MultiBoxDetection's areas are (x2 - x1)(y2 - y1) without clipping: two inverted
    # boxes have a positive area product and a zero intersection -> IoU 0
    boxes = np.array([[0.5, 0.5, 0.1, 0.1], [0.5, 0.5, 0.1, 0.1]], np.float32)
    assert _detect.nms(boxes, None, 0.0, _detect.NMS_MULTIBOX)[0].tolist() == [0]
    assert _detect.nms(boxes, None, 0.0, _detect.NMS_BOX)[0].tolist() == [0, 1]


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('limit', [1, 7, 1000])
def test_nms_proposal_matches_numpy(dtype, limit):
    rng = np.random.RandomState(limit)
    boxes = np.abs(_boxes(rng, 400, np.float64)) * 100
    boxes = np.nan_to_num(boxes, posinf=60).astype(dtype)
    keep, _ = _detect.nms(boxes, None, 0.7, _detect.NMS_PROPOSAL, limit)
    np.testing.assert_array_equal(keep, _ref_proposal(boxes, dtype(0.7), limit))
    assert 1 <= len(keep) <= limit


def test_nms_empty_and_bad_shapes():
    keep, gone = _detect.nms(np.zeros((0, 4), np.float32), None, 0.5, _detect.NMS_BOX)
    assert keep.shape == (0,) and gone.shape == (0,)
    with pytest.raises(ValueError, match=r"nms: boxes \(n, 4\)"):
        _detect.nms(np.zeros((3, 5), np.float32), None, 0.5, _detect.NMS_BOX)
    with pytest.raises(ValueError, match=r"nms: boxes \(n, 4\) and ids \(n,\)"):
        _detect.nms(np.zeros((3, 4), np.float32), np.zeros(2), 0.5, _detect.NMS_BOX)


@pytest.mark.parametrize('out_dtype', [np.float32, np.float64])
def test_box_iou_pairs_bit_equal_numpy(out_dtype):
    rng = np.random.RandomState(1)
    a, b = _boxes(rng, 70, np.float64), _boxes(rng, 45, np.float64)
    out = np.empty((70, 45), out_dtype)
    _detect.box_iou_pairs(a, b, out)
    with np.errstate(all='ignore'):
        ref = pairwise_iou(a, b).astype(out_dtype)
    np.testing.assert_array_equal(out, ref)
    with pytest.raises(ValueError, match='box_iou'):
        _detect.box_iou_pairs(a, b, np.empty((70, 44), out_dtype))
