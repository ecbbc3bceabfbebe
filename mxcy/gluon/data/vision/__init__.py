"""``mx.gluon.data.vision``: MNIST, FashionMNIST, CIFAR10 and CIFAR100 from local files."""
from mxcy.gluon.data.vision import datasets
from mxcy.gluon.data.vision.datasets import CIFAR10, CIFAR100, MNIST, FashionMNIST

__all__ = ['CIFAR10', 'CIFAR100', 'FashionMNIST', 'MNIST', 'datasets']
