"""AlexNet ("One weird trick for parallelizing convolutional neural networks",
arXiv:1404.5997), laid out as MXNet 1.9.1's model zoo lays it out: five convolutions and
two hidden dense layers in ``features``, the classifier in ``output``, so the parameter
names (``alexnet0_conv0_weight`` ... ``alexnet0_dense2_bias``) are MXNet's.
"""
from mxcy.context import cpu
from mxcy.gluon import nn
from mxcy.gluon.block import HybridBlock
from mxcy.gluon.model_zoo.model_store import default_root, load_pretrained

__all__ = ['AlexNet', 'alexnet']

# (channels, kernel, stride, padding, max-pool after)
_CONVS = ((64, 11, 4, 2, True), (192, 5, 1, 2, True), (384, 3, 1, 1, False),
          (256, 3, 1, 1, False), (256, 3, 1, 1, True))


class AlexNet(HybridBlock):
    """AlexNet for 224x224 RGB input; `classes` outputs."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            with self.features.name_scope():
                for channels, kernel, stride, pad, pool in _CONVS:
                    self.features.add(nn.Conv2D(channels, kernel_size=kernel, strides=stride,
                                                padding=pad, activation='relu'))
                    if pool:
                        self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Flatten())
                for _ in range(2):
                    self.features.add(nn.Dense(4096, activation='relu'))
                    self.features.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=default_root, **kwargs):
    """AlexNet; `pretrained` loads ``<root>/alexnet-44335d1f.params`` onto `ctx`."""
    net = AlexNet(**kwargs)
    if pretrained:
        load_pretrained(net, 'alexnet', ctx, root)
    return net
