"""DataLoader workers: processes (or threads) that load batches, and the parent's side.

One worker pool lives for one pass over the data (one iterator), so a pool broken by a
dead or stalled worker is never reused and each pass forks workers that see the dataset
as it is now. Batch ``i`` goes to worker ``i % num_workers``; each worker answers in
order on its own pipe, so the parent waits on exactly one worker for each batch and can
tell which one failed.

Never a hang (MXNet's pool hung on a killed worker until its timeout, mx#13792,
mx#18224): the parent waits on the worker's result pipe AND its process sentinel, with
the loader's `timeout`. A worker that raised, died or stalled becomes an exception in the
parent naming the worker and the batch; then the pool is closed.

Never a leak (mx#9259): ``close`` terminates the workers (SIGTERM, then SIGKILL), and only
then unlinks the shared-memory blocks of batches sent and not read, by name; it runs on
the normal end, on any exception (KeyboardInterrupt included), when an iterator left
half-way is garbage-collected, and at interpreter exit (``weakref.finalize``).

Workers ignore SIGINT (Ctrl-C reaches the whole process group; the parent cleans up) and
leave when the parent dies (they poll its pid), so none outlives it.
"""
import multiprocessing
import os
import queue
import secrets
import signal
import threading
import time
import weakref
from multiprocessing import connection, resource_tracker

from mxcy.gluon.data import _errors, _shm

__all__ = ['ProcessWorkers', 'ThreadWorkers', 'MultiWorkerIter']

_PARENT_POLL_S = 1.0        # how often an idle worker checks that its parent is alive
_TERM_GRACE_S = 2.0         # SIGTERM, then this long before SIGKILL
_SLICE_S = 0.25             # the longest the parent blocks without checking for signals


def _worker_main(wid, tasks, results, dataset, batchify_fn, parent_pid, inherited):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for conn in inherited:              # other workers' pipe ends: keep EOF meaningful
        conn.close()
    while True:
        try:
            task = tasks.get(timeout=_PARENT_POLL_S)
        except queue.Empty:
            if os.getppid() != parent_pid:
                return
            continue
        if task is None:
            return
        idx, samples, name = task
        try:
            batch = batchify_fn([dataset[i] for i in samples])
            reply = ('ok', idx, _shm.write(batch, name))
        except Exception as exc:        # noqa: BLE001  (everything goes to the parent)
            reply = ('err', idx, _errors.describe(exc))
        try:
            results.send(reply)
        except OSError:                 # the parent is gone
            return


class ProcessWorkers:
    """`num_workers` forked processes; batches come back through shared memory."""

    def __init__(self, dataset, batchify_fn, num_workers, timeout):
        ctx = multiprocessing.get_context('fork')
        # one resource tracker for the parent and all workers (a worker would otherwise
        # start its own, which unlinks the worker's blocks when it exits)
        resource_tracker.ensure_running()
        self._owner = os.getpid()
        self._token = f"{self._owner}_{secrets.token_hex(4)}"
        self._timeout = timeout
        self._pending = set()           # batches sent and not yet read
        self._closed = False
        pipes = [ctx.Pipe(duplex=False) for _ in range(num_workers)]
        self._readers = [r for r, _ in pipes]
        self._tasks = [ctx.Queue() for _ in range(num_workers)]
        self._procs = []
        try:
            for wid in range(num_workers):
                others = self._readers + [w for i, (_, w) in enumerate(pipes) if i != wid]
                proc = ctx.Process(target=_worker_main, name=f"DataLoaderWorker-{wid}",
                                   args=(wid, self._tasks[wid], pipes[wid][1], dataset,
                                         batchify_fn, self._owner, others), daemon=True)
                proc.start()
                self._procs.append(proc)
        except BaseException:
            self.close()
            raise
        finally:
            for _, writer in pipes:     # the parent only reads
                writer.close()

    def _where(self, idx):
        wid = idx % len(self._procs)
        return f"DataLoader worker {wid} (pid {self._procs[wid].pid}), batch {idx}"

    def submit(self, idx, samples):
        self._pending.add(idx)
        self._tasks[idx % len(self._procs)].put((idx, list(samples),
                                                 _shm.block_name(self._token, idx)))

    def receive(self, idx):
        """Batch `idx`, or an exception naming it (worker error, death or timeout)."""
        wid = idx % len(self._procs)
        reader, proc = self._readers[wid], self._procs[wid]
        deadline = time.monotonic() + self._timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise multiprocessing.TimeoutError(
                    f"{self._where(idx)}: no batch after timeout={self._timeout} s; a slow "
                    f"dataset or transform needs a larger DataLoader timeout")
            # in slices: a Ctrl-C taken by another thread only sets a flag, which the
            # main thread acts on when it returns to Python
            ready = connection.wait([reader, proc.sentinel], min(remaining, _SLICE_S))
            if reader in ready:
                try:
                    status, got, payload = reader.recv()
                except EOFError:
                    self._died(idx)
                break
            if proc.sentinel in ready and not reader.poll():
                self._died(idx)
        if got != idx:
            raise RuntimeError(f"{self._where(idx)}: the worker answered batch {got}")
        if status == 'err':
            _errors.reraise(payload, self._where(idx))
        try:
            batch = _shm.read(_shm.block_name(self._token, idx))
        except Exception as exc:
            raise _errors.with_batch(exc, self._where(idx))
        self._pending.discard(idx)
        return batch

    def _died(self, idx):
        proc = self._procs[idx % len(self._procs)]
        proc.join(1.0)
        code = proc.exitcode
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            how = f"was killed by {name}"
            if -code == signal.SIGBUS:
                how += " (usually a full /dev/shm)"
            elif -code == signal.SIGKILL:
                how += " (by a user, or by the kernel when out of memory)"
        else:
            how = f"exited with code {code}"
        raise RuntimeError(f"{self._where(idx)}: the worker {how} before returning the "
                           f"batch")

    def close(self):
        """Stop the workers, then unlink every block not read. Idempotent."""
        if self._closed or os.getpid() != self._owner:  # a forked child owns nothing here
            return
        self._closed = True
        for proc in self._procs:
            if proc.exitcode is None:
                proc.terminate()
        deadline = time.monotonic() + _TERM_GRACE_S
        for proc in self._procs:
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.exitcode is None:
                proc.kill()
                proc.join(1.0)
        for tasks in self._tasks:
            tasks.cancel_join_thread()  # queued tasks of dead workers must not block exit
            tasks.close()
        for reader in self._readers:
            reader.close()
        for idx in sorted(self._pending):
            _shm.unlink(_shm.block_name(self._token, idx))
        self._pending.clear()


def _thread_main(tasks, results, dataset, batchify_fn):
    while True:
        task = tasks.get()
        if task is None:
            return
        idx, samples = task
        try:
            results.put(('ok', idx, batchify_fn([dataset[i] for i in samples])))
        except Exception as exc:        # noqa: BLE001  (everything goes to the consumer)
            results.put(('err', idx, exc))


class ThreadWorkers:
    """`num_workers` daemon threads (``thread_pool=True``): no copies, no shared memory.
    A stalled thread cannot be stopped, but as a daemon it never blocks the exit."""

    def __init__(self, dataset, batchify_fn, num_workers, timeout):
        self._timeout = timeout
        self._tasks = [queue.SimpleQueue() for _ in range(num_workers)]
        self._results = [queue.SimpleQueue() for _ in range(num_workers)]
        for wid in range(num_workers):
            threading.Thread(target=_thread_main, name=f"DataLoaderThread-{wid}",
                             args=(self._tasks[wid], self._results[wid], dataset,
                                   batchify_fn), daemon=True).start()

    def submit(self, idx, samples):
        self._tasks[idx % len(self._tasks)].put((idx, list(samples)))

    def receive(self, idx):
        wid = idx % len(self._tasks)
        where = f"DataLoader thread {wid}, batch {idx}"
        deadline = time.monotonic() + self._timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise multiprocessing.TimeoutError(
                    f"{where}: no batch after timeout={self._timeout} s; a slow dataset or "
                    f"transform needs a larger DataLoader timeout")
            try:
                status, _, payload = self._results[wid].get(timeout=min(remaining, _SLICE_S))
                break
            except queue.Empty:
                continue
        if status == 'err':
            raise _errors.with_batch(payload, where)
        return payload

    def close(self):
        for tasks in self._tasks:
            tasks.put(None)


class MultiWorkerIter:
    """One pass over `batch_sampler` with `workers` (ProcessWorkers or ThreadWorkers):
    `prefetch` batches are sent ahead, batches come back in order, `post` is applied to
    each (pinning). Any exception, or the end, closes the workers."""

    def __init__(self, workers, batch_sampler, prefetch, post=None):
        self._workers = workers
        self._close = weakref.finalize(self, workers.close)
        self._batch_sampler = batch_sampler
        self._post = post
        self._sent = self._rcvd = 0
        try:
            self._samples = iter(batch_sampler)
            for _ in range(prefetch):
                self._push_next()
        except BaseException:
            self.close()
            raise

    def __len__(self):
        return len(self._batch_sampler)

    def __iter__(self):
        return self

    def _push_next(self):
        samples = next(self._samples, None)
        if samples is not None:
            self._workers.submit(self._sent, samples)
            self._sent += 1

    def __next__(self):
        if not self._close.alive:
            raise StopIteration
        try:
            self._push_next()
            if self._rcvd == self._sent:
                raise StopIteration
            batch = self._workers.receive(self._rcvd)
            self._rcvd += 1
        except BaseException:           # StopIteration and KeyboardInterrupt included
            self.close()
            raise
        return self._post(batch) if self._post is not None else batch

    next = __next__

    def close(self):
        """Stop the workers and free their shared memory now (also done at the end)."""
        self._close()
