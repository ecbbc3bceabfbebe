"""Gluon recurrent cells (MXNet 1.x ``gluon.rnn.*Cell``): one time step as a Block.

``cell(x, states)`` returns ``(output, next_states)``; ``unroll(length, inputs, ...)``
applies the cell ``length`` times (layouts 'NTC'/'TNC'; with `valid_length` the outputs
past each sequence's length are zero and the states are those of its last valid step).
Parameters are MXNet's: ``<prefix>i2h_weight`` (G·H, input_size, deferred when 0),
``h2h_weight`` (G·H, H), ``i2h_bias``, ``h2h_bias``, gate blocks stacked as in the fused
layer (LSTM i, f, c, o; GRU r, z, n), so a layer's weights run unchanged in its cells.
Modifier cells (Dropout, Zoneout, Residual) and BidirectionalCell wrap other cells.
"""
import numbers

from mxcy import ndarray as _nd
from mxcy.gluon.block import Block, HybridBlock
from mxcy.gluon.rnn import _util
from mxcy.gluon.rnn._util import TENSORS, format_sequence, get_begin_state, mask_sequence
from mxcy.rnn.rnn_cell import _call_state_func, _resolve_states
from mxcy.symbol.symbol import Symbol

__all__ = ['RecurrentCell', 'HybridRecurrentCell', 'RNNCell', 'LSTMCell', 'GRUCell',
           'SequentialRNNCell', 'HybridSequentialRNNCell', 'DropoutCell', 'ModifierCell',
           'ZoneoutCell', 'ResidualCell', 'BidirectionalCell']

_MODIFIED = ("After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be "
             "called directly. Call the modifier cell instead.")


def _indent(text, n):
    return text.replace('\n', '\n' + ' ' * n)


def _cells_state_info(cells, batch_size):
    return [info for c in cells for info in c.state_info(batch_size)]


def _cells_begin_state(cells, **kwargs):
    return [state for c in cells for state in c.begin_state(**kwargs)]


# ---------------------------------------------------------------- bases
class RecurrentCell(Block):
    """A cell: ``__call__(inputs, states)`` is one step, ``unroll`` many."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step and begin-state counters (before each unroll)."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """Shape and layout of each state (a list of dicts)."""
        raise NotImplementedError()

    def begin_state(self, batch_size=0, func=_nd.zeros, **kwargs):
        """The initial states, made by ``func(name=..., shape=..., **kwargs)``."""
        if self._modified:
            raise AssertionError(_MODIFIED)
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info or {})
            info.update(kwargs)
            states.append(_call_state_func(
                func, f'{self._prefix}begin_state_{self._init_counter}', info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Run `length` steps over `inputs` (one tensor or a list of per-step tensors);
        returns (outputs, last states)."""
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
        length = len(inputs)
        states = get_begin_state(self, F, begin_state, inputs, batch_size)
        outputs, all_states = [], []
        for step in inputs:
            output, states = self(step, states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = _util.last_states(F, all_states, valid_length)
            outputs = mask_sequence(F, outputs, length, valid_length, axis, True)
        outputs = format_sequence(length, outputs, layout, merge_outputs)[0]
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        return _util.activate(F, inputs, activation, **kwargs)

    def forward(self, inputs, states):
        """One step: (output, next states)."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(_util._NestedGraph, RecurrentCell, HybridBlock):
    """A cell whose step is ``hybrid_forward(F, inputs, states, **params)``."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def forward(self, inputs, states):
        if isinstance(inputs, Symbol):      # zero states of batch 0: the input's batch
            states = _resolve_states(list(states), inputs, 0)
        return super().forward(inputs, states)


class _GateCell(HybridRecurrentCell):
    """RNNCell, LSTMCell, GRUCell: `gates` blocks of i2h/h2h weights and biases."""
    _num_gates = 1
    _num_states = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        rows = self._num_gates * hidden_size
        for name, shape, init in (('i2h_weight', (rows, input_size), i2h_weight_initializer),
                                  ('h2h_weight', (rows, hidden_size), h2h_weight_initializer),
                                  ('i2h_bias', (rows,), i2h_bias_initializer),
                                  ('h2h_bias', (rows,), h2h_bias_initializer)):
            setattr(self, name, self.params.get(name, shape=shape, init=init,
                                                allow_deferred_init=True))

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}
                for _ in range(self._num_states)]

    def _mapping(self):
        shape = self.i2h_weight.shape
        return f'{shape[1] if shape[1] else None} -> {shape[0]}'

    def __repr__(self):
        return f'{type(self).__name__}({self._mapping()})'


class RNNCell(_GateCell):
    """Elman cell: h' = act(W_x x + b_x + W_h h + b_h); activation 'tanh' or 'relu' (or
    any name Activation takes, a LeakyReLU block or a callable)."""

    def __init__(self, hidden_size, activation='tanh', i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer='zeros',
                 h2h_bias_initializer='zeros', input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)
        self._activation = activation

    def _alias(self):
        return 'rnn'

    def __repr__(self):
        return f'{type(self).__name__}({self._mapping()}, {self._activation})'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        return _util.rnn_step(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                              self._hidden_size, self._activation, f't{self._counter}_')


class LSTMCell(_GateCell):
    """Long short-term memory cell; states [h, c]."""
    _num_gates = 4
    _num_states = 2

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 prefix=None, params=None, activation='tanh', recurrent_activation='sigmoid'):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def _alias(self):
        return 'lstm'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        return _util.lstm_step(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                               self._hidden_size, self._activation,
                               self._recurrent_activation, f't{self._counter}_')


class GRUCell(_GateCell):
    """Gated recurrent unit (MXNet's: the reset gate scales W_h h + b_h)."""
    _num_gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)

    def _alias(self):
        return 'gru'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        return _util.gru_step(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                              self._hidden_size, f't{self._counter}_')


# ---------------------------------------------------------------- stacks
class _Stack:
    """What SequentialRNNCell and HybridSequentialRNNCell share."""

    def __repr__(self):
        body = '\n'.join(f'({i}): {_indent(repr(m), 2)}' for i, m in self._children.items())
        return f'{type(self).__name__}(\n{body}\n)'

    def add(self, cell):
        """Append a cell."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        if self._modified:
            raise AssertionError(_MODIFIED)
        return _cells_begin_state(self._children.values(), **kwargs)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states, p = [], 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise NotImplementedError("a stack holding a BidirectionalCell cannot be "
                                          "stepped; use unroll")
            n = len(cell.state_info())
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, batch_size = format_sequence(length, inputs, layout, None)
        states = get_begin_state(self, F, begin_state, inputs, batch_size)
        cells = list(self._children.values())
        next_states, p = [], 0
        for i, cell in enumerate(cells):
            n = len(cell.state_info())
            inputs, state = cell.unroll(length, inputs, begin_state=states[p:p + n],
                                        layout=layout,
                                        merge_outputs=merge_outputs if i == len(cells) - 1
                                        else None, valid_length=valid_length)
            p += n
            next_states.extend(state)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_Stack, RecurrentCell):
    """Cells stacked: each one's output is the next one's input."""


class HybridSequentialRNNCell(_Stack, HybridRecurrentCell):
    """SequentialRNNCell of hybrid cells (each child hybridizes on its own)."""

    def hybrid_forward(self, F, inputs, states):
        return self.__call__(inputs, states)


# ---------------------------------------------------------------- modifiers
class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs (rate `rate`, shared along `axes`); no states."""

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if isinstance(rate, bool) or not isinstance(rate, numbers.Number):
            raise TypeError(f"DropoutCell: rate must be a number, got {rate!r}")
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return f'{type(self).__name__}(rate={self._rate}, axes={self._axes})'

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return 'dropout'

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name=f't{self._counter}_fwd')
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, TENSORS):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """A cell wrapping `base_cell` (which then may only be used through it)."""

    def __init__(self, base_cell):
        if base_cell._modified:
            raise AssertionError(f"Cell {base_cell.name} is already modified. One cell "
                                 "cannot be modified twice")
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=_nd.zeros, **kwargs):
        # (MXNet 1.9.1's default here was mx.sym.zeros, which made a stack holding a
        # modifier cell return symbols from begin_state(batch_size=n))
        if self._modified:
            raise AssertionError(_MODIFIED)
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def __repr__(self):
        return f'{type(self).__name__}({self.base_cell!r})'


class ZoneoutCell(ModifierCell):
    """Zoneout: in training each output (state) unit keeps its previous value with
    probability `zoneout_outputs` (`zoneout_states`)."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, BidirectionalCell) or (
                isinstance(base_cell, (SequentialRNNCell, HybridSequentialRNNCell)) and
                any(isinstance(c, BidirectionalCell) for c in base_cell._children.values())):
            raise AssertionError("BidirectionalCell doesn't support zoneout since it doesn't "
                                 "support step. Please add ZoneoutCell to the cells "
                                 "underneath instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return (f'{type(self).__name__}(p_out={self.zoneout_outputs}, '
                f'p_state={self.zoneout_states}, {self.base_cell!r})')

    def _alias(self):
        return 'zoneout'

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        p_out, p_state = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, like):          # 1/(1-p) where the new value is kept, else 0
            return F.Dropout(F.ones_like(like), p=p)
        prev = self._prev_output
        if prev is None:
            prev = F.zeros_like(next_output)
        output = next_output if p_out == 0 else \
            F.where(keep_new(p_out, next_output), next_output, prev)
        if p_state != 0:
            next_states = [F.where(keep_new(p_state, new), new, old)
                           for new, old in zip(next_states, states)]
        self._prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output."""

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        return F.elemwise_add(output, inputs, name=f't{self._counter}_fwd'), states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs, begin_state=begin_state,
                                                    layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, TENSORS)
        inputs, axis, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = mask_sequence(F, inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(o, i) for o, i in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """`l_cell` over the sequence and `r_cell` over it reversed, outputs concatenated
    (unroll only)."""

    def __init__(self, l_cell, r_cell, output_prefix='bi_'):
        super().__init__(prefix='', params=None)
        self.register_child(l_cell, 'l_cell')
        self.register_child(r_cell, 'r_cell')
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self):
        return (f"{type(self).__name__}(forward={self._children['l_cell']!r}, "
                f"backward={self._children['r_cell']!r})")

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        if self._modified:
            raise AssertionError(_MODIFIED)
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
        length = len(inputs)
        reversed_inputs = _util.reverse_sequence(F, inputs, valid_length)
        states = get_begin_state(self, F, begin_state, inputs, batch_size)
        l_cell, r_cell = self._children['l_cell'], self._children['r_cell']
        n = len(l_cell.state_info(batch_size))
        l_out, l_states = l_cell.unroll(length, inputs, begin_state=states[:n],
                                        layout=layout, merge_outputs=merge_outputs,
                                        valid_length=valid_length)
        r_out, r_states = r_cell.unroll(length, reversed_inputs, begin_state=states[n:],
                                        layout=layout, merge_outputs=False,
                                        valid_length=valid_length)
        r_out = _util.reverse_sequence(F, r_out, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_out, TENSORS)
        if merge_outputs:
            if not isinstance(l_out, TENSORS):
                l_out = F.stack(*l_out, axis=axis)
            outputs = F.concat(l_out, F.stack(*r_out, axis=axis), dim=2,
                               name=f'{self._output_prefix}out')
        else:
            if isinstance(l_out, TENSORS):
                l_out = _util.split_steps(F, l_out, length, axis)
            outputs = [F.concat(lo, ro, dim=1, name=f'{self._output_prefix}t{i}')
                       for i, (lo, ro) in enumerate(zip(l_out, r_out))]
        if valid_length is not None:
            outputs = mask_sequence(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states
