"""mx.io.ImageDetRecordIter against MXNet 1.9.1's batches, and its bad input."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError

from tests.image._det_files import EXPECTED, REC, assert_close, batches

GOLDEN = {
    'detrec_plain': dict(data_shape=(3, 20, 24), batch_size=2),
    'detrec_norm': dict(data_shape=(3, 20, 20), batch_size=2, mean_r=10, mean_g=20,
                        mean_b=30, std_r=2, std_g=4, std_b=5, scale=0.5),
    'detrec_resize': dict(data_shape=(3, 18, 18), batch_size=3, resize=22),
    'detrec_gray': dict(data_shape=(1, 20, 20), batch_size=2, label_pad_width=20,
                        label_pad_value=-2),
    'detrec_mirror': dict(data_shape=(3, 20, 20), batch_size=5, rand_mirror_prob=1.0),
}


@pytest.mark.parametrize('name', sorted(GOLDEN))
def test_batches_match_mxnet(name):
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, verbose=False, **GOLDEN[name])
    data, label, pad = batches(it)
    assert it.provide_label[0].shape == EXPECTED[name + '_label'].shape[1:]
    assert_close(data, name + '_data', 1e-4)
    assert_close(label, name + '_label', 1e-6)
    assert pad == list(EXPECTED[name + '_pad'])


def test_label_header_and_mirror_invariant():
    plain = mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=5)
    mirror = mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=5,
                                      rand_mirror_prob=1.0)
    a, b = plain.next(), mirror.next()
    np.testing.assert_array_equal(a.data[0].asnumpy()[..., ::-1], b.data[0].asnumpy())
    la, lb = a.label[0].asnumpy(), b.label[0].asnumpy()
    np.testing.assert_array_equal(la[:, :4], lb[:, :4])
    for ra, rb in zip(la, lb):
        n = int(ra[3])
        objs_a, objs_b = ra[6:4 + n].reshape(-1, 5), rb[6:4 + n].reshape(-1, 5)
        np.testing.assert_allclose(objs_b[:, 1], 1 - objs_a[:, 3], atol=1e-6)
        np.testing.assert_allclose(objs_b[:, 3], 1 - objs_a[:, 1], atol=1e-6)
        assert np.all(ra[4 + n:] == -1)


def test_unsupported_and_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"rand_crop_prob=0.5 is not supported"):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 rand_crop_prob=0.5)
    with pytest.raises(ValueError, match=r"resize_mode='fit' is not supported"):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 resize_mode='fit')
    with pytest.raises(TypeError, match=r"unsupported argument\(s\) \['rand_crop'\]"):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 rand_crop=True)
    with pytest.raises(MXNetError, match=r'label_pad_width 3 is smaller than the longest '
                                         r'label .* \(17 values\)'):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 label_pad_width=3)
    with pytest.raises(MXNetError, match='7 label values, label_width is 9'):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 label_width=9)


def test_classification_records_are_refused(tmp_path):
    path = str(tmp_path / 'cls.rec')
    rec = mx.recordio.MXRecordIO(path, 'w')
    rec.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, 3.0, 0, 0),
                                   np.zeros((4, 4, 3), np.uint8), img_fmt='.png'))
    rec.close()
    with pytest.raises(MXNetError, match='not a packed detection label'):
        mx.io.ImageDetRecordIter(path_imgrec=path, data_shape=(3, 4, 4), batch_size=1)
