"""``LSTM``: a (multi-layer, optionally bidirectional) LSTM on the fused ``RNN`` operator.

Gluon's parameters and names: per layer ``l``/``r`` (left-to-right / right-to-left) and
``k``, ``{d}{k}_i2h_weight`` (4H, I_k), ``{d}{k}_h2h_weight`` (4H, H), ``{d}{k}_i2h_bias``
and ``{d}{k}_h2h_bias`` (4H,), gates in the order i, f, g, o. In the graph they are
flattened (``Reshape``) and joined (``Concat``) into the single ``parameters`` vector of
``RNN`` in its packing (every weight, then every bias), as Gluon does. The zero begin
state is made from the input with ``slice_axis``/``zeros_like``/``broadcast_axis``, so a
compiled model can change its batch size.

``lstm(x)`` returns the output sequence; ``lstm(x, [h0, c0])`` returns
``(output, [h_T, c_T])``. ``input_size=0`` is inferred when the model is compiled.
"""
from mxcy import symbol as sym
from mxcy.nn.layers import _Layer, _positive_int
from mxcy.nn.tracing import current_trace


class LSTM(_Layer):
    """Long short-term memory over a sequence (layout 'TNC' or 'NTC')."""
    _hint = 'lstm'

    def __init__(self, hidden_size, num_layers=1, layout='TNC', dropout=0,
                 bidirectional=False, input_size=0, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer='zeros',
                 h2h_bias_initializer='zeros', projection_size=None, dtype='float32',
                 prefix=None, params=None):
        super().__init__(prefix, params)
        if layout not in ('TNC', 'NTC'):
            raise ValueError(f"LSTM: layout must be 'TNC' or 'NTC', got {layout!r}")
        if projection_size is not None:
            raise ValueError("LSTM: projection_size is not supported (the RNN "
                             "operator has no LSTMP); leave it None")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"LSTM: dropout must be in [0, 1), got {dropout!r}")
        self._hidden = _positive_int('LSTM', 'hidden_size', hidden_size)
        self._layers = _positive_int('LSTM', 'num_layers', num_layers)
        self._input_size = _positive_int('LSTM', 'input_size', input_size, allow_zero=True)
        self._layout = layout
        self._dropout = float(dropout)
        self._dirs = ['l', 'r'] if bidirectional else ['l']
        inits = {'i2h_weight': i2h_weight_initializer, 'h2h_weight': h2h_weight_initializer,
                 'i2h_bias': i2h_bias_initializer, 'h2h_bias': h2h_bias_initializer}
        h, g = self._hidden, 4 * self._hidden
        self._weights, self._biases = [], []
        for k in range(self._layers):
            ni = self._input_size if k == 0 else h * len(self._dirs)
            for d in self._dirs:
                for kind, shape in (('i2h', (g, ni)), ('h2h', (g, h))):
                    self._weights.append(self._gate_param(d, k, kind, 'weight', shape, inits,
                                                          dtype))
                for kind in ('i2h', 'h2h'):
                    self._biases.append(self._gate_param(d, k, kind, 'bias', (g,), inits,
                                                         dtype))

    def _gate_param(self, d, k, kind, what, shape, inits, dtype):
        param = self._param(f"{d}{k}_{kind}_{what}", shape, inits[f"{kind}_{what}"],
                            dtype=dtype)
        setattr(self, f"{d}{k}_{kind}_{what}", param)
        return param

    def _resolve_input_size(self, input_size):
        """Give the first layer's i2h weights their input size (known at compile)."""
        for param in self._weights:
            if param._suffix.endswith('0_i2h_weight'):
                param.shape = (param.shape[0], input_size)

    def forward(self, x, states=None):
        trace = current_trace()
        name = self._node()
        if self._layout == 'NTC':
            x = sym.swapaxes(x, dim1=0, dim2=1, name=f"{name}_swap_in")
        if self._input_size == 0 and not all(p.shape_known for p in self._weights):
            # the flat parameter vector hides the input size from shape inference: the
            # compiler asks for this layer's input shape and calls back
            trace.resolvers.append((x, lambda shape: self._resolve_input_size(shape[2])))
        flat = [sym.Reshape(p.var(), shape=(-1,), name=f"{name}_flat{i}")
                for i, p in enumerate(self._weights + self._biases)]
        params = sym.Concat(*flat, dim=0, name=f"{name}_params")
        if states is None:
            begin = self._zero_state(x, name)
            h0, c0 = begin, begin
        else:
            if len(states) != 2:
                raise ValueError(f"LSTM: states must be [h0, c0], got {len(states)} "
                                 "symbols")
            h0, c0 = states
        out = sym.RNN(data=x, parameters=params, state=h0, state_cell=c0,
                      state_size=self._hidden, num_layers=self._layers,
                      bidirectional=len(self._dirs) == 2, mode='lstm', p=self._dropout,
                      state_outputs=states is not None, name=name)
        y = out[0] if states is not None else out
        if self._layout == 'NTC':
            y = sym.swapaxes(y, dim1=0, dim2=1, name=f"{name}_swap_out")
        return y if states is None else (y, [out[1], out[2]])

    def _zero_state(self, x, name):
        """Zeros of shape (layers·directions, N, H) that follow the batch size of x."""
        first = sym.slice_axis(x, axis=0, begin=0, end=1, name=f"{name}_step0")
        column = sym.slice_axis(first, axis=2, begin=0, end=1, name=f"{name}_col0")
        zero = sym.zeros_like(column, name=f"{name}_zero")
        return sym.broadcast_axis(zero, axis=(0, 2),
                                  size=(self._layers * len(self._dirs), self._hidden),
                                  name=f"{name}_begin_state")

    def _repr_args(self):
        return (f"{self._input_size or None} -> {self._hidden}, {self._layout}, "
                f"num_layers={self._layers}, bidirectional={len(self._dirs) == 2}")
