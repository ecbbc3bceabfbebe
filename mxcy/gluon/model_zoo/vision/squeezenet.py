"""SqueezeNet 1.0 (arXiv:1602.07360) and 1.1 (the DeepScale repository's v1.1), as in
MXNet 1.9.1's model zoo: fire modules (a 1x1 squeeze convolution, then 1x1 and 3x3
expand convolutions concatenated on the channels) in ``features``; a 1x1 convolution,
ReLU, 13x13 average pooling and flatten in ``output``. Input: 224x224 RGB.
"""
from mxcy.context import cpu
from mxcy.gluon import nn
from mxcy.gluon.block import HybridBlock
from mxcy.gluon.model_zoo.model_store import default_root, load_pretrained
from mxcy.gluon.model_zoo.vision._concurrent import HybridConcurrent

__all__ = ['SqueezeNet', 'squeezenet1_0', 'squeezenet1_1']

# per version: the stem (channels, kernel), then 'pool' or a fire (squeeze, expand)
_SPEC = {
    '1.0': ((96, 7), [(16, 64), (16, 64), (32, 128), 'pool', (32, 128), (48, 192),
                      (48, 192), (64, 256), 'pool', (64, 256)]),
    '1.1': ((64, 3), [(16, 64), (16, 64), 'pool', (32, 128), (32, 128), 'pool',
                      (48, 192), (48, 192), (64, 256), (64, 256)]),
}


def _conv_relu(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation('relu'))
    return out


def _fire(squeeze, expand):
    out = nn.HybridSequential(prefix='')
    out.add(_conv_relu(squeeze, 1))
    expand_paths = HybridConcurrent(axis=1, prefix='')
    expand_paths.add(_conv_relu(expand, 1))
    expand_paths.add(_conv_relu(expand, 3, 1))
    out.add(expand_paths)
    return out


def _max_pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(HybridBlock):
    """SqueezeNet `version` '1.0' or '1.1' with `classes` outputs."""

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        if version not in _SPEC:
            raise ValueError(f"Unsupported SqueezeNet version {version}: 1.0 or 1.1 "
                             "expected")
        (stem_channels, stem_kernel), stages = _SPEC[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.Conv2D(stem_channels, kernel_size=stem_kernel, strides=2))
            self.features.add(nn.Activation('relu'))
            self.features.add(_max_pool())
            for stage in stages:
                self.features.add(_max_pool() if stage == 'pool' else _fire(*stage))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix='')
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation('relu'))
            self.output.add(nn.AvgPool2D(13))
            self.output.add(nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(), root=default_root, **kwargs):
    """SqueezeNet `version`; `pretrained` loads ``squeezenet<version>-<hash>.params``."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        load_pretrained(net, f'squeezenet{version}', ctx, root)
    return net


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0 (``get_squeezenet('1.0', ...)``)."""
    return get_squeezenet('1.0', **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1: fewer operations than 1.0 for the same accuracy."""
    return get_squeezenet('1.1', **kwargs)
