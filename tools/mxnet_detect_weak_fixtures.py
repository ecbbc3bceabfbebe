#!/usr/bin/env python3
"""Record MXNet 1.9.1's box_nms, box_iou, box_encode and MultiBoxDetection at the weak
points of a greedy NMS / IoU kernel, for mxcy's tests.

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_detect_weak_fixtures.py

tests/operator/mxnet_files/detect_weak.npz gets, per case ``<k>``: ``<k>/op`` (the
mx.nd.contrib name), ``<k>/params`` (JSON), ``<k>/dtype``, the inputs ``<k>/in<i>`` and
MXNet's outputs ``<k>/out<i>``. tests/operator/test_detect_weak_points.py replays them.
Deterministic: seeded NumPy inputs, sorted keys.
"""
import json
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'operator',
                   'mxnet_files', 'detect_weak.npz')


def _rows(rng, batch, n, classes=3, dup_scores=False):
    """(batch, n, 6) rows [id, score, x1, y1, x2, y2] of clustered boxes (many overlaps)."""
    centre = rng.uniform(0.2, 0.8, (batch, n, 2))
    centre[:, n // 2:] = centre[:, :n - n // 2] + rng.uniform(-0.03, 0.03, (batch, n - n // 2, 2))
    half = rng.uniform(0.05, 0.2, (batch, n, 2))
    score = rng.choice([0.3, 0.5, 0.7], (batch, n)) if dup_scores else \
        rng.uniform(0, 1, (batch, n))
    ids = rng.randint(0, classes, (batch, n))
    return np.concatenate([ids[..., None], score[..., None], centre - half, centre + half],
                          -1)


def cases():
    rng = np.random.RandomState(20261203)
    nms = 'box_nms'
    base = dict(overlap_thresh=0.5, coord_start=2, score_index=1, id_index=0)
    rows = _rows(rng, 2, 40)
    out = [
        (nms, base, 'float32', [rows]),                                     # batch > 1
        (nms, dict(base, topk=7), 'float32', [rows]),
        (nms, dict(base, force_suppress=True), 'float32', [rows]),
        (nms, dict(base, background_id=1), 'float32', [rows]),
        (nms, dict(base, id_index=-1, valid_thresh=0.4), 'float32', [rows]),
        (nms, base, 'float64', [rows]),
        (nms, dict(base, in_format='center', out_format='center'), 'float32', [rows]),
        (nms, base, 'float32', [_rows(rng, 1, 30, dup_scores=True)]),      # ties in score
        (nms, dict(base, valid_thresh=2.0), 'float32', [rows]),             # no valid box
        (nms, dict(base, overlap_thresh=0.0, force_suppress=True), 'float32', [rows]),
        (nms, dict(base, overlap_thresh=0.3), 'float32', [rows.reshape(2, 2, 20, 6)]),
    ]
    bad = rows[:1].copy()
    bad[0, :8, 4] = bad[0, :8, 2] - 0.1                     # x2 < x1: empty boxes
    bad[0, 8:12, 2:] = bad[0, 8:12, 2:4].repeat(2, -1)      # zero area
    out.append((nms, base, 'float32', [bad]))
    same = np.tile([[0, 0.9, 0.1, 0.1, 0.5, 0.5]], (1, 6, 1))
    same[0, :, 1] = np.linspace(0.9, 0.4, 6)
    out.append((nms, base, 'float32', [same]))                          # all but one suppressed
    a = rng.uniform(0, 0.6, (5, 4))
    a[:, 2:] += a[:, :2]
    b = rng.uniform(0, 0.6, (2, 3, 4))
    b[..., 2:] += b[..., :2]
    a[0] = [0.3, 0.3, 0.2, 0.5]                             # negative width
    out.append(('box_iou', {}, 'float32', [a, b]))
    out.append(('box_iou', {'format': 'center'}, 'float64', [a, b]))
    anchors = rng.uniform(0.1, 0.5, (2, 6, 4))
    anchors[..., 2:] += anchors[..., :2]
    refs = rng.uniform(0.1, 0.5, (2, 3, 4))
    refs[..., 2:] += refs[..., :2]
    samples = rng.choice([-1.0, 0.0, 1.0], (2, 6))
    matches = rng.randint(0, 3, (2, 6)).astype(np.float64)
    out.append(('box_encode', {}, 'float32', [samples, matches, anchors, refs,
                                              np.array([0.0, 0.1, 0.0, -0.1]),
                                              np.array([0.1, 0.1, 0.2, 0.2])]))
    probs = rng.uniform(0, 1, (3, 4, 20))
    probs /= probs.sum(1, keepdims=True)
    loc = rng.uniform(-0.3, 0.3, (3, 80))
    anc = rng.uniform(0.2, 0.5, (1, 20, 4))
    anc[..., 2:] += anc[..., :2] * 0.5
    mbd = 'MultiBoxDetection'
    out.append((mbd, {'threshold': 0.1}, 'float32', [probs, loc, anc]))
    out.append((mbd, {'threshold': 0.1, 'force_suppress': True, 'nms_threshold': 0.3},
                'float32', [probs, loc, anc]))
    out.append((mbd, {'threshold': 0.1, 'nms_topk': 5}, 'float32', [probs, loc, anc]))
    return out


def main():
    arrays = {}
    for k, (op, params, dtype, ins) in enumerate(cases()):
        xs = [mx.nd.array(x, dtype=dtype) for x in ins]
        outs = getattr(mx.nd.contrib, op)(*xs, **params)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        arrays[f'{k}/op'] = np.array(op)
        arrays[f'{k}/params'] = np.array(json.dumps(params, sort_keys=True))
        arrays[f'{k}/dtype'] = np.array(dtype)
        for i, x in enumerate(xs):
            arrays[f'{k}/in{i}'] = x.asnumpy()
        for i, y in enumerate(outs):
            arrays[f'{k}/out{i}'] = y.asnumpy()
    np.savez_compressed(OUT, **arrays)
    print(f'{len(cases())} cases -> {os.path.relpath(OUT)}')


if __name__ == '__main__':
    main()
