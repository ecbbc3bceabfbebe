"""contrib.ROIAlign (mxcy/operator/box_ops.py) against a per-sample reference of
Detectron's rules: adaptive and fixed sample grids, aligned, position_sensitive, regions
crossing the image border, tiny and empty regions, float64/float16, zero rois."""
import numpy as np
import pytest

import mxcy as mx


def taps(y, x, h, w):
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
    return [(y0, x0, (1 - ly) * (1 - lx)), (y0, x1, (1 - ly) * lx), (y1, x0, ly * (1 - lx)),
            (y1, x1, ly * lx)]


def reference(data, rois, dy, pooled, scale, ratio, aligned, sensitive):
    """(output, data gradient for head dy), one bilinear sample at a time."""
    n, c, h, w = data.shape
    ph, pw = pooled
    cout = c // (ph * pw) if sensitive else c
    out = np.zeros((len(rois), cout, ph, pw))
    grad = np.zeros(data.shape)
    off = 0.5 if aligned else 0.0
    for r, roi in enumerate(rois):
        b = int(roi[0])
        x1, y1, x2, y2 = (v * scale - off for v in roi[1:])
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else int(np.ceil(rh / ph))
        gw = ratio if ratio > 0 else int(np.ceil(rw / pw))
        count = max(gh * gw, 1)
        for i in range(ph):
            for j in range(pw):
                cin = slice((i * pw + j) * cout, (i * pw + j + 1) * cout) if sensitive \
                    else slice(None)
                for iy in range(gh):
                    y = y1 + i * bh + (iy + 0.5) * bh / gh
                    for ix in range(gw):
                        x = x1 + j * bw + (ix + 0.5) * bw / gw
                        for yy, xx, wt in taps(y, x, h, w):
                            out[r, :, i, j] += wt * data[b, cin, yy, xx] / count
                            grad[b, cin, yy, xx] += wt * dy[r, :, i, j] / count
    return out, grad


ROIS = [[0, 0.5, 1.0, 4.2, 3.7], [1, 2, 0, 6.5, 5.5], [0, -3, -2, 2, 2], [1, 5, 4, 30, 20],
        [0, 3.0, 3.0, 3.1, 3.05], [1, 6.9, 5.9, 6.9, 5.9]]


@pytest.mark.parametrize('kw', [dict(sample_ratio=2), dict(sample_ratio=-1),
                                dict(sample_ratio=3, aligned=True),
                                dict(sample_ratio=-1, aligned=True),
                                dict(sample_ratio=1, position_sensitive=True),
                                dict(sample_ratio=-1, position_sensitive=True, aligned=True)])
@pytest.mark.parametrize('pooled', [(2, 2), (3, 1)])
def test_roi_align_matches_per_sample_reference(kw, pooled):
    rng = np.random.RandomState(1)
    c = 2 * pooled[0] * pooled[1]
    x = rng.uniform(-1, 1, (2, c, 7, 8))
    rois = np.array(ROIS)
    data = mx.nd.array(x, dtype='float64')
    data.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.ROIAlign(data, mx.nd.array(rois, dtype='float64'), pooled_size=pooled,
                                   spatial_scale=0.9, **kw)
    dy = rng.uniform(-1, 1, y.shape)
    y.backward(mx.nd.array(dy, dtype='float64'))
    want_y, want_g = reference(x, rois, dy, pooled, 0.9, kw['sample_ratio'],
                               kw.get('aligned', False), kw.get('position_sensitive', False))
    np.testing.assert_allclose(y.asnumpy(), want_y, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(data.grad.asnumpy(), want_g, rtol=1e-10, atol=1e-12)


def test_roi_align_float16_zero_rois_and_bad_batch():
    x = np.random.RandomState(2).uniform(-1, 1, (1, 3, 5, 5))
    rois = np.array([[0, 0.7, 0.3, 3.8, 4.1]])
    y = mx.nd.contrib.ROIAlign(mx.nd.array(x, dtype='float16'),
                               mx.nd.array(rois, dtype='float16'), pooled_size=(2, 2),
                               spatial_scale=1.0, sample_ratio=2)
    assert y.dtype == np.float16
    want = reference(x.astype(np.float16).astype(np.float64),
                     rois.astype(np.float16).astype(np.float64), np.zeros((1, 3, 2, 2)),
                     (2, 2), 1.0, 2, False, False)[0]
    np.testing.assert_allclose(y.asnumpy(), want, rtol=2e-3, atol=2e-3)
    empty = mx.nd.contrib.ROIAlign(mx.nd.array(x), mx.nd.zeros((0, 5)), pooled_size=(2, 2),
                                   spatial_scale=1.0)
    assert empty.shape == (0, 3, 2, 2)
    with pytest.raises(IndexError, match=r"ROIAlign: rois\[0\] names batch 3"):
        mx.nd.contrib.ROIAlign(mx.nd.array(x), mx.nd.array([[3, 0, 0, 1, 1]]),
                               pooled_size=(2, 2), spatial_scale=1.0).asnumpy()
