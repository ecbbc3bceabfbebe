"""mx.image functions against MXNet 1.9.1's outputs for the same files."""
import random

import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError

from tests.image._files import IMAGES, EXPECTED, assert_close, read


@pytest.mark.parametrize('i', range(len(IMAGES)))
def test_imdecode_matches_mxnet(i):
    buf = read(IMAGES[i])
    img = mx.image.imdecode(buf)
    assert isinstance(img, mx.nd.NDArray) and img.dtype == np.uint8
    assert_close(img.asnumpy(), f'decode{i}', tol=2)
    assert_close(mx.image.imdecode(buf, flag=0).asnumpy(), f'decode_gray{i}', tol=2)
    assert_close(mx.image.imdecode(buf, to_rgb=False).asnumpy(), f'decode_bgr{i}', tol=2)
    # a uint8 NDArray of the bytes decodes the same
    nd_buf = mx.nd.array(np.frombuffer(buf, np.uint8), dtype='uint8')
    np.testing.assert_array_equal(mx.image.imdecode(nd_buf).asnumpy(), img.asnumpy())


def test_imread_and_to_rgb_swaps_channels():
    from tests.image._files import path
    img = mx.image.imread(path(IMAGES[0])).asnumpy()
    bgr = mx.image.imread(path(IMAGES[0]), to_rgb=False).asnumpy()
    np.testing.assert_array_equal(img, bgr[:, :, ::-1])
    assert img.shape == EXPECTED['decode0'].shape


@pytest.fixture
def src():
    return mx.image.imdecode(read(IMAGES[0]))


@pytest.mark.parametrize('interp', range(5))
def test_imresize_matches_mxnet(src, interp):
    assert_close(mx.image.imresize(src, 41, 37, interp=interp).asnumpy(), f'imresize_up{interp}',
                 tol=2)
    assert_close(mx.image.imresize(src, 17, 13, interp=interp).asnumpy(),
                 f'imresize_down{interp}', tol=2)


def test_resize_short_and_crops_match_mxnet(src):
    assert_close(mx.image.resize_short(src, 20).asnumpy(), 'resize_short', tol=2)
    out, rect = mx.image.center_crop(src, (16, 12))
    assert_close(out.asnumpy(), 'center_crop')
    assert_close(rect, 'center_crop_rect')
    assert_close(mx.image.fixed_crop(src, 3, 4, 20, 15, size=(10, 12)).asnumpy(), 'fixed_crop',
                 tol=2)


def test_seeded_random_crops_match_mxnet(src):
    random.seed(3)
    assert_close(mx.image.random_crop(src, (12, 10))[0].asnumpy(), 'random_crop', tol=2)
    assert_close(mx.image.random_size_crop(src, (12, 10), 0.3, (0.75, 1.33))[0].asnumpy(),
                 'random_size_crop', tol=2)


@pytest.mark.parametrize('border', range(5))
def test_copy_make_border_matches_mxnet(src, border):
    assert_close(mx.image.copyMakeBorder(src, 2, 3, 1, 4, type=border, value=7).asnumpy(),
                 f'border{border}')


def test_color_normalize_and_scale_down(src):
    got = mx.image.color_normalize(src.astype('float32'), mx.nd.array([10, 20, 30]),
                                   mx.nd.array([2, 4, 5]))
    assert_close(got.asnumpy(), 'color_normalize')
    assert mx.image.scale_down((640, 480), (720, 120)) == (640, 106)
    assert mx.image.scale_down((20, 30), (10, 10)) == (10, 10)


def test_interp_9_and_10_choose_a_method(src):
    up = mx.image.resize_short(src, 40, interp=9).asnumpy()
    np.testing.assert_array_equal(up, mx.image.resize_short(src, 40, interp=2).asnumpy())
    down = mx.image.resize_short(src, 10, interp=9).asnumpy()
    np.testing.assert_array_equal(down, mx.image.resize_short(src, 10, interp=3).asnumpy())
    assert mx.image.imresize(src, 5, 6, interp=10).shape == (6, 5, 3)


def test_corrupt_and_missing_images_raise_clearly(tmp_path):
    buf = read(IMAGES[0])
    with pytest.raises(MXNetError, match='decoding failed'):
        mx.image.imdecode(buf[:40] + b'\0' * 10)
    with pytest.raises(MXNetError, match='empty buffer'):
        mx.image.imdecode(b'')
    with pytest.raises(TypeError, match='buf must be'):
        mx.image.imdecode('not bytes')
    missing = tmp_path / 'nope.jpg'
    with pytest.raises(MXNetError, match='nope.jpg'):
        mx.image.imread(str(missing))
    bad = tmp_path / 'bad.jpg'
    bad.write_bytes(b'\xff\xd8\xff\xe0garbage')
    with pytest.raises(MXNetError, match='bad.jpg.*decoding failed'):
        mx.image.imread(str(bad))


def test_bad_arguments_name_the_function(src):
    with pytest.raises(MXNetError, match='fixed_crop: region x0=20.*outside the 30x26'):
        mx.image.fixed_crop(src, 20, 0, 20, 10)
    with pytest.raises(ValueError, match='interp must be'):
        mx.image.imresize(src, 10, 10, interp=7)
    with pytest.raises(MXNetError, match='imresize: w and h must be positive'):
        mx.image.imresize(src, 0, 10)
    with pytest.raises(MXNetError, match='copyMakeBorder: type'):
        mx.image.copyMakeBorder(src, 1, 1, 1, 1, type=9)
    with pytest.raises(MXNetError, match='expected an HWC image'):
        mx.image.imresize(mx.nd.zeros((4, 4)), 2, 2)


def test_png_decodes_with_alpha_when_flag_negative(tmp_path):
    import cv2
    rgba = np.zeros((4, 5, 4), np.uint8)
    rgba[..., 0], rgba[..., 3] = 200, 100          # BGRA: blue 200, alpha 100
    buf = cv2.imencode('.png', rgba)[1].tobytes()
    out = mx.image.imdecode(buf, flag=-1).asnumpy()
    assert out.shape == (4, 5, 4)
    np.testing.assert_array_equal(out[0, 0], [0, 0, 200, 100])     # RGBA
    assert mx.image.imdecode(buf).shape == (4, 5, 3)
