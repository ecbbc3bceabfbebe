"""``mx.rnn``: symbolic RNN cells and bucketed sentence data (MXNet 1.x names).

Cells (`mxcy.rnn.rnn_cell`): RNNCell, LSTMCell, GRUCell, FusedRNNCell,
SequentialRNNCell, BidirectionalCell, DropoutCell, ZoneoutCell, ResidualCell, with
``unroll`` / ``begin_state`` / ``unpack_weights`` / ``pack_weights`` and RNNParams.
Data (`mxcy.rnn.io`): BucketSentenceIter and encode_sentences, for BucketingModule.
"""
from mxcy.rnn.io import BucketSentenceIter, encode_sentences
from mxcy.rnn.rnn_cell import (
    BaseRNNCell,
    BidirectionalCell,
    DropoutCell,
    FusedRNNCell,
    GRUCell,
    LSTMCell,
    ModifierCell,
    ResidualCell,
    RNNCell,
    RNNParams,
    SequentialRNNCell,
    ZoneoutCell,
)

__all__ = ['BaseRNNCell', 'BidirectionalCell', 'BucketSentenceIter', 'DropoutCell',
           'FusedRNNCell', 'GRUCell', 'LSTMCell', 'ModifierCell', 'RNNCell', 'RNNParams',
           'ResidualCell', 'SequentialRNNCell', 'ZoneoutCell', 'encode_sentences']
