"""DenseNet 121/161/169/201 ("Densely Connected Convolutional Networks",
arXiv:1608.06993) as in MXNet 1.9.1's model zoo: a 7x7 stem, four dense blocks
(``stage1_`` ... ``stage4_``; each layer concatenates its input with `growth_rate` new
channels from a BN-ReLU-1x1 conv, BN-ReLU-3x3 conv bottleneck) joined by transitions
(BN-ReLU-1x1 conv halving the channels, 2x2 average pooling), then BN-ReLU, 7x7 average
pooling and the classifier. Input: 224x224 RGB.
"""
from mxcy.context import cpu
from mxcy.gluon import nn
from mxcy.gluon.block import HybridBlock
from mxcy.gluon.model_zoo.model_store import default_root, load_pretrained
from mxcy.gluon.model_zoo.vision._concurrent import HybridConcurrent, Identity

__all__ = ['DenseNet', 'densenet121', 'densenet161', 'densenet169', 'densenet201']

# depth -> (stem channels, growth rate, layers per dense block)
densenet_spec = {121: (64, 32, [6, 12, 24, 16]), 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]), 201: (64, 32, [6, 12, 48, 32])}


def _bn_relu_conv(out, channels, kernel_size, padding=0):
    out.add(nn.BatchNorm())
    out.add(nn.Activation('relu'))
    out.add(nn.Conv2D(channels, kernel_size=kernel_size, padding=padding, use_bias=False))


def _dense_layer(growth_rate, bn_size, dropout):
    new_features = nn.HybridSequential(prefix='')
    _bn_relu_conv(new_features, bn_size * growth_rate, 1)
    _bn_relu_conv(new_features, growth_rate, 3, padding=1)
    if dropout:
        new_features.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix='')
    out.add(Identity())
    out.add(new_features)
    return out


def _dense_block(num_layers, bn_size, growth_rate, dropout, stage_index):
    out = nn.HybridSequential(prefix=f'stage{stage_index}_')
    with out.name_scope():
        for _ in range(num_layers):
            out.add(_dense_layer(growth_rate, bn_size, dropout))
    return out


def _transition(channels):
    out = nn.HybridSequential(prefix='')
    _bn_relu_conv(out, channels, 1)
    out.add(nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """DenseNet: `num_init_features` stem channels, `block_config[i]` layers in dense
    block i, each adding `growth_rate` channels through a `bn_size` x `growth_rate`
    bottleneck; `dropout` after each layer when nonzero."""

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2,
                                        padding=3, use_bias=False))
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            channels = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(_dense_block(num_layers, bn_size, growth_rate, dropout,
                                               i + 1))
                channels += num_layers * growth_rate
                if i != len(block_config) - 1:
                    channels //= 2
                    self.features.add(_transition(channels))
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.AvgPool2D(pool_size=7))
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_densenet(num_layers, pretrained=False, ctx=cpu(), root=default_root, **kwargs):
    """DenseNet-`num_layers` (121, 161, 169 or 201); `pretrained` loads
    ``densenet<n>-<hash>.params`` from `root`."""
    if num_layers not in densenet_spec:
        raise ValueError(f"Invalid number of layers: {num_layers}. Options are "
                         f"{sorted(densenet_spec)}")
    num_init_features, growth_rate, block_config = densenet_spec[num_layers]
    net = DenseNet(num_init_features, growth_rate, block_config, **kwargs)
    if pretrained:
        load_pretrained(net, f'densenet{num_layers}', ctx, root)
    return net


def densenet121(**kwargs):
    """DenseNet-121."""
    return get_densenet(121, **kwargs)


def densenet161(**kwargs):
    """DenseNet-161."""
    return get_densenet(161, **kwargs)


def densenet169(**kwargs):
    """DenseNet-169."""
    return get_densenet(169, **kwargs)


def densenet201(**kwargs):
    """DenseNet-201."""
    return get_densenet(201, **kwargs)
