"""Convolutional RNN cells (MXNet 1.x ``mx.rnn.ConvRNNCell`` / ``ConvLSTMCell`` /
``ConvGRUCell``): the FullyConnected products of the plain cells become convolutions, so
inputs and states are images (``conv_layout``, e.g. NCHW).

``i2h`` convolves the step's input with `i2h_kernel` / `i2h_stride` / `i2h_pad` /
`i2h_dilate`; ``h2h`` convolves the previous state with the odd `h2h_kernel`, padded to
keep the state's size. The state shape is i2h's output shape for `input_shape` (batch
left unknown, 0, until binding). Parameters: ``<prefix>i2h_weight``, ``i2h_bias``,
``h2h_weight``, ``h2h_bias`` with the given initializers, gates stacked along the
filters (LSTM i, f, c, o; GRU r, z, o). The default `activation` is a leaky ReLU of
slope 0.2, as in MXNet; a string names an ``Activation`` act_type.

ConvRNN:  h' = act(i2h + h2h)
ConvLSTM: [i, f, o] = σ(...), c' = f·c + i·act(g), h' = o·act(c')
ConvGRU:  [r, z] = σ(i2h_rz + h2h_rz), n = act(i2h_o + r·h2h_o), h' = (1 − z)·n + z·h
"""
import functools

from mxcy import symbol
from mxcy.rnn.rnn_cell import BaseRNNCell, _resolve_states

__all__ = ['BaseConvRNNCell', 'ConvRNNCell', 'ConvLSTMCell', 'ConvGRUCell']


def _pair(value, name, where):
    value = tuple(int(v) for v in (value if isinstance(value, (tuple, list)) else (value,)))
    if not value or any(v < 0 for v in value):
        raise ValueError(f"{where}: {name} must be a tuple of non-negative ints, got {value}")
    return value


_LEAKY = functools.partial(symbol.LeakyReLU, act_type='leaky', slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """The shared part of the convolutional cells (see the module docstring)."""

    _num_gates = 1
    _default_prefix = ''

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_LEAKY, prefix=None, params=None, conv_layout='NCHW'):
        # every cell takes this signature; prefix None is the cell's _default_prefix
        super().__init__(prefix=self._default_prefix if prefix is None else prefix,
                         params=params)
        where = type(self).__name__
        self._h2h_kernel = _pair(h2h_kernel, 'h2h_kernel', where)
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise ValueError(f"{where}: h2h_kernel must be odd in every dimension (the "
                             f"state keeps its size), got {self._h2h_kernel}")
        self._h2h_dilate = _pair(h2h_dilate, 'h2h_dilate', where)
        self._h2h_pad = tuple(d * (k - 1) // 2
                              for d, k in zip(self._h2h_dilate, self._h2h_kernel))
        self._i2h_kernel = _pair(i2h_kernel, 'i2h_kernel', where)
        self._i2h_stride = _pair(i2h_stride, 'i2h_stride', where)
        self._i2h_pad = _pair(i2h_pad, 'i2h_pad', where)
        self._i2h_dilate = _pair(i2h_dilate, 'i2h_dilate', where)
        self._num_hidden = num_hidden
        self._input_shape = tuple(input_shape)
        self._conv_layout = conv_layout
        self._activation = activation
        data = symbol.Variable('data')
        state = symbol.Convolution(data=data, num_filter=num_hidden, kernel=self._i2h_kernel,
                                   stride=self._i2h_stride, pad=self._i2h_pad,
                                   dilate=self._i2h_dilate, layout=conv_layout)
        out_shape = state._infer_shape_strict(data=self._input_shape)[1][0]
        self._state_shape = (0,) + tuple(out_shape[1:])
        self._iW = self.params.get('i2h_weight', init=i2h_weight_initializer)
        self._hW = self.params.get('h2h_weight', init=h2h_weight_initializer)
        self._iB = self.params.get('i2h_bias', init=i2h_bias_initializer)
        self._hB = self.params.get('h2h_bias', init=h2h_bias_initializer)

    @property
    def state_info(self):
        return [{'shape': self._state_shape, '__layout__': self._conv_layout}] * \
            self._num_states

    _num_states = 1

    def _conv_forward(self, inputs, states, name):
        filters = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name=f'{name}i2h', data=inputs, num_filter=filters,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate,
                                 weight=self._iW, bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name=f'{name}h2h', data=states[0], num_filter=filters,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1,) * len(self._h2h_kernel),
                                 weight=self._hW, bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def _step(self, inputs, states):
        self._counter += 1
        states = _resolve_states(states, inputs, 0)
        name = f'{self._prefix}t{self._counter}_'
        return states, name, self._conv_forward(inputs, states, name)

    def _split(self, gates, name):
        return list(symbol.SliceChannel(gates, num_outputs=self._num_gates,
                                        axis=self._conv_layout.find('C'), name=name))


class ConvRNNCell(BaseConvRNNCell):
    """h' = act(conv(x) + conv(h))."""

    _default_prefix = 'ConvRNN_'

    def __call__(self, inputs, states):
        states, name, (i2h, h2h) = self._step(inputs, states)
        output = self._get_activation(i2h + h2h, self._activation, name=f'{name}out')
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM (Shi et al. 2015, without peepholes); states [h, c]."""

    _num_gates = 4
    _num_states = 2

    _default_prefix = 'ConvLSTM_'

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def __call__(self, inputs, states):
        states, name, (i2h, h2h) = self._step(inputs, states)
        gates = self._split(i2h + h2h, f'{name}slice')
        in_gate = symbol.Activation(gates[0], act_type='sigmoid', name=f'{name}i')
        forget_gate = symbol.Activation(gates[1], act_type='sigmoid', name=f'{name}f')
        in_transform = self._get_activation(gates[2], self._activation, name=f'{name}c')
        out_gate = symbol.Activation(gates[3], act_type='sigmoid', name=f'{name}o')
        next_c = symbol._plus(forget_gate * states[1], in_gate * in_transform,
                              name=f'{name}state')
        next_h = symbol._mul(out_gate, self._get_activation(next_c, self._activation),
                             name=f'{name}out')
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU, the reset gate applied after the h2h convolution."""

    _num_gates = 3

    _default_prefix = 'ConvGRU_'

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def __call__(self, inputs, states):
        states, name, (i2h, h2h) = self._step(inputs, states)
        i2h_r, i2h_z, i2h = self._split(i2h, f'{name}_i2h_slice')
        h2h_r, h2h_z, h2h = self._split(h2h, f'{name}_h2h_slice')
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type='sigmoid', name=f'{name}_r_act')
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type='sigmoid',
                                        name=f'{name}_z_act')
        candidate = self._get_activation(i2h + reset_gate * h2h, self._activation,
                                         name=f'{name}_h_act')
        next_h = symbol._plus((1. - update_gate) * candidate, update_gate * states[0],
                              name=f'{name}out')
        return next_h, [next_h]
