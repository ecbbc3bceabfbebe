"""Modifier cells: wrap a base cell and change what it computes (MXNet 1.x).

``ZoneoutCell`` keeps units at their previous value with a probability (training only);
``ResidualCell`` adds the input to the output. The wrapped cell is marked modified: its
own ``begin_state`` refuses to run, the modifier's must be used.
"""
from mxcy import symbol
from mxcy.base import MXNetError
from mxcy.rnn._fused import FusedRNNCell
from mxcy.rnn.rnn_cell import BaseRNNCell, BidirectionalCell, _normalize_sequence, _resolve_states


class ModifierCell(BaseRNNCell):
    """A cell that wraps a base cell and changes what it computes."""

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        self._check_not_modified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al. 2016): each output / state unit keeps its previous value
    with probability `zoneout_outputs` / `zoneout_states` in training."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, (FusedRNNCell, BidirectionalCell)):
            raise MXNetError(f"ZoneoutCell: {type(base_cell).__name__} cannot be stepped; "
                             "zoneout needs a step cell (unfuse() a FusedRNNCell first)")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        states = _resolve_states(states, inputs, 0)
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)
        prev_output = self.prev_output if self.prev_output is not None else \
            symbol.zeros_like(next_output)
        output = symbol.where(mask(p_outputs, next_output), next_output, prev_output) \
            if p_outputs != 0. else next_output
        if p_states != 0.:
            next_states = [symbol.where(mask(p_states, new), new, old)
                           for new, old in zip(next_states, states)]
        self.prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """output = base_cell(inputs) + inputs (He et al. 2016; GNMT)."""

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name=f'{output.name}_plus_residual')
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, symbol.Symbol)
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            return symbol.elemwise_add(outputs, inputs,
                                       name=f'{outputs.name}_plus_residual'), states
        return [symbol.elemwise_add(o, i, name=f'{o.name}_plus_residual')
                for o, i in zip(outputs, inputs)], states
