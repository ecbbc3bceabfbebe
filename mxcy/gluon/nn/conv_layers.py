"""``gluon.nn`` convolution, pooling and padding layers (MXNet 1.9.1's ``conv_layers``).

Each layer is a HybridBlock over one operator (``Convolution``, ``Deconvolution``,
``Pooling`` or ``Pad``) called with the name ``fwd``, so its graph node is ``conv0_fwd``
and its parameters ``conv0_weight`` / ``conv0_bias`` as in MXNet. A convolution made
without ``in_channels`` defers its weight's input-channel dimension (0) to the first
forward pass.

Weights: convolution (channels, in_channels / groups, *kernel); transposed convolution
(in_channels, channels / groups, *kernel). Data is channel-first (NCW, NCHW, NCDHW); a
channel-last layout, valid in MXNet, raises ValueError because the operators compute
channel-first data only.
"""
import numbers

from mxcy.gluon.block import HybridBlock

__all__ = ['Conv1D', 'Conv2D', 'Conv3D', 'Conv1DTranspose', 'Conv2DTranspose',
           'Conv3DTranspose', 'MaxPool1D', 'MaxPool2D', 'MaxPool3D', 'AvgPool1D',
           'AvgPool2D', 'AvgPool3D', 'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D',
           'GlobalAvgPool1D', 'GlobalAvgPool2D', 'GlobalAvgPool3D', 'ReflectionPad2D']

_FIRST = {1: 'NCW', 2: 'NCHW', 3: 'NCDHW'}
_LAST = {1: 'NWC', 2: 'NHWC', 3: 'NDHWC'}


def _int(what, arg, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{what}: {arg} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _tuple(what, arg, value, n, minimum):
    """An int (repeated n times) or n ints, each >= minimum, as a tuple."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (value,) * n
    if not isinstance(value, (tuple, list)) or len(value) != n:
        raise ValueError(f"{what}: {arg} must be a number or a list of {n} ints, got "
                         f"{value!r}")
    return tuple(_int(what, arg, v, minimum) for v in value)


def _check_layout(what, layout, n):
    if layout == _FIRST[n]:
        return layout
    if layout == _LAST[n]:
        raise ValueError(f"{what}: layout {layout!r} (channels last) is not supported by "
                         f"mxcy's operators; use {_FIRST[n]!r}")
    raise ValueError(f"{what}: only {_FIRST[n]!r} and {_LAST[n]!r} layouts are valid for "
                     f"{n}-D data (mxcy computes {_FIRST[n]!r}), got {layout!r}")


class _Conv(HybridBlock):
    """A convolution (``op_name`` 'Convolution') or a transposed one ('Deconvolution')."""
    _ndim = None
    _op_name = 'Convolution'

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', output_padding=None, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        what, n = type(self).__name__, self._ndim
        kernel = _tuple(what, 'kernel_size', kernel_size, n, 1)
        channels = _int(what, 'channels', channels, 1)
        groups = _int(what, 'groups', groups, 1)
        in_channels = _int(what, 'in_channels', in_channels, 0)
        if channels % groups or in_channels % groups:
            raise ValueError(f"{what}: channels ({channels}) and in_channels ({in_channels})"
                             f" must be divisible by groups ({groups})")
        self._channels, self._in_channels = channels, in_channels
        self._kwargs = {
            'kernel': kernel, 'stride': _tuple(what, 'strides', strides, n, 1),
            'dilate': _tuple(what, 'dilation', dilation, n, 1),
            'pad': _tuple(what, 'padding', padding, n, 0), 'num_filter': channels,
            'num_group': groups, 'no_bias': not use_bias,
            'layout': _check_layout(what, layout, n)}
        if self._op_name == 'Deconvolution':
            self._kwargs['adj'] = _tuple(what, 'output_padding', output_padding, n, 0)
            wshape = (in_channels, channels // groups) + kernel
        else:
            wshape = (channels, in_channels // groups) + kernel
        with self.name_scope():
            self.weight = self.params.get('weight', shape=wshape, init=weight_initializer,
                                          allow_deferred_init=True)
            self.bias = self.params.get('bias', shape=(channels,), init=bias_initializer,
                                        allow_deferred_init=True) if use_bias else None
            if activation is not None:
                from mxcy.gluon.nn.activations import Activation
                self.act = Activation(activation, prefix=activation + '_')
            else:
                self.act = None

    def _alias(self):
        return 'conv'

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name='fwd', **self._kwargs)
        else:
            out = op(x, weight, bias, name='fwd', **self._kwargs)
        return out if self.act is None else self.act(out)

    def __repr__(self):
        kw, n = self._kwargs, self._ndim
        shape = self.weight.shape
        # as MXNet: weight dimension 1 -> dimension 0 (for a transposed convolution that
        # reads channels / groups -> in_channels)
        text = (f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}, "
                f"kernel_size={kw['kernel']}, stride={kw['stride']}")
        if kw['pad'] != (0,) * n:
            text += f", padding={kw['pad']}"
        if kw['dilate'] != (1,) * n:
            text += f", dilation={kw['dilate']}"
        if kw['num_group'] != 1:
            text += f", groups={kw['num_group']}"
        if self.bias is None:
            text += ", bias=False"
        if self.act is not None:
            text += f", {self.act!r}"
        return text + ')'


class Conv1D(_Conv):
    """1-D convolution (cross-correlation) over NCW data, then `activation`."""
    _ndim = 1

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout='NCW', activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, **kwargs)


class Conv2D(_Conv):
    """2-D convolution (cross-correlation) over NCHW data, then `activation`."""
    _ndim = 2

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, layout='NCHW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, **kwargs)


class Conv3D(_Conv):
    """3-D convolution (cross-correlation) over NCDHW data, then `activation`."""
    _ndim = 3

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout='NCDHW', activation=None,
                 use_bias=True, weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, **kwargs)


class Conv1DTranspose(_Conv):
    """1-D transposed convolution (the data gradient of a Conv1D) over NCW data;
    `output_padding` adds to one side of the output."""
    _ndim = 1
    _op_name = 'Deconvolution'

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout='NCW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, output_padding, **kwargs)


class Conv2DTranspose(_Conv):
    """2-D transposed convolution (the data gradient of a Conv2D) over NCHW data."""
    _ndim = 2
    _op_name = 'Deconvolution'

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout='NCHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, output_padding, **kwargs)


class Conv3DTranspose(_Conv):
    """3-D transposed convolution (the data gradient of a Conv3D) over NCDHW data."""
    _ndim = 3
    _op_name = 'Deconvolution'

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout='NCDHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, output_padding, **kwargs)


# ---------------------------------------------------------------- pooling
class _Pooling(HybridBlock):
    """One ``Pooling`` operator; `strides` default to `pool_size`."""
    _ndim = None

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type,
                 layout, count_include_pad=None, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        what, n = type(self).__name__, self._ndim
        kernel = _tuple(what, 'pool_size', pool_size, n, 1)
        strides = kernel if strides is None else _tuple(what, 'strides', strides, n, 1)
        self._kwargs = {
            'kernel': kernel, 'stride': strides, 'pad': _tuple(what, 'padding', padding, n, 0),
            'global_pool': global_pool, 'pool_type': pool_type,
            'layout': _check_layout(what, layout, n),
            'pooling_convention': 'full' if ceil_mode else 'valid'}
        if count_include_pad is not None:
            self._kwargs['count_include_pad'] = bool(count_include_pad)

    def _alias(self):
        return 'pool'

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name='fwd', **self._kwargs)

    def __repr__(self):
        kw = self._kwargs
        return (f"{type(self).__name__}(size={kw['kernel']}, stride={kw['stride']}, "
                f"padding={kw['pad']}, ceil_mode={kw['pooling_convention'] == 'full'}, "
                f"global_pool={kw['global_pool']}, pool_type={kw['pool_type']}, "
                f"layout={kw['layout']})")


class MaxPool1D(_Pooling):
    """Max over windows of NCW data."""
    _ndim = 1

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False,
                 **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, 'max', layout,
                         **kwargs)


class MaxPool2D(_Pooling):
    """Max over windows of NCHW data."""
    _ndim = 2

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW',
                 ceil_mode=False, **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, 'max', layout,
                         **kwargs)


class MaxPool3D(_Pooling):
    """Max over windows of NCDHW data."""
    _ndim = 3

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCDHW', **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, 'max', layout,
                         **kwargs)


class AvgPool1D(_Pooling):
    """Mean over windows of NCW data (padding counted unless count_include_pad=False)."""
    _ndim = 1

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False,
                 count_include_pad=True, **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, 'avg', layout,
                         count_include_pad, **kwargs)


class AvgPool2D(_Pooling):
    """Mean over windows of NCHW data (padding counted unless count_include_pad=False)."""
    _ndim = 2

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCHW', count_include_pad=True, **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, 'avg', layout,
                         count_include_pad, **kwargs)


class AvgPool3D(_Pooling):
    """Mean over windows of NCDHW data (padding counted unless count_include_pad=False)."""
    _ndim = 3

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCDHW', count_include_pad=True, **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, 'avg', layout,
                         count_include_pad, **kwargs)


class _GlobalPooling(_Pooling):
    _pool_type = None

    def __init__(self, layout, **kwargs):
        super().__init__((1,) * self._ndim, None, 0, True, True, self._pool_type, layout,
                         **kwargs)


class GlobalMaxPool1D(_GlobalPooling):
    """Max over W: (N, C, W) -> (N, C, 1)."""
    _ndim, _pool_type = 1, 'max'

    def __init__(self, layout='NCW', **kwargs):
        super().__init__(layout, **kwargs)


class GlobalMaxPool2D(_GlobalPooling):
    """Max over H and W: (N, C, H, W) -> (N, C, 1, 1)."""
    _ndim, _pool_type = 2, 'max'

    def __init__(self, layout='NCHW', **kwargs):
        super().__init__(layout, **kwargs)


class GlobalMaxPool3D(_GlobalPooling):
    """Max over D, H and W: (N, C, D, H, W) -> (N, C, 1, 1, 1)."""
    _ndim, _pool_type = 3, 'max'

    def __init__(self, layout='NCDHW', **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool1D(_GlobalPooling):
    """Mean over W: (N, C, W) -> (N, C, 1)."""
    _ndim, _pool_type = 1, 'avg'

    def __init__(self, layout='NCW', **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool2D(_GlobalPooling):
    """Mean over H and W: (N, C, H, W) -> (N, C, 1, 1)."""
    _ndim, _pool_type = 2, 'avg'

    def __init__(self, layout='NCHW', **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool3D(_GlobalPooling):
    """Mean over D, H and W: (N, C, D, H, W) -> (N, C, 1, 1, 1)."""
    _ndim, _pool_type = 3, 'avg'

    def __init__(self, layout='NCDHW', **kwargs):
        super().__init__(layout, **kwargs)


class ReflectionPad2D(HybridBlock):
    """Pad H and W of NCHW data by reflection; `padding` an int (all four sides) or MXNet's
    flat 8-tuple pad_width."""

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
            padding = (0, 0, 0, 0) + (int(padding),) * 4
        if not isinstance(padding, (tuple, list)) or len(padding) != 8:
            raise ValueError(f"ReflectionPad2D: padding must be an int or 8 ints, got "
                             f"{padding!r}")
        self._padding = tuple(padding)

    def hybrid_forward(self, F, x):
        return F.pad(x, mode='reflect', pad_width=self._padding)
