"""``gluon.rnn``: recurrent layers on the fused ``RNN`` operator (RNN, LSTM, GRU) and
recurrent cells (one step as a Block; ``unroll`` runs a sequence)."""
from mxcy.gluon.rnn import rnn_cell, rnn_layer
from mxcy.gluon.rnn.rnn_cell import (
    BidirectionalCell,
    DropoutCell,
    GRUCell,
    HybridRecurrentCell,
    HybridSequentialRNNCell,
    LSTMCell,
    ModifierCell,
    RecurrentCell,
    ResidualCell,
    RNNCell,
    SequentialRNNCell,
    ZoneoutCell,
)
from mxcy.gluon.rnn.rnn_layer import GRU, LSTM, RNN

__all__ = rnn_cell.__all__ + rnn_layer.__all__
