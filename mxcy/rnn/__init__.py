"""``mx.rnn``: symbolic RNN cells and bucketed sentence data (MXNet 1.x names).

Cells (`mxcy.rnn.rnn_cell`): RNNCell, LSTMCell, GRUCell, FusedRNNCell,
SequentialRNNCell, BidirectionalCell, DropoutCell, ZoneoutCell, ResidualCell, with
``unroll`` / ``begin_state`` / ``unpack_weights`` / ``pack_weights`` and RNNParams.
Convolutional cells (`mxcy.rnn.conv_rnn_cell`): ConvRNNCell, ConvLSTMCell, ConvGRUCell.
Data (`mxcy.rnn.io`): BucketSentenceIter and encode_sentences, for BucketingModule.
Checkpoints (`mxcy.rnn.checkpoint`): save_rnn_checkpoint, load_rnn_checkpoint,
do_rnn_checkpoint (weights unpacked per gate in the file), and the deprecated rnn_unroll;
save_checkpoint / load_checkpoint are ``mx.model``'s.
"""
from mxcy.model import load_checkpoint, save_checkpoint
from mxcy.rnn.checkpoint import (do_rnn_checkpoint, load_rnn_checkpoint, rnn_unroll,
                                 save_rnn_checkpoint)
from mxcy.rnn.conv_rnn_cell import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell
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

__all__ = ['BaseConvRNNCell', 'BaseRNNCell', 'BidirectionalCell', 'BucketSentenceIter',
           'ConvGRUCell', 'ConvLSTMCell', 'ConvRNNCell', 'DropoutCell', 'FusedRNNCell',
           'GRUCell', 'LSTMCell', 'ModifierCell', 'RNNCell', 'RNNParams', 'ResidualCell',
           'SequentialRNNCell', 'ZoneoutCell', 'do_rnn_checkpoint', 'encode_sentences',
           'load_checkpoint', 'load_rnn_checkpoint', 'rnn_unroll', 'save_checkpoint',
           'save_rnn_checkpoint']
