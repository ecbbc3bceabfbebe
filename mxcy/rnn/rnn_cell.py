"""Symbolic RNN cells (MXNet 1.x ``mx.rnn``): build unrolled recurrent graphs.

A cell maps ``(inputs, states) -> (output, next_states)`` for one time step, as symbols;
``unroll(length, inputs)`` applies it ``length`` times with shared parameters. Parameters
are variables named as in MXNet: ``<prefix>i2h_weight``, ``<prefix>i2h_bias``,
``<prefix>h2h_weight``, ``<prefix>h2h_bias`` (gates stacked: LSTM i, f, c, o; GRU r, z, o),
and ``<prefix>parameters`` for `FusedRNNCell` (MXNet's packed layout, see
``mxcy.operator.rnn``). ``unpack_weights`` / ``pack_weights`` convert to and from
per-gate arrays, so fused and unfused cells exchange weights.

``begin_state(func=mx.sym.zeros)`` makes states of shape ``(0, num_hidden)``: 0 is the
batch size, unknown until binding. MXNet back-infers it from consumers; here each cell
resolves such a state from its own input when it is first applied (see
``mxcy.operator.init_ops``), so ``unroll`` graphs bind from the data shape alone. States
made by any other ``func`` (``mx.sym.Variable`` for carried states) are used as given.

Layouts: ``'NTC'`` (batch, time, channels) or ``'TNC'``. ``inputs`` is one symbol split
along T, or a list of ``length`` per-step symbols of shape (N, C); ``merge_outputs``
True returns one symbol, False a list, None whatever the inputs were.
"""
import numbers

from mxcy import initializer as init
from mxcy import ndarray, symbol
from mxcy.base import MXNetError


class RNNParams:
    """A container of parameter variables, shared between cells built with it."""

    def __init__(self, prefix=''):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, created (with `kwargs`) on first use."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


# ---------------------------------------------------------------- helpers
def _is_op_function(func):
    """Whether `func` is a generated ``mx.sym.<Op>`` (it takes attributes via ``attr=``)."""
    return getattr(func, '__module__', None) == 'mxcy.symbol._gen'


def _call_state_func(func, name, kwargs):
    kwargs = dict(kwargs)
    layout = kwargs.pop('__layout__', None)
    if _is_op_function(func):
        attr = dict(kwargs.pop('attr', None) or {})
        if layout is not None:
            attr['__layout__'] = layout
        return func(name=name, attr=attr, **kwargs)
    if layout is not None:
        kwargs['__layout__'] = layout
    return func(name=name, **kwargs)


_FILLS = {'_zeros': lambda p: 0.0, '_ones': lambda p: 1.0, '_full': lambda p: p.value}


def _resolve_states(states, like, batch_axis):
    """Replace each ``zeros/ones/full`` state with an unknown (0) dimension by a fill
    whose 0 dimensions take ``like``'s size on `batch_axis`."""
    out = []
    for state in states:
        node = state._outputs[0][0] if len(state._outputs) == 1 else None
        if node is not None and node.op is not None and node.op.name in _FILLS \
                and 0 in node.params.shape:
            # dtype: the one asked for, else the input's (float64 graphs stay float64)
            extra = {'dtype': node.params.dtype} if 'dtype' in node.given else {}
            state = symbol._full_batch_like(like, shape=node.params.shape, axis=batch_axis,
                                            value=_FILLS[node.op.name](node.params),
                                            name=node.name, attr=dict(node.attrs), **extra)
        out.append(state)
    return out


def _check_length(where, length):
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 1:
        raise ValueError(f"{where}: length must be a positive int, got {length!r}")


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """(inputs as a list of per-step symbols, or one merged symbol; the T axis)."""
    if inputs is None:
        raise ValueError("unroll: inputs must be given (unroll(inputs=None) is not "
                         "supported); create the input variables outside unroll")
    if layout not in ('NTC', 'TNC'):
        raise ValueError(f"unroll: layout must be 'NTC' or 'TNC', got {layout!r}")
    axis = layout.find('T')
    in_axis = in_layout.find('T') if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ValueError("unroll: inputs is a grouped symbol; pass list(inputs) or "
                                 "one symbol that unroll splits along T")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise ValueError(f"unroll: length={length} but {len(inputs)} per-step inputs "
                             "were given")
        if merge is True:
            inputs = [symbol.expand_dims(i, axis=axis) for i in inputs]
            inputs = symbol.Concat(*inputs, dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


def _cells_state_info(cells):
    return [info for c in cells for info in c.state_info]


def _cells_begin_state(cells, **kwargs):
    return [state for c in cells for state in c.begin_state(**kwargs)]


def _cells_unpack_weights(cells, args):
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def _cells_pack_weights(cells, args):
    for cell in cells:
        args = cell.pack_weights(args)
    return args


# ---------------------------------------------------------------- base
class BaseRNNCell:
    """Abstract cell: ``__call__(inputs, states)`` is one step, ``unroll`` many."""

    def __init__(self, prefix='', params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step and begin-state counters (they name the nodes)."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, '_cells', ()):
            cell.reset()

    def __call__(self, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} cannot be stepped")

    @property
    def params(self):
        """The RNNParams of this cell (shared from now on: it is no longer own)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        raise NotImplementedError(f"{type(self).__name__} must override state_info")

    @property
    def state_shape(self):
        return [info['shape'] for info in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def _check_not_modified(self):
        if self._modified:
            raise MXNetError("After applying modifier cells (e.g. ZoneoutCell) the base cell "
                             "cannot be called directly. Call the modifier cell instead.")

    def begin_state(self, func=symbol.zeros, **kwargs):
        """Initial states, one per ``state_info`` entry, made by
        ``func(name='<prefix>begin_state_<i>', shape=..., __layout__=..., **kwargs)``."""
        self._check_not_modified()
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            name = f'{self._prefix}begin_state_{self._init_counter}'
            states.append(_call_state_func(func, name, kwargs))
        return states

    def unpack_weights(self, args):
        """Split the stacked i2h/h2h weights and biases into one array per gate
        (``<prefix>i2h_f_weight`` ...); other entries are passed through."""
        args = dict(args)
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ('i2h', 'h2h'):
            weight = args.pop(f'{self._prefix}{group}_weight')
            bias = args.pop(f'{self._prefix}{group}_bias')
            for j, gate in enumerate(self._gate_names):
                args[f'{self._prefix}{group}{gate}_weight'] = weight[j * h:(j + 1) * h].copy()
                args[f'{self._prefix}{group}{gate}_bias'] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The inverse of `unpack_weights`."""
        args = dict(args)
        if not self._gate_names:
            return args
        for group in ('i2h', 'h2h'):
            weight, bias = [], []
            for gate in self._gate_names:
                weight.append(args.pop(f'{self._prefix}{group}{gate}_weight'))
                bias.append(args.pop(f'{self._prefix}{group}{gate}_bias'))
            args[f'{self._prefix}{group}_weight'] = ndarray.concatenate(weight)
            args[f'{self._prefix}{group}_bias'] = ndarray.concatenate(bias)
        return args

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        """Apply the cell `length` times: (outputs, final states)."""
        _check_length('unroll', length)
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


# ---------------------------------------------------------------- step cells
class RNNCell(BaseRNNCell):
    """h' = act(W_i2h x + b_i2h + W_h2h h + b_h2h)."""

    def __init__(self, num_hidden, activation='tanh', prefix='rnn_', params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._iW = self.params.get('i2h_weight')
        self._iB = self.params.get('i2h_bias')
        self._hW = self.params.get('h2h_weight')
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [{'shape': (0, self._num_hidden), '__layout__': 'NC'}]

    @property
    def _gate_names(self):
        return ('',)

    def __call__(self, inputs, states):
        self._counter += 1
        states = _resolve_states(states, inputs, 0)
        name = f'{self._prefix}t{self._counter}_'
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden, name=f'{name}i2h')
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden, name=f'{name}h2h')
        output = self._get_activation(i2h + h2h, self._activation, name=f'{name}out')
        return output, [output]


class LSTMCell(BaseRNNCell):
    """[i, f, c, o] = W_i2h x + b_i2h + W_h2h h + b_h2h; c' = σ(f)·c + σ(i)·tanh(c);
    h' = σ(o)·tanh(c'). ``forget_bias`` initialises the forget part of ``i2h_bias``."""

    def __init__(self, num_hidden, prefix='lstm_', params=None, forget_bias=1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get('i2h_weight')
        self._hW = self.params.get('h2h_weight')
        self._iB = self.params.get('i2h_bias', init=init.LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [{'shape': (0, self._num_hidden), '__layout__': 'NC'},
                {'shape': (0, self._num_hidden), '__layout__': 'NC'}]

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        states = _resolve_states(states, inputs, 0)
        name = f'{self._prefix}t{self._counter}_'
        h = self._num_hidden
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=h * 4, name=f'{name}i2h')
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=h * 4, name=f'{name}h2h')
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name=f'{name}slice')
        in_gate = symbol.Activation(gates[0], act_type='sigmoid', name=f'{name}i')
        forget_gate = symbol.Activation(gates[1], act_type='sigmoid', name=f'{name}f')
        in_transform = symbol.Activation(gates[2], act_type='tanh', name=f'{name}c')
        out_gate = symbol.Activation(gates[3], act_type='sigmoid', name=f'{name}o')
        next_c = symbol._plus(forget_gate * states[1], in_gate * in_transform,
                              name=f'{name}state')
        next_h = symbol._mul(out_gate, symbol.Activation(next_c, act_type='tanh'),
                             name=f'{name}out')
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """[r, z] = σ(i2h_rz + h2h_rz); n = tanh(i2h_o + r·h2h_o); h' = (1 − z)·n + z·h
    (Cho et al. 2014, with the reset gate applied after the h2h product, as in cuDNN)."""

    def __init__(self, num_hidden, prefix='gru_', params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get('i2h_weight')
        self._iB = self.params.get('i2h_bias')
        self._hW = self.params.get('h2h_weight')
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [{'shape': (0, self._num_hidden), '__layout__': 'NC'}]

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        states = _resolve_states(states, inputs, 0)
        name = f'{self._prefix}t{self._counter}_'
        prev_h = states[0]
        h = self._num_hidden
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=h * 3, name=f'{name}_i2h')
        h2h = symbol.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB,
                                    num_hidden=h * 3, name=f'{name}_h2h')
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name=f'{name}_i2h_slice')
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name=f'{name}_h2h_slice')
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type='sigmoid', name=f'{name}_r_act')
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type='sigmoid',
                                        name=f'{name}_z_act')
        candidate = symbol.Activation(i2h + reset_gate * h2h, act_type='tanh',
                                      name=f'{name}_h_act')
        next_h = symbol._plus((1. - update_gate) * candidate, update_gate * prev_h,
                              name=f'{name}out')
        return next_h, [next_h]


# ---------------------------------------------------------------- containers
class SequentialRNNCell(BaseRNNCell):
    """Cells stacked: each one's output is the next one's input."""

    def __init__(self, params=None):
        super().__init__(prefix='', params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Append a cell (its parameters join this container's)."""
        self._cells.append(cell)
        if self._override_cell_params:
            if not cell._own_params:
                raise MXNetError("SequentialRNNCell.add: either give params to the "
                                 "SequentialRNNCell or to its cells, not both")
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        self._check_not_modified()
        return _cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def _split_states(self, states):
        parts, p = [], 0
        for cell in self._cells:
            n = len(cell.state_info)
            parts.append(list(states[p:p + n]))
            p += n
        if p != len(states):
            raise ValueError(f"SequentialRNNCell: {len(states)} states given, the cells "
                             f"take {p}")
        return parts

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        for cell, state in zip(self._cells, self._split_states(states)):
            if isinstance(cell, BidirectionalCell):
                raise MXNetError("SequentialRNNCell: a BidirectionalCell cannot be stepped; "
                                 "use unroll")
            inputs, state = cell(inputs, state)
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        _check_length('unroll', length)
        self.reset()
        begin_state = self.begin_state() if begin_state is None else begin_state
        next_states = []
        last = len(self._cells) - 1
        for i, (cell, states) in enumerate(zip(self._cells, self._split_states(begin_state))):
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states,
                                         layout=layout,
                                         merge_outputs=None if i < last else merge_outputs)
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout with probability `dropout` on the inputs; no states."""

    def __init__(self, dropout, prefix='dropout_', params=None):
        super().__init__(prefix, params)
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) \
                or not 0 <= dropout < 1:
            raise ValueError(f"DropoutCell: dropout must be a number in [0, 1), got "
                             f"{dropout!r}")
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class BidirectionalCell(BaseRNNCell):
    """`l_cell` reads the sequence forwards, `r_cell` backwards; their outputs are
    concatenated per step (channels: l then r). States: l's then r's."""

    def __init__(self, l_cell, r_cell, params=None, output_prefix='bi_'):
        super().__init__('', params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            if not (l_cell._own_params and r_cell._own_params):
                raise MXNetError("BidirectionalCell: either give params to the "
                                 "BidirectionalCell or to its cells, not both")
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        raise NotImplementedError("BidirectionalCell cannot be stepped. Please use unroll")

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        self._check_not_modified()
        return _cells_begin_state(self._cells, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        _check_length('unroll', length)
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        l_cell, r_cell = self._cells
        n_left = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs,
                                            begin_state=states[:n_left], layout=layout,
                                            merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=states[n_left:], layout=layout,
                                            merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, symbol.Symbol) and \
                isinstance(r_outputs, symbol.Symbol)
            if not merge_outputs:
                if isinstance(l_outputs, symbol.Symbol):
                    l_outputs = list(symbol.SliceChannel(l_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
                if isinstance(r_outputs, symbol.Symbol):
                    r_outputs = list(symbol.SliceChannel(r_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            l_outputs = [l_outputs]
            r_outputs = [symbol.reverse(r_outputs, axis=axis)]
        else:
            r_outputs = list(reversed(r_outputs))
        outputs = [symbol.Concat(l_o, r_o, dim=1 + merge_outputs,
                                 name=(f'{self._output_prefix}out' if merge_outputs
                                       else f'{self._output_prefix}t{i}'))
                   for i, (l_o, r_o) in enumerate(zip(l_outputs, r_outputs))]
        if merge_outputs:
            outputs = outputs[0]
        return outputs, l_states + r_states


# kept last: they build on the cells above
from mxcy.rnn._fused import FusedRNNCell  # noqa: F401,E402
from mxcy.rnn._modifiers import ModifierCell, ResidualCell, ZoneoutCell  # noqa: F401,E402
