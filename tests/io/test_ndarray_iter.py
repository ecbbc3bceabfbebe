"""mx.io.NDArrayIter: batch counts per dataset size and last_batch_handle, padding,
roll_over carry and predict passes, per-epoch shuffling, inputs and errors."""
import numpy as np
import pytest

import mxcy as mx

B = 8
SIZES = [0, 1, B // 2 - 1, B - 1, B, B + 1, 3 * B + 5]     # B//2 - 1: under half a batch


def make_iter(n, handle, shuffle=False, batch_size=B, **kwargs):
    data = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    label = np.arange(n, dtype=np.float32)
    return mx.io.NDArrayIter(data, label, batch_size=batch_size, shuffle=shuffle,
                             last_batch_handle=handle, **kwargs)


def check_rows(batch, batch_size=B):
    """The batch's data and label rows are the samples its index names."""
    idx = batch.index
    assert idx.shape == (batch_size,)
    x, y = batch.data[0].asnumpy(), batch.label[0].asnumpy()
    assert x.shape == (batch_size, 3) and y.shape == (batch_size,)
    np.testing.assert_array_equal(y, idx.astype(np.float32))
    np.testing.assert_array_equal(x, (idx[:, None] * 3 + np.arange(3)).astype(np.float32))


def epoch(it):
    batches = list(it)
    for b in batches:
        check_rows(b, it.batch_size)
    return batches


@pytest.mark.parametrize('n', SIZES)
def test_pad_counts_and_fill(n):
    it = make_iter(n, 'pad')
    for _ in range(2):
        batches = epoch(it)
        assert len(batches) == -(-n // B)
        pads = [b.pad for b in batches]
        assert all(p == 0 for p in pads[:-1])
        if batches:
            assert pads[-1] == len(batches) * B - n
            ids = np.concatenate([b.index for b in batches])
            np.testing.assert_array_equal(ids[:n], np.arange(n))
            # filler rows are samples from the start of the epoch, cycling when n < B/2
            np.testing.assert_array_equal(ids[n:], np.arange(pads[-1]) % n)
        it.reset()


@pytest.mark.parametrize('n', SIZES)
def test_discard_counts(n):
    it = make_iter(n, 'discard')
    for _ in range(2):
        batches = epoch(it)
        assert len(batches) == n // B
        assert all(b.pad == 0 for b in batches)
        ids = np.concatenate([b.index for b in batches]) if batches else np.zeros(0)
        np.testing.assert_array_equal(ids, np.arange(len(batches) * B))
        it.reset()


@pytest.mark.parametrize('n', SIZES)
@pytest.mark.parametrize('shuffle', [False, True])
def test_roll_over_loses_nothing(n, shuffle):
    np.random.seed(3)
    it = make_iter(n, 'roll_over', shuffle=shuffle)
    epochs = 5
    seen = []
    for _ in range(epochs):
        batches = epoch(it)
        assert all(b.pad == 0 for b in batches)
        seen.extend(b.index for b in batches)
        it.reset()
    total = len(seen) * B
    assert len(seen) == (epochs * n) // B
    ids = np.concatenate(seen) if seen else np.zeros(0, np.int64)
    # every sample comes up once per epoch; only the last incomplete tail is pending
    assert total <= epochs * n < total + B
    if n:
        counts = np.bincount(ids, minlength=n)
        assert counts.max() - counts.min() <= 1
    if not shuffle:
        np.testing.assert_array_equal(ids, np.tile(np.arange(n), epochs)[:total])


def test_roll_over_carry_then_predict():
    it = make_iter(10, 'roll_over', batch_size=4)
    first = epoch(it)
    assert [list(b.index) for b in first] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    it.reset()
    second = epoch(it)
    assert [list(b.index) for b in second] == [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    it.reset()
    assert [list(b.index) for b in epoch(it)] == [[0, 1, 2, 3], [4, 5, 6, 7]]

    # a predict pass (as Module.predict does: keep rows[:b - pad]) sees every sample once
    it.reset()
    next(it)                                           # half-way through a training epoch
    it.reset_for_predict()
    outputs, pads = [], []
    for batch in it:
        x = batch.data[0].asnumpy()
        outputs.append(x[:len(x) - batch.pad])
        pads.append(batch.pad)
    np.testing.assert_array_equal(np.concatenate(outputs),
                                  np.arange(30, dtype=np.float32).reshape(10, 3))
    assert pads == [0, 0, 2]
    # training resumes without a carry from the predict pass
    it.reset()
    assert [list(b.index) for b in epoch(it)] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_roll_over_reset_rules():
    it = make_iter(6, 'roll_over', batch_size=4)
    epoch(it)                       # [0..3]; carry [4, 5]
    it.reset()
    it.reset()                      # nothing consumed yet: the carry is kept
    assert list(next(it).index) == [4, 5, 0, 1]
    it.reset()                      # reset mid-epoch: the rest and any carry are dropped
    assert [list(b.index) for b in epoch(it)] == [[0, 1, 2, 3]]
    it.hard_reset()                 # hard_reset drops the carry
    assert [list(b.index) for b in epoch(it)] == [[0, 1, 2, 3]]


@pytest.mark.parametrize('handle', ['pad', 'discard', 'roll_over'])
def test_reset_for_predict_every_mode(handle):
    n = 11
    it = make_iter(n, handle, shuffle=True, batch_size=4)
    epoch(it)
    it.reset()
    it.reset_for_predict()
    batches = epoch(it)
    assert len(batches) == 3 and [b.pad for b in batches] == [0, 0, 1]
    ids = np.concatenate([b.index[:4 - b.pad] for b in batches])
    np.testing.assert_array_equal(np.sort(ids), np.arange(n))


def test_shuffle_changes_every_epoch_and_follows_numpy_seed():
    def orders(seed, epochs=4):
        np.random.seed(seed)
        it = make_iter(40, 'discard', shuffle=True)
        out = []
        for _ in range(epochs):
            out.append(np.concatenate([b.index for b in epoch(it)]))
            it.reset()
        return out

    first = orders(7)
    for order in first:
        np.testing.assert_array_equal(np.sort(order), np.arange(40))
    assert all(not np.array_equal(first[i], first[j])
               for i in range(4) for j in range(i + 1, 4))
    for a, b in zip(first, orders(7)):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], orders(8)[0])


def test_unshuffled_batches_are_views():
    it = make_iter(20, 'pad')
    source = it.data[0][1]
    batch = next(it)
    assert batch.data[0]._chunk is source._chunk          # a view, not a copy
    assert batch.label[0]._chunk is it.label[0][1]._chunk
    assert it.getdata()[0] is batch.data[0]                # memoised per batch
    next(it)
    last = next(it)                                        # padded: gathered
    assert last.pad == 4 and last.data[0]._chunk is not source._chunk
    check_rows(last)


def test_inputs_dict_list_and_dtypes():
    x1 = np.ones((5, 2), np.int64)
    x2 = mx.nd.array(np.arange(10).reshape(5, 2), dtype=np.float64)
    it = mx.io.NDArrayIter({'b': x1, 'a': x2}, batch_size=2)
    assert [d.name for d in it.provide_data] == ['a', 'b']          # sorted, as MXNet
    assert [d.shape for d in it.provide_data] == [(2, 2), (2, 2)]
    assert it.provide_data[0].dtype == np.float64 and it.provide_data[1].dtype == np.float32
    assert it.provide_label == []
    batch = next(it)
    assert batch.label == [] and batch.data[0].dtype == np.float64
    np.testing.assert_array_equal(batch.data[0].asnumpy(), [[0, 1], [2, 3]])

    it = mx.io.NDArrayIter([x1, x1 * 2], [np.zeros(5)], batch_size=5, label_name='lab')
    assert [d.name for d in it.provide_data] == ['_0_data', '_1_data']
    assert [d.name for d in it.provide_label] == ['lab']
    assert it.provide_label[0].shape == (5,)
    batch = next(it)
    np.testing.assert_array_equal(batch.data[1].asnumpy(), np.full((5, 2), 2.0))


def test_layout_with_batch_axis_one():
    data = np.arange(2 * 5 * 3, dtype=np.float32).reshape(2, 5, 3)     # (T, N, C)
    label = np.arange(10, dtype=np.float32).reshape(2, 5)
    it = mx.io.NDArrayIter(data, label, batch_size=2, layout='TNC', last_batch_handle='pad')
    assert it.provide_data[0].shape == (2, 2, 3) and it.provide_data[0].layout == 'TNC'
    batches = list(it)
    assert len(batches) == 3 and batches[-1].pad == 1
    np.testing.assert_array_equal(batches[1].data[0].asnumpy(), data[:, 2:4])
    np.testing.assert_array_equal(batches[2].data[0].asnumpy(), data[:, [4, 0]])
    np.testing.assert_array_equal(batches[2].label[0].asnumpy(), label[:, [4, 0]])


def test_getters_and_iteration_protocol():
    it = make_iter(9, 'pad', batch_size=4)
    assert it.iter_next()
    assert it.getpad() == 0 and list(it.getindex()) == [0, 1, 2, 3]
    assert len(list(it)) == 2                      # the rest of the epoch
    assert list(it) == []                          # no implicit reset
    with pytest.raises(StopIteration):
        it.next()
    with pytest.raises(RuntimeError, match='no current batch'):
        it.getdata()
    it.reset()
    assert len(list(it)) == 3


@pytest.mark.parametrize('kwargs, exc, match', [
    (dict(data=None), ValueError, 'data must not be None'),
    (dict(data=np.zeros((4, 2)), batch_size=0), ValueError, 'batch_size'),
    (dict(data=np.zeros((4, 2)), batch_size=2.0), TypeError, 'batch_size'),
    (dict(data=np.zeros((4, 2)), last_batch_handle='keep'), ValueError, 'last_batch_handle'),
    (dict(data=np.zeros((4, 2)), label=np.zeros(5)), ValueError, 'same number of samples'),
    (dict(data=np.array(3.0)), ValueError, 'at least one dimension'),
    (dict(data='abc'), TypeError, 'data must be'),
    (dict(data={1: np.zeros(3)}), TypeError, 'keys must be str'),
    (dict(data=np.zeros((4, 2)), layout='CHW'), ValueError, 'layout'),
])
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        mx.io.NDArrayIter(**kwargs)


def test_create_by_name():
    it = mx.io.create('NDArrayIter', data=np.zeros((4, 2)), batch_size=2)
    assert isinstance(it, mx.io.NDArrayIter) and len(list(it)) == 2
