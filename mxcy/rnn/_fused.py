"""FusedRNNCell: a whole multi-layer (bidirectional) RNN as one ``RNN`` operator node.

The parameters are one vector ``<prefix>parameters`` in MXNet's packed layout (every
layer's and direction's i2h then h2h weights, gate blocks stacked; then every bias), the
layout ``mx.sym.RNN`` reads (``mxcy.operator.rnn``). ``unpack_weights`` cuts it into
MXNet's per-gate names (``<prefix>l0_i2h_f_weight``; ``r`` for the reverse direction)
and ``unfuse()`` returns the equivalent stack of step cells, so the weights move between
the two with ``unfuse().pack_weights(fused.unpack_weights(args))``.
"""
from mxcy import initializer as init
from mxcy import ndarray, symbol
from mxcy.rnn.rnn_cell import (
    BaseRNNCell,
    BidirectionalCell,
    DropoutCell,
    GRUCell,
    LSTMCell,
    RNNCell,
    SequentialRNNCell,
    _check_length,
    _normalize_sequence,
    _resolve_states,
)

_GATE_NAMES = {'rnn_relu': [''], 'rnn_tanh': [''], 'lstm': ['_i', '_f', '_c', '_o'],
               'gru': ['_r', '_z', '_o']}


class FusedRNNCell(BaseRNNCell):
    """`num_layers` layers of `mode` ('rnn_relu', 'rnn_tanh', 'lstm', 'gru') in one node.

    `dropout` applies between layers in training; `get_next_state` also returns the
    final states. It cannot be stepped: use `unroll` (all time steps at once).
    """

    def __init__(self, num_hidden, num_layers=1, mode='lstm', bidirectional=False,
                 dropout=0., get_next_state=False, forget_bias=1.0, prefix=None,
                 params=None):
        if mode not in _GATE_NAMES:
            raise ValueError(f"FusedRNNCell: mode must be one of {sorted(_GATE_NAMES)}, got "
                             f"{mode!r}")
        if prefix is None:
            prefix = f'{mode}_'
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ['l', 'r'] if bidirectional else ['l']
        initializer = init.FusedRNN(None, num_hidden, num_layers, mode, bidirectional,
                                    forget_bias)
        self._parameter = self.params.get('parameters', init=initializer)

    @property
    def state_info(self):
        b = self._bidirectional + 1
        n = (self._mode == 'lstm') + 1
        return [{'shape': (b * self._num_layers, 0, self._num_hidden), '__layout__': 'LNC'}
                for _ in range(n)]

    @property
    def _gate_names(self):
        return _GATE_NAMES[self._mode]

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def _slice_weights(self, arr, li, lh):
        """{per-gate name: view of the flat vector `arr`} for input size `li`."""
        args, p = {}, 0
        b = len(self._directions)
        for layer in range(self._num_layers):
            for direction in self._directions:
                for gate in self._gate_names:
                    name = f'{self._prefix}{direction}{layer}_i2h{gate}_weight'
                    width = li if layer == 0 else b * lh
                    args[name] = arr[p:p + lh * width].reshape((lh, width))
                    p += lh * width
                for gate in self._gate_names:
                    name = f'{self._prefix}{direction}{layer}_h2h{gate}_weight'
                    args[name] = arr[p:p + lh * lh].reshape((lh, lh))
                    p += lh * lh
        for layer in range(self._num_layers):
            for direction in self._directions:
                for group in ('i2h', 'h2h'):
                    for gate in self._gate_names:
                        args[f'{self._prefix}{direction}{layer}_{group}{gate}_bias'] = \
                            arr[p:p + lh]
                        p += lh
        if p != arr.size:
            raise ValueError(f"FusedRNNCell: {arr.size} parameters do not fit "
                             f"mode={self._mode!r}, num_hidden={lh}, "
                             f"num_layers={self._num_layers}, "
                             f"bidirectional={self._bidirectional} (expected {p})")
        return args

    def _input_size(self, size):
        b, m, h = len(self._directions), self._num_gates, self._num_hidden
        return size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2

    def unpack_weights(self, args):
        args = dict(args)
        arr = args.pop(self._parameter.name)
        pieces = self._slice_weights(arr, self._input_size(arr.size), self._num_hidden)
        args.update({name: piece.copy() for name, piece in pieces.items()})
        return args

    def pack_weights(self, args):
        args = dict(args)
        b, m, h = len(self._directions), self._num_gates, self._num_hidden
        w0 = args[f'{self._prefix}l0_i2h{self._gate_names[0]}_weight']
        num_input = w0.shape[1]
        total = (num_input + h + 2) * h * m * b + \
            (self._num_layers - 1) * m * h * (h + b * h + 2) * b
        arr = ndarray.zeros((total,), ctx=w0.context, dtype=w0.dtype)
        for name, piece in self._slice_weights(arr, num_input, h).items():
            piece[:] = args.pop(name)
        args[self._parameter.name] = arr
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        _check_length('unroll', length)
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:       # the RNN operator takes TNC
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        states = self.begin_state() if begin_state is None else begin_state
        states = _resolve_states(states, inputs, 1)
        names = ['state', 'state_cell'] if self._mode == 'lstm' else ['state']
        if len(states) != len(names):
            raise ValueError(f"FusedRNNCell.unroll: mode {self._mode!r} takes "
                             f"{len(names)} begin states, got {len(states)}")
        rnn = symbol.RNN(data=inputs, parameters=self._parameter,
                         state_size=self._num_hidden, num_layers=self._num_layers,
                         bidirectional=self._bidirectional, p=self._dropout,
                         state_outputs=self._get_next_state, mode=self._mode,
                         name=self._prefix + 'rnn', **dict(zip(names, states)))
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            outputs = rnn[0]
            states = [rnn[i] for i in range(1, len(names) + 1)]
            for state in states:
                state._set_attr(__layout__='LNC')
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The equivalent SequentialRNNCell of step cells (same parameter names once
        packed: ``<prefix>l<i>_i2h_weight`` ...)."""
        def make(cell_prefix):
            if self._mode == 'lstm':
                return LSTMCell(self._num_hidden, prefix=cell_prefix)
            if self._mode == 'gru':
                return GRUCell(self._num_hidden, prefix=cell_prefix)
            return RNNCell(self._num_hidden, activation=self._mode[4:], prefix=cell_prefix)
        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make(f'{self._prefix}l{i}_'),
                                            make(f'{self._prefix}r{i}_'),
                                            output_prefix=f'{self._prefix}bi_l{i}_'))
            else:
                stack.add(make(f'{self._prefix}l{i}_'))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f'{self._prefix}_dropout{i}_'))
        return stack
