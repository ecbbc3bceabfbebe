"""IDX reading/writing (plain and gzipped, corrupt files) and mx.io.MNISTIter."""
import gzip
import struct

import numpy as np
import pytest

import mxcy as mx
from mxcy.io.mnist import read_idx, write_idx

N, ROWS, COLS = 10, 4, 5


@pytest.fixture
def mnist_files(tmp_path):
    """Small MNIST-format files: image i is filled with value 10*i + pixel position."""
    rng = np.random.RandomState(0)
    images = rng.randint(0, 256, size=(N, ROWS, COLS)).astype(np.uint8)
    labels = (np.arange(N) % 10).astype(np.uint8)
    image = write_idx(tmp_path / 'train-images-idx3-ubyte', images)
    label = write_idx(tmp_path / 'train-labels-idx1-ubyte.gz', labels)
    return image, label, images, labels


@pytest.mark.parametrize('dtype', [np.uint8, np.int8, np.int16, np.int32, np.float32,
                                   np.float64])
@pytest.mark.parametrize('suffix', ['', '.gz'])
def test_idx_round_trip(tmp_path, dtype, suffix):
    rng = np.random.RandomState(1)
    arr = (rng.standard_normal((3, 4, 2)) * 100).astype(dtype)
    path = str(tmp_path / f'a.idx{suffix}')
    assert write_idx(path, arr) == path
    with open(path, 'rb') as f:
        head = f.read(4)
    assert (head[:2] == b'\x1f\x8b') == (suffix == '.gz')
    back = read_idx(path)
    assert back.dtype == np.dtype(dtype) and back.dtype.isnative and back.shape == (3, 4, 2)
    np.testing.assert_array_equal(back, arr)
    back[0, 0, 0] = 1                                      # a writable array


def test_idx_matches_the_mnist_layout(tmp_path):
    labels = np.array([7, 2, 1], np.uint8)
    path = tmp_path / 'labels'
    write_idx(path, labels)
    # the bytes of a real MNIST label file: magic 2049, count, values
    assert path.read_bytes() == struct.pack('>II', 2049, 3) + bytes([7, 2, 1])
    write_idx(path, np.zeros((2, 28, 28), np.uint8))
    assert path.read_bytes()[:16] == struct.pack('>IIII', 2051, 2, 28, 28)
    write_idx(path, np.array([1.5], np.float32))
    assert path.read_bytes() == bytes([0, 0, 0x0D, 1]) + struct.pack('>I', 1) + \
        struct.pack('>f', 1.5)


def test_gzip_is_detected_by_magic_not_name(tmp_path):
    arr = np.arange(6, dtype=np.int32).reshape(2, 3)
    path = tmp_path / 'plain-name'
    write_idx(path, arr, compress=True)
    np.testing.assert_array_equal(read_idx(path), arr)
    write_idx(tmp_path / 'x.gz', arr, compress=False)
    np.testing.assert_array_equal(read_idx(tmp_path / 'x.gz'), arr)


def _header(code, dims):
    return bytes([0, 0, code, len(dims)]) + struct.pack(f'>{len(dims)}I', *dims)


@pytest.mark.parametrize('content, match', [
    (b'', 'truncated'),
    (b'\x00\x00', 'truncated'),
    (b'\x01\x00\x08\x01' + struct.pack('>I', 1) + b'\x00', 'not an IDX file'),
    (b'\x00\x00\x07\x01' + struct.pack('>I', 1) + b'\x00', 'unknown IDX type code 0x07'),
    (b'\x00\x00\x08\x00', 'declares 0 dimensions'),
    (b'\x00\x00\x08\x03' + struct.pack('>I', 5), 'ends inside them'),
    (_header(0x08, (10, 28, 28)) + bytes(100), 'truncated'),
    (_header(0x08, (3,)) + bytes(4), 'trailing bytes'),
    (_header(0x0D, (2,)) + bytes(7), 'truncated'),
    # a header claiming ~2**62 bytes must fail before any allocation
    (_header(0x08, (2**31, 2**31)) + bytes(10), 'truncated'),
])
@pytest.mark.parametrize('compressed', [False, True])
def test_corrupt_idx_files(tmp_path, content, match, compressed):
    path = tmp_path / 'bad'
    path.write_bytes(gzip.compress(content) if compressed else content)
    if compressed and content[4:8] == struct.pack('>I', 2**31):
        match = 'more than a gzip file'            # caught from the size bound, unread
    with pytest.raises(ValueError, match=match) as info:
        read_idx(path, 'MNISTIter: image')
    assert str(path) in str(info.value) and 'MNISTIter: image' in str(info.value)


def test_truncated_and_damaged_gzip(tmp_path):
    path = tmp_path / 'a.gz'
    write_idx(path, np.random.RandomState(0).randint(0, 256, (50, 28, 28)).astype(np.uint8))
    blob = path.read_bytes()
    path.write_bytes(blob[:len(blob) // 2])
    with pytest.raises(ValueError, match='corrupt or truncated gzip|truncated'):
        read_idx(path)
    damaged = bytearray(blob)
    damaged[len(blob) // 2] ^= 0xFF
    path.write_bytes(bytes(damaged))
    with pytest.raises(ValueError, match='corrupt'):
        read_idx(path)
    damaged = bytearray(blob)
    damaged[-6] ^= 0x01                                   # the CRC of the data
    path.write_bytes(bytes(damaged))
    with pytest.raises(ValueError, match='corrupt'):
        read_idx(path)


def test_write_idx_rejects_unsupported(tmp_path):
    with pytest.raises(TypeError, match='unsupported dtype'):
        write_idx(tmp_path / 'x', np.zeros(3, np.int64))
    with pytest.raises(ValueError, match='1 to 255 dimensions'):
        write_idx(tmp_path / 'x', np.float32(1))


def test_mnist_iter_shapes_values_and_order(mnist_files):
    image, label, images, labels = mnist_files
    it = mx.io.MNISTIter(image=image, label=label, batch_size=3, shuffle=False, silent=True)
    assert it.provide_data[0].name == 'data' and it.provide_data[0].shape == (3, 1, ROWS, COLS)
    assert it.provide_label[0].name == 'softmax_label' and it.provide_label[0].shape == (3,)
    batches = list(it)
    assert len(batches) == N // 3                           # the tail is dropped, as MXNet
    x = np.concatenate([b.data[0].asnumpy() for b in batches])
    y = np.concatenate([b.label[0].asnumpy() for b in batches])
    assert x.dtype == np.float32 and y.dtype == np.float32
    np.testing.assert_array_equal(x[:, 0], images[:9].astype(np.float32) / 256)
    np.testing.assert_array_equal(y, labels[:9].astype(np.float32))
    assert 0 <= x.min() and x.max() < 1

    flat = mx.io.MNISTIter(image=image, label=label, batch_size=5, shuffle=False, flat=True,
                           silent=True)
    assert flat.provide_data[0].shape == (5, ROWS * COLS)
    np.testing.assert_array_equal(next(flat).data[0].asnumpy(),
                                  images[:5].reshape(5, -1).astype(np.float32) / 256)
    shaped = mx.io.MNISTIter(image=image, label=label, batch_size=2, input_shape=(20, 1),
                             shuffle=False, silent=True)
    assert next(shaped).data[0].shape == (2, 20, 1)
    padded = mx.io.MNISTIter(image=image, label=label, batch_size=4, shuffle=False,
                             last_batch_handle='pad', silent=True)
    assert [b.pad for b in padded] == [0, 0, 2]


def test_mnist_iter_shuffles_each_epoch_from_seed(mnist_files):
    image, label, _, labels = mnist_files

    def epochs(seed):
        np.random.seed(123)          # the global seed must not matter
        it = mx.io.MNISTIter(image=image, label=label, batch_size=N, seed=seed, silent=True)
        out = []
        for _ in range(3):
            batch = next(it)
            out.append(batch.label[0].asnumpy())
            np.testing.assert_array_equal(labels[batch.index], out[-1])
            it.reset()
        return out

    first = epochs(0)
    for order in first:
        np.testing.assert_array_equal(np.sort(order), np.sort(labels.astype(np.float32)))
    assert not np.array_equal(first[0], first[1]) or not np.array_equal(first[1], first[2])
    for a, b in zip(first, epochs(0)):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(first, epochs(1)))


@pytest.mark.parametrize('num_parts', [1, 2, 3])
def test_mnist_iter_sharding(mnist_files, num_parts):
    image, label, images, _ = mnist_files
    shards = []
    for part in range(num_parts):
        it = mx.io.MNISTIter(image=image, label=label, batch_size=1, shuffle=False,
                             num_parts=num_parts, part_index=part, silent=True)
        shards.append(np.concatenate([b.data[0].asnumpy() for b in it]))
    sizes = [len(s) for s in shards]
    assert sum(sizes) == N and max(sizes) - min(sizes) <= 1
    np.testing.assert_array_equal(np.concatenate(shards)[:, 0],
                                  images.astype(np.float32) / 256)


def test_mnist_iter_errors(mnist_files, tmp_path):
    image, label, _, _ = mnist_files
    with pytest.raises(ValueError, match='part_index'):
        mx.io.MNISTIter(image=image, label=label, num_parts=2, part_index=2)
    with pytest.raises(ValueError, match='num_parts'):
        mx.io.MNISTIter(image=image, label=label, num_parts=0)
    with pytest.raises(ValueError, match='must be an IDX3 uint8'):
        mx.io.MNISTIter(image=label, label=label)
    with pytest.raises(ValueError, match='must be an IDX1 uint8'):
        mx.io.MNISTIter(image=image, label=image)
    short = write_idx(tmp_path / 'short-labels', np.zeros(N - 1, np.uint8))
    with pytest.raises(ValueError, match=f'holds {N} images but label holds {N - 1}'):
        mx.io.MNISTIter(image=image, label=short)
    with pytest.raises(FileNotFoundError, match='not found'):
        mx.io.MNISTIter(image=str(tmp_path / 'missing'), label=label)
    with pytest.raises(ValueError, match='input_shape'):
        mx.io.MNISTIter(image=image, label=label, input_shape=(3, 3))
    with pytest.raises(TypeError):
        mx.io.MNISTIter(image, label)                 # keyword arguments only, as MXNet


def test_mnist_iter_finds_the_gzipped_file(mnist_files):
    image, label, images, _ = mnist_files
    # label was written as ...idx1-ubyte.gz: the plain name finds it
    it = mx.io.MNISTIter(image=image, label=label[:-3], batch_size=N, shuffle=False,
                         silent=True)
    assert next(it).data[0].shape == (N, 1, ROWS, COLS)
