"""gluon.data.vision: MNIST, FashionMNIST, CIFAR10 and CIFAR100 read from tiny files in the
standard formats, written here byte by byte (not with mxcy's writer)."""
import gzip
import os
import struct

import numpy as np
import pytest

import mxcy as mx
from mxcy.gluon.data import DataLoader
from mxcy.gluon.data.vision import CIFAR10, CIFAR100, MNIST, FashionMNIST

# MNIST-format images: pixel k of the file is k % 251; labels 7, 0, 9
IMAGES = (np.arange(3 * 28 * 28) % 251).astype(np.uint8).reshape(3, 28, 28)
LABELS = np.array([7, 0, 9], np.uint8)


def write_mnist(root, split='train', gz=True):
    opener = gzip.open if gz else open
    suffix = '.gz' if gz else ''
    with opener(os.path.join(root, f'{split}-images-idx3-ubyte{suffix}'), 'wb') as f:
        f.write(struct.pack('>IIII', 0x803, 3, 28, 28) + IMAGES.tobytes())
    with opener(os.path.join(root, f'{split}-labels-idx1-ubyte{suffix}'), 'wb') as f:
        f.write(struct.pack('>II', 0x801, 3) + LABELS.tobytes())


@pytest.mark.parametrize('cls', [MNIST, FashionMNIST])
@pytest.mark.parametrize('gz', [True, False])
def test_mnist_samples_match_mxnet(tmp_path, cls, gz):
    write_mnist(str(tmp_path), gz=gz)
    d = cls(root=str(tmp_path))
    x, y = d[1]
    # MXNet 1.9.1 on these files: NDArray uint8 (28, 28, 1), label int32 0, len 3,
    # x[0, 5, 0] == 36
    assert isinstance(x, mx.nd.NDArray) and x.dtype == np.uint8 and x.shape == (28, 28, 1)
    assert isinstance(y, np.int32) and y == 0 and len(d) == 3
    assert int(x.asnumpy()[0, 5, 0]) == 36
    np.testing.assert_array_equal(x.asnumpy()[:, :, 0], IMAGES[1])


def test_mnist_test_split_and_transform(tmp_path):
    write_mnist(str(tmp_path), split='t10k')
    d = MNIST(root=str(tmp_path), train=False,
              transform=lambda data, label: (data.astype('float32') / 255, label + 1))
    x, y = d[0]
    # MXNet 1.9.1: float32 image, label 8
    assert x.dtype == np.float32 and y == 8
    with pytest.raises(FileNotFoundError, match='train-images-idx3-ubyte'):
        MNIST(root=str(tmp_path), train=True)


def test_missing_files_say_what_to_put_where(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        MNIST(root=str(tmp_path))
    text = str(err.value)
    assert 'train-images-idx3-ubyte.gz' in text and str(tmp_path) in text
    assert 'https://' in text and 'does not download' in text
    with pytest.raises(FileNotFoundError, match='data_batch_1.bin.*cifar-10-binary.tar.gz'):
        CIFAR10(root=str(tmp_path))
    with pytest.raises(FileNotFoundError, match='test.bin'):
        CIFAR100(root=str(tmp_path), train=False)


def test_mnist_counts_must_agree(tmp_path):
    write_mnist(str(tmp_path), gz=False)
    with open(tmp_path / 'train-labels-idx1-ubyte', 'wb') as f:
        f.write(struct.pack('>II', 0x801, 2) + LABELS[:2].tobytes())
    with pytest.raises(ValueError, match='must hold 3 uint8 labels'):
        MNIST(root=str(tmp_path))


def write_cifar(root, names, label_bytes, rows, seed):
    rng = np.random.RandomState(seed)
    written = {}
    for name in names:
        rec = rng.randint(0, 256, (rows, label_bytes + 3072)).astype(np.uint8)
        rec[:, 0] = rng.randint(0, 10, rows)
        rec.tofile(os.path.join(root, name))
        written[name] = rec
    return written


def test_cifar10(tmp_path):
    names = [f'data_batch_{i}.bin' for i in range(1, 6)] + ['test_batch.bin']
    recs = write_cifar(str(tmp_path), names, 1, 2, 0)
    d = CIFAR10(root=str(tmp_path))
    x, y = d[3]                     # the second record of data_batch_2.bin
    # MXNet 1.9.1 on such files: len 10, NDArray uint8 (32, 32, 3), label int32
    assert len(d) == 10 and x.dtype == np.uint8 and x.shape == (32, 32, 3)
    assert isinstance(y, np.int32)
    raw = recs['data_batch_2.bin'][1]
    assert y == raw[0]
    np.testing.assert_array_equal(x.asnumpy(), raw[1:].reshape(3, 32, 32).transpose(1, 2, 0))
    assert len(CIFAR10(root=str(tmp_path), train=False)) == 2


def test_cifar10_in_the_official_archive_folder(tmp_path):
    folder = tmp_path / 'cifar-10-batches-bin'
    folder.mkdir()
    write_cifar(str(folder), ['test_batch.bin'], 1, 3, 1)
    assert len(CIFAR10(root=str(tmp_path), train=False)) == 3


def test_cifar10_rejects_a_partial_record(tmp_path):
    (tmp_path / 'test_batch.bin').write_bytes(b'\0' * 3000)
    with pytest.raises(ValueError, match='not a whole number of 3073-byte records'):
        CIFAR10(root=str(tmp_path), train=False)


def test_cifar100_coarse_and_fine(tmp_path):
    for name in ('train.bin', 'test.bin'):
        rec = np.random.RandomState(2).randint(0, 256, (3, 3074)).astype(np.uint8)
        rec[:, 0], rec[:, 1] = [1, 2, 3], [50, 60, 70]
        rec.tofile(str(tmp_path / name))
    # MXNet 1.9.1: len 3, coarse label 2 (int32), fine label 60
    coarse = CIFAR100(root=str(tmp_path))
    assert len(coarse) == 3 and coarse[1][1] == 2 and isinstance(coarse[1][1], np.int32)
    assert CIFAR100(root=str(tmp_path), fine_label=True)[1][1] == 60
    x = CIFAR100(root=str(tmp_path), train=False)[2][0]
    np.testing.assert_array_equal(x.asnumpy(), rec[2, 2:].reshape(3, 32, 32).transpose(1, 2, 0))


def test_default_roots_are_mxnets():
    import inspect
    home = os.path.join(os.path.expanduser('~'), '.mxnet')
    if 'MXNET_HOME' not in os.environ:
        assert inspect.signature(MNIST).parameters['root'].default == \
            os.path.join(home, 'datasets', 'mnist')
        assert inspect.signature(CIFAR100).parameters['root'].default == \
            os.path.join(home, 'datasets', 'cifar100')
    assert list(inspect.signature(CIFAR100).parameters) == \
        ['root', 'fine_label', 'train', 'transform']


def test_vision_dataset_through_a_dataloader(tmp_path):
    write_mnist(str(tmp_path))
    loader = DataLoader(MNIST(root=str(tmp_path)), batch_size=2)
    (x0, y0), (x1, y1) = list(loader)
    assert x0.shape == (2, 28, 28, 1) and x0.dtype == np.uint8
    assert y0.dtype == np.int32 and y0.asnumpy().tolist() == [7, 0]
    assert y1.asnumpy().tolist() == [9]
