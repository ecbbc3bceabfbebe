#!/usr/bin/env python3
"""Record MXNet 1.9.1's detection operators on small seeded cases for mxcy's tests.

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_detection_fixtures.py

tests/operator/mxnet_files/detection.npz gets, per case ``<k>``: ``<k>/op`` (the
mx.nd.contrib name), ``<k>/params`` (JSON), the inputs ``<k>/in<i>`` and MXNet's
outputs ``<k>/out<i>``. tests/operator/test_detection_ops.py replays them in mxcy.
"""
import json
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'operator',
                   'mxnet_files', 'detection.npz')


def _anchors():
    feat = mx.nd.zeros((1, 1, 4, 4))
    return mx.nd.contrib.MultiBoxPrior(feat, sizes=(0.3, 0.5), ratios=(1, 2)).asnumpy()


def _labels(rng, batch, rows):
    out = -np.ones((batch, rows, 5), np.float32)
    for b in range(batch - 1):                  # the last image has no labels
        for r in range(rows - b):               # fewer labels, more padding, per image
            lo = rng.uniform(0, 0.7, 2)
            hi = lo + rng.uniform(0.1, 0.4, 2)
            out[b, r] = [rng.randint(0, 3), lo[0], lo[1], min(hi[0], 1), min(hi[1], 1)]
    return out


def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def cases():
    rng = np.random.RandomState(0)
    anchors = _anchors()
    n = anchors.shape[1]
    label = _labels(rng, 3, 4)
    cls_pred = rng.randn(3, 4, n).astype(np.float32)
    for params in ({}, {'negative_mining_ratio': 3, 'negative_mining_thresh': 0.4,
                        'minimum_negative_samples': 2, 'ignore_label': -2},
                   {'overlap_threshold': 0.3, 'variances': (0.2, 0.2, 0.1, 0.1)},
                   {'negative_mining_ratio': 1, 'minimum_negative_samples': 20}):
        yield 'MultiBoxTarget', params, [anchors, label, cls_pred]
    prob = _softmax(rng.randn(2, 4, n) * 2, 1).astype(np.float32)
    loc = (rng.randn(2, n * 4) * 0.5).astype(np.float32)
    for params in ({}, {'threshold': 0.2, 'nms_threshold': 0.3},
                   {'force_suppress': True, 'nms_topk': 10, 'clip': False},
                   {'threshold': 0.3, 'nms_topk': 6, 'variances': (0.2, 0.2, 0.3, 0.3)}):
        yield 'MultiBoxDetection', params, [prob, loc, anchors]
    base = {'scales': (2, 4), 'ratios': (0.5, 1, 2), 'feature_stride': 16,
            'rpn_pre_nms_top_n': 60, 'rpn_post_nms_top_n': 20, 'rpn_min_size': 8,
            'output_score': True}
    a = 6
    for op, batch in (('Proposal', 1), ('MultiProposal', 2)):
        fg = rng.rand(batch, a, 5, 6).astype(np.float32)
        cls_prob = np.concatenate([1 - fg, fg], 1)
        deltas = (rng.randn(batch, 4 * a, 5, 6) * 0.3).astype(np.float32)
        im_info = np.array([[70, 90, 1.0], [80, 96, 0.5]][:batch], np.float32)
        yield op, base, [cls_prob, deltas, im_info]
        yield op, dict(base, threshold=0.3, rpn_post_nms_top_n=30), \
            [cls_prob, deltas, im_info]
        yield op, dict(base, iou_loss=True, rpn_pre_nms_top_n=-1, output_score=False), \
            [cls_prob, deltas * 10, im_info]


def main():
    record = {}
    for k, (op, params, inputs) in enumerate(cases()):
        outs = getattr(mx.nd.contrib, op)(*[mx.nd.array(x) for x in inputs], **params)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        record[f'{k}/op'] = np.array(op)
        record[f'{k}/params'] = np.array(json.dumps(params))
        for i, x in enumerate(inputs):
            record[f'{k}/in{i}'] = np.asarray(x, np.float32)
        for i, y in enumerate(outs):
            record[f'{k}/out{i}'] = y.asnumpy()
    np.savez_compressed(OUT, **record)
    print('wrote', OUT, len(record), 'arrays')


if __name__ == '__main__':
    main()
