"""Samplers: iterables of sample indices (or of batches of them) for a DataLoader.

MXNet 1.9.1's set: Sampler, SequentialSampler, RandomSampler, FilterSampler and
BatchSampler. Where MXNet accepted a bad `last_batch` or `batch_size` and failed only
when iterated, these raise at construction, naming the argument.
"""
import numpy as np

__all__ = ['Sampler', 'SequentialSampler', 'RandomSampler', 'FilterSampler', 'BatchSampler']

LAST_BATCH = ('keep', 'discard', 'rollover')


class Sampler:
    """Base class: a sampler defines ``__iter__`` (indices) and ``__len__``."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``start, start + 1, ..., start + length - 1``."""

    def __init__(self, length, start=0):
        self._length = length
        self._start = start

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """A permutation of ``range(length)``, drawn anew at every iteration from NumPy's
    global generator (so ``np.random.seed`` makes epochs reproducible, as in MXNet)."""

    def __init__(self, length):
        self._length = length

    def __iter__(self):
        order = np.arange(self._length)
        np.random.shuffle(order)
        return iter(order)

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of `dataset` for which ``fn(sample)`` is true; the
    dataset is scanned once, at construction."""

    def __init__(self, fn, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


def _check_batch_size(batch_size):
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    return int(batch_size)


def check_last_batch(last_batch):
    if last_batch not in LAST_BATCH:
        raise ValueError(f"last_batch must be one of 'keep', 'discard', or 'rollover', "
                         f"got {last_batch!r}")
    return last_batch


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of `batch_size`.

    An incomplete last batch is yielded ('keep'), dropped ('discard') or carried to the
    front of the next iteration ('rollover'). ``len`` is the number of batches the next
    iteration yields (with 'rollover' it counts the carried indices too).
    """

    def __init__(self, sampler, batch_size, last_batch='keep'):
        self._sampler = sampler
        self._batch_size = _check_batch_size(batch_size)
        self._last_batch = check_last_batch(last_batch)
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == 'keep':
                yield batch
            elif self._last_batch == 'rollover':
                self._prev = batch

    def __len__(self):
        b = self._batch_size
        if self._last_batch == 'keep':
            return (len(self._sampler) + b - 1) // b
        if self._last_batch == 'discard':
            return len(self._sampler) // b
        return (len(self._prev) + len(self._sampler)) // b
