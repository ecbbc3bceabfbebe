"""gluon.data.vision.ImageRecordDataset and ImageFolderDataset."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError
from mxcy.gluon.data.vision import ImageFolderDataset, ImageRecordDataset, transforms

from tests.image._files import EXPECTED, REC, copy_rec, path


def test_image_record_dataset_reads_mxnet_records():
    ds = ImageRecordDataset(REC)
    assert len(ds) == 5
    rows = EXPECTED['rec_uint8_data'].reshape(-1, 3, 20, 20)
    for k in range(5):
        img, label = ds[k]
        assert isinstance(img, mx.nd.NDArray) and img.dtype == np.uint8 and label == k
        a = img.asnumpy()
        y, x = (a.shape[0] - 20) // 2, (a.shape[1] - 20) // 2
        assert np.abs(a[y:y + 20, x:x + 20].transpose(2, 0, 1).astype(int) - rows[k]).max() <= 2
    assert ImageRecordDataset(REC, flag=0)[0][0].shape[2] == 1
    ds = ImageRecordDataset(REC, transform=lambda im, lab: (im.shape, lab * 2))
    assert ds[1] == ((30, 24, 3), 2.0)
    with pytest.raises(IndexError, match='index 5 out of range for the 5 records'):
        ds[5]


def test_image_record_dataset_bad_record_and_loader(tmp_path):
    rec, idx = copy_rec(tmp_path)
    with open(idx) as f:
        offsets = [int(line.split('\t')[1]) for line in f]
    with open(rec, 'r+b') as f:                        # damage record 3's JPEG bytes
        f.seek(offsets[3] + 8 + 24)
        f.write(b'\0' * 64)
    ds = ImageRecordDataset(rec)
    with pytest.raises(MXNetError, match=r"images\.rec', record 3 \(key 3\).*decoding failed"):
        ds[3]
    loader = mx.gluon.data.DataLoader(
        ImageRecordDataset(REC).transform_first(transforms.Compose(
            [transforms.Resize(16), transforms.ToTensor()])), batch_size=2, num_workers=2)
    shapes = [(d.shape, lab.asnumpy().tolist()) for d, lab in loader]
    assert shapes == [((2, 3, 16, 16), [0, 1]), ((2, 3, 16, 16), [2, 3]),
                      ((1, 3, 16, 16), [4])]


def test_image_folder_dataset(tmp_path):
    ds = ImageFolderDataset(path('folder'))
    assert ds.synsets == ['a', 'b']
    assert [lab for _, lab in ds.items] == [0, 0, 0, 1, 1]
    img, label = ds[2]
    np.testing.assert_array_equal(img.asnumpy(), EXPECTED['decode2'])
    assert label == 0
    (tmp_path / 'c').mkdir()
    (tmp_path / 'c' / 'notes.txt').write_text('x')
    (tmp_path / 'stray.jpg').write_bytes(b'')
    with pytest.warns(UserWarning, match='notes.txt'):
        ds = ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ['c'] and len(ds) == 0
    with pytest.raises(FileNotFoundError, match='is not a folder'):
        ImageFolderDataset(str(tmp_path / 'missing'))
