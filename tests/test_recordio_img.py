"""mx.recordio.pack_img / unpack_img, and reading records packed by MXNet 1.9.1."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError

from tests.image._files import IDX, REC, EXPECTED


def test_unpack_img_reads_mxnet_pack_img_records():
    rec = mx.recordio.MXIndexedRecordIO(IDX, REC, 'r')
    mxnet_rows = EXPECTED['rec_uint8_data'].reshape(-1, 3, 20, 20)   # centre 20x20 crops
    for k in rec.keys:
        header, img = mx.recordio.unpack_img(rec.read_idx(k))
        assert header.label == float(k) and header.id == k
        y, x = (img.shape[0] - 20) // 2, (img.shape[1] - 20) // 2
        crop = img[y:y + 20, x:x + 20, ::-1].transpose(2, 0, 1)
        assert np.abs(crop.astype(int) - mxnet_rows[k]).max() <= 2


@pytest.mark.parametrize('fmt,quality', [('.jpg', 100), ('.png', 3), ('.png', 95)])
def test_pack_img_round_trip(fmt, quality):
    y, x = np.mgrid[0:9, 0:11]
    img = np.stack([x * 20, y * 25, x * 5 + y * 10], -1).astype(np.uint8)     # smooth
    s = mx.recordio.pack_img(mx.recordio.IRHeader(0, [1.0, 2.0], 5, 6), img, quality, fmt)
    header, out = mx.recordio.unpack_img(s)
    assert header.flag == 2 and header.label.tolist() == [1.0, 2.0] and header.id == 5
    tol = 0 if fmt == '.png' else 20          # JPEG: 4:2:0 chroma subsampling
    assert np.abs(out.astype(int) - img).max() <= tol
    gray = mx.recordio.unpack_img(s, iscolor=0)[1]
    assert gray.shape == (9, 11)


def test_bad_payloads_raise():
    with pytest.raises(ValueError, match="img_fmt must be"):
        mx.recordio.pack_img(mx.recordio.IRHeader(0, 1, 0, 0), np.zeros((2, 2, 3), np.uint8),
                             img_fmt='.gif')
    s = mx.recordio.pack(mx.recordio.IRHeader(0, 1, 0, 0), b'garbage')
    with pytest.raises(MXNetError, match='7-byte payload is not a decodable image'):
        mx.recordio.unpack_img(s)
