"""mx.nd.imdecode: MXNet's deprecated decoder, (c, h, w) float in OpenCV's BGR order."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError

cv2 = pytest.importorskip('cv2')
IMG = (np.arange(4 * 5 * 3) * 7 % 250 + 1).astype(np.uint8).reshape(4, 5, 3)   # BGR
PNG = cv2.imencode('.png', IMG)[1].tobytes()


def test_layout_channels_clip_and_mean():
    out = mx.nd.imdecode(PNG)
    assert out.shape == (3, 4, 5) and out.dtype == np.float32
    np.testing.assert_array_equal(out.asnumpy(), IMG.transpose(2, 0, 1))
    grey = mx.nd.imdecode(PNG, channels=1).asnumpy()
    np.testing.assert_array_equal(grey[0], cv2.cvtColor(IMG, cv2.COLOR_BGR2GRAY))
    clip = mx.nd.imdecode(PNG, clip_rect=(1, 1, 3, 4), mean=mx.nd.ones((3, 3, 2)))
    np.testing.assert_array_equal(clip.asnumpy(), IMG[1:4, 1:3].transpose(2, 0, 1) - 1.0)


def test_out_and_index():
    out = mx.nd.zeros((2, 3, 4, 5))
    assert mx.nd.imdecode(PNG, out=out, index=1) is out
    np.testing.assert_array_equal(out.asnumpy()[1], IMG.transpose(2, 0, 1))
    assert not out.asnumpy()[0].any()


def test_bad_input():
    with pytest.raises(MXNetError, match=r"imdecode: clip_rect .* outside the 5x4"):
        mx.nd.imdecode(PNG, clip_rect=(0, 0, 6, 4))
    with pytest.raises(MXNetError, match=r"imdecode: mean must have .*\(3, 4, 5\).*\(3,\)"):
        mx.nd.imdecode(PNG, mean=mx.nd.zeros(3))
    with pytest.raises(MXNetError, match=r"imdecode: out must have shape"):
        mx.nd.imdecode(PNG, out=mx.nd.zeros((3, 5, 4)))
    with pytest.raises(MXNetError, match="imdecode: decoding failed"):
        mx.nd.imdecode(b'not an image')
