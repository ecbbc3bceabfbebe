"""``mx.gluon.data.vision``: MNIST, FashionMNIST, CIFAR10 and CIFAR100 from local files,
ImageRecordDataset and ImageFolderDataset, and ``transforms``."""
from mxcy.gluon.data.vision import datasets
from mxcy.gluon.data.vision import transforms
from mxcy.gluon.data.vision.datasets import (CIFAR10, CIFAR100, MNIST, FashionMNIST,
                                             ImageFolderDataset, ImageRecordDataset)

__all__ = ['CIFAR10', 'CIFAR100', 'FashionMNIST', 'ImageFolderDataset', 'ImageRecordDataset',
           'MNIST', 'datasets', 'transforms']
