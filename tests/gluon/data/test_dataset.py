"""gluon.data datasets; expected values are MXNet 1.9.1's (recorded from it)."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.gluon.data import (ArrayDataset, Dataset, SequentialSampler, SimpleDataset)


def test_simple_dataset_wraps_lists_and_arrays():
    d = SimpleDataset([3, 1, 2])
    assert len(d) == 3 and d[1] == 1
    a = SimpleDataset(np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(a[2], [4, 5])


def test_array_dataset_items():
    # MXNet 1.9.1: item types ['float32', 'NDArray', 'int'], the 1-D NDArray as NumPy
    d = ArrayDataset(mx.nd.arange(4), mx.nd.arange(8).reshape(4, 2), [5, 6, 7, 8])
    x, row, label = d[1]
    assert isinstance(x, np.float32) and x == 1.0
    assert isinstance(row, mx.nd.NDArray)
    np.testing.assert_array_equal(row.asnumpy(), [2, 3])
    assert label == 6 and len(d) == 4
    single = ArrayDataset(np.arange(3))
    assert isinstance(single[0], np.int64)              # one array: the item itself


def test_array_dataset_errors():
    with pytest.raises(ValueError, match='at least 1'):
        ArrayDataset()
    with pytest.raises(ValueError, match=r'array\[0\] has length 3 while array\[1\] has 2'):
        ArrayDataset([1, 2, 3], [1, 2])


def test_take_shard_lengths():
    d = ArrayDataset(mx.nd.arange(4), mx.nd.arange(8).reshape(4, 2), [5, 6, 7, 8])
    # MXNet 1.9.1: 2 4 2 1 1
    assert [len(d.take(2)), len(d.take(None)), len(d.shard(3, 0)), len(d.shard(3, 1)),
            len(d.shard(3, 2))] == [2, 4, 2, 1, 1]
    assert len(d.take(100)) == 4


def test_shard_filter_sample_values():
    r = SimpleDataset(list(range(10)))
    assert list(r.shard(3, 1)) == [4, 5, 6]                         # MXNet 1.9.1
    assert [list(r.shard(3, i)) for i in range(3)] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert list(r.shard(np.int64(4), np.int64(3))) == [8, 9]
    assert list(r.filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]     # MXNet 1.9.1
    assert list(SimpleDataset(list(range(5))).sample(SequentialSampler(2, 1))) == [1, 2]


def test_shard_errors():
    r = SimpleDataset(list(range(10)))
    with pytest.raises(ValueError, match=r'index must be in \[0, 3\)'):
        r.shard(3, 3)
    with pytest.raises(ValueError, match='num_shards must be positive'):
        r.shard(0, 0)
    with pytest.raises(TypeError, match='must be an int'):
        r.shard(2.0, 0)


def test_sample_needs_a_sampler():
    with pytest.raises(TypeError, match="Invalid sampler type: <class 'list'>. Expected "
                                        "gluon.data.Sampler instead."):
        SimpleDataset([1]).sample([0])


def test_transform_and_transform_first():
    assert list(SimpleDataset(list(range(5))).transform(lambda x: x * 2)) == [0, 2, 4, 6, 8]
    pairs = ArrayDataset([1, 2], [3, 4])
    assert list(pairs.transform_first(lambda x: x * 10)) == [(10, 3), (20, 4)]   # MXNet 1.9.1
    assert list(pairs.transform(lambda x, y: x + y)) == [4, 6]                   # MXNet 1.9.1
    assert list(SimpleDataset([1, 2]).transform_first(lambda x: -x)) == [-1, -2]


def test_transform_lazy_runs_on_every_read_eager_once():
    calls = []

    def fn(x):
        calls.append(x)
        return x + 1
    lazy = SimpleDataset([1, 2, 3]).transform(fn)
    assert calls == []
    assert lazy[0] == 2 and lazy[0] == 2 and calls == [1, 1]
    calls.clear()
    eager = SimpleDataset([1, 2, 3]).transform(fn, lazy=False)
    assert calls == [1, 2, 3] and isinstance(eager, SimpleDataset)
    assert list(eager) == [2, 3, 4] and calls == [1, 2, 3]


def test_filter_after_lazy_transform_sees_transformed_samples():
    d = SimpleDataset(list(range(6))).transform(lambda x: x * 10).filter(lambda x: x > 25)
    assert list(d) == [30, 40, 50]


def test_dataset_base_is_abstract():
    with pytest.raises(NotImplementedError):
        Dataset()[0]
    with pytest.raises(NotImplementedError):
        len(Dataset())
