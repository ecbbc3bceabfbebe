"""Layers of the front end, with MXNet Gluon's argument names; each emits registered ops.

| layer | operator(s) | parameters |
|---|---|---|
| ``Dense`` | FullyConnected (+ Activation) | weight (units, in_units), bias (units,) |
| ``Conv2D`` | Convolution (+ Activation) | weight (channels, in_channels/groups, kh, kw), bias |
| ``MaxPool2D`` / ``AvgPool2D`` / ``Global*Pool2D`` | Pooling | - |
| ``Flatten`` | Flatten | - |
| ``Activation`` | Activation | - |
| ``BatchNorm`` | BatchNorm | gamma, beta; aux running_mean, running_var |
| ``Dropout`` | Dropout | - |
| ``Embedding`` | Embedding | weight (input_dim, output_dim) |

``relu``, ``sigmoid``, ``tanh`` and ``softmax`` are plain functions usable as layers: on a
Symbol they emit ``Activation``/``softmax`` nodes, on an NDArray they run ``mx.nd``.
A size given as 0 (``in_units=0``) is inferred when the model is compiled.
"""
import numbers

import numpy as np

from mxcy import ndarray as nd
from mxcy import symbol as sym
from mxcy.nn.tracing import Block, current_trace, run_traced

_ACTIVATIONS = ('relu', 'sigmoid', 'tanh', 'softrelu', 'softsign')


def _positive_int(layer, arg, value, allow_zero=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or \
            value < (0 if allow_zero else 1):
        want = 'a non-negative int (0 = infer)' if allow_zero else 'a positive int'
        raise ValueError(f"{layer}: {arg} must be {want}, got {value!r}")
    return int(value)


def _pair(layer, arg, value, allow_zero=False):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (value, value)
    value = tuple(value)
    if len(value) != 2:
        raise ValueError(f"{layer}: {arg} must be an int or a pair of ints, got {value!r}")
    return tuple(_positive_int(layer, arg, v, allow_zero) for v in value)


def _check_activation(layer, activation):
    if activation is not None and activation not in _ACTIVATIONS:
        raise ValueError(f"{layer}: activation must be None or one of {_ACTIVATIONS}, got "
                         f"{activation!r}")
    return activation


def _activate(layer, y, activation):
    if activation is None:
        return y
    name = current_trace().node_name(layer, f"{activation}_fwd")
    return sym.Activation(y, act_type=activation, name=name)


# ---------------------------------------------------------------- functions as layers
def _function(hint, x, imperative, symbolic):
    if isinstance(x, np.ndarray):
        x = nd.array(x)
    if isinstance(x, nd.NDArray):
        return imperative(x)
    if not isinstance(x, sym.Symbol):
        raise TypeError(f"{hint}: expected a Symbol, NDArray or NumPy array, got "
                        f"{type(x).__name__}")
    return run_traced(lambda: symbolic(x, current_trace().function_name(hint)), (x,))[0]


def relu(x):
    """max(x, 0) (``Activation(act_type='relu')``)."""
    return _function('relu', x, lambda a: nd.Activation(a, act_type='relu'),
                     lambda s, name: sym.Activation(s, act_type='relu', name=name))


def sigmoid(x):
    """1 / (1 + exp(-x)) (``Activation(act_type='sigmoid')``)."""
    return _function('sigmoid', x, lambda a: nd.Activation(a, act_type='sigmoid'),
                     lambda s, name: sym.Activation(s, act_type='sigmoid', name=name))


def tanh(x):
    """tanh(x) (``Activation(act_type='tanh')``)."""
    return _function('tanh', x, lambda a: nd.Activation(a, act_type='tanh'),
                     lambda s, name: sym.Activation(s, act_type='tanh', name=name))


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x), axis) (the ``softmax`` operator). A model ending with it can
    become a ``FeedForward`` (``FeedForward.from_model`` makes it a SoftmaxOutput)."""
    return _function('softmax', x, lambda a: nd.softmax(a, axis=axis),
                     lambda s, name: sym.softmax(s, axis=axis, name=name))


# ---------------------------------------------------------------- layers
class _Layer(Block):
    _emits_nodes = True

    def _node(self, suffix='fwd'):
        return current_trace().node_name(self, suffix)


class Dense(_Layer):
    """y = activation(x · weightᵀ + bias); with ``flatten`` x is first made 2-D."""
    _hint = 'dense'

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype='float32',
                 weight_initializer=None, bias_initializer='zeros', in_units=0, prefix=None,
                 params=None):
        super().__init__(prefix, params)
        self._units = _positive_int('Dense', 'units', units)
        in_units = _positive_int('Dense', 'in_units', in_units, allow_zero=True)
        self._activation = _check_activation('Dense', activation)
        self._flatten = bool(flatten)
        self.weight = self._param('weight', (units, in_units), weight_initializer, dtype=dtype)
        self.bias = self._param('bias', (units,), bias_initializer, dtype=dtype) \
            if use_bias else None

    def forward(self, x):
        kwargs = {} if self.bias is None else {'bias': self.bias.var()}
        y = sym.FullyConnected(data=x, weight=self.weight.var(), num_hidden=self._units,
                               no_bias=self.bias is None, flatten=self._flatten,
                               name=self._node(), **kwargs)
        return _activate(self, y, self._activation)

    def _repr_args(self):
        return (f"{self.weight.shape[1] or None} -> {self._units}, "
                f"{'linear' if self._activation is None else self._activation}")


class Conv2D(_Layer):
    """2-D convolution (cross-correlation) over NCHW data, then `activation`."""
    _hint = 'conv'

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, layout='NCHW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0,
                 dtype='float32', prefix=None, params=None):
        super().__init__(prefix, params)
        if layout != 'NCHW':
            raise ValueError(f"Conv2D: layout must be 'NCHW' (the Convolution operator "
                             f"computes NCHW only), got {layout!r}")
        self._channels = _positive_int('Conv2D', 'channels', channels)
        self._kernel = _pair('Conv2D', 'kernel_size', kernel_size)
        self._strides = _pair('Conv2D', 'strides', strides)
        self._padding = _pair('Conv2D', 'padding', padding, allow_zero=True)
        self._dilation = _pair('Conv2D', 'dilation', dilation)
        self._groups = _positive_int('Conv2D', 'groups', groups)
        in_channels = _positive_int('Conv2D', 'in_channels', in_channels, allow_zero=True)
        if channels % groups or in_channels % groups:
            raise ValueError(f"Conv2D: channels ({channels}) and in_channels ({in_channels}) "
                             f"must be divisible by groups ({groups})")
        self._activation = _check_activation('Conv2D', activation)
        self.weight = self._param('weight', (channels, in_channels // groups) + self._kernel,
                                  weight_initializer, dtype=dtype)
        self.bias = self._param('bias', (channels,), bias_initializer, dtype=dtype) \
            if use_bias else None

    def forward(self, x):
        kwargs = {} if self.bias is None else {'bias': self.bias.var()}
        y = sym.Convolution(data=x, weight=self.weight.var(), kernel=self._kernel,
                            stride=self._strides, pad=self._padding, dilate=self._dilation,
                            num_filter=self._channels, num_group=self._groups,
                            no_bias=self.bias is None, name=self._node(), **kwargs)
        return _activate(self, y, self._activation)

    def _repr_args(self):
        return f"{self.weight.shape[1] or None} -> {self._channels}, kernel_size={self._kernel}"


class _Pool2D(_Layer):
    _hint = 'pool'
    _pool_type = None

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCHW', count_include_pad=True, prefix=None, params=None,
                 global_pool=False):
        super().__init__(prefix, params)
        what = type(self).__name__
        if layout != 'NCHW':
            raise ValueError(f"{what}: layout must be 'NCHW', got {layout!r}")
        self._kernel = _pair(what, 'pool_size', pool_size)
        self._strides = self._kernel if strides is None else _pair(what, 'strides', strides)
        self._padding = _pair(what, 'padding', padding, allow_zero=True)
        self._convention = 'full' if ceil_mode else 'valid'
        self._count_include_pad = bool(count_include_pad)
        self._global = global_pool

    def forward(self, x):
        kwargs = {'count_include_pad': self._count_include_pad} \
            if self._pool_type == 'avg' else {}
        return sym.Pooling(data=x, kernel=self._kernel, stride=self._strides,
                           pad=self._padding, pool_type=self._pool_type,
                           pooling_convention=self._convention, global_pool=self._global,
                           name=self._node(), **kwargs)

    def _repr_args(self):
        return f"size={self._kernel}, stride={self._strides}, padding={self._padding}"


class MaxPool2D(_Pool2D):
    """Max over `pool_size` windows (strides default to `pool_size`)."""
    _pool_type = 'max'

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW',
                 ceil_mode=False, prefix=None, params=None):
        super().__init__(pool_size, strides, padding, ceil_mode, layout, True, prefix, params)


class AvgPool2D(_Pool2D):
    """Mean over `pool_size` windows (padding counted unless ``count_include_pad=False``)."""
    _pool_type = 'avg'

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCHW', count_include_pad=True, prefix=None, params=None):
        super().__init__(pool_size, strides, padding, ceil_mode, layout, count_include_pad,
                         prefix, params)


class GlobalMaxPool2D(_Pool2D):
    """Max over all of H and W: (N, C, H, W) -> (N, C, 1, 1)."""
    _pool_type = 'max'

    def __init__(self, layout='NCHW', prefix=None, params=None):
        super().__init__((1, 1), None, 0, False, layout, True, prefix, params, True)


class GlobalAvgPool2D(_Pool2D):
    """Mean over all of H and W: (N, C, H, W) -> (N, C, 1, 1)."""
    _pool_type = 'avg'

    def __init__(self, layout='NCHW', prefix=None, params=None):
        super().__init__((1, 1), None, 0, False, layout, True, prefix, params, True)


class Flatten(_Layer):
    """(N, d1, d2, ...) -> (N, d1·d2·...)."""
    _hint = 'flatten'

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix, params)

    def forward(self, x):
        return sym.Flatten(data=x, name=self._node())


class Activation(_Layer):
    """An elementwise activation: 'relu', 'sigmoid', 'tanh', 'softrelu' or 'softsign'."""

    def __init__(self, activation, prefix=None, params=None):
        super().__init__(prefix, params)
        if activation not in _ACTIVATIONS:
            raise ValueError(f"Activation: activation must be one of {_ACTIVATIONS}, got "
                             f"{activation!r}")
        self._act_type = activation

    @property
    def _hint(self):
        return self._act_type

    def forward(self, x):
        return sym.Activation(data=x, act_type=self._act_type, name=self._node())

    def _repr_args(self):
        return self._act_type


class BatchNorm(_Layer):
    """Batch normalization over `axis` (training mode uses batch statistics and updates
    the running ones; ``scale=False`` fixes gamma at 1, ``center=False`` beta at 0)."""
    _hint = 'batchnorm'

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer='zeros', gamma_initializer='ones',
                 running_mean_initializer='zeros', running_variance_initializer='ones',
                 in_channels=0, dtype='float32', prefix=None, params=None):
        super().__init__(prefix, params)
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"BatchNorm: momentum must be in [0, 1], got {momentum!r}")
        if epsilon <= 0:
            raise ValueError(f"BatchNorm: epsilon must be positive, got {epsilon!r}")
        self._kwargs = {'axis': int(axis), 'momentum': float(momentum), 'eps': float(epsilon),
                        'fix_gamma': not scale, 'use_global_stats': bool(use_global_stats)}
        c = (_positive_int('BatchNorm', 'in_channels', in_channels, allow_zero=True),)
        self.gamma = self._param('gamma', c, gamma_initializer, dtype=dtype,
                                 grad_req='write' if scale else 'null')
        self.beta = self._param('beta', c, beta_initializer, dtype=dtype,
                                grad_req='write' if center else 'null')
        self.running_mean = self._param('running_mean', c, running_mean_initializer,
                                        kind='aux', dtype=dtype)
        self.running_var = self._param('running_var', c, running_variance_initializer,
                                       kind='aux', dtype=dtype)

    def forward(self, x):
        return sym.BatchNorm(data=x, gamma=self.gamma.var(), beta=self.beta.var(),
                             moving_mean=self.running_mean.var(),
                             moving_var=self.running_var.var(), name=self._node(),
                             **self._kwargs)


class Dropout(_Layer):
    """Zero each element with probability `rate` (scaling the rest by 1/(1 - rate)) in
    training; `axes` shares one mask along those axes. Compiled models run in training
    mode, so dropout is active in ``cm(x)`` and off in ``cm.predict(x)``."""
    _hint = 'dropout'

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if not 0.0 <= rate < 1.0:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate!r}")
        self._rate = float(rate)
        self._axes = tuple(axes)

    def forward(self, x):
        return sym.Dropout(data=x, p=self._rate, axes=self._axes, name=self._node())

    def _repr_args(self):
        return f"p={self._rate}"


class Embedding(_Layer):
    """Rows of `weight` picked by integer indices: (N, ...) -> (N, ..., output_dim)."""
    _hint = 'embedding'

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None,
                 sparse_grad=False, prefix=None, params=None):
        super().__init__(prefix, params)
        self._input_dim = _positive_int('Embedding', 'input_dim', input_dim)
        self._output_dim = _positive_int('Embedding', 'output_dim', output_dim)
        self._dtype = np.dtype(dtype).name
        self._sparse_grad = bool(sparse_grad)
        self.weight = self._param('weight', (input_dim, output_dim), weight_initializer,
                                  dtype=dtype)

    def forward(self, x):
        return sym.Embedding(data=x, weight=self.weight.var(), input_dim=self._input_dim,
                             output_dim=self._output_dim, dtype=self._dtype,
                             sparse_grad=self._sparse_grad, name=self._node())

    def _repr_args(self):
        return f"{self._input_dim} -> {self._output_dim}"
