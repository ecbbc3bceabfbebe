"""mx.image detection augmenters against MXNet 1.9.1 (seeded), plus box invariants."""
import json
import random

import numpy as np
import pytest

import mxcy as mx
from mxcy.image.detection import apply_det_aug

from tests.image._det_files import EXPECTED, assert_close

SRC = EXPECTED['aug_src']
LABEL = EXPECTED['aug_label']


def test_horizontal_flip_matches_mxnet():
    out, label = mx.image.DetHorizontalFlipAug(1.0)(mx.nd.array(SRC, dtype='uint8'),
                                                    LABEL.copy())
    assert isinstance(out, mx.nd.NDArray)
    assert_close(out.asnumpy(), 'flip_img')
    assert_close(label, 'flip_label')
    out, label = mx.image.DetHorizontalFlipAug(0.0)(SRC, LABEL.copy())
    np.testing.assert_array_equal(out, SRC)
    np.testing.assert_array_equal(label, LABEL)


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_seeded_crop_and_pad_match_mxnet(seed):
    src = mx.nd.array(SRC, dtype='uint8')
    random.seed(seed)
    out, label = mx.image.DetRandomCropAug(min_object_covered=0.3,
                                           area_range=(0.3, 1.0))(src, LABEL.copy())
    assert_close(out.asnumpy(), f'crop{seed}_img')
    assert_close(label, f'crop{seed}_label', 1e-6)
    random.seed(seed)
    out, label = mx.image.DetRandomPadAug(area_range=(1.2, 2.5),
                                          pad_val=(10, 20, 30))(src, LABEL.copy())
    assert_close(out.asnumpy(), f'pad{seed}_img')
    assert_close(label, f'pad{seed}_label', 1e-6)


def _pixel_boxes(label, w, h):
    return label[:, 1:5] * np.array([w, h, w, h])


def test_crop_keeps_boxes_consistent_with_the_pixels():
    aug = mx.image.DetRandomCropAug(min_object_covered=0.1, area_range=(0.2, 1.0),
                                    min_eject_coverage=0.3)
    h, w = SRC.shape[:2]
    cropped = 0
    for seed in range(40):
        random.seed(seed)
        out, label = aug(SRC, LABEL.copy())
        assert label.shape[1] == 5 and len(label) >= 1
        assert set(label[:, 0]) <= set(LABEL[:, 0])
        assert np.all((label[:, 1:5] >= 0) & (label[:, 1:5] <= 1))
        assert np.all(label[:, 3] > label[:, 1]) and np.all(label[:, 4] > label[:, 2])
        if out.shape == SRC.shape:
            continue
        cropped += 1
        # find where the crop came from: the output is a window of the source
        oh, ow = out.shape[:2]
        where = [(y, x) for y in range(h - oh + 1) for x in range(w - ow + 1)
                 if np.array_equal(SRC[y:y + oh, x:x + ow], out)]
        assert where, seed
        y, x = where[0]
        # each surviving box, mapped back to the source, lies inside its original box
        # and keeps more than min_eject_coverage of its area
        back = _pixel_boxes(label, ow, oh) + np.array([x, y, x, y])
        for row, box in zip(label, back):
            orig = _pixel_boxes(LABEL[LABEL[:, 0] == row[0]], w, h)
            area = (box[2] - box[0]) * (box[3] - box[1])
            assert any(np.all(box[:2] >= o[:2] - 1e-3) and np.all(box[2:] <= o[2:] + 1e-3)
                       and area > 0.3 * (o[2] - o[0]) * (o[3] - o[1]) - 1e-3
                       for o in orig), (seed, row)
    assert cropped > 10


def test_pad_keeps_the_image_and_maps_boxes_back():
    aug = mx.image.DetRandomPadAug(area_range=(1.5, 3.0), pad_val=7)
    h, w = SRC.shape[:2]
    padded = 0
    for seed in range(20):
        random.seed(seed)
        out, label = aug(SRC, LABEL.copy())
        if out.shape == SRC.shape:
            continue
        padded += 1
        oh, ow = out.shape[:2]
        assert 1.5 * h * w <= oh * ow * 1.05 and oh >= h + 2 and ow >= w + 2
        ys, xs = np.nonzero(np.any(out != 7, axis=2))
        # the image sits at (x, y); the boxes map back to the originals exactly
        boxes = _pixel_boxes(label, ow, oh)
        offset = boxes - _pixel_boxes(LABEL, w, h)
        x, y = offset[0, 0], offset[0, 1]
        np.testing.assert_allclose(offset, np.tile([x, y, x, y], (len(LABEL), 1)), atol=1e-3)
        np.testing.assert_array_equal(out[int(round(y)):int(round(y)) + h,
                                          int(round(x)):int(round(x)) + w], SRC)
        assert ys.min() >= round(y) and xs.min() >= round(x)
        np.testing.assert_array_equal(label[:, 0], LABEL[:, 0])
    assert padded > 10


def test_disabled_ranges_leave_the_input():
    out, label = mx.image.DetRandomCropAug(area_range=(0.5, 0.1))(SRC, LABEL)
    assert out is SRC and label is LABEL
    out, label = mx.image.DetRandomPadAug(area_range=(0.5, 0.9))(SRC, LABEL)
    assert out is SRC and label is LABEL


def test_borrow_and_select_augmenters():
    borrow = mx.image.DetBorrowAug(mx.image.ForceResizeAug((10, 8)))
    out, label = borrow(mx.nd.array(SRC, dtype='uint8'), LABEL)
    assert out.shape == (8, 10, 3) and label is LABEL
    assert borrow.dumps() == ['detborrowaug', '["forceresizeaug", {"size": [10, 8], '
                              '"interp": 2}]']
    flip = mx.image.DetHorizontalFlipAug(1.0)
    skip = mx.image.DetRandomSelectAug([flip], skip_prob=1.0)
    out, label = skip(SRC, LABEL)
    assert out is SRC
    always = mx.image.DetRandomSelectAug(flip)
    out, label = always(SRC, LABEL)
    np.testing.assert_array_equal(out, SRC[:, ::-1])
    out, label = mx.image.DetRandomSelectAug([])(SRC, LABEL)
    assert out is SRC


def test_custom_augmenter_overriding_call_gets_an_ndarray():
    class Shift(mx.image.DetAugmenter):
        def __call__(self, src, label):
            assert isinstance(src, mx.nd.NDArray)
            return src, label + 1

    out, label = apply_det_aug(Shift(), SRC, LABEL)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(label, LABEL + 1)
    with pytest.raises(TypeError, match='base class'):
        mx.image.DetAugmenter()(SRC, LABEL)


def test_create_det_augmenter_matches_mxnet_dumps():
    augs = mx.image.CreateDetAugmenter(
        (3, 30, 30), resize=40, rand_crop=0.5, rand_pad=0.5, rand_mirror=True, mean=True,
        std=True, brightness=0.1, contrast=0.1, saturation=0.1, hue=0.1, pca_noise=0.05,
        rand_gray=0.2, inter_method=1, min_object_covered=[0.3, 0.5], area_range=(0.3, 3.0))
    assert json.dumps([a.dumps() for a in augs]) == str(EXPECTED['create_det_dumps'])
    plain = mx.image.CreateDetAugmenter((3, 8, 10))
    out, label = plain[0](SRC, LABEL)
    for aug in plain[1:]:
        out, label = aug(out, label)
    assert out.shape == (8, 10, 3) and out.dtype == np.float32
    np.testing.assert_array_equal(label, LABEL)


def test_multi_rand_crop_aligns_parameter_lists():
    sel = mx.image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5, 0.9],
                                                area_range=[(0.1, 1), (0.2, 1), (0.3, 1)],
                                                skip_prob=0.25)
    assert sel.skip_prob == 0.25 and len(sel.aug_list) == 3
    got = sorted((a.min_object_covered, a.area_range, a.aspect_ratio_range)
                 for a in sel.aug_list)
    assert got == [(0.1, (0.1, 1), (0.75, 1.33)), (0.5, (0.2, 1), (0.75, 1.33)),
                   (0.9, (0.3, 1), (0.75, 1.33))]
    with pytest.raises(ValueError, match='area_range has 2 values, others have 3'):
        mx.image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5, 0.9],
                                              area_range=[(0.1, 1), (0.2, 1)])


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match='augmenter must be an mx.image.Augmenter, got int'):
        mx.image.DetBorrowAug(3)
    with pytest.raises(TypeError, match='aug_list must hold DetAugmenters, got CastAug'):
        mx.image.DetRandomSelectAug([mx.image.CastAug()])
    with pytest.raises(ValueError, match=r'area_range must be \(low, high\)'):
        mx.image.DetRandomCropAug(area_range=(0.1,))
    with pytest.raises(TypeError, match='pad_val must be a number or a tuple'):
        mx.image.DetRandomPadAug(pad_val='gray')
    with pytest.raises(ValueError, match=r'label must have shape \(objects, 5\+\).*got \(7,\)'):
        mx.image.DetHorizontalFlipAug(1.0)(SRC, LABEL[0, :].tolist() + [1, 2])
    with pytest.raises(ValueError, match=r'data_shape must be \(channels, height, width\)'):
        mx.image.CreateDetAugmenter((30, 30))
