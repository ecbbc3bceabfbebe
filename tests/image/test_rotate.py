"""mx.image.imrotate / random_rotate against MXNet 1.9.1, plus bad input."""
import numpy as np
import pytest

import mxcy as mx

from tests.image._det_files import EXPECTED, assert_close

SRC = EXPECTED['rot_src']
TOL = 1e-3


@pytest.mark.parametrize('deg', [30, -45, 90])
def test_imrotate_matches_mxnet(deg):
    src = mx.nd.array(SRC)
    assert_close(mx.image.imrotate(src, deg).asnumpy(), f'rot{deg}', TOL)
    assert_close(mx.image.imrotate(src, deg, zoom_in=True).asnumpy(), f'rot{deg}_in', TOL)
    assert_close(mx.image.imrotate(src, deg, zoom_out=True).asnumpy(), f'rot{deg}_out', TOL)


def test_imrotate_batch_takes_one_angle_per_image():
    batch = mx.nd.array(np.stack([SRC, SRC[:, ::-1]]))
    assert_close(mx.image.imrotate(batch, mx.nd.array([15, -70])).asnumpy(), 'rot_batch', TOL)
    same = mx.image.imrotate(batch, 30).asnumpy()
    np.testing.assert_allclose(same[0], EXPECTED['rot30'], atol=TOL)


def test_imrotate_zero_and_full_turn_keep_the_image():
    src = mx.nd.array(SRC)
    np.testing.assert_allclose(mx.image.imrotate(src, 0).asnumpy(), SRC, atol=1e-4)
    np.testing.assert_allclose(mx.image.imrotate(src, 360).asnumpy(), SRC, atol=1e-3)


def test_random_rotate_draws_from_numpy_like_mxnet():
    np.random.seed(4)
    src = mx.nd.array(SRC)
    assert_close(mx.image.random_rotate(src, (-40, 40)).asnumpy(), 'random_rotate', TOL)
    batch = mx.nd.array(np.stack([SRC, SRC[:, ::-1]]))
    assert_close(mx.image.random_rotate(batch, (-40, 40)).asnumpy(), 'random_rotate_batch', TOL)


def test_bad_input_is_named():
    src = mx.nd.array(SRC)
    with pytest.raises(ValueError, match='zoom_in and zoom_out'):
        mx.image.imrotate(src, 10, zoom_in=True, zoom_out=True)
    with pytest.raises(TypeError, match='float32, got uint8'):
        mx.image.imrotate(src.astype('uint8'), 10)
    with pytest.raises(ValueError, match=r'CHW \(3-D\) or NCHW \(4-D\), got shape \(9, 6\)'):
        mx.image.imrotate(mx.nd.array(SRC[0]), 10)
    with pytest.raises(ValueError, match='holds 2 images but rotation_degrees gives 3'):
        mx.image.imrotate(mx.nd.array(np.stack([SRC, SRC])), mx.nd.array([1, 2, 3]))
    with pytest.raises(ValueError, match='one CHW image takes one angle, got 2'):
        mx.image.imrotate(src, [1, 2])
    with pytest.raises(TypeError, match='src must be an NDArray'):
        mx.image.imrotate(SRC, 10)
    with pytest.raises(ValueError, match=r'angle_limits must be \(low, high\)'):
        mx.image.random_rotate(src, (10,))
