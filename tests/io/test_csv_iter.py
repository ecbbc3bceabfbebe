"""mx.io.CSVIter: shapes, labels, round_batch padding, dtypes and malformed files."""
import numpy as np
import pytest

import mxcy as mx


def write_csv(path, rows):
    path.write_text(''.join(','.join(str(v) for v in row) + '\n' for row in rows))
    return str(path)


@pytest.fixture
def files(tmp_path):
    data = np.arange(5 * 6).reshape(5, 6)
    labels = np.arange(5) + 10
    return (write_csv(tmp_path / 'data.csv', data), write_csv(tmp_path / 'label.csv',
                                                              labels[:, None]), data, labels)


@pytest.mark.parametrize('round_batch', [True, False])
def test_batches_and_padding(files, round_batch):
    data_csv, label_csv, data, labels = files
    it = mx.io.CSVIter(data_csv=data_csv, data_shape=(2, 3), label_csv=label_csv,
                       batch_size=2, round_batch=round_batch)
    assert it.provide_data[0].shape == (2, 2, 3) and it.provide_label[0].shape == (2,)
    for _ in range(2):                                    # two epochs, same content
        batches = list(it)
        assert [b.pad for b in batches] == [0, 0, 1]
        x = np.concatenate([b.data[0].asnumpy() for b in batches])
        y = np.concatenate([b.label[0].asnumpy() for b in batches])
        assert x.dtype == np.float32
        np.testing.assert_array_equal(x[:5], data.reshape(5, 2, 3))
        np.testing.assert_array_equal(y[:5], labels)
        filler = (data[0].reshape(2, 3), labels[0]) if round_batch else (np.zeros((2, 3)), 0)
        np.testing.assert_array_equal(x[5], filler[0])
        assert y[5] == filler[1]
        it.reset()


def test_no_label_file_and_label_shape(files, tmp_path):
    data_csv, _, data, _ = files
    it = mx.io.CSVIter(data_csv=data_csv, data_shape=(6,), batch_size=5)
    batch = next(it)
    np.testing.assert_array_equal(batch.data[0].asnumpy(), data)
    np.testing.assert_array_equal(batch.label[0].asnumpy(), np.zeros(5))
    label2 = write_csv(tmp_path / 'l2.csv', np.arange(10).reshape(5, 2))
    it = mx.io.CSVIter(data_csv=data_csv, data_shape=(6,), label_csv=label2,
                       label_shape=(2,), batch_size=5)
    assert it.provide_label[0].shape == (5, 2)
    np.testing.assert_array_equal(next(it).label[0].asnumpy(), np.arange(10).reshape(5, 2))


@pytest.mark.parametrize('dtype', ['int32', 'int64'])
def test_integer_dtypes(tmp_path, dtype):
    big = 2**40 + 1 if dtype == 'int64' else 7
    path = write_csv(tmp_path / 'i.csv', [[big, -3], [4, 5]])
    it = mx.io.CSVIter(data_csv=path, data_shape=(2,), batch_size=2, dtype=dtype)
    x = next(it).data[0]
    assert x.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(x.asnumpy(), [[big, -3], [4, 5]])


def test_malformed_files(files, tmp_path):
    data_csv, label_csv, _, _ = files
    with pytest.raises(ValueError, match='must hold 4 values, got 6'):
        mx.io.CSVIter(data_csv=data_csv, data_shape=(2, 2), batch_size=2)
    ragged = tmp_path / 'ragged.csv'
    ragged.write_text('1,2\n3\n')
    with pytest.raises(ValueError, match='ragged.csv'):
        mx.io.CSVIter(data_csv=str(ragged), data_shape=(2,), batch_size=1)
    short = write_csv(tmp_path / 'short.csv', [[1], [2]])
    with pytest.raises(ValueError, match='has 5 lines but label_csv'):
        mx.io.CSVIter(data_csv=data_csv, data_shape=(6,), label_csv=short, batch_size=2)
    with pytest.raises(FileNotFoundError, match='not found'):
        mx.io.CSVIter(data_csv=str(tmp_path / 'none.csv'), data_shape=(6,), batch_size=2)
    with pytest.raises(TypeError, match='dtype'):
        mx.io.CSVIter(data_csv=data_csv, data_shape=(6,), batch_size=2, dtype='float16')
    with pytest.raises(TypeError):
        mx.io.CSVIter(data_csv, (6,), batch_size=2)      # keyword arguments only, as MXNet


def test_empty_file_gives_no_batch(tmp_path):
    empty = tmp_path / 'empty.csv'
    empty.write_text('')
    it = mx.io.CSVIter(data_csv=str(empty), data_shape=(3,), batch_size=2)
    assert list(it) == [] and it.provide_data[0].shape == (2, 3)
