"""contrib.RROIAlign (mxcy/operator/roi_pool_ops.py, all rois at once) against a per-roi
reference: rotated boxes, adaptive and fixed sample grids of different sizes per roi,
boxes leaving the image, several batch images."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.operator.roi_pool_ops import _clamped_taps


def reference(data, rois, pooled, scale, ratio):
    ph, pw = pooled
    n, c, height, width = data.shape
    out = np.zeros((len(rois), c, ph, pw))
    for r, roi in enumerate(rois.astype(np.float64)):
        cx, cy = roi[1] * scale, roi[2] * scale
        rw, rh = max(roi[3] * scale, 1.0), max(roi[4] * scale, 1.0)
        theta = roi[5] * np.pi / 180.0
        gh = ratio if ratio > 0 else int(np.ceil(rh / ph))
        gw = ratio if ratio > 0 else int(np.ceil(rw / pw))
        yy = (-rh / 2 + np.arange(ph)[:, None] * (rh / ph)
              + (np.arange(gh) + 0.5)[None, :] * (rh / ph / gh))[:, None, :, None]
        xx = (-rw / 2 + np.arange(pw)[:, None] * (rw / pw)
              + (np.arange(gw) + 0.5)[None, :] * (rw / pw / gw))[None, :, None, :]
        x = xx * np.cos(theta) + yy * np.sin(theta) + cx
        y = yy * np.cos(theta) - xx * np.sin(theta) + cy
        img = data[int(roi[0])].reshape(c, -1)
        total = sum(img[:, idx] * wt for idx, wt in _clamped_taps(y, x, height, width))
        out[r] = total.sum(axis=(-2, -1)) / max(gh * gw, 1)
    return out


ROIS = [[0, 3.0, 3.0, 3.0, 2.0, 30.0], [1, 5.5, 2.0, 9.0, 4.5, -60.0],
        [0, 0.0, 0.0, 1.5, 0.5, 90.0], [1, 8.0, 7.5, 12.0, 11.0, 10.0],
        [0, -2.0, 4.0, 6.0, 3.0, 0.0]]


@pytest.mark.parametrize('ratio', [-1, 0, 1, 3])
@pytest.mark.parametrize('pooled,scale', [((2, 2), 1.0), ((3, 2), 0.7)])
def test_rroi_align_matches_per_roi_reference(ratio, pooled, scale):
    x = np.random.RandomState(4).uniform(-1, 1, (2, 3, 8, 9))
    rois = np.array(ROIS)
    y = mx.nd.contrib.RROIAlign(mx.nd.array(x, dtype='float64'),
                                mx.nd.array(rois, dtype='float64'), pooled_size=pooled,
                                spatial_scale=scale, sampling_ratio=ratio)
    np.testing.assert_allclose(y.asnumpy(), reference(x, rois, pooled, scale, ratio),
                               rtol=1e-12, atol=1e-12)


def test_rroi_align_no_rois():
    y = mx.nd.contrib.RROIAlign(mx.nd.ones((1, 2, 4, 4)), mx.nd.zeros((0, 6)),
                                pooled_size=(2, 2), spatial_scale=1.0)
    assert y.shape == (0, 2, 2, 2)
