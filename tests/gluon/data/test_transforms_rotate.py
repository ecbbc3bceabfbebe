"""gluon.data.vision.transforms.Rotate / RandomRotation against MXNet 1.9.1."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.gluon.data.vision import transforms as T

from tests.image._det_files import EXPECTED, assert_close

SRC = EXPECTED['rot_src']


def test_rotate_matches_mxnet():
    out = T.Rotate(25, zoom_out=True)(mx.nd.array(SRC))
    assert out.shape == SRC.shape
    assert_close(out.asnumpy(), 'transform_rotate', 1e-3)
    composed = T.Compose([T.Rotate(30)])
    np.testing.assert_allclose(composed(mx.nd.array(SRC)).asnumpy(), EXPECTED['rot30'],
                               atol=1e-3)


def test_random_rotation_draws_like_mxnet():
    np.random.seed(5)
    rr = T.RandomRotation((-30, 30), rotate_with_proba=0.5)
    outs = np.stack([rr(mx.nd.array(SRC)).asnumpy() for _ in range(6)])
    assert_close(outs, 'random_rotation', 1e-3)
    kept = [np.array_equal(o, SRC) for o in outs]
    assert any(kept) and not all(kept)


def test_bad_input_is_named():
    with pytest.raises(TypeError, match='only float32 input is supported, got uint8'):
        T.Rotate(10)(mx.nd.array(SRC).astype('uint8'))
    with pytest.raises(ValueError, match='zoom_in and zoom_out cannot both be True'):
        T.Rotate(10, zoom_in=True, zoom_out=True)
    with pytest.raises(ValueError, match=r'angle_limits must be \(low, high\), got \(1,\)'):
        T.RandomRotation((1,))
    with pytest.raises(ValueError, match=r'rotate_with_proba must be in \[0, 1\], got 2'):
        T.RandomRotation((1, 2), rotate_with_proba=2)
