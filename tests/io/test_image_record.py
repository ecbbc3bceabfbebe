"""mx.io.ImageRecordIter (+ UInt8/Int8) against MXNet 1.9.1's batches, and its behaviour."""
import os
import threading

import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError

from tests.image._files import EXPECTED, REC, assert_close, copy_rec

GOLDEN = {
    'rec_plain': dict(data_shape=(3, 20, 20), batch_size=2),
    'rec_norm': dict(data_shape=(3, 20, 20), batch_size=2, mean_r=10, mean_g=20, mean_b=30,
                     std_r=2, std_g=4, std_b=5, scale=0.5),
    'rec_resize': dict(data_shape=(3, 18, 18), batch_size=3, resize=22),
    'rec_gray': dict(data_shape=(1, 20, 20), batch_size=2),
    'rec_part0': dict(data_shape=(3, 20, 20), batch_size=2, num_parts=2, part_index=0),
    'rec_part1': dict(data_shape=(3, 20, 20), batch_size=2, num_parts=2, part_index=1),
}


def batches(it):
    out = [(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad) for b in it]
    return np.stack([o[0] for o in out]), np.stack([o[1] for o in out]), [o[2] for o in out]


@pytest.mark.parametrize('name', sorted(GOLDEN))
def test_batches_match_mxnet(name):
    data, label, pad = batches(mx.io.ImageRecordIter(path_imgrec=REC, **GOLDEN[name]))
    assert_close(data, name + '_data', tol=2)
    assert_close(label, name + '_label')
    assert pad == list(EXPECTED[name + '_pad'])


def test_descs_dtypes_and_uint8_int8_forms():
    it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 20, 20), batch_size=2,
                               data_name='img', label_name='lab')
    assert it.provide_data[0].name == 'img' and it.provide_data[0].shape == (2, 3, 20, 20)
    assert it.provide_label[0].name == 'lab' and it.provide_label[0].shape == (2,)
    u8 = mx.io.ImageRecordUInt8Iter(path_imgrec=REC, data_shape=(3, 20, 20), batch_size=2)
    data, _, _ = batches(u8)
    assert data.dtype == np.uint8
    assert_close(data, 'rec_uint8_data', tol=2)
    i8 = mx.io.ImageRecordInt8Iter(path_imgrec=REC, data_shape=(3, 20, 20), batch_size=2)
    d8 = batches(i8)[0]
    assert d8.dtype == np.int8
    np.testing.assert_array_equal(d8, np.minimum(data, 127))
    assert isinstance(mx.io.create('ImageRecordIter', path_imgrec=REC, data_shape=(3, 8, 8),
                                   batch_size=1), mx.io.ImageRecordIter)


def test_round_batch_rolls_over_into_next_epoch_like_mxnet():
    it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 20, 20), batch_size=2)
    first = batches(it)
    assert first[1].tolist() == [[0, 1], [2, 3], [4, 0]] and first[2] == [0, 0, 1]
    it.reset()
    _, label, pad = batches(it)
    np.testing.assert_array_equal(label, EXPECTED['rec_epoch2_label'])
    assert pad == list(EXPECTED['rec_epoch2_pad'])
    it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 20, 20), batch_size=2,
                               round_batch=False)
    data, label, pad = batches(it)
    assert pad == [0, 0, 1] and label[-1].tolist() == [4, 0]
    assert not data[-1, 1].any()


def test_shuffle_is_seeded_and_threads_do_not_change_batches():
    kw = dict(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=1, shuffle=True)
    a = batches(mx.io.ImageRecordIter(seed=3, preprocess_threads=1, **kw))
    b = batches(mx.io.ImageRecordIter(seed=3, preprocess_threads=3, prefetch_buffer=1, **kw))
    np.testing.assert_array_equal(a[0], b[0])
    assert sorted(a[1].ravel().tolist()) == [0, 1, 2, 3, 4]
    orders = {tuple(batches(mx.io.ImageRecordIter(seed=s, **kw))[1].ravel())
              for s in range(6)}
    assert len(orders) > 1
    it = mx.io.ImageRecordIter(**kw)
    epochs = set()
    for _ in range(4):                                   # a new permutation per epoch
        epochs.add(tuple(batches(it)[1].ravel()))
        it.reset()
    assert len(epochs) > 1
    aug = dict(path_imgrec=REC, data_shape=(3, 12, 12), batch_size=5, rand_crop=True,
               rand_mirror=True)
    x = batches(mx.io.ImageRecordIter(seed_aug=1, preprocess_threads=1, **aug))[0]
    y = batches(mx.io.ImageRecordIter(seed_aug=1, preprocess_threads=2, **aug))[0]
    np.testing.assert_array_equal(x, y)


def test_decoding_runs_on_worker_threads():
    seen = set()
    it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=1,
                               preprocess_threads=2)
    orig = it._make_batch

    def spy(*args):
        seen.add(threading.current_thread().name)
        return orig(*args)
    it._make_batch = spy
    it.reset()
    batches(it)
    assert seen and all(name.startswith('ImageRecordIter') for name in seen)


def _with_corrupt_record(tmp_path, k):
    src = mx.recordio.MXRecordIO(REC, 'r')
    rec = str(tmp_path / 'bad.rec')
    out = mx.recordio.MXRecordIO(rec, 'w')
    i = 0
    while (buf := src.read()) is not None:
        if i == k:
            header, _ = mx.recordio.unpack(buf)
            buf = mx.recordio.pack(header, b'\xff\xd8\xff\xe0 garbage')
        out.write(buf)
        i += 1
    out.close()
    return rec


def test_corrupt_jpeg_names_file_and_record_then_goes_on(tmp_path):
    rec = _with_corrupt_record(tmp_path, 2)
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=2)
    assert it.next().label[0].asnumpy().tolist() == [0, 1]
    with pytest.raises(MXNetError, match=r"bad\.rec'.*record 2 \(id 2, byte \d+\).*decoding"):
        it.next()
    assert it.next().label[0].asnumpy().tolist() == [4, 0]
    with pytest.raises(StopIteration):
        it.next()


def test_truncated_file_and_bad_arguments_are_refused(tmp_path):
    rec, _ = copy_rec(tmp_path)
    with open(rec, 'r+b') as f:
        f.truncate(os.path.getsize(rec) - 50)
    with pytest.raises(MXNetError, match=r'images\.rec.*record 4 at byte \d+ is truncated'):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=1)
    with pytest.raises(TypeError, match=r"unsupported argument\(s\) \['max_rotate_angle'\]"):
        mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=1,
                              max_rotate_angle=10)
    with pytest.raises(ValueError, match='data_shape must be'):
        mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(2, 8, 8), batch_size=1)
    with pytest.raises(ValueError, match='part_index'):
        mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=1,
                              num_parts=2, part_index=2)
    with pytest.raises(MXNetError, match='label_width is 2'):
        mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=1,
                              label_width=2).next()


def test_imglist_labels_override_and_index_file(tmp_path):
    lst = tmp_path / 'x.lst'
    lst.write_text(''.join(f'{i}\t{10 + i}\t{20 + i}\tname{i}.jpg\n' for i in range(5)))
    it = mx.io.ImageRecordIter(path_imgrec=REC, path_imglist=str(lst), label_width=2,
                               data_shape=(3, 8, 8), batch_size=5)
    assert it.provide_label[0].shape == (5, 2)
    assert it.next().label[0].asnumpy()[:, 1].tolist() == [20, 21, 22, 23, 24]
    from tests.image._files import IDX
    a = batches(mx.io.ImageRecordIter(path_imgrec=REC, path_imgidx=IDX, data_shape=(3, 8, 8),
                                      batch_size=5))
    b = batches(mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=5))
    np.testing.assert_array_equal(a[0], b[0])
