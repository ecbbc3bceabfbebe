"""gluon.data.DataLoader in this process: batches, last_batch modes, arguments, clean-up.

0, 1 and 2 worker processes (and a thread pool) must give the same batches. Expected
values are MXNet 1.9.1's (recorded from it). Failing, dying and stalling workers, Ctrl-C
and fork run in subprocesses: test_dataloader_workers.py.
"""
import collections
import gc
import multiprocessing
import os
import signal
import time

import numpy as np
import pytest

import mxcy as mx
from mxcy.gluon.data import (ArrayDataset, BatchSampler, DataLoader, Dataset,
                             SequentialSampler, SimpleDataset)
from mxcy.gluon.data._shm import PREFIX
from mxcy.gluon.data.dataloader import default_batchify_fn, default_mp_batchify_fn

WORKERS = [0, 1, 2, 'threads']
Pair = collections.namedtuple('Pair', 'x y')    # module level: workers pickle it


@pytest.fixture(autouse=True)
def bounded(request):
    """No test here may hang: SIGALRM after 30 s raises inside whatever waits."""
    def expire(signum, frame):
        raise TimeoutError(f"{request.node.name} took more than 30 s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, 30)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, old)


def blocks():
    """This process's DataLoader shared-memory blocks still in /dev/shm."""
    return [f for f in os.listdir('/dev/shm') if f.startswith(f'{PREFIX}{os.getpid()}_')]


def loader(dataset, workers, **kwargs):
    if workers == 'threads':
        return DataLoader(dataset, num_workers=2, thread_pool=True, **kwargs)
    return DataLoader(dataset, num_workers=workers, **kwargs)


def as_lists(batches):
    def convert(x):
        if isinstance(x, mx.nd.NDArray):
            return ('nd', str(np.dtype(x.dtype)), x.asnumpy().tolist())
        if isinstance(x, np.ndarray):
            return ('np', str(x.dtype), x.tolist())
        if isinstance(x, (list, tuple)):
            return type(x).__name__, [convert(i) for i in x]
        if isinstance(x, dict):
            return {k: convert(v) for k, v in x.items()}
        return x
    return [convert(b) for b in batches]


def assert_clean():
    assert blocks() == []
    assert multiprocessing.active_children() == []


# ---------------------------------------------------------------- batchify

def test_default_batchify_dtypes():
    # MXNet 1.9.1: int64, float64, float32; tuples give a list of batches
    assert default_batchify_fn([1, 2, 3]).dtype == np.int64
    assert default_batchify_fn([1.0, 2.0]).dtype == np.float64
    assert default_batchify_fn([np.float32(1), np.float32(2)]).dtype == np.float32
    out = default_batchify_fn([(np.ones(2, 'f'), 1), (np.ones(2, 'f'), 2)])
    assert isinstance(out, list) and [o.shape for o in out] == [(2, 2), (2,)]
    assert [o.dtype for o in out] == [np.float32, np.int64]
    stacked = default_batchify_fn([mx.nd.ones((2,)), mx.nd.zeros((2,))])
    assert stacked.asnumpy().tolist() == [[1, 1], [0, 0]]


def test_default_mp_batchify_is_in_shared_memory():
    out = default_mp_batchify_fn([(np.ones(2, 'f'), 1), (np.ones(2, 'f'), 2)])
    assert [o.context for o in out] == [mx.Context('cpu_shared', 0)] * 2    # MXNet 1.9.1
    nd = default_mp_batchify_fn([mx.nd.ones((2,)), mx.nd.ones((2,))])
    assert nd.context == mx.Context('cpu_shared', 0) and nd.shape == (2, 2)


# ---------------------------------------------------------------- same batches

class Mixed(Dataset):
    """NDArray data (so workers use the engine after the fork), NumPy and int labels."""

    def __init__(self, n):
        self.data = mx.nd.arange(n * 3).reshape((n, 3))
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.data[i] * 2, np.float32(i) / 4, int(i) % 3


@pytest.mark.parametrize('workers', WORKERS)
def test_workers_give_identical_batches(workers):
    np.random.seed(7)
    ref = as_lists(DataLoader(Mixed(23), batch_size=5, shuffle=True))
    np.random.seed(7)
    got = as_lists(loader(Mixed(23), workers, batch_size=5, shuffle=True))
    assert got == ref
    assert [[col[:2] for col in b[1]] for b in ref] == \
        [[('nd', 'float32'), ('nd', 'float32'), ('nd', 'int64')]] * 5
    assert_clean()


def test_shuffled_batches_match_mxnet():
    np.random.seed(0)
    for workers in (0, 2):
        np.random.seed(0)
        dl = DataLoader(ArrayDataset(np.arange(10)), batch_size=4, shuffle=True,
                        num_workers=workers)
        # MXNet 1.9.1 after np.random.seed(0)
        assert [b.asnumpy().tolist() for b in dl] == [[2, 8, 4, 9], [1, 6, 7, 3], [0, 5]]


@pytest.mark.parametrize('workers', WORKERS)
def test_custom_batchify_keeps_types(workers):
    def batchify(samples):
        xs = np.stack([s for s in samples])
        return {'np': xs, 'nd': mx.nd.array(xs), 'pair': Pair(len(samples), 'tag'),
                'empty': np.zeros((0, 2), 'f4'), 'objects': np.array([None, 1], object)}
    data = SimpleDataset([np.full(2, i, 'f8') for i in range(5)])
    got = list(loader(data, workers, batch_size=2, batchify_fn=batchify))
    assert len(got) == 3
    first = got[0]
    assert isinstance(first['np'], np.ndarray) and first['np'].dtype == np.float64
    assert isinstance(first['nd'], mx.nd.NDArray)
    assert first['nd'].asnumpy().tolist() == [[0, 0], [1, 1]]
    assert first['pair'] == Pair(2, 'tag') and type(first['pair']) is Pair
    assert first['empty'].shape == (0, 2) and first['objects'].tolist() == [None, 1]
    assert_clean()


# ---------------------------------------------------------------- last_batch

# MXNet 1.9.1, batch_size 4 over range(n): (len before the first pass, first pass,
# second pass)
LAST_BATCH = {
    ('keep', 0): (0, [], []), ('keep', 1): (1, [[0]], [[0]]),
    ('keep', 3): (1, [[0, 1, 2]], [[0, 1, 2]]),
    ('keep', 4): (1, [[0, 1, 2, 3]], [[0, 1, 2, 3]]),
    ('keep', 5): (2, [[0, 1, 2, 3], [4]], [[0, 1, 2, 3], [4]]),
    ('discard', 0): (0, [], []), ('discard', 1): (0, [], []), ('discard', 3): (0, [], []),
    ('discard', 4): (1, [[0, 1, 2, 3]], [[0, 1, 2, 3]]),
    ('discard', 5): (1, [[0, 1, 2, 3]], [[0, 1, 2, 3]]),
    ('rollover', 0): (0, [], []), ('rollover', 1): (0, [], []),
    ('rollover', 3): (0, [], [[0, 1, 2, 0]]),
    ('rollover', 4): (1, [[0, 1, 2, 3]], [[0, 1, 2, 3]]),
    ('rollover', 5): (1, [[0, 1, 2, 3]], [[4, 0, 1, 2]]),
}


@pytest.mark.parametrize('workers', [0, 1, 2])
@pytest.mark.parametrize('mode, n', sorted(LAST_BATCH))
def test_last_batch_modes(mode, n, workers):
    length, first, second = LAST_BATCH[mode, n]
    dl = DataLoader(list(range(n)), batch_size=4, last_batch=mode, num_workers=workers)
    assert len(dl) == length
    assert [b.asnumpy().tolist() for b in dl] == first
    assert [b.asnumpy().tolist() for b in dl] == second
    assert_clean()


# ---------------------------------------------------------------- arguments

def test_argument_errors():
    with pytest.raises(ValueError, match='batch_size must be specified unless batch_sampler'):
        DataLoader([1, 2, 3])
    with pytest.raises(ValueError, match='shuffle must not be specified if sampler'):
        DataLoader([1, 2], batch_size=1, shuffle=True, sampler=SequentialSampler(2))
    with pytest.raises(ValueError, match='must not be specified if batch_sampler'):
        DataLoader([1, 2], batch_size=1, batch_sampler=BatchSampler(SequentialSampler(2), 1))
    with pytest.raises(ValueError, match='timeout must be positive'):
        DataLoader([1, 2], batch_size=1, timeout=0)
    with pytest.raises(ValueError, match="last_batch must be one of"):
        DataLoader([1, 2], batch_size=1, last_batch='pad')     # MXNet: only when iterated
    with pytest.raises(TypeError, match='num_workers must be an int'):
        DataLoader([1, 2], batch_size=1, num_workers=1.5)


def test_signature_is_mxnets():
    import inspect
    params = inspect.signature(DataLoader).parameters
    assert [(p.name, p.default) for p in params.values()] == [
        ('dataset', inspect.Parameter.empty), ('batch_size', None), ('shuffle', False),
        ('sampler', None), ('last_batch', None), ('batch_sampler', None),
        ('batchify_fn', None), ('num_workers', 0), ('pin_memory', False),
        ('pin_device_id', 0), ('prefetch', None), ('thread_pool', False), ('timeout', 120),
        ('auto_reload', False)]


def test_batch_sampler_and_negative_workers():
    bs = BatchSampler(SequentialSampler(5), 2, 'discard')
    dl = DataLoader(np.arange(5), batch_sampler=bs, num_workers=-3)     # -3 means 0
    assert [b.asnumpy().tolist() for b in dl] == [[0, 1], [2, 3]] and len(dl) == 2


@pytest.mark.parametrize('workers', WORKERS)
def test_pin_memory(workers):
    dl = loader(list(range(10)), workers, batch_size=4, pin_memory=True)
    assert [b.context for b in dl] == [mx.cpu_pinned(0)] * 3        # MXNet 1.9.1


@pytest.mark.parametrize('prefetch', [0, 1, 7])
def test_prefetch_values(prefetch):
    dl = DataLoader(list(range(9)), batch_size=2, num_workers=2, prefetch=prefetch)
    assert [b.asnumpy().tolist() for b in dl] == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]
    assert_clean()


@pytest.mark.parametrize('workers', [0, 2])
def test_auto_reload_prefetches_the_next_pass(workers):
    dl = DataLoader(list(range(6)), batch_size=4, num_workers=workers, auto_reload=True)
    assert dl._iter is not None                     # started by the constructor
    for _ in range(2):
        assert [b.asnumpy().tolist() for b in dl] == [[0, 1, 2, 3], [4, 5]]
        assert dl._iter is not None                 # the next pass is already running
    dl.clean()
    assert_clean()


def test_two_passes_at_once():
    dl = DataLoader(list(range(6)), batch_size=2, num_workers=2)
    a, b = iter(dl), iter(dl)
    assert next(a).asnumpy().tolist() == [0, 1]
    assert [x.asnumpy().tolist() for x in b] == [[0, 1], [2, 3], [4, 5]]
    assert [x.asnumpy().tolist() for x in a] == [[2, 3], [4, 5]]
    assert_clean()


# ---------------------------------------------------------------- clean-up

class Numbers(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return np.full((8,), i, np.float32)


def test_no_block_or_worker_left_after_a_full_pass():
    out = [b.asnumpy()[:, 0].tolist() for b in DataLoader(Numbers(), batch_size=8,
                                                             num_workers=2)]
    assert out == [list(range(i, i + 8)) for i in range(0, 64, 8)]
    assert_clean()


def test_no_block_or_worker_left_after_an_abandoned_iterator():
    it = iter(DataLoader(Numbers(), batch_size=4, num_workers=2, prefetch=8))
    assert next(it).asnumpy()[:, 0].tolist() == [0, 1, 2, 3]
    for _ in range(200):                    # let the workers fill the prefetch blocks
        if len(blocks()) >= 4:
            break
        time.sleep(0.01)
    assert len(blocks()) >= 4               # the clean-up below has work to do
    del it
    gc.collect()
    assert_clean()


def test_dataset_iterates_by_length():
    class Endless(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return i * 2                    # never raises IndexError
    assert list(Endless()) == [0, 2, 4]
    assert list(Endless().filter(lambda x: x > 0)) == [2, 4]


def test_full_dev_shm_is_a_clear_error(monkeypatch):
    """Docker's 64 MB /dev/shm (LESSONS 32): space is reserved up front, so a full
    /dev/shm is an OSError naming the batch, not a worker killed by SIGBUS."""
    import errno

    from mxcy.gluon.data import _shm

    def full(fd, offset, size):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(_shm.os, 'posix_fallocate', full)     # the forked workers see it
    with pytest.raises(OSError, match=r'cannot allocate \d+ bytes of shared memory in '
                                      r'/dev/shm.*batch 0\]'):
        list(DataLoader(Numbers(), batch_size=4, num_workers=1))
    assert_clean()
