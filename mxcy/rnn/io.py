"""Sentence data for RNNs: ``encode_sentences`` and ``BucketSentenceIter`` (MXNet 1.x).

``encode_sentences`` maps tokens to integer ids. ``BucketSentenceIter`` groups encoded
sentences by length into buckets: a sentence goes to the smallest bucket at least as
long, padded with ``invalid_label``; sentences longer than the largest bucket are
dropped (with a logged warning), and so are the rows of a bucket that do not fill a
whole batch. Each batch comes from one bucket: ``bucket_key`` is the bucket length and
``provide_data`` / ``provide_label`` give that batch's shapes, so a BucketingModule
binds one executor per bucket. The label of position t is the token at t + 1 (language
modelling); the last position, and every padded one, is ``invalid_label``. Every epoch
(``reset``) reshuffles the batch order and the rows inside each bucket, with NumPy's
global random state (``np.random.seed`` makes it repeatable).
"""
import bisect
import logging

import numpy as np

from mxcy import ndarray
from mxcy.io.base import DataBatch, DataDesc, DataIter, check_batch_size

logger = logging.getLogger(__name__)


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key='\n',
                     start_label=0, unknown_token=None):
    """Encode token sequences as ids: ``(encoded sentences, vocab)``.

    Without `vocab`, a new one maps `invalid_key` to `invalid_label` and every other
    token, in order of first appearance, to the next id from `start_label` (skipping
    `invalid_label`). With `vocab`, an unknown token maps to `unknown_token`'s id (the
    token is added to the vocab once if missing) or raises a KeyError naming it.
    """
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
        next_id = start_label
    else:
        next_id = max([start_label] + [v + 1 for v in vocab.values()])

    def add(token):
        nonlocal next_id
        if next_id == invalid_label:
            next_id += 1
        vocab[token] = next_id
        next_id += 1
        return vocab[token]

    encoded = []
    for sentence in sentences:
        coded = []
        for token in sentence:
            if token in vocab:
                coded.append(vocab[token])
            elif new_vocab:
                coded.append(add(token))
            elif unknown_token is not None:
                coded.append(vocab[unknown_token] if unknown_token in vocab
                             else add(unknown_token))
            else:
                raise KeyError(f"encode_sentences: token {token!r} is not in the vocab; pass "
                               "unknown_token= to map unknown tokens to one id")
        encoded.append(coded)
    return encoded, vocab


class BucketSentenceIter(DataIter):
    """Batches of equal-length (padded) sentences, one bucket per batch (module doc)."""

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1,
                 data_name='data', label_name='softmax_label', dtype='float32',
                 layout='NT'):
        batch_size = check_batch_size(batch_size, 'BucketSentenceIter')
        super().__init__(batch_size)
        if layout not in ('NT', 'TN'):
            raise ValueError(f"BucketSentenceIter: layout must be 'NT' (batch major) or 'TN' "
                             f"(time major), got {layout!r}")
        lengths = [len(s) for s in sentences]
        if not buckets:
            counts = np.bincount(lengths) if lengths else np.zeros(0, int)
            buckets = [n for n, count in enumerate(counts) if count >= batch_size and n > 0]
            if not buckets:
                raise ValueError(f"BucketSentenceIter: no sentence length occurs at least "
                                 f"batch_size={batch_size} times; pass buckets= explicitly")
        buckets = sorted(int(b) for b in buckets)
        if buckets[0] < 1:
            raise ValueError(f"BucketSentenceIter: buckets must be positive lengths, got "
                             f"{buckets}")
        rows = [[] for _ in buckets]
        ndiscard = 0
        for sentence, n in zip(sentences, lengths):
            which = bisect.bisect_left(buckets, n)
            if which == len(buckets):
                ndiscard += 1
                continue
            row = np.full((buckets[which],), invalid_label, dtype=dtype)
            row[:n] = sentence
            rows[which].append(row)
        if ndiscard:
            logger.warning('BucketSentenceIter: discarded %d sentences longer than the '
                           'largest bucket (%d)', ndiscard, buckets[-1])
        self.data = [np.asarray(r, dtype=dtype).reshape(len(r), b)
                     for r, b in zip(rows, buckets)]
        self.buckets = buckets
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.layout = layout
        self.major_axis = layout.find('N')
        self.default_bucket_key = max(buckets)
        self.provide_data = [self._desc(data_name, self.default_bucket_key)]
        self.provide_label = [self._desc(label_name, self.default_bucket_key)]
        self.idx = [(i, j) for i, bucket in enumerate(self.data)
                    for j in range(0, len(bucket) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.nddata, self.ndlabel = [], []
        self.reset()

    def _desc(self, name, length):
        shape = (self.batch_size, length) if self.major_axis == 0 else \
            (length, self.batch_size)
        return DataDesc(name, shape, self.dtype, layout=self.layout)

    def reset(self):
        """Rewind; reshuffle the batch order and the rows of every bucket."""
        self.curr_idx = 0
        order = np.random.permutation(len(self.idx))
        self.idx = [self.idx[k] for k in order]
        self.nddata, self.ndlabel = [], []
        for bucket in self.data:
            np.random.shuffle(bucket)
            label = np.empty_like(bucket)
            label[:, :-1] = bucket[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(bucket, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        key = self.buckets[i]
        return DataBatch([data], [label], pad=0, bucket_key=key,
                         provide_data=[self._desc(self.data_name, key)],
                         provide_label=[self._desc(self.label_name, key)])
