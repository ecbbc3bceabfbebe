"""VGG 11/13/16/19 ("Very Deep Convolutional Networks for Large-Scale Image Recognition",
arXiv:1409.1556), with or without batch normalization, as in MXNet 1.9.1's model zoo:
3x3 convolutions (Xavier-initialized) and 2x2 max pools, then two 4096-unit dense layers
with dropout, all in ``features``; the classifier in ``output``. Input: 224x224 RGB.
"""
from mxcy.context import cpu
from mxcy.gluon import nn
from mxcy.gluon.block import HybridBlock
from mxcy.gluon.model_zoo.model_store import default_root, load_pretrained
from mxcy.initializer import Xavier

__all__ = ['VGG', 'vgg11', 'vgg13', 'vgg16', 'vgg19', 'vgg11_bn', 'vgg13_bn', 'vgg16_bn',
           'vgg19_bn', 'get_vgg']

_FILTERS = [64, 128, 256, 512, 512]
# number of layers -> convolutions per block (one block per entry of _FILTERS)
vgg_spec = {11: ([1, 1, 2, 2, 2], _FILTERS), 13: ([2, 2, 2, 2, 2], _FILTERS),
            16: ([2, 2, 3, 3, 3], _FILTERS), 19: ([2, 2, 4, 4, 4], _FILTERS)}


class VGG(HybridBlock):
    """VGG with `layers[i]` convolutions of `filters[i]` channels in block i."""

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise ValueError(f"VGG: layers ({len(layers)} blocks) and filters "
                             f"({len(filters)}) must have the same length")
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation='relu', weight_initializer='normal',
                                           bias_initializer='zeros'))
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer='normal',
                                   bias_initializer='zeros')

    def _make_features(self, layers, filters, batch_norm):
        features = nn.HybridSequential(prefix='')
        init = Xavier(rnd_type='gaussian', factor_type='out', magnitude=2)
        for num, channels in zip(layers, filters):
            for _ in range(num):
                features.add(nn.Conv2D(channels, kernel_size=3, padding=1,
                                       weight_initializer=init, bias_initializer='zeros'))
                if batch_norm:
                    features.add(nn.BatchNorm())
                features.add(nn.Activation('relu'))
            features.add(nn.MaxPool2D(strides=2))
        return features

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_vgg(num_layers, pretrained=False, ctx=cpu(), root=default_root, **kwargs):
    """VGG-`num_layers` (11, 13, 16 or 19); ``batch_norm=True`` adds BatchNorm after each
    convolution. `pretrained` loads ``vgg<n>[_bn]-<hash>.params`` from `root`."""
    if num_layers not in vgg_spec:
        raise ValueError(f"Invalid number of layers: {num_layers}. Options are "
                         f"{sorted(vgg_spec)}")
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        suffix = '_bn' if kwargs.get('batch_norm') else ''
        load_pretrained(net, f'vgg{num_layers}{suffix}', ctx, root)
    return net


def vgg11(**kwargs):
    """VGG-11."""
    return get_vgg(11, **kwargs)


def vgg13(**kwargs):
    """VGG-13."""
    return get_vgg(13, **kwargs)


def vgg16(**kwargs):
    """VGG-16."""
    return get_vgg(16, **kwargs)


def vgg19(**kwargs):
    """VGG-19."""
    return get_vgg(19, **kwargs)


def vgg11_bn(**kwargs):
    """VGG-11 with batch normalization."""
    kwargs['batch_norm'] = True
    return get_vgg(11, **kwargs)


def vgg13_bn(**kwargs):
    """VGG-13 with batch normalization."""
    kwargs['batch_norm'] = True
    return get_vgg(13, **kwargs)


def vgg16_bn(**kwargs):
    """VGG-16 with batch normalization."""
    kwargs['batch_norm'] = True
    return get_vgg(16, **kwargs)


def vgg19_bn(**kwargs):
    """VGG-19 with batch normalization."""
    kwargs['batch_norm'] = True
    return get_vgg(19, **kwargs)
