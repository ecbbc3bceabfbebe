"""Iterators over iterators: ``ResizeIter`` and ``PrefetchingIter`` (MXNet 1.x).

``ResizeIter(data_iter, size, reset_internal=True)``: exactly `size` batches per epoch,
restarting the wrapped iterator when it runs out; ``reset()`` resets the wrapped one
too unless ``reset_internal=False``. A wrapped iterator with no batch at all raises
RuntimeError instead of looping or ending silently.

``PrefetchingIter(iters, rename_data=None, rename_label=None, prefetch_buffer=2)``:
one background thread calls ``next()`` on every wrapped iterator and joins their batches
(data and labels concatenated in order, `pad` and `index` from the first) while the
consumer trains on the current batch. Contract:

* at most `prefetch_buffer` finished batches wait in a bounded buffer, plus one in
  progress; the wrapped iterators are only ever touched by one thread at a time;
* an exception raised by a wrapped iterator (or iterators that end at different
  batches, or report different pads) is re-raised, with its type and traceback, by the
  consumer's ``next()``/``iter_next()``; the epoch then ends until ``reset()``;
* ``reset()`` at any point waits for a fetch in progress, drops the prefetched batches,
  resets the wrapped iterators and starts prefetching the new epoch;
* ``close()`` (also on garbage collection) stops the thread; it is a daemon, so an
  unclosed iterator never blocks interpreter exit.
"""
import collections
import functools
import threading

from mxcy.io.base import DataBatch, DataDesc, DataIter, register

__all__ = ['PrefetchingIter', 'ResizeIter']


class _FromCurrentBatch:
    """getdata/getlabel/getindex/getpad of an iterator that keeps ``current_batch``."""

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


@register
class ResizeIter(_FromCurrentBatch, DataIter):
    """Resize a data iterator to `size` batches per epoch."""

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__()
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"ResizeIter: size must be an int >= 0, got {size!r}")
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, 'default_bucket_key'):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            try:
                self.current_batch = self.data_iter.next()
            except StopIteration:
                raise RuntimeError("ResizeIter: the wrapped iterator yields no batch even "
                                   "right after reset()") from None
        self.cur += 1
        return True

class _Loader:
    """The prefetch thread and its bounded buffer (holds no reference to the iterator
    object, so an abandoned PrefetchingIter is collected and stops its thread)."""

    def __init__(self, iters, combine, capacity):
        self.iters = iters
        self.combine = combine
        self.capacity = capacity
        self.cond = threading.Condition()
        self.buffer = collections.deque()
        self.running = True     # False while the consumer resets the wrapped iterators
        self.stopped = False
        self.busy = False       # a fetch is in progress (outside the lock)
        self.done = False       # the epoch's end or an error is in the buffer
        self.fetched = 0        # batches fetched so far (for tests and debugging)
        self.thread = threading.Thread(target=self._run, name='mxcy-PrefetchingIter',
                                       daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            with self.cond:
                while not self.stopped and (not self.running or self.done or
                                            len(self.buffer) >= self.capacity):
                    self.cond.wait()
                if self.stopped:
                    return
                self.busy = True
            item = self._fetch()
            with self.cond:
                self.busy = False
                if item[0] == 'batch':
                    self.fetched += 1
                else:
                    self.done = True
                self.buffer.append(item)
                self.cond.notify_all()

    def _fetch(self):
        try:
            batches = []
            for it in self.iters:
                try:
                    batches.append(it.next())
                except StopIteration:
                    batches.append(None)
            ended = [i for i, b in enumerate(batches) if b is None]
            if len(ended) == len(batches):
                return ('end', None)
            if ended:
                raise ValueError(f"PrefetchingIter: the wrapped iterators hold different "
                                 f"numbers of batches: iterator(s) {ended} ended, the "
                                 f"others did not")
            return ('batch', self.combine(batches))
        except BaseException as err:     # noqa: B036 -- handed to the consumer thread
            return ('error', err)

    def take(self):
        with self.cond:
            while not self.buffer:
                if self.stopped:
                    raise RuntimeError("PrefetchingIter: the iterator is closed")
                self.cond.wait()
            item = self.buffer.popleft()
            self.cond.notify_all()
            return item

    def pause(self):
        """Stop fetching, wait for a fetch in progress, drop what was prefetched."""
        with self.cond:
            if self.stopped:
                raise RuntimeError("PrefetchingIter: the iterator is closed")
            self.running = False
            while self.busy:
                self.cond.wait()
            self.buffer.clear()
            self.done = False

    def resume(self):
        with self.cond:
            self.running = True
            self.cond.notify_all()

    def close(self, timeout=None):
        with self.cond:
            self.stopped = True
            self.cond.notify_all()
        if threading.current_thread() is not self.thread:
            self.thread.join(timeout)


def _combine(provide_data, provide_label, batches):
    """One DataBatch from the wrapped iterators' batches (their pads must agree)."""
    first = batches[0]
    for i, batch in enumerate(batches[1:], 1):
        if batch.pad != first.pad:
            raise ValueError(f"PrefetchingIter: iterator {i} reports pad {batch.pad} but "
                             f"iterator 0 reports {first.pad}")
    return DataBatch(sum((list(b.data) for b in batches), []),
                     sum((list(b.label or []) for b in batches), []),
                     first.pad, first.index, provide_data=provide_data,
                     provide_label=provide_label)


@register
class PrefetchingIter(_FromCurrentBatch, DataIter):
    """Prefetch batches of one or more iterators on a background thread."""

    def __init__(self, iters, rename_data=None, rename_label=None, prefetch_buffer=2):
        super().__init__()
        if not isinstance(iters, (list, tuple)):
            iters = [iters]
        if not iters:
            raise ValueError("PrefetchingIter: iters must hold at least one iterator")
        for name, renames in (('rename_data', rename_data), ('rename_label', rename_label)):
            if renames is not None and len(renames) != len(iters):
                raise ValueError(f"PrefetchingIter: {name} must hold one dict per iterator "
                                 f"({len(iters)}), got {len(renames)}")
        if isinstance(prefetch_buffer, bool) or not isinstance(prefetch_buffer, int) or \
                prefetch_buffer < 1:
            raise ValueError(f"PrefetchingIter: prefetch_buffer must be an int >= 1, got "
                             f"{prefetch_buffer!r}")
        self.iters = list(iters)
        self.n_iter = len(self.iters)
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.provide_data = self._renamed('provide_data', rename_data)
        self.provide_label = self._renamed('provide_label', rename_label)
        self.batch_size = self.provide_data[0].shape[0] if self.provide_data else 0
        self.current_batch = None
        self._epoch_over = False
        # NOTE: the loader must not reference self, or self would never be collected.
        combine = functools.partial(_combine, self.provide_data, self.provide_label)
        self._loader = _Loader(self.iters, combine, prefetch_buffer)

    def _renamed(self, attr, renames):
        descs = []
        for i, it in enumerate(self.iters):
            rename = renames[i] if renames is not None else {}
            for desc in getattr(it, attr) or []:
                if not isinstance(desc, DataDesc):
                    desc = DataDesc(*desc)
                descs.append(DataDesc(rename.get(desc.name, desc.name), desc.shape,
                                      desc.dtype, desc.layout))
        return descs

    def reset(self):
        self._loader.pause()
        try:
            for it in self.iters:
                it.reset()
        except BaseException:
            self._epoch_over = True       # stay paused; a later reset() tries again
            raise
        self._epoch_over = False
        self.current_batch = None
        self._loader.resume()

    def iter_next(self):
        if self._epoch_over:
            return False
        kind, value = self._loader.take()
        if kind == 'batch':
            self.current_batch = value
            return True
        self._epoch_over = True
        self.current_batch = None
        if kind == 'error':
            raise value
        return False

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration


    def close(self, timeout=None):
        """Stop the prefetch thread (waits up to `timeout` seconds for it to end)."""
        self._loader.close(timeout)

    def __del__(self):
        loader = getattr(self, '_loader', None)
        if loader is not None:
            loader.close(timeout=0)
