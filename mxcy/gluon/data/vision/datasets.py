"""MNIST, FashionMNIST, CIFAR10 and CIFAR100 read from their standard files in `root`;
ImageRecordDataset (a ``.rec`` of images) and ImageFolderDataset (class folders).

Samples are MXNet 1.9.1's: ``(image, label)`` with the image an HWC uint8 NDArray
((28, 28, 1) or (32, 32, 3)) and the label a NumPy int32; ``transform(image, label)``
replaces the pair when given.

No network: where MXNet downloaded a missing file, this raises FileNotFoundError naming
the file, the folder to put it in and where MXNet fetched it from. The default `root`
is MXNet's, ``$MXNET_HOME/datasets/<name>`` (``~/.mxnet/datasets/<name>``). MNIST files
may be plain or gzipped (any of ``train-images-idx3-ubyte`` or ``...-ubyte.gz``), read
with ``mx.io.read_idx``, which checks each file against its size. CIFAR files are the
"binary version": ``data_batch_1.bin`` ... ``data_batch_5.bin`` and ``test_batch.bin``
(CIFAR-10) or ``train.bin`` / ``test.bin`` (CIFAR-100), in `root` or in the folder the
official archive unpacks to (``cifar-10-batches-bin`` / ``cifar-100-binary``). Files
are not checked against MXNet's SHA-1 sums, so subsets and regenerated files load.
"""
import os
import warnings

import numpy as np

from mxcy import recordio
from mxcy.base import MXNetError
from mxcy.gluon.data.dataset import Dataset, RecordFileDataset
from mxcy.image.image import imdecode, imread
from mxcy.io.mnist import read_idx
from mxcy.ndarray.utils import array

__all__ = ['MNIST', 'FashionMNIST', 'CIFAR10', 'CIFAR100', 'ImageRecordDataset',
           'ImageFolderDataset']

_REPO = 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/gluon/dataset/'


def _data_dir():
    return os.getenv('MXNET_HOME', os.path.join(os.path.expanduser('~'), '.mxnet'))


def _missing(what, names, root, namespace, archive=None):
    src = f"{_REPO}{namespace}/{archive or names[0]}"
    raise FileNotFoundError(
        f"{what}: {' or '.join(names)} not found in {root}. mxcy does not download: "
        f"put the file there (MXNet fetched it from {src}"
        + (", an archive to unpack there)" if archive else ")")
        + ", or pass root= the folder that holds it.")


class _LocalDataset(Dataset):
    """Images as one NDArray, labels as one NumPy int32 array."""

    def __init__(self, root, transform):
        self._root = os.path.expanduser(os.fspath(root))
        self._transform = transform
        self._data, self._label = self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError


class MNIST(_LocalDataset):
    """MNIST handwritten digits: (28, 28, 1) uint8 images and int32 labels, from
    ``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte`` (``t10k-...`` with
    ``train=False``), gzipped or not."""
    _namespace = 'mnist'

    def __init__(self, root=os.path.join(_data_dir(), 'datasets', 'mnist'), train=True,
                 transform=None):
        self._train = train
        super().__init__(root, transform)

    def _find(self, stem):
        names = [stem + '.gz', stem]
        for name in names:
            path = os.path.join(self._root, name)
            if os.path.isfile(path):
                return path
        return _missing(type(self).__name__, names, self._root, self._namespace)

    def _get_data(self):
        split = 'train' if self._train else 't10k'
        what = type(self).__name__
        images = read_idx(self._find(f'{split}-images-idx3-ubyte'), what)
        labels = read_idx(self._find(f'{split}-labels-idx1-ubyte'), what)
        if images.dtype != np.uint8 or images.ndim != 3:
            raise ValueError(f"{what}: the image file must hold uint8 images (N, rows, cols), "
                             f"got {images.dtype} of shape {images.shape}")
        if labels.dtype != np.uint8 or labels.shape != images.shape[:1]:
            raise ValueError(f"{what}: the label file must hold {len(images)} uint8 labels, "
                             f"got {labels.dtype} of shape {labels.shape}")
        images = images.reshape(images.shape + (1,))
        return array(images, dtype=np.uint8), labels.astype(np.int32)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, a drop-in replacement for MNIST (same files, formats)."""
    _namespace = 'fashion-mnist'

    def __init__(self, root=os.path.join(_data_dir(), 'datasets', 'fashion-mnist'),
                 train=True, transform=None):
        super().__init__(root, train, transform)


class CIFAR10(_LocalDataset):
    """CIFAR-10: (32, 32, 3) uint8 images and int32 labels, from the binary version's
    ``data_batch_1.bin`` ... ``data_batch_5.bin`` (``test_batch.bin`` with
    ``train=False``): records of 1 label byte and 3072 pixel bytes (CHW)."""
    _namespace = 'cifar10'
    _archive = ('cifar-10-binary.tar.gz', 'cifar-10-batches-bin')
    _label_bytes = 1

    def __init__(self, root=os.path.join(_data_dir(), 'datasets', 'cifar10'), train=True,
                 transform=None):
        self._train = train
        super().__init__(root, transform)

    def _files(self):
        if self._train:
            return [f'data_batch_{i}.bin' for i in range(1, 6)]
        return ['test_batch.bin']

    def _label_column(self):
        return 0

    def _find(self, name):
        for folder in (self._root, os.path.join(self._root, self._archive[1])):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                return path
        return _missing(type(self).__name__, [name], self._root, self._namespace,
                        self._archive[0])

    def _read_batch(self, path):
        record = self._label_bytes + 3072
        size = os.path.getsize(path)
        if size == 0 or size % record:
            raise ValueError(f"{type(self).__name__}: {path}: {size} bytes is not a whole "
                             f"number of {record}-byte records")
        rows = np.fromfile(path, dtype=np.uint8).reshape(-1, record)
        images = rows[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, rows[:, self._label_column()].astype(np.int32)

    def _get_data(self):
        parts = [self._read_batch(self._find(name)) for name in self._files()]
        images = np.concatenate([p[0] for p in parts])
        labels = np.concatenate([p[1] for p in parts])
        return array(images, dtype=np.uint8), labels


class CIFAR100(CIFAR10):
    """CIFAR-100: records of a coarse label byte, a fine label byte and 3072 pixels, in
    ``train.bin`` / ``test.bin``; `fine_label` picks the 100 fine classes instead of the
    20 coarse ones."""
    _namespace = 'cifar100'
    _archive = ('cifar-100-binary.tar.gz', 'cifar-100-binary')
    _label_bytes = 2

    def __init__(self, root=os.path.join(_data_dir(), 'datasets', 'cifar100'),
                 fine_label=False, train=True, transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _files(self):
        return ['train.bin' if self._train else 'test.bin']

    def _label_column(self):
        return 1 if self._fine_label else 0


class ImageRecordDataset(RecordFileDataset):
    """Images and labels from a ``.rec`` file made by im2rec (its ``.idx`` beside it):
    ``(image, label)`` with the image decoded by ``mx.image.imdecode(.., flag)`` (HWC
    uint8 NDArray) and the label the record header's (a float, or a float32 array for
    multi-label records); ``transform(image, label)`` replaces the pair when given."""

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"ImageRecordDataset: index {idx} out of range for the {n} "
                             f"records of {self.filename!r}")
        key = self._record.keys[idx]
        try:
            record = self._record.read_idx(key)
            header, img = recordio.unpack(record)
            img = imdecode(img, self._flag)
        except MXNetError as err:
            raise MXNetError(f"ImageRecordDataset: {self.filename!r}, record {idx} (key "
                             f"{key}): {err}") from None
        if self._transform is not None:
            return self._transform(img, header.label)
        return img, header.label


class ImageFolderDataset(Dataset):
    """Images in class folders: ``root/<class>/<image>``; ``synsets`` lists the class
    folders (sorted; label = position), ``items`` the (path, label) pairs. Files with an
    extension other than .jpg/.jpeg/.png are skipped with a warning."""
    _exts = ('.jpg', '.jpeg', '.png')

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(os.fspath(root))
        self._flag = flag
        self._transform = transform
        if not os.path.isdir(self._root):
            raise FileNotFoundError(f"ImageFolderDataset: {self._root!r} is not a folder")
        self.synsets, self.items = [], []
        for folder in sorted(os.listdir(self._root)):
            path = os.path.join(self._root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"ImageFolderDataset: ignoring {path}, which is not a folder",
                              stacklevel=2)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for name in sorted(os.listdir(path)):
                fname = os.path.join(path, name)
                if os.path.splitext(name)[1].lower() not in self._exts:
                    warnings.warn(f"ImageFolderDataset: ignoring {fname} of unknown type "
                                  f"(only {', '.join(self._exts)} are read)", stacklevel=2)
                    continue
                self.items.append((fname, label))

    def __getitem__(self, idx):
        path, label = self.items[idx]
        img = imread(path, self._flag)
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)
