"""MobileNet v1 (arXiv:1704.04861) and v2 (arXiv:1801.04381) with width multipliers, as
in MXNet 1.9.1's model zoo.

v1: a strided 3x3 conv, then 13 depthwise-separable pairs (3x3 depthwise conv, 1x1
pointwise conv, each followed by BatchNorm and ReLU), global average pooling and the
classifier ``output``. v2: ``features_`` holds a strided 3x3 conv, 17 inverted-residual
``LinearBottleneck`` blocks (1x1 expand, 3x3 depthwise, 1x1 linear projection; a shortcut
when the shape is kept) and a 1x1 conv to 1280 channels, all with ReLU6; ``output_`` is a
1x1 conv ``pred_`` and flatten. Input: 224x224 RGB (any size works: global pooling).
"""
from mxcy.context import cpu
from mxcy.gluon import nn
from mxcy.gluon.block import HybridBlock
from mxcy.gluon.model_zoo.model_store import default_root, load_pretrained

__all__ = ['MobileNet', 'MobileNetV2', 'mobilenet1_0', 'mobilenet_v2_1_0', 'mobilenet0_75',
           'mobilenet_v2_0_75', 'mobilenet0_5', 'mobilenet_v2_0_5', 'mobilenet0_25',
           'mobilenet_v2_0_25', 'get_mobilenet', 'get_mobilenet_v2']


class RELU6(HybridBlock):
    """min(max(x, 0), 6)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name='relu6')


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True,
              relu6=False):
    """Append conv (no bias), BatchNorm and (when `active`) ReLU or ReLU6 to `out`."""
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation('relu'))


def _add_conv_dw(out, dw_channels, channels, stride, relu6=False):
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1,
              num_group=dw_channels, relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    """MobileNetV2's inverted residual: expand `in_channels` by `t`, depthwise 3x3 with
    `stride`, project to `channels`; adds the input when stride is 1 and the channel
    count is kept."""

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            expanded = in_channels * t
            _add_conv(self.out, expanded, relu6=True)
            _add_conv(self.out, expanded, kernel=3, stride=stride, pad=1, num_group=expanded,
                      relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


def _scaled(widths, multiplier):
    return [int(w * multiplier) for w in widths]


class MobileNet(HybridBlock):
    """MobileNet v1 with every width scaled by `multiplier`; `classes` outputs."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        dw_channels = _scaled([32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024],
                              multiplier)
        channels = _scaled([64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2, multiplier)
        strides = [1, 2] * 3 + [1] * 5 + [2, 1]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1,
                          stride=2)
                for dwc, c, s in zip(dw_channels, channels, strides):
                    _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
                self.features.add(nn.GlobalAvgPool2D())
                self.features.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNet v2 with every width scaled by `multiplier` (the last 1280 only when
    `multiplier` > 1); `classes` outputs."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        in_channels = _scaled([32, 16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3
                              + [160] * 3, multiplier)
        channels = _scaled([16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3
                           + [320], multiplier)
        ts = [1] + [6] * 16
        strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
        last_channels = int(1280 * multiplier) if multiplier > 1.0 else 1280
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='features_')
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1,
                          relu6=True)
                for in_c, c, t, s in zip(in_channels, channels, ts, strides):
                    self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t,
                                                       stride=s))
                _add_conv(self.features, last_channels, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix='output_')
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix='pred_'),
                                nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _version_suffix(multiplier):
    """MXNet's file-name form of a multiplier: 1.0, 0.75, 0.5, 0.25."""
    suffix = f'{multiplier:.2f}'
    return suffix[:-1] if suffix in ('1.00', '0.50') else suffix


def get_mobilenet(multiplier, pretrained=False, ctx=cpu(), root=default_root, **kwargs):
    """MobileNet v1 at width `multiplier`; `pretrained` loads
    ``mobilenet<multiplier>-<hash>.params`` from `root`."""
    net = MobileNet(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, f'mobilenet{_version_suffix(multiplier)}', ctx, root)
    return net


def get_mobilenet_v2(multiplier, pretrained=False, ctx=cpu(), root=default_root, **kwargs):
    """MobileNet v2 at width `multiplier`; `pretrained` loads
    ``mobilenetv2_<multiplier>-<hash>.params`` from `root`."""
    net = MobileNetV2(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, f'mobilenetv2_{_version_suffix(multiplier)}', ctx, root)
    return net


def mobilenet1_0(**kwargs):
    """MobileNet v1, multiplier 1.0."""
    return get_mobilenet(1.0, **kwargs)


def mobilenet_v2_1_0(**kwargs):
    """MobileNet v2, multiplier 1.0."""
    return get_mobilenet_v2(1.0, **kwargs)


def mobilenet0_75(**kwargs):
    """MobileNet v1, multiplier 0.75."""
    return get_mobilenet(0.75, **kwargs)


def mobilenet_v2_0_75(**kwargs):
    """MobileNet v2, multiplier 0.75."""
    return get_mobilenet_v2(0.75, **kwargs)


def mobilenet0_5(**kwargs):
    """MobileNet v1, multiplier 0.5."""
    return get_mobilenet(0.5, **kwargs)


def mobilenet_v2_0_5(**kwargs):
    """MobileNet v2, multiplier 0.5."""
    return get_mobilenet_v2(0.5, **kwargs)


def mobilenet0_25(**kwargs):
    """MobileNet v1, multiplier 0.25."""
    return get_mobilenet(0.25, **kwargs)


def mobilenet_v2_0_25(**kwargs):
    """MobileNet v2, multiplier 0.25."""
    return get_mobilenet_v2(0.25, **kwargs)
