"""gluon.data.vision.transforms: values, shapes, dtypes and hybridization."""
import random

import numpy as np
import pytest

import mxcy as mx
from mxcy.gluon.data.vision import transforms as T

RAW = np.random.RandomState(0).randint(0, 256, (12, 16, 3)).astype(np.uint8)
IMG = mx.nd.array(RAW, dtype='uint8')


def test_to_tensor_normalize_cast_and_hybrid_compose():
    t = T.ToTensor()(IMG)
    assert t.shape == (3, 12, 16) and t.dtype == np.float32
    np.testing.assert_allclose(t.asnumpy(), RAW.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    batch = T.ToTensor()(mx.nd.array(np.stack([RAW, RAW]), dtype='uint8'))
    assert batch.shape == (2, 3, 12, 16)
    n = T.Normalize((0.5, 0.4, 0.3), (0.2, 0.25, 0.5))(t).asnumpy()
    ref = (RAW.transpose(2, 0, 1) / 255.0 - np.array([0.5, 0.4, 0.3])[:, None, None]) / \
        np.array([0.2, 0.25, 0.5])[:, None, None]
    np.testing.assert_allclose(n, ref, rtol=1e-5, atol=1e-6)
    assert T.Cast('float16')(IMG).dtype == np.float16
    h = T.HybridCompose([T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), (0.2, 0.25, 0.5))])
    h.hybridize()
    np.testing.assert_allclose(h(IMG).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match='HybridCompose: every transform must be a HybridBlock'):
        T.HybridCompose([T.Resize(4)])
    with pytest.raises(ValueError, match='Normalize: mean has 2 values'):
        T.Normalize((0.5, 0.5), 1.0)(t)


def test_resize_and_crops():
    assert T.Resize(8)(IMG).shape == (8, 8, 3)
    assert T.Resize((10, 6))(IMG).shape == (6, 10, 3)
    assert T.Resize(6, keep_ratio=True)(IMG).shape == (6, 8, 3)
    np.testing.assert_array_equal(T.Resize((10, 6), interpolation=1)(IMG).asnumpy(),
                                  mx.image.imresize(IMG, 10, 6, 1).asnumpy())
    np.testing.assert_array_equal(T.CenterCrop((8, 6))(IMG).asnumpy(), RAW[3:9, 4:12])
    np.testing.assert_array_equal(T.CropResize(2, 1, 5, 4)(IMG).asnumpy(), RAW[1:5, 2:7])
    assert T.CropResize(2, 1, 5, 4, size=(3, 3))(IMG).shape == (3, 3, 3)
    assert T.RandomResizedCrop(7)(IMG).shape == (7, 7, 3)
    assert T.CenterCrop(4)(mx.nd.array(np.stack([RAW] * 2), dtype='uint8')).shape == \
        (2, 4, 4, 3)


def test_flips_follow_python_random():
    random.seed(0)
    draws = [random.random() < 0.5 for _ in range(6)]
    random.seed(0)
    for flip in draws:
        got = T.RandomFlipLeftRight()(IMG).asnumpy()
        np.testing.assert_array_equal(got, RAW[:, ::-1] if flip else RAW)
    random.seed(1)
    flip = random.random() < 0.5
    random.seed(1)
    np.testing.assert_array_equal(T.RandomFlipTopBottom()(IMG).asnumpy(),
                                  RAW[::-1] if flip else RAW)


def test_colour_jitters_keep_dtype_and_match_formulas():
    x = RAW.astype(np.float32)
    random.seed(2)
    alpha = random.uniform(0.7, 1.3)
    random.seed(2)
    got = T.RandomBrightness(0.3)(mx.nd.array(x)).asnumpy()
    np.testing.assert_allclose(got, x * alpha, rtol=1e-5)
    random.seed(2)
    u8 = T.RandomBrightness(0.3)(IMG)
    assert u8.dtype == np.uint8
    np.testing.assert_array_equal(u8.asnumpy(), np.clip(np.rint(x * alpha), 0, 255))
    random.seed(2)
    got = T.RandomContrast(0.3)(mx.nd.array(x)).asnumpy()
    gray = (x * [0.299, 0.587, 0.114]).sum(-1).mean()
    np.testing.assert_allclose(got, x * alpha + gray * (1 - alpha), rtol=1e-4)
    random.seed(2)
    got = T.RandomSaturation(0.3)(mx.nd.array(x)).asnumpy()
    g = (x * [0.299, 0.587, 0.114]).sum(-1, keepdims=True)
    np.testing.assert_allclose(got, x * alpha + g * (1 - alpha), rtol=1e-4, atol=1e-3)
    for t in (T.RandomHue(0.2), T.RandomLighting(0.1),
              T.RandomColorJitter(0.2, 0.2, 0.2, 0.1)):
        out = t(IMG)
        assert out.dtype == np.uint8 and out.shape == IMG.shape
    assert T.RandomHue(0.0)(mx.nd.array(x)).asnumpy() == pytest.approx(x, abs=1.0)


def test_compose_and_random_apply():
    c = T.Compose([T.Resize(10), T.CenterCrop(8), T.ToTensor(), T.Normalize(0.5, 0.5)])
    out = c(IMG)
    assert out.shape == (3, 8, 8) and out.dtype == np.float32
    assert isinstance(c[2], mx.gluon.nn.HybridSequential)       # the hybrid run is grouped
    ra = T.RandomApply(T.RandomBrightness(0.5), p=0.0)
    assert ra(IMG) is IMG
    ra = T.RandomApply(T.Cast('float64'), p=1.0)
    assert ra(IMG).dtype == np.float64
