"""mx.io.ResizeIter and mx.io.PrefetchingIter (background loading, bounded buffer,
exception propagation, reset mid-epoch, clean stop). Waits are bounded: each
PrefetchingIter test body runs in a daemon thread joined with a timeout."""
import gc
import threading
import time

import numpy as np
import pytest

import mxcy as mx

TIMEOUT = 20.0


def bounded(fn):
    """Run `fn` in a daemon thread; fail (instead of hanging) if it does not finish."""
    def wrapper(*args, **kwargs):
        result = {}

        def target():
            try:
                fn(*args, **kwargs)
            except BaseException as err:      # noqa: B036 -- re-raised below
                result['error'] = err
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        thread.join(TIMEOUT)
        assert not thread.is_alive(), f"{fn.__name__} did not finish in {TIMEOUT} s"
        if 'error' in result:
            raise result['error']
    wrapper.__name__ = fn.__name__
    return wrapper


def wait_for(cond, what):
    deadline = time.monotonic() + TIMEOUT / 2
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


class Recording(mx.io.DataIter):
    """An NDArrayIter wrapper that counts next() calls and can fail at one batch."""

    def __init__(self, n, batch_size, fail_at=None, name='data'):
        super().__init__(batch_size)
        self.inner = mx.io.NDArrayIter({name: np.arange(n, dtype=np.float32)[:, None]},
                                       np.arange(n), batch_size=batch_size)
        self.provide_data = self.inner.provide_data
        self.provide_label = self.inner.provide_label
        self.calls = 0
        self.resets = 0
        self.fail_at = fail_at
        self.thread_ids = set()

    def next(self):
        self.thread_ids.add(threading.get_ident())
        self.calls += 1
        if self.fail_at is not None and self.calls == self.fail_at:
            raise KeyError(f'broken batch {self.calls}')
        return self.inner.next()

    def reset(self):
        self.resets += 1
        self.inner.reset()


def values(batch, i=0):
    return batch.data[i].asnumpy()[:, 0].tolist()


def test_resize_iter():
    inner = mx.io.NDArrayIter(np.arange(6, dtype=np.float32)[:, None], batch_size=3)
    it = mx.io.ResizeIter(inner, 5)
    assert it.batch_size == 3 and it.provide_data == inner.provide_data
    assert [values(b) for b in it] == [[0, 1, 2], [3, 4, 5]] * 2 + [[0, 1, 2]]
    it.reset()                                        # resets the inner iterator too
    assert values(next(it)) == [0, 1, 2]
    keep = mx.io.ResizeIter(inner, 1, reset_internal=False)
    inner.reset()
    assert [values(b) for b in keep] == [[0, 1, 2]]
    keep.reset()
    assert [values(b) for b in keep] == [[3, 4, 5]]
    assert list(mx.io.ResizeIter(inner, 0)) == []
    with pytest.raises(RuntimeError, match='yields no batch'):
        next(mx.io.ResizeIter(mx.io.NDArrayIter(np.zeros((0, 1)), batch_size=2), 3))
    with pytest.raises(ValueError, match='size'):
        mx.io.ResizeIter(inner, -1)


@bounded
def test_prefetching_same_batches_renamed_and_multi_epoch():
    a, b = Recording(7, 2), Recording(7, 2)
    it = mx.io.PrefetchingIter([a, b], rename_data=[{'data': 'x1'}, {'data': 'x2'}])
    assert [d.name for d in it.provide_data] == ['x1', 'x2']
    assert [d.name for d in it.provide_label] == ['softmax_label'] * 2
    assert it.batch_size == 2
    for _ in range(3):
        batches = list(it)
        assert [values(bt, 0) for bt in batches] == [[0, 1], [2, 3], [4, 5], [6, 0]]
        assert [values(bt, 1) for bt in batches] == [[0, 1], [2, 3], [4, 5], [6, 0]]
        assert [bt.pad for bt in batches] == [0, 0, 0, 1]
        assert len(batches[0].label) == 2 and batches[0].provide_data == it.provide_data
        assert list(batches[-1].index) == [6, 0]
        it.reset()
    assert threading.get_ident() not in a.thread_ids      # fetched on the loader thread
    it.close()


@bounded
def test_prefetching_loads_ahead_within_the_bound():
    inner = Recording(40, 2)
    it = mx.io.PrefetchingIter(inner, prefetch_buffer=2)
    wait_for(lambda: inner.calls == 2, 'the first two batches to be prefetched')
    time.sleep(0.05)
    assert inner.calls == 2                              # the buffer is bounded
    assert values(next(it)) == [0, 1]
    wait_for(lambda: inner.calls == 3, 'the next batch to be fetched in the background')
    time.sleep(0.05)
    assert inner.calls == 3
    it.close()


@bounded
def test_prefetching_reset_mid_epoch():
    inner = Recording(10, 2)
    it = mx.io.PrefetchingIter(inner)
    assert values(next(it)) == [0, 1]
    assert values(next(it)) == [2, 3]
    it.reset()
    assert inner.resets == 1
    assert [values(b) for b in it] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    it.reset()
    it.reset()                                           # back-to-back resets are fine
    assert len(list(it)) == 5
    it.close()


@bounded
def test_prefetching_propagates_loader_exceptions():
    inner = Recording(10, 2, fail_at=3)
    it = mx.io.PrefetchingIter(inner)
    assert values(next(it)) == [0, 1]
    assert values(next(it)) == [2, 3]
    with pytest.raises(KeyError, match='broken batch 3') as info:
        next(it)
    assert any(frame.name == 'next' for frame in info.traceback)   # the loader's frames
    assert list(it) == []                                # the epoch is over until reset
    it.reset()
    assert len(list(it)) == 5                            # fail_at was only the 3rd call
    it.close()


@bounded
def test_prefetching_mismatched_iterators():
    it = mx.io.PrefetchingIter([Recording(4, 2), Recording(6, 2)])
    assert len(next(it).data) == 2 and next(it)
    with pytest.raises(ValueError, match='different numbers of batches'):
        next(it)
    it.close()
    it = mx.io.PrefetchingIter([Recording(6, 4), Recording(5, 4)])
    next(it)
    with pytest.raises(ValueError, match='reports pad'):
        next(it)
    it.close()


@bounded
def test_prefetching_stops_cleanly():
    inner = Recording(10, 2)
    it = mx.io.PrefetchingIter(inner)
    thread = it._loader.thread
    assert thread.daemon
    next(it)
    it.close()
    assert not thread.is_alive()
    with pytest.raises(RuntimeError, match='closed'):
        it.reset()
    # an abandoned iterator is collected and its thread ends
    it = mx.io.PrefetchingIter(Recording(10, 2))
    thread = it._loader.thread
    del it
    gc.collect()
    thread.join(TIMEOUT / 2)
    assert not thread.is_alive()


def test_prefetching_bad_arguments():
    with pytest.raises(ValueError, match='at least one'):
        mx.io.PrefetchingIter([])
    with pytest.raises(ValueError, match='one dict per iterator'):
        mx.io.PrefetchingIter(Recording(2, 1), rename_data=[{}, {}])
    with pytest.raises(ValueError, match='prefetch_buffer'):
        mx.io.PrefetchingIter(Recording(2, 1), prefetch_buffer=0)
