"""What the gluon recurrent cells and layers share: nested inputs and outputs through
hybridize, sequence formatting, and the one-step math of the three cell kinds.

Hybridize with nested arguments. A cell is called as ``cell(x, [h, c])`` and returns
``(out, [h, c])``. `HybridBlock` traces flat argument lists, so `_NestedGraph` traces
``hybrid_forward`` with the nesting kept (each state a variable ``data<i>``), groups the
flattened outputs into one graph, and rebuilds the nesting of each cached call's outputs.

The step math (`lstm_step`, `gru_step`, `rnn_step`) is written once for ``F = mx.nd``
and ``F = mx.sym``. The cells call it with their own parameters. The layers call it with
theirs where the fused ``RNN`` operator cannot serve: projection, state clipping and
sequence lengths. Gate blocks are stacked as in the fused operator: LSTM i, f, c, o;
GRU r, z, n.
"""
from mxcy import symbol as _sym
from mxcy._ndarray import NDArray
from mxcy.gluon.block import HybridBlock, _flatten_inputs
from mxcy.symbol.symbol import Symbol

TENSORS = (NDArray, Symbol)


# ---------------------------------------------------------------- nested arguments
def _rebuild(arg, variables):
    if isinstance(arg, (list, tuple)):
        return type(arg)(_rebuild(a, variables) for a in arg)
    return None if arg is None else next(variables)


def _flatten_out(out, flat, seen):
    """The format of `out` (ints index `flat`, which collects the distinct symbols: a
    cell's ``return h, [h]`` names one graph output twice, and an executor given a
    repeated head keeps only the last head's gradient, so each output is listed once)."""
    if isinstance(out, (list, tuple)):
        return type(out)(_flatten_out(o, flat, seen) for o in out)
    key = tuple((id(node), i) for node, i in out._outputs)
    if key not in seen:
        seen[key] = len(flat)
        flat.append(out)
    return seen[key]


def _regroup(flat, fmt):
    if isinstance(fmt, (list, tuple)):
        return type(fmt)(_regroup(flat, f) for f in fmt)
    return flat[fmt]


class _NestedGraph:
    """Mixed in before HybridBlock: hybridize with lists of states in and out."""

    def _get_graph(self, *args):
        if self._cached_graph is None:
            flat = _flatten_inputs(args)
            names = ['data'] if len(flat) == 1 else [f'data{i}' for i in range(len(flat))]
            inputs = [_sym.var(n) for n in names]
            variables = iter(inputs)
            sym_args = [_rebuild(a, variables) for a in args]
            params = {k: v.var() for k, v in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(_sym, *sym_args, **params)
            outs = []
            self._out_format = _flatten_out(out, outs, {})
            self._cached_graph = (inputs, _sym.Group(outs) if len(outs) > 1 else outs[0],
                                  True)
        return self._cached_graph

    def _call_cached(self, *args):
        outs = HybridBlock._call_cached(self, *args)
        return _regroup(outs, self._out_format)


# ---------------------------------------------------------------- sequences
def split_steps(F, x, n, axis):
    """`x` cut along `axis` into a list of `n` pieces without that axis."""
    if n == 1:
        return [F.squeeze(x, axis=axis)]
    return list(F.split(x, num_outputs=n, axis=axis, squeeze_axis=1))


def format_sequence(length, inputs, layout, merge, in_layout=None):
    """(inputs as one tensor or a list of per-step tensors, T axis, F, batch size)."""
    if inputs is None:
        raise ValueError("unroll(inputs=None) is not supported: create the input variables "
                         "outside unroll")
    if layout not in ('NTC', 'TNC'):
        raise ValueError(f"unroll: layout must be 'NTC' or 'TNC', got {layout!r}")
    from mxcy import ndarray as nd
    axis, batch_axis = layout.find('T'), layout.find('N')
    in_axis = in_layout.find('T') if in_layout is not None else axis
    batch_size = 0
    if isinstance(inputs, TENSORS):
        F = _sym if isinstance(inputs, Symbol) else nd
        if F is nd:
            batch_size = inputs.shape[batch_axis]
            if length is not None and length != inputs.shape[in_axis]:
                raise ValueError(f"unroll: length={length} but the inputs have "
                                 f"{inputs.shape[in_axis]} steps on axis {in_axis}")
        if merge is False:
            if F is _sym and len(inputs.list_outputs()) != 1:
                raise ValueError("unroll: inputs is a grouped symbol; pass list(inputs) "
                                 "or one symbol that unroll splits along T")
            steps = length if F is _sym else inputs.shape[in_axis]
            inputs = split_steps(F, inputs, steps, in_axis)
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise ValueError(f"unroll: length={length} but {len(inputs)} per-step inputs "
                             "were given")
        F = _sym if isinstance(inputs[0], Symbol) else nd
        if F is nd:
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, TENSORS) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def mask_sequence(F, data, length, valid_length, axis, merge):
    """Zero the steps at and beyond each sequence's valid length."""
    if not isinstance(data, TENSORS):
        data = F.stack(*data, axis=axis)
    out = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                         axis=axis)
    return out if merge else split_steps(F, out, length, axis)


def reverse_sequence(F, steps, valid_length=None):
    """The list of steps reversed (per sequence, within its valid length when given)."""
    if valid_length is None:
        return list(reversed(steps))
    rev = F.SequenceReverse(F.stack(*steps, axis=0), sequence_length=valid_length,
                            use_sequence_length=True)
    return split_steps(F, rev, len(steps), 0)


def last_states(F, all_states, valid_length):
    """Each state at each sequence's last valid step (`all_states`: per step, a list)."""
    return [F.SequenceLast(F.stack(*per_step, axis=0), sequence_length=valid_length,
                           use_sequence_length=True, axis=0)
            for per_step in zip(*all_states)]


def get_begin_state(cell, F, begin_state, inputs, batch_size):
    """`begin_state`, or the cell's zero states for a batch of `batch_size`."""
    if begin_state is not None:
        return begin_state
    if F is _sym:       # batch size 0: each cell resolves it from its input (forward)
        return cell.begin_state(func=_sym.zeros, batch_size=batch_size)
    ctx = inputs.context if isinstance(inputs, NDArray) else inputs[0].context
    dtype = inputs.dtype if isinstance(inputs, NDArray) else inputs[0].dtype
    return cell.begin_state(func=F.zeros, batch_size=batch_size, ctx=ctx, dtype=dtype)


# ---------------------------------------------------------------- activations
def activate(F, x, activation, **kwargs):
    """`activation` (a name, a LeakyReLU block or a callable) applied to `x`."""
    named = {'tanh': F.tanh, 'relu': F.relu, 'sigmoid': F.sigmoid, 'softsign': F.softsign}
    if isinstance(activation, str):
        if activation in named:
            return named[activation](x, **kwargs)
        return F.Activation(x, act_type=activation, **kwargs)
    if type(activation).__name__ == 'LeakyReLU' and hasattr(activation, '_alpha'):
        return F.LeakyReLU(x, act_type='leaky', slope=activation._alpha, **kwargs)
    return activation(x, **kwargs)


# ---------------------------------------------------------------- one step
def _gates(F, x, h, wi, wh, bi, bh, num, prefix):
    i2h = F.FullyConnected(data=x, weight=wi, bias=bi, num_hidden=num, name=prefix + 'i2h')
    h2h = F.FullyConnected(data=h, weight=wh, bias=bh, num_hidden=num, name=prefix + 'h2h')
    return i2h, h2h


def rnn_step(F, x, states, wi, wh, bi, bh, hidden, activation, prefix=''):
    """h' = act(W_x x + b_x + W_h h + b_h)."""
    i2h, h2h = _gates(F, x, states[0], wi, wh, bi, bh, hidden, prefix)
    out = activate(F, F.elemwise_add(i2h, h2h, name=prefix + 'plus0'), activation,
                   name=prefix + 'out')
    return out, [out]


def lstm_step(F, x, states, wi, wh, bi, bh, hidden, activation='tanh',
              recurrent_activation='sigmoid', prefix='', h2r=None, proj=None, clip=None):
    """[i, f, c~, o] from W_x x + b_x + W_h h + b_h; c' = f·c + i·c~, h' = o·act(c');
    with `h2r` the state and output are r' = h2r·h' (`proj` units); `clip` =
    (min, max, nan) clips c' (a NaN in c' becomes min when nan is set)."""
    i2h, h2h = _gates(F, x, states[0], wi, wh, bi, bh, 4 * hidden, prefix)
    gates = F.SliceChannel(F.elemwise_add(i2h, h2h, name=prefix + 'plus0'), num_outputs=4,
                           name=prefix + 'slice')
    in_gate = activate(F, gates[0], recurrent_activation, name=prefix + 'i')
    forget_gate = activate(F, gates[1], recurrent_activation, name=prefix + 'f')
    in_transform = activate(F, gates[2], activation, name=prefix + 'c')
    out_gate = activate(F, gates[3], recurrent_activation, name=prefix + 'o')
    next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + 'mul0'),
                            F.elemwise_mul(in_gate, in_transform, name=prefix + 'mul1'),
                            name=prefix + 'state')
    if clip is not None:
        low, high, nan = clip
        if nan:
            next_c = F.where(F.broadcast_equal(next_c, next_c), next_c,
                             F.zeros_like(next_c) + low)
        next_c = F.clip(next_c, low, high)
    next_h = F.elemwise_mul(out_gate, activate(F, next_c, activation,
                                               name=prefix + 'activation0'),
                            name=prefix + 'out')
    if h2r is not None:
        next_h = F.FullyConnected(data=next_h, weight=h2r, no_bias=True, num_hidden=proj,
                                  name=prefix + 'h2r')
    return next_h, [next_h, next_c]


def gru_step(F, x, states, wi, wh, bi, bh, hidden, prefix=''):
    """r = σ(x_r + h_r), z = σ(x_z + h_z), n = tanh(x_n + r·h_n), h' = (1 − z)·n + z·h."""
    h = states[0]
    i2h, h2h = _gates(F, x, h, wi, wh, bi, bh, 3 * hidden, prefix)
    i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3, name=prefix + 'i2h_slice')
    h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3, name=prefix + 'h2h_slice')
    reset = F.Activation(F.elemwise_add(i2h_r, h2h_r, name=prefix + 'plus0'),
                         act_type='sigmoid', name=prefix + 'r_act')
    update = F.Activation(F.elemwise_add(i2h_z, h2h_z, name=prefix + 'plus1'),
                          act_type='sigmoid', name=prefix + 'z_act')
    cand = F.Activation(F.elemwise_add(i2h_n, F.elemwise_mul(reset, h2h_n,
                                                             name=prefix + 'mul0'),
                                       name=prefix + 'plus2'),
                        act_type='tanh', name=prefix + 'h_act')
    keep = F.elemwise_sub(F.ones_like(update, name=prefix + 'ones_like0'), update,
                          name=prefix + 'minus0')
    next_h = F.elemwise_add(F.elemwise_mul(keep, cand, name=prefix + 'mul1'),
                            F.elemwise_mul(update, h, name=prefix + 'mul20'),
                            name=prefix + 'out')
    return next_h, [next_h]
