"""gluon.data samplers; expected values are MXNet 1.9.1's (recorded from it)."""
import numpy as np
import pytest

from mxcy.gluon.data import (BatchSampler, FilterSampler, RandomSampler, Sampler,
                             SequentialSampler, SimpleDataset)


def test_sequential_sampler():
    assert list(SequentialSampler(4)) == [0, 1, 2, 3]
    s = SequentialSampler(3, 5)                 # MXNet 1.9.1: [5, 6, 7]
    assert list(s) == [5, 6, 7] and len(s) == 3
    assert list(SequentialSampler(0)) == []


def test_random_sampler_is_a_new_permutation_each_pass():
    np.random.seed(3)
    s = RandomSampler(50)
    first, second = list(s), list(s)
    assert len(s) == 50
    assert sorted(first) == list(range(50)) and sorted(second) == list(range(50))
    assert first != second
    assert all(isinstance(i, np.int64) for i in first)     # MXNet yields numpy int64
    np.random.seed(3)
    assert list(RandomSampler(50)) == first                # NumPy's global generator


def test_filter_sampler():
    s = FilterSampler(lambda x: x % 3 == 0, SimpleDataset(list(range(10))))
    assert list(s) == [0, 3, 6, 9] and len(s) == 4


@pytest.mark.parametrize('mode, expected', [
    ('keep', [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]),      # MXNet 1.9.1's docstring
    ('discard', [[0, 1, 2], [3, 4, 5], [6, 7, 8]]),
    ('rollover', [[0, 1, 2], [3, 4, 5], [6, 7, 8]]),
])
def test_batch_sampler_modes(mode, expected):
    b = BatchSampler(SequentialSampler(10), 3, mode)
    assert len(b) == len(expected)
    assert list(b) == expected


def test_batch_sampler_rollover_carries_the_tail():
    # MXNet 1.9.1: len 2, [[0,1,2],[3,4,5]], len 2, [[6,0,1],[2,3,4]], len 3,
    # [[5,6,0],[1,2,3],[4,5,6]]
    b = BatchSampler(SequentialSampler(7), 3, 'rollover')
    assert len(b) == 2 and list(b) == [[0, 1, 2], [3, 4, 5]]
    assert len(b) == 2 and list(b) == [[6, 0, 1], [2, 3, 4]]
    assert len(b) == 3 and list(b) == [[5, 6, 0], [1, 2, 3], [4, 5, 6]]


@pytest.mark.parametrize('n', [0, 1, 2, 3, 4])
@pytest.mark.parametrize('mode', ['keep', 'discard', 'rollover'])
def test_batch_sampler_small_sizes(n, mode):
    b = BatchSampler(SequentialSampler(n), 3, mode)
    batches = list(b)
    full = [list(range(i, i + 3)) for i in range(0, n - n % 3, 3)]
    tail = [list(range(n - n % 3, n))] if n % 3 else []
    assert batches == (full + tail if mode == 'keep' else full)


def test_batch_sampler_rejects_bad_arguments_at_construction():
    # MXNet accepted these and failed only when iterated
    with pytest.raises(ValueError, match="last_batch must be one of 'keep', 'discard'"):
        BatchSampler(SequentialSampler(4), 2, 'pad')
    for bad in (0, -1, 2.5, None, True):
        with pytest.raises(ValueError, match='batch_size must be a positive int'):
            BatchSampler(SequentialSampler(4), bad)


def test_sampler_base_is_abstract():
    with pytest.raises(NotImplementedError):
        iter(Sampler())
    with pytest.raises(NotImplementedError):
        len(Sampler())
