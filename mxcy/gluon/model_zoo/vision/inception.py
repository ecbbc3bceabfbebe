"""Inception v3 ("Rethinking the Inception Architecture for Computer Vision",
arXiv:1512.00567) as in MXNet 1.9.1's model zoo: a stem of conv-BN(eps 1e-3)-ReLU units,
then the mixed blocks ``A1_`` ``A2_`` ``A3_`` ``B_`` ``C1_`` ... ``C4_`` ``D_`` ``E1_``
``E2_`` (parallel branches concatenated on the channels), 8x8 average pooling, dropout
and the classifier. Input: 299x299 RGB. (MXNet's auxiliary classifier, ``make_aux``, is
defined but not part of the network.)
"""
from mxcy.context import cpu
from mxcy.gluon import nn
from mxcy.gluon.block import HybridBlock
from mxcy.gluon.model_zoo.model_store import default_root, load_pretrained
from mxcy.gluon.model_zoo.vision._concurrent import HybridConcurrent

__all__ = ['Inception3', 'inception_v3']

_SETTING_NAMES = ('channels', 'kernel_size', 'strides', 'padding')


def _basic_conv(**kwargs):
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(use_bias=False, **kwargs))
    out.add(nn.BatchNorm(epsilon=0.001))
    out.add(nn.Activation('relu'))
    return out


def _branch(pool, *convs):
    """An optional pool ('avg' 3x3/1 padded, 'max' 3x3/2), then one basic conv per
    (channels, kernel, stride, padding) tuple (None: the Conv2D default)."""
    out = nn.HybridSequential(prefix='')
    if pool == 'avg':
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == 'max':
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for setting in convs:
        out.add(_basic_conv(**{k: v for k, v in zip(_SETTING_NAMES, setting)
                               if v is not None}))
    return out


def _concurrent(prefix, *branches):
    """A HybridConcurrent named `prefix` whose branches are made in its scope."""
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for make in branches:
            out.add(make())
    return out


def _make_A(pool_features, prefix):
    return _concurrent(
        prefix,
        lambda: _branch(None, (64, 1, None, None)),
        lambda: _branch(None, (48, 1, None, None), (64, 5, None, 2)),
        lambda: _branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
        lambda: _branch('avg', (pool_features, 1, None, None)))


def _make_B(prefix):
    return _concurrent(
        prefix,
        lambda: _branch(None, (384, 3, 2, None)),
        lambda: _branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
        lambda: _branch('max'))


def _make_C(c7, prefix):
    return _concurrent(
        prefix,
        lambda: _branch(None, (192, 1, None, None)),
        lambda: _branch(None, (c7, 1, None, None), (c7, (1, 7), None, (0, 3)),
                        (192, (7, 1), None, (3, 0))),
        lambda: _branch(None, (c7, 1, None, None), (c7, (7, 1), None, (3, 0)),
                        (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                        (192, (1, 7), None, (0, 3))),
        lambda: _branch('avg', (192, 1, None, None)))


def _make_D(prefix):
    return _concurrent(
        prefix,
        lambda: _branch(None, (192, 1, None, None), (320, 3, 2, None)),
        lambda: _branch(None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                        (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
        lambda: _branch('max'))


def _split_1x3_3x1():
    split = HybridConcurrent(axis=1, prefix='')
    split.add(_branch(None, (384, (1, 3), None, (0, 1))))
    split.add(_branch(None, (384, (3, 1), None, (1, 0))))
    return split


def _make_E(prefix):
    def branch_3x3():
        out = nn.HybridSequential(prefix='')
        out.add(_branch(None, (384, 1, None, None)))
        out.add(_split_1x3_3x1())
        return out

    def branch_3x3dbl():
        out = nn.HybridSequential(prefix='')
        out.add(_branch(None, (448, 1, None, None), (384, 3, None, 1)))
        out.add(_split_1x3_3x1())
        return out

    return _concurrent(prefix, lambda: _branch(None, (320, 1, None, None)), branch_3x3,
                       branch_3x3dbl, lambda: _branch('avg', (192, 1, None, None)))


def make_aux(classes):
    """MXNet's auxiliary classifier head (not used by Inception3)."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.AvgPool2D(pool_size=5, strides=3))
    out.add(_basic_conv(channels=128, kernel_size=1))
    out.add(_basic_conv(channels=768, kernel_size=5))
    out.add(nn.Flatten())
    out.add(nn.Dense(classes))
    return out


class Inception3(HybridBlock):
    """Inception v3 with `classes` outputs."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(_basic_conv(channels=32, kernel_size=3, strides=2))
            self.features.add(_basic_conv(channels=32, kernel_size=3))
            self.features.add(_basic_conv(channels=64, kernel_size=3, padding=1))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_basic_conv(channels=80, kernel_size=1))
            self.features.add(_basic_conv(channels=192, kernel_size=3))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_make_A(32, 'A1_'), _make_A(64, 'A2_'), _make_A(64, 'A3_'))
            self.features.add(_make_B('B_'))
            self.features.add(_make_C(128, 'C1_'), _make_C(160, 'C2_'), _make_C(160, 'C3_'),
                              _make_C(192, 'C4_'))
            self.features.add(_make_D('D_'))
            self.features.add(_make_E('E1_'), _make_E('E2_'))
            self.features.add(nn.AvgPool2D(pool_size=8))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=cpu(), root=default_root, **kwargs):
    """Inception v3; `pretrained` loads ``<root>/inceptionv3-ed47ec45.params``."""
    net = Inception3(**kwargs)
    if pretrained:
        load_pretrained(net, 'inceptionv3', ctx, root)
    return net
