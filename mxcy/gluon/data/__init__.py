"""``mx.gluon.data``: datasets, samplers and the DataLoader (MXNet 1.9.1's names).

``vision.ImageRecordDataset`` / ``ImageFolderDataset`` wait for ``mx.image``;
``vision.transforms`` is another issue.
"""
from mxcy.gluon.data import dataset, sampler, dataloader, vision
from mxcy.gluon.data.dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from mxcy.gluon.data.sampler import (BatchSampler, FilterSampler, RandomSampler, Sampler,
                                     SequentialSampler)
from mxcy.gluon.data.dataloader import DataLoader

__all__ = ['ArrayDataset', 'BatchSampler', 'DataLoader', 'Dataset', 'FilterSampler',
           'RandomSampler', 'RecordFileDataset', 'Sampler', 'SequentialSampler',
           'SimpleDataset', 'dataloader', 'dataset', 'sampler', 'vision']
