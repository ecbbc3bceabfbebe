"""Datasets: anything with ``__getitem__`` and ``__len__``, plus MXNet 1.9.1's helpers.

``Dataset`` gives every dataset ``transform`` / ``transform_first`` (lazy by default),
``filter``, ``shard``, ``take`` and ``sample``, each returning a new dataset that indexes
into the original one. ``SimpleDataset`` wraps a list or array; ``ArrayDataset`` zips
several of them into tuples (a 1-D NDArray is held as NumPy, as MXNet did, so its items
are NumPy scalars rather than 0-d arrays).

``RecordFileDataset`` gives the raw records of a ``.rec`` file through its ``.idx``; its
reader reopens the file in a DataLoader worker process (``MXRecordIO``'s per-process
rule), so workers never share a file offset.
"""
import operator
import os

from mxcy import recordio
from mxcy._ndarray import NDArray
from mxcy.gluon.data.sampler import FilterSampler, Sampler, SequentialSampler

__all__ = ['Dataset', 'SimpleDataset', 'ArrayDataset', 'RecordFileDataset']


class Dataset:
    """Abstract dataset: subclasses define ``__getitem__(idx)`` and ``__len__()``."""

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def __iter__(self):
        # by length, not until an IndexError: a dataset that computes its samples (and
        # takes any index) would otherwise be iterated forever by filter or list()
        for i in range(len(self)):
            yield self[i]

    def filter(self, fn):
        """The samples for which ``fn(sample)`` is true (scanned once, now). On a lazily
        transformed dataset `fn` sees transformed samples, and the transform runs again
        whenever a kept sample is read."""
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Contiguous shard `index` of `num_shards` (the first ``len % num_shards`` shards
        are one sample longer). Shard before shuffling, so shards are disjoint."""
        num_shards, index = _as_int(num_shards, 'num_shards'), _as_int(index, 'index')
        if num_shards < 1:
            raise ValueError(f"shard: num_shards must be positive, got {num_shards}")
        if not 0 <= index < num_shards:
            raise ValueError(f"shard: index must be in [0, {num_shards}), got {index}")
        base, rest = divmod(len(self), num_shards)
        start = base * index + min(index, rest)
        return _SampledDataset(self, SequentialSampler(base + (index < rest), start))

    def take(self, count):
        """The first `count` samples (all of them when `count` is None or too large)."""
        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices `sampler` yields (read once, now)."""
        if not isinstance(sampler, Sampler):
            raise TypeError(f"Invalid sampler type: {type(sampler)}. Expected "
                            f"gluon.data.Sampler instead.")
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """Each sample passed through `fn` (a tuple sample is unpacked into arguments).
        ``lazy=False`` transforms everything now, once: a random `fn` then gives the same
        result in every epoch."""
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn, lazy=True):
        """Like `transform`, but only the first element of each sample goes through
        `fn` (typically the data, leaving the label as is)."""
        return self.transform(_TransformFirstClosure(fn), lazy)


def _as_int(value, name):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"shard: {name} must be an int, got {value!r}") from None


class SimpleDataset(Dataset):
    """A dataset over any object with ``len()`` and ``[]`` (a list, an array ...)."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """A class rather than a closure, so the transform pickles (spawned workers)."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(sampler)

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Zips dataset-like objects of equal length: sample i is ``(a[i], b[i], ...)``, or
    ``a[i]`` when there is only one."""

    def __init__(self, *args):
        if not args:
            raise ValueError("ArrayDataset needs at least 1 array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise ValueError(f"All arrays must have the same length; array[0] has "
                                 f"length {self._length} while array[{i}] has {len(data)}.")
            if isinstance(data, NDArray) and data.ndim == 1:
                data = data.asnumpy()       # items are then NumPy scalars, as in MXNet
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """The records of RecordIO file `filename` (bytes), in the order of its index file
    (the same path with ``.idx`` for the extension)."""

    def __init__(self, filename):
        self.idx_file = os.path.splitext(filename)[0] + '.idx'
        self.filename = filename
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, 'r')

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)
