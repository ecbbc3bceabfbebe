"""Gluon recurrent layers (MXNet 1.x ``gluon.rnn.RNN``, ``LSTM``, ``GRU``).

A layer runs a whole multi-layer (bidirectional) sequence. Its parameters are MXNet's:
per layer ``l`` and direction (``l`` forward, ``r`` reverse) ``<prefix>l0_i2h_weight``
(G·H, input_size; deferred when input_size is 0), ``l0_h2h_weight`` (G·H, H),
``l0_i2h_bias``, ``l0_h2h_bias`` and, for an LSTM with `projection_size` P,
``l0_h2r_weight`` (P, H); a layer above the first takes D·H (D·P) inputs.
``save_parameters`` writes MXNet's keys (``_unfused.0.l_cell.i2h_weight``).

The computation is the fused ``RNN`` operator, fed the weights packed in MXNet's order
(every weight, then every bias; per layer, direction, i2h then h2h). What that operator
does not do — an LSTM projection, state clipping, per-sequence lengths — runs as the
cells' step math unrolled over time (`_step_forward`), with the semantics of MXNet's
cuDNN kernel: with ``use_sequence_length`` each sequence stops at its length (the reverse
direction starts there), outputs past it are 0 and the states are its last step's. (MXNet
1.9.1's CPU kernel ignored the lengths and the clipping.) That graph depends on the number
of steps: hybridized, the layer keeps one per sequence length; as a Symbol, its input must
have a known shape.

A layer with a deferred input size (input_size=0) learns it from its first NDArray call.
Inside a parent block hybridized before any forward, the parent's shape inference cannot
reach it (MXNet does it with its ``_rnn_param_concat`` operator, which mxcy lacks): give
`input_size`, or run one forward before hybridizing.

``layer(x)`` returns the output; ``layer(x, states)`` returns (output, new states).
"""
from mxcy import ndarray as _nd
from mxcy import symbol as _sym
from mxcy._ndarray import NDArray
from mxcy.gluon.block import HybridBlock, traced_shape
from mxcy.gluon.rnn import _util
from mxcy.gluon.rnn import rnn_cell
from mxcy.rnn.rnn_cell import _call_state_func, _resolve_states

__all__ = ['RNN', 'LSTM', 'GRU']

_GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}


class _RNNLayer(_util._NestedGraph, HybridBlock):
    """What RNN, LSTM and GRU share."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        if layout not in ('TNC', 'NTC'):
            raise AssertionError(f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']")
        if (lstm_state_clip_min is None) != (lstm_state_clip_max is None):
            raise ValueError("state_clip_min and state_clip_max must be given together")
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._step_graphs = {}          # T -> traced graph, when the steps are unrolled
        self._graph_steps = None
        self._gates = _GATES[mode]
        rows, ni = self._gates * hidden_size, input_size
        nr = self._projection_size or hidden_size       # what h2h reads and layers emit
        for i in range(num_layers):
            for d in ['l', 'r'][:self._dir]:
                self._register_param(f'{d}{i}_i2h_weight', (rows, ni), i2h_weight_initializer)
                self._register_param(f'{d}{i}_h2h_weight', (rows, nr), h2h_weight_initializer)
                self._register_param(f'{d}{i}_i2h_bias', (rows,), i2h_bias_initializer)
                self._register_param(f'{d}{i}_h2h_bias', (rows,), h2h_bias_initializer)
                if self._projection_size:
                    self._register_param(f'{d}{i}_h2r_weight', (nr, hidden_size),
                                         h2r_weight_initializer)
            ni = nr * self._dir

    def _register_param(self, name, shape, init):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True,
                            dtype=self._dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        shape = self.l0_i2h_weight.shape
        s = f'{type(self).__name__}({shape[1] if shape[1] else None} -> ' \
            f'{shape[0] // self._gates}, {self._layout}'
        if self._num_layers != 1:
            s += f', num_layers={self._num_layers}'
        if self._dropout != 0:
            s += f', dropout={self._dropout}'
        if self._dir == 2:
            s += ', bidirectional'
        return s + ')'

    def _collect_params_with_prefix(self, prefix=''):
        """MXNet's file keys: ``_unfused.<layer>.[l_cell.|r_cell.]<i2h|h2h|h2r>_<kind>``."""
        if prefix:
            prefix += '.'
        ret = {}
        for key, value in self._reg_params.items():
            d, rest = key[0], key[1:]
            layer, name = rest.split('_', 1)
            cell = f'{d}_cell.' if self._dir == 2 else ''
            ret[f'{prefix}_unfused.{layer}.{cell}{name}'] = value
        return ret

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=_nd.zeros, **kwargs):
        """Zero states ((L·D, N, H) each), made by ``func(name=..., shape=..., ...)``."""
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info = dict(info or {})
            info.update(kwargs)
            states.append(_call_state_func(func, f'{self.prefix}h0_{i}', info))
        return states

    def _unfuse(self):
        """The equivalent HybridSequentialRNNCell of step cells, sharing these
        parameters (not for a projection or state clipping)."""
        if self._projection_size or self._lstm_state_clip_min is not None:
            raise NotImplementedError("_unfuse does not support projection or state "
                                      "clipping")

        def make(**kwargs):
            if self._mode == 'lstm':
                return rnn_cell.LSTMCell(self._hidden_size, **kwargs)
            if self._mode == 'gru':
                return rnn_cell.GRUCell(self._hidden_size, **kwargs)
            return rnn_cell.RNNCell(self._hidden_size, activation=self._mode[4:], **kwargs)
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            # the known input size: ParameterDict.get refuses an unknown (0) dimension
            # where the stored parameter has a known one
            ni = self.l0_i2h_weight.shape[1]
            for i in range(self._num_layers):
                kwargs = {'input_size': ni,
                          'i2h_weight_initializer': self._i2h_weight_initializer,
                          'h2h_weight_initializer': self._h2h_weight_initializer,
                          'i2h_bias_initializer': self._i2h_bias_initializer,
                          'h2h_bias_initializer': self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(make(prefix=f'l{i}_', **kwargs),
                                                         make(prefix=f'r{i}_', **kwargs)))
                else:
                    stack.add(make(prefix=f'l{i}_', **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    # ------------------------------------------------------------ calling
    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        return super().__call__(inputs, states, sequence_length)

    def forward(self, inputs, states=None, sequence_length=None):
        self.skip_states = skip = states is None
        batch_axis = self._layout.find('N')
        if skip:
            if isinstance(inputs, NDArray):
                states = self.begin_state(inputs.shape[batch_axis], ctx=inputs.context,
                                          dtype=inputs.dtype)
            else:
                states = _resolve_states(self.begin_state(0, func=_sym.zeros), inputs,
                                         batch_axis)
        if isinstance(states, _util.TENSORS):
            states = [states]
        states = list(states)
        if isinstance(inputs, NDArray):
            for state, info in zip(states, self.state_info(inputs.shape[batch_axis])):
                if state.shape != info['shape']:
                    raise ValueError(f"Invalid recurrent state shape. Expecting "
                                     f"{info['shape']}, got {state.shape}.")
        args = [states]
        if self._use_sequence_length:
            if sequence_length is None:
                raise ValueError(f"{self.name}: use_sequence_length=True needs "
                                 "sequence_length (one length per sequence)")
            args.append(sequence_length)
        steps = None
        if isinstance(inputs, NDArray) and self._active and not self._fused():
            # the step path's graph unrolls T steps: one cached graph per T
            steps = inputs.shape[self._layout.find('T')]
            self._cached_graph, self._cached, self._out_format = \
                self._step_graphs.get(steps, (None, None, None))
        self._graph_steps = steps
        try:
            out, new_states = HybridBlock.forward(self, inputs, *args)
        finally:
            if steps is not None:
                self._step_graphs[steps] = (self._cached_graph, self._cached,
                                            self._out_format)
            self._graph_steps = None
        return out if skip else (out, list(new_states))

    def hybridize(self, active=True, **kwargs):
        self._step_graphs = {}
        super().hybridize(active, **kwargs)

    def _deferred_infer_shape(self, inputs, *args):
        """The only unknown shapes are the first layer's i2h weights: (G·H, C)."""
        self._set_input_size(inputs.shape[2])

    def _set_input_size(self, size):
        for d in ['l', 'r'][:self._dir]:
            getattr(self, f'{d}0_i2h_weight').shape = (self._gates * self._hidden_size, size)

    def _fused(self):
        return not (self._projection_size or self._use_sequence_length or
                    self._lstm_state_clip_min is not None)

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if not isinstance(inputs, NDArray) and not self.l0_i2h_weight.shape[-1]:
            shape = traced_shape(inputs)    # traced inside a parent: input size from it
            if shape is not None:
                self._set_input_size(shape[-1])
        if self._layout == 'NTC':
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        if self._fused():
            outputs, states = self._fused_forward(F, inputs, states, kwargs)
        else:
            outputs, states = _step_forward(self, F, inputs, states, sequence_length, kwargs)
        if self._layout == 'NTC':
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        return outputs, states

    def _fused_forward(self, F, inputs, states, params):
        flat = [F.reshape(params[f'{d}{i}_{g}_{t}'], shape=(-1,))
                for t in ('weight', 'bias') for i in range(self._num_layers)
                for d in ['l', 'r'][:self._dir] for g in ('i2h', 'h2h')]
        packed = F.concat(*flat, dim=0) if len(flat) > 1 else flat[0]
        named = dict(zip(['state', 'state_cell'], states))
        rnn = F.RNN(data=inputs, parameters=packed, state_size=self._hidden_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode, **named)
        n = 3 if self._mode == 'lstm' else 2
        return rnn[0], [rnn[i] for i in range(1, n)]


def _step_forward(layer, F, inputs, states, lengths, params):
    """The layer as its cells' step math unrolled (TNC in and out)."""
    steps = inputs.shape[0] if isinstance(inputs, NDArray) else layer._graph_steps
    if steps is None:
        try:
            steps = (inputs.infer_shape_partial()[1][0] or (0,))[0]
        except Exception:           # noqa: BLE001  (no shapes to infer from)
            steps = 0
        if not steps:
            raise ValueError(f"{layer.name}: with projection_size, state clipping or "
                             "use_sequence_length the layer unrolls over time, so the "
                             "sequence length must be known (give the input a shape)")
    mode, hidden, ndir = layer._mode, layer._hidden_size, layer._dir
    nstate = layer._num_layers * ndir
    hs = _util.split_steps(F, states[0], nstate, 0)
    cs = _util.split_steps(F, states[1], nstate, 0) if mode == 'lstm' else [None] * nstate
    clip = None if layer._lstm_state_clip_min is None else (
        layer._lstm_state_clip_min, layer._lstm_state_clip_max, layer._lstm_state_clip_nan)
    xs = _util.split_steps(F, inputs, steps, 0)
    out_h, out_c = [], []
    for i in range(layer._num_layers):
        dir_outputs = []
        for j, d in enumerate(['l', 'r'][:ndir]):
            w = {g: params[f'{d}{i}_{g}'] for g in ('i2h_weight', 'h2h_weight', 'i2h_bias',
                                                      'h2h_bias')}
            seq = xs if j == 0 else _util.reverse_sequence(F, xs, lengths)
            state = [hs[i * ndir + j]] + ([cs[i * ndir + j]] if mode == 'lstm' else [])
            outputs, history = [], []
            for t, x in enumerate(seq):
                prefix = f'{d}{i}_t{t}_'
                args = (F, x, state, w['i2h_weight'], w['h2h_weight'], w['i2h_bias'],
                        w['h2h_bias'], hidden)
                if mode == 'lstm':
                    out, state = _util.lstm_step(*args, prefix=prefix,
                                                 h2r=params.get(f'{d}{i}_h2r_weight'),
                                                 proj=layer._projection_size, clip=clip)
                elif mode == 'gru':
                    out, state = _util.gru_step(*args, prefix=prefix)
                else:
                    out, state = _util.rnn_step(*args, mode[4:], prefix=prefix)
                outputs.append(out)
                if lengths is not None:
                    history.append(state)
            if lengths is not None:
                state = _util.last_states(F, history, lengths)
                outputs = _util.mask_sequence(F, outputs, steps, lengths, 0, False)
            if j == 1:
                outputs = _util.reverse_sequence(F, outputs, lengths)
            dir_outputs.append(outputs)
            out_h.append(state[0])
            if mode == 'lstm':
                out_c.append(state[1])
        xs = [F.concat(*per_dir, dim=1) if ndir == 2 else per_dir[0]
              for per_dir in zip(*dir_outputs)]
        if layer._dropout > 0 and i != layer._num_layers - 1:
            xs = [F.Dropout(x, p=layer._dropout) for x in xs]
    new_states = [F.stack(*out_h, axis=0)] + ([F.stack(*out_c, axis=0)] if out_c else [])
    return F.stack(*xs, axis=0), new_states


class RNN(_RNNLayer):
    """Multi-layer Elman RNN: h_t = act(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh), act
    'relu' (default) or 'tanh'. States: [h] of shape (num_layers·D, N, hidden_size)."""

    def __init__(self, hidden_size, num_layers=1, activation='relu', layout='TNC', dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 dtype='float32', **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 'rnn_' + activation,
                         None, None, None, None, False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [{'shape': (self._num_layers * self._dir, batch_size, self._hidden_size),
                 '__layout__': 'LNC', 'dtype': self._dtype}]


class LSTM(_RNNLayer):
    """Multi-layer LSTM (gates i, f, c, o). States: [h, c], each (num_layers·D, N,
    hidden_size); with `projection_size` P the output and h are projected to P units
    (h is then (num_layers·D, N, P)). `state_clip_min`/`max` clip the cell state."""

    def __init__(self, hidden_size, num_layers=1, layout='TNC', dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype='float32', **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 'lstm', projection_size,
                         h2r_weight_initializer, state_clip_min, state_clip_max,
                         state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size=0):
        lnc = self._num_layers * self._dir
        h = self._projection_size or self._hidden_size
        return [{'shape': (lnc, batch_size, h), '__layout__': 'LNC', 'dtype': self._dtype},
                {'shape': (lnc, batch_size, self._hidden_size), '__layout__': 'LNC',
                 'dtype': self._dtype}]


class GRU(_RNNLayer):
    """Multi-layer GRU (gates r, z, n; MXNet's: the reset gate scales W_hn h + b_hn).
    States: [h] of shape (num_layers·D, N, hidden_size)."""

    def __init__(self, hidden_size, num_layers=1, layout='TNC', dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', dtype='float32',
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 'gru', None, None, None,
                         None, False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [{'shape': (self._num_layers * self._dir, batch_size, self._hidden_size),
                 '__layout__': 'LNC', 'dtype': self._dtype}]
