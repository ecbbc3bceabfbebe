"""``DataLoader``: mini-batches from a Dataset, in this process or in worker processes.

MXNet 1.9.1's arguments and defaults. With ``num_workers=0`` batches are made here; with
``num_workers > 0`` by forked worker processes that hand each batch back through one
shared-memory block (``thread_pool=True``: threads instead, no copies). 0, 1 or more
workers give the same batches, in the same order. How workers fail, time out and are
cleaned up is in ``_workers``: in short, never a hang and never a leaked /dev/shm block.

Each ``iter(loader)`` is one pass with its own workers (forked when the pass starts, so
they see the dataset as it is then; MXNet forked once, in the constructor). With
``auto_reload=True`` the next pass is started (and prefetching) as soon as one ends, as
in MXNet.
"""
import numpy as np

from mxcy import ndarray as nd
from mxcy._ndarray import NDArray
from mxcy.context import Context, cpu_pinned
from mxcy.gluon.data import sampler as _sampler
from mxcy.gluon.data._shm import NDLeaf
from mxcy.gluon.data._workers import MultiWorkerIter, ProcessWorkers, ThreadWorkers
from mxcy.util import is_np_array

__all__ = ['DataLoader', 'default_batchify_fn', 'default_mp_batchify_fn']


def default_batchify_fn(data):
    """Stack a list of samples: NDArrays with ``nd.stack``, tuples column by column (a
    list of batches), anything else through ``np.asarray`` into an NDArray of the same
    dtype (Python ints become int64, floats float64)."""
    if isinstance(data[0], NDArray):
        return nd.stack(*data)
    if isinstance(data[0], tuple):
        return [default_batchify_fn(list(column)) for column in zip(*data)]
    data = np.asarray(data)
    return nd.array(data, dtype=data.dtype)


def default_mp_batchify_fn(data):
    """`default_batchify_fn` with the result in shared CPU memory (``cpu_shared``), as
    MXNet's worker processes made it. mxcy's workers do not need it (they stack with
    NumPy straight into the shared block), but a user may call it."""
    shared = Context('cpu_shared', 0)
    if isinstance(data[0], NDArray):
        out = nd.empty((len(data),) + data[0].shape, dtype=data[0].dtype, ctx=shared)
        return nd.stack(*data, out=out)
    if isinstance(data[0], tuple):
        return [default_mp_batchify_fn(list(column)) for column in zip(*data)]
    data = np.asarray(data)
    return nd.array(data, dtype=data.dtype, ctx=shared)


def _numpy_batchify(data):
    """What a worker process runs for the default batchify: the same stacking in NumPy,
    each array marked to become an NDArray in the parent (no engine in the worker)."""
    if isinstance(data[0], NDArray):
        return NDLeaf(np.stack([x.asnumpy() for x in data]))
    if isinstance(data[0], tuple):
        return [_numpy_batchify(list(column)) for column in zip(*data)]
    return NDLeaf(np.asarray(data))


def _as_in_context(data, ctx):
    if isinstance(data, NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return type(data)(_as_in_context(x, ctx) for x in data) \
            if not hasattr(data, '_fields') else type(data)(*(_as_in_context(x, ctx)
                                                              for x in data))
    return data


def _as_np(batch):
    from mxcy.numpy_extension._op import as_np
    return as_np(batch)


def _check_count(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"DataLoader: {name} must be an int, got {value!r}")
    return int(value)


class DataLoader:
    """Loads mini-batches from `dataset` (a Dataset, or anything with ``len`` and ``[]``).

    Parameters (MXNet 1.9.1's): `batch_size`; `shuffle` (a new order every pass, from
    NumPy's global generator) or a `sampler`; `last_batch` 'keep' (default), 'discard'
    or 'rollover'; or instead of those four a `batch_sampler`; `batchify_fn` (default
    `default_batchify_fn`); `num_workers` worker processes (0: load here); `pin_memory`
    and `pin_device_id` (batches in ``cpu_pinned``); `prefetch` batches in flight
    (default ``2 * num_workers``); `thread_pool` (threads instead of processes);
    `timeout` seconds to wait for one batch before raising (default 120); `auto_reload`
    (start the next pass as soon as one ends).
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None, num_workers=0,
                 pin_memory=False, pin_device_id=0, prefetch=None, thread_pool=False,
                 timeout=120, auto_reload=False):
        self._iter = None
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        if not timeout > 0:
            raise ValueError(f"DataLoader: timeout must be positive, given {timeout}")
        self._timeout = timeout
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("batch_size must be specified unless batch_sampler is "
                                 "specified")
            if sampler is None:
                sampler = _sampler.RandomSampler(len(dataset)) if shuffle else \
                    _sampler.SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size,
                                                  last_batch if last_batch else 'keep')
        elif batch_size is not None or shuffle or sampler is not None or \
                last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must not be "
                             "specified if batch_sampler is specified.")
        self._batch_sampler = batch_sampler
        self._num_workers = max(0, _check_count(num_workers, 'num_workers'))
        self._prefetch = max(0, _check_count(prefetch, 'prefetch') if prefetch is not None
                             else 2 * self._num_workers)
        if batchify_fn is None:
            batchify_fn = default_mp_batchify_fn if self._num_workers > 0 \
                else default_batchify_fn
        self._batchify_fn = batchify_fn
        self.auto_reload = auto_reload
        if self.auto_reload:
            self.refresh()

    def __iter__(self):
        it = self._iter if self._iter is not None else self._prefetch_iter()
        self._iter = None                   # one pass is never iterated twice
        try:
            yield from it
        finally:
            close = getattr(it, 'close', None)
            if close is not None:           # left half-way (or failed): free it now
                close()
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _post(self):
        # under npx.set_np() (when the pass starts) the default batchify gives mx.np arrays
        to_np = is_np_array() and self._batchify_fn in (default_batchify_fn,
                                                        default_mp_batchify_fn)
        if not self._pin_memory:
            return _as_np if to_np else None
        ctx = cpu_pinned(self._pin_device_id)
        if to_np:
            return lambda batch: _as_np(_as_in_context(batch, ctx))
        return lambda batch: _as_in_context(batch, ctx)

    def _prefetch_iter(self):
        post = self._post()
        if self._num_workers == 0:
            return self._same_process_iter(post)
        if self._thread_pool:
            fn = default_batchify_fn if self._batchify_fn is default_mp_batchify_fn \
                else self._batchify_fn
            workers = ThreadWorkers(self._dataset, fn, self._num_workers, self._timeout)
        else:
            fn = _numpy_batchify if self._batchify_fn in (default_batchify_fn,
                                                          default_mp_batchify_fn) \
                else self._batchify_fn
            workers = ProcessWorkers(self._dataset, fn, self._num_workers, self._timeout)
        return MultiWorkerIter(workers, self._batch_sampler, self._prefetch, post)

    def _same_process_iter(self, post):
        for samples in self._batch_sampler:
            batch = self._batchify_fn([self._dataset[i] for i in samples])
            yield post(batch) if post is not None else batch

    def __len__(self):
        return len(self._batch_sampler)

    def refresh(self):
        """Start a new pass now (its workers start prefetching); the next ``iter`` uses it."""
        self.clean()
        self._iter = self._prefetch_iter()

    def clean(self):
        """Drop the pass `refresh` started, if any, freeing its workers."""
        it, self._iter = self._iter, None
        close = getattr(it, 'close', None)
        if close is not None:
            close()

    def __del__(self):
        if getattr(self, '_iter', None) is not None:
            self.clean()
