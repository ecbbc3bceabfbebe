"""mx.image.ImageIter against MXNet 1.9.1's batches, plus list sources and bad input."""
import logging
import os

import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError

from tests.image._files import EXPECTED, IDX, REC, assert_close, copy_rec, path


def batches(it):
    out = [(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad) for b in it]
    return np.stack([o[0] for o in out]), np.stack([o[1] for o in out]), [o[2] for o in out]


def test_rec_with_index_matches_mxnet():
    it = mx.image.ImageIter(2, (3, 20, 20), path_imgrec=REC, path_imgidx=IDX)
    assert it.provide_data[0].shape == (2, 3, 20, 20)
    assert it.provide_label[0].name == 'softmax_label'
    data, label, pad = batches(it)
    assert_close(data, 'imageiter_data', tol=2)
    assert_close(label, 'imageiter_label')
    assert pad == list(EXPECTED['imageiter_pad'])


def test_mxnet_im2rec_file_reads_sequentially():
    data, label, pad = batches(mx.image.ImageIter(2, (3, 20, 20),
                                                  path_imgrec=path('im2rec.rec')))
    assert_close(data, 'im2rec_data', tol=2)
    assert_close(label, 'im2rec_label')
    assert pad == [0, 0, 1]


def test_list_file_and_imglist_sources():
    lst = path('im2rec.lst')
    it = mx.image.ImageIter(5, (3, 16, 16), path_imglist=lst, path_root=path('folder'))
    b = it.next()
    np.testing.assert_array_equal(b.label[0].asnumpy(), [0, 0, 0, 1, 1])
    ref = mx.image.imread(path('folder/a/img0.jpg')).asnumpy()
    center = mx.image.center_crop(ref, (16, 16))[0].asnumpy().transpose(2, 0, 1)
    np.testing.assert_array_equal(b.data[0].asnumpy()[0], center)
    it = mx.image.ImageIter(2, (3, 16, 16), imglist=[[3, 'a/img1.jpg'], [4, 'b/img3.jpg']],
                            path_root=path('folder'))
    np.testing.assert_array_equal(it.next().label[0].asnumpy(), [3, 4])


def test_shuffle_parts_and_last_batch_modes():
    it = mx.image.ImageIter(1, (3, 16, 16), path_imgrec=REC, path_imgidx=IDX, shuffle=True)
    labels = sorted(float(b.label[0].asnumpy()[0]) for b in it)
    assert labels == [0, 1, 2, 3, 4]
    parts = [batches(mx.image.ImageIter(1, (3, 16, 16), path_imgrec=REC, path_imgidx=IDX,
                                        num_parts=2, part_index=k))[1].ravel().tolist()
             for k in range(2)]
    assert parts == [[0, 1], [2, 3]]
    it = mx.image.ImageIter(2, (3, 16, 16), path_imgrec=REC, path_imgidx=IDX,
                            last_batch_handle='discard')
    assert batches(it)[1].tolist() == [[0, 1], [2, 3]]
    it = mx.image.ImageIter(2, (3, 16, 16), path_imgrec=REC, path_imgidx=IDX,
                            last_batch_handle='roll_over')
    assert batches(it)[1].tolist() == [[0, 1], [2, 3]]
    it.reset()
    assert batches(it)[1].tolist() == [[4, 0], [1, 2], [3, 4]]
    with pytest.raises(ValueError, match='last_batch_handle'):
        mx.image.ImageIter(2, (3, 8, 8), path_imgrec=REC, last_batch_handle='x')
    with pytest.raises(ValueError, match='shuffle=True needs random access'):
        mx.image.ImageIter(2, (3, 8, 8), path_imgrec=REC, shuffle=True)


def _rewrite(tmp_path, corrupt=(), drop_key=None):
    src = mx.recordio.MXIndexedRecordIO(IDX, REC, 'r')
    rec, idx = str(tmp_path / 'x.rec'), str(tmp_path / 'x.idx')
    out = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    for k in src.keys:
        buf = src.read_idx(k)
        if k in corrupt:
            header, _ = mx.recordio.unpack(buf)
            buf = mx.recordio.pack(header, b'\xff\xd8\xff\xe0 not a jpeg')
        out.write_idx(k, buf)
    out.close()
    if drop_key is not None:
        lines = open(idx).read().splitlines()
        with open(idx, 'w') as f:
            f.write('\n'.join(line for line in lines if line.split('\t')[0] != str(drop_key)))
    return rec, idx


def test_corrupt_image_is_skipped_with_a_warning(tmp_path, caplog):
    rec, idx = _rewrite(tmp_path, corrupt=(1,))
    with caplog.at_level(logging.WARNING):
        data, label, _ = batches(mx.image.ImageIter(2, (3, 16, 16), path_imgrec=rec,
                                                    path_imgidx=idx))
    assert label.tolist() == [[0, 2], [3, 4]]
    assert 'x.rec' in caplog.text and 'decoding failed' in caplog.text


def test_missing_index_key_and_truncated_record_raise(tmp_path):
    rec, idx = _rewrite(tmp_path)
    it = mx.image.ImageIter(2, (3, 16, 16), path_imgrec=rec, path_imgidx=idx)
    it.seq = [0, 9]
    with pytest.raises(MXNetError, match=r"record 9 is missing from the index .*x\.idx"):
        it.next()
    (tmp_path / 'c').mkdir()
    rec2, _ = copy_rec(tmp_path / 'c')
    size = os.path.getsize(rec2)
    with open(rec2, 'r+b') as f:
        f.truncate(size - 100)
    it = mx.image.ImageIter(5, (3, 16, 16), path_imgrec=rec2)
    with pytest.raises(MXNetError, match='truncated record'):
        it.next()


@pytest.mark.parametrize('bad,why', [('7\tcat.jpg', r"line 3: expected 'index<TAB>"),
                                     ('x\t1\tcat.jpg', r"line 3: invalid literal for int"),
                                     ('7\tone\tcat.jpg', r"line 3: could not convert"),
                                     ('7\t1\t2\tcat.jpg', r"line 3: 2 labels, label_width is 1")])
def test_bad_list_line_raises_naming_the_line(tmp_path, bad, why):
    lst = tmp_path / 'x.lst'
    lst.write_text(f"0\t1\ta/a.png\n\n{bad}\n")      # the blank line is skipped, counted
    with pytest.raises(MXNetError, match=why):
        mx.image.ImageIter(1, (3, 16, 16), path_imglist=str(lst), path_root=path('folder'))
