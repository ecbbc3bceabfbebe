"""mx.rnn.encode_sentences and BucketSentenceIter: vocab ids, bucket shapes and keys,
padding with invalid_label, shifted labels, discarded sentences, layouts, reshuffling."""
import logging

import numpy as np
import pytest

import mxcy as mx


# ---------------------------------------------------------------- encode_sentences
def test_encode_sentences_builds_a_vocab_in_order_of_appearance():
    coded, vocab = mx.rnn.encode_sentences([['a', 'b', 'a'], ['c', '\n', 'b']])
    assert vocab == {'\n': -1, 'a': 0, 'b': 1, 'c': 2}
    assert coded == [[0, 1, 0], [2, -1, 1]]


def test_encode_sentences_skips_the_invalid_label_id():
    coded, vocab = mx.rnn.encode_sentences(['xy', 'yz'], invalid_label=1, invalid_key='_',
                                           start_label=0)
    assert vocab == {'_': 1, 'x': 0, 'y': 2, 'z': 3}
    assert coded == [[0, 2], [2, 3]]


def test_encode_sentences_with_a_given_vocab():
    vocab = {'a': 1, 'b': 2}
    coded, same = mx.rnn.encode_sentences(['ab', 'ba'], vocab=vocab)
    assert coded == [[1, 2], [2, 1]] and same is vocab
    with pytest.raises(KeyError, match="token 'c' is not in the vocab"):
        mx.rnn.encode_sentences(['abc'], vocab={'a': 1, 'b': 2})
    coded, vocab = mx.rnn.encode_sentences(['acd', 'b'], vocab={'a': 1, 'b': 2},
                                           unknown_token='<unk>')
    assert vocab['<unk>'] == 3 and len(vocab) == 3
    assert coded == [[1, 3, 3], [2]]


# ---------------------------------------------------------------- BucketSentenceIter
def _sentences():
    rng = np.random.default_rng(0)
    lengths = [2] * 7 + [3] * 5 + [5] * 9 + [9] * 2      # 9 > largest bucket (8)
    return [list(rng.integers(1, 20, n)) for n in lengths]


def _batches(it):
    it.reset()
    return list(it)


def test_batches_have_bucket_shapes_keys_and_padding(caplog):
    sentences = _sentences()
    with caplog.at_level(logging.WARNING):
        it = mx.rnn.BucketSentenceIter(sentences, batch_size=4, buckets=[4, 8],
                                       invalid_label=-1)
    assert 'discarded 2 sentences' in caplog.text
    assert it.default_bucket_key == 8
    assert it.provide_data[0].name == 'data' and it.provide_data[0].shape == (4, 8)
    assert it.provide_label[0].name == 'softmax_label'
    # bucket 4 holds 12 sentences (3 batches), bucket 8 holds 9 (2 batches, 1 left out)
    batches = _batches(it)
    keys = sorted(b.bucket_key for b in batches)
    assert keys == [4, 4, 4, 8, 8]
    originals = {tuple(s) for s in sentences}
    for batch in batches:
        data, label = batch.data[0].asnumpy(), batch.label[0].asnumpy()
        assert data.shape == label.shape == (4, batch.bucket_key)
        assert batch.provide_data[0].shape == (4, batch.bucket_key)
        assert batch.provide_label[0].shape == (4, batch.bucket_key)
        assert batch.pad == 0
        for row, lab in zip(data, label):
            n = int((row != -1).sum())
            assert tuple(row[:n].astype(int)) in originals
            assert np.all(row[n:] == -1)                      # padded with invalid_label
            np.testing.assert_array_equal(lab[:-1], row[1:])  # next token
            assert lab[-1] == -1


def test_each_epoch_reshuffles_and_covers_every_full_batch_once():
    np.random.seed(1)
    it = mx.rnn.BucketSentenceIter(_sentences(), batch_size=4, buckets=[4, 8])

    def bucket_rows(batches, key):
        return [tuple(r) for b in batches if b.bucket_key == key for r in b.data[0].asnumpy()]
    epochs = [_batches(it) for _ in range(4)]
    assert all(len(e) == 5 for e in epochs)
    # the 12 short sentences fill exactly 3 batches: every epoch shows each once
    short = sorted(bucket_rows(epochs[0], 4))
    assert len(set(short)) == len(short) == 12
    assert all(sorted(bucket_rows(e, 4)) == short for e in epochs)
    # the order changes from epoch to epoch
    orders = {tuple(bucket_rows(e, 4) + bucket_rows(e, 8)) for e in epochs}
    assert len(orders) > 1


def test_automatic_buckets_are_lengths_with_a_full_batch():
    it = mx.rnn.BucketSentenceIter(_sentences(), batch_size=5)
    assert it.buckets == [2, 3, 5]
    assert sorted(b.bucket_key for b in _batches(it)) == [2, 3, 5]
    with pytest.raises(ValueError, match='no sentence length occurs at least batch_size=50'):
        mx.rnn.BucketSentenceIter(_sentences(), batch_size=50)


def test_time_major_layout_transposes_batches():
    it = mx.rnn.BucketSentenceIter(_sentences(), batch_size=4, buckets=[4, 8], layout='TN',
                                   data_name='seq', label_name='next')
    assert it.provide_data[0].shape == (8, 4) and it.provide_data[0].name == 'seq'
    assert it.provide_label[0].name == 'next'
    for batch in _batches(it):
        data, label = batch.data[0].asnumpy(), batch.label[0].asnumpy()
        assert data.shape == (batch.bucket_key, 4)
        np.testing.assert_array_equal(label[:-1], data[1:])
    with pytest.raises(ValueError, match="layout must be 'NT'"):
        mx.rnn.BucketSentenceIter(_sentences(), 4, buckets=[8], layout='NTC')


def test_dtype_and_batch_size_checks():
    it = mx.rnn.BucketSentenceIter(_sentences(), 4, buckets=[8], dtype='int32')
    batch = next(iter(_batches(it)))
    assert batch.data[0].dtype == np.int32
    with pytest.raises(ValueError, match='batch_size must be a positive int'):
        mx.rnn.BucketSentenceIter(_sentences(), 0, buckets=[8])


def test_bucket_without_full_batch_yields_nothing_from_it():
    it = mx.rnn.BucketSentenceIter([[1, 2]] * 3 + [[1, 2, 3, 4]] * 4, 4, buckets=[2, 4, 6])
    batches = _batches(it)
    assert [b.bucket_key for b in batches] == [4]
    assert it.data[2].shape == (0, 6)
