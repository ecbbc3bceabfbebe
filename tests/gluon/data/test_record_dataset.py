"""gluon.data.RecordFileDataset: MXNet-written files, and DataLoader worker processes."""
import json
import os

import numpy as np
import pytest

import mxcy as mx
from mxcy.gluon.data import DataLoader, RecordFileDataset

FILES = os.path.join(os.path.dirname(__file__), '..', '..', 'mxnet_files', 'recordio')


def test_reads_mxnet_file():
    with open(os.path.join(FILES, 'expected.json')) as f:
        expected = json.load(f)
    ds = RecordFileDataset(os.path.join(FILES, 'data.rec'))
    assert len(ds) == len(expected) == 19
    assert ds.idx_file.endswith('data.idx')
    assert [ds[i] for i in range(len(ds))] == [bytes.fromhex(e['hex']) for e in expected]
    assert ds[-1] == bytes.fromhex(expected[-1]['hex'])
    header, payload = mx.recordio.unpack(ds[16])
    np.testing.assert_array_equal(header.label, [1.0, 2.5, -3.0])
    assert payload == b'multi'
    with pytest.raises(IndexError):
        ds[19]


def _write(tmp_path, n):
    uri = str(tmp_path / 'samples.rec')
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / 'samples.idx'), uri, 'w')
    for i in range(n):
        # records of different lengths, so a reader at a wrong offset fails or differs
        payload = np.full(i % 7 + 1, i, dtype=np.int32).tobytes()
        rec.write_idx(i, mx.recordio.pack((0, float(i), i, 0), payload))
    rec.close()
    return uri


def _batchify(samples):
    """(label, id, payload sum) per sample."""
    out = []
    for s in samples:
        h, payload = mx.recordio.unpack(s)
        out.append([h.label, h.id, np.frombuffer(payload, np.int32).sum()])
    return np.array(out, dtype=np.float64)


@pytest.mark.parametrize('num_workers', [0, 2])
def test_dataloader_workers(tmp_path, num_workers):
    n = 120
    ds = RecordFileDataset(_write(tmp_path, n))
    loader = DataLoader(ds, batch_size=8, shuffle=True, num_workers=num_workers,
                        batchify_fn=_batchify)
    for _ in range(2):                      # two epochs, new workers each pass
        rows = np.concatenate([b for b in loader])
        rows = rows[np.argsort(rows[:, 1])]
        i = np.arange(n)
        np.testing.assert_array_equal(rows[:, 0], i)
        np.testing.assert_array_equal(rows[:, 1], i)
        np.testing.assert_array_equal(rows[:, 2], i * (i % 7 + 1))
    assert ds[5] == mx.recordio.pack((0, 5.0, 5, 0), np.full(6, 5, np.int32).tobytes())
