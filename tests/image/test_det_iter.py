"""mx.image.ImageDetIter against MXNet 1.9.1's batches, label shapes and bad input."""
import logging

import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError

from tests.image._det_files import EXPECTED, IDX, REC, assert_close, batches


def test_indexed_rec_matches_mxnet():
    it = mx.image.ImageDetIter(2, (3, 20, 24), path_imgrec=REC, path_imgidx=IDX)
    assert it.label_shape == tuple(EXPECTED['detiter_label_shape']) == (3, 5)
    assert it.provide_label[0].name == 'label'
    assert it.provide_label[0].shape == (2, 3, 5)
    data, label, pad = batches(it)
    assert_close(data, 'detiter_data', tol=1)
    assert_close(label, 'detiter_label', 1e-6)
    assert pad == list(EXPECTED['detiter_pad'])


def test_sequential_rec_with_normalisation_matches_mxnet():
    it = mx.image.ImageDetIter(3, (3, 16, 16), path_imgrec=REC, mean=True, std=True)
    data, label, pad = batches(it)
    assert_close(data, 'detiter_seq_data', tol=0.05)
    assert_close(label, 'detiter_seq_label', 1e-6)
    assert pad == list(EXPECTED['detiter_seq_pad'])


def test_empty_boxes_are_dropped_and_rows_padded_with_minus_one():
    it = mx.image.ImageDetIter(5, (3, 8, 8), path_imgrec=REC)
    label = it.next().label[0].asnumpy()
    assert label[3, 0, 0] == 1 and np.all(label[3, 1:] == -1)      # record 3: 1 valid box
    assert np.all(label[0, 1:] == -1)


def test_shuffle_and_parts_keep_each_sample_with_its_label():
    ref = batches(mx.image.ImageDetIter(5, (3, 8, 8), path_imgrec=REC, path_imgidx=IDX))
    ref_rows = {tuple(lab.ravel()) for lab in ref[1][0]}
    import random
    random.seed(1)
    it = mx.image.ImageDetIter(5, (3, 8, 8), path_imgrec=REC, path_imgidx=IDX, shuffle=True)
    _, label, _ = batches(it)
    assert {tuple(lab.ravel()) for lab in label[0]} == ref_rows
    assert not np.array_equal(label[0], ref[1][0])
    part = mx.image.ImageDetIter(2, (3, 8, 8), path_imgrec=REC, path_imgidx=IDX,
                                 num_parts=2, part_index=1)
    np.testing.assert_array_equal(part.next().label[0].asnumpy(), ref[1][0][2:4])


def test_augmented_batches_keep_boxes_valid():
    import random
    random.seed(0)
    it = mx.image.ImageDetIter(5, (3, 24, 24), path_imgrec=REC, rand_crop=1, rand_pad=1,
                               rand_mirror=True, area_range=(0.3, 3.0))
    for _ in range(3):
        it.reset()
        label = it.next().label[0].asnumpy()
        boxes = label[label[:, :, 0] >= 0]
        assert len(boxes) >= 5
        assert np.all((boxes[:, 1:] >= 0) & (boxes[:, 1:] <= 1))
        assert np.all(boxes[:, 3] > boxes[:, 1]) and np.all(boxes[:, 4] > boxes[:, 2])


def test_list_sources_and_reshape_and_sync(tmp_path):
    import cv2
    img = np.full((12, 16, 3), 200, np.uint8)
    cv2.imwrite(str(tmp_path / 'a.png'), img)
    imglist = [[[2, 5, 1, 0.1, 0.2, 0.5, 0.6], 'a.png'],
               [[2, 5, 0, 0.0, 0.0, 1.0, 1.0, 3, 0.5, 0.5, 0.9, 0.9], 'a.png']]
    it = mx.image.ImageDetIter(2, (3, 6, 8), imglist=imglist, path_root=str(tmp_path))
    assert it.label_shape == (2, 5)
    label = it.next().label[0].asnumpy()
    np.testing.assert_allclose(label[0], [[1, 0.1, 0.2, 0.5, 0.6], [-1] * 5], atol=1e-6)
    lst = tmp_path / 'a.lst'
    lst.write_text('0\t2\t5\t4\t0.1\t0.1\t0.3\t0.3\ta.png\n')
    small = mx.image.ImageDetIter(1, (3, 6, 8), path_imglist=str(lst), path_root=str(tmp_path))
    assert small.label_shape == (1, 5)
    assert small.sync_label_shape(it) is it
    assert small.provide_label[0].shape == (1, 2, 5)
    np.testing.assert_allclose(small.next().label[0].asnumpy()[0],
                               [[4, 0.1, 0.1, 0.3, 0.3], [-1] * 5], atol=1e-6)
    small.reshape(data_shape=(3, 10, 10), label_shape=(4, 5))
    assert small.provide_data[0].shape == (1, 3, 10, 10)
    small.reset()
    with pytest.raises(MXNetError, match=r'has shape \(6, 8, 3\).*data_shape \(3, 10, 10\)'):
        small.next()                          # the augmenters still resize to (6, 8)
    small.auglist = mx.image.CreateDetAugmenter((3, 10, 10))
    small.reset()
    assert small.next().label[0].shape == (1, 4, 5)
    with pytest.raises(ValueError, match='may not reduce the object count from 4 to 1'):
        small.reshape(label_shape=(1, 5))
    with pytest.raises(ValueError, match='object width 6 differs'):
        small.reshape(label_shape=(4, 6))
    small.reset()
    images = list(small.draw_next(color=(0, 0, 255), thickness=1))
    assert len(images) == 1 and images[0].shape == (10, 10, 3)
    assert np.all(images[0][1, 1:3] == [0, 0, 255])           # the box's top-left corner


def test_bad_labels(tmp_path, caplog):
    import cv2
    cv2.imwrite(str(tmp_path / 'a.png'), np.zeros((6, 6, 3), np.uint8))
    with pytest.raises(MXNetError, match='at least 7 values'):
        mx.image.ImageDetIter(1, (3, 4, 4), imglist=[[[1, 2, 3], 'a.png']],
                              path_root=str(tmp_path))
    with pytest.raises(MXNetError, match='do not split into objects of width 5'):
        mx.image.ImageDetIter(1, (3, 4, 4), imglist=[[[2, 5, 1, 0, 0, 1, 1, 9], 'a.png']],
                              path_root=str(tmp_path))
    with pytest.raises(MXNetError, match='no valid object'):
        mx.image.ImageDetIter(1, (3, 4, 4), imglist=[[[2, 5, 1, 0.5, 0, 0.1, 1], 'a.png']],
                              path_root=str(tmp_path))

    class Drop(mx.image.DetAugmenter):
        def _apply(self, src, label):
            return src, label[:0] if label[0, 0] == 1 else label

    good = [2, 5, 0, 0.1, 0.1, 0.9, 0.9]
    bad = [2, 5, 1, 0.1, 0.1, 0.9, 0.9]
    aug = [Drop(), mx.image.DetBorrowAug(mx.image.ForceResizeAug((4, 4)))]
    it = mx.image.ImageDetIter(1, (3, 4, 4), imglist=[[bad, 'a.png'], [good, 'a.png']],
                               path_root=str(tmp_path), aug_list=aug)
    with caplog.at_level(logging.WARNING):
        b = it.next()
    assert b.label[0].asnumpy()[0, 0, 0] == 0
    assert 'skipping sample' in caplog.text
