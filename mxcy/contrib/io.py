"""``mx.contrib.io.DataLoaderIter``: a Gluon ``DataLoader`` of ``(data, label)`` batches
as a ``DataIter`` for Module.

The batch size and shapes come from the loader's first batch; a smaller last batch is
completed with zero rows, which ``pad`` counts (MXNet left them uninitialised). Arrays
are cast to `dtype`.
"""
import numpy as np

from mxcy import ndarray as _nd
from mxcy.io.base import DataDesc, DataIter

__all__ = ['DataLoaderIter']


class DataLoaderIter(DataIter):
    """Iterate a Gluon DataLoader as a DataIter (see the module docstring)."""

    def __init__(self, loader, data_name='data', label_name='softmax_label',
                 dtype='float32'):
        super().__init__()
        self._loader = loader
        self.dtype = np.dtype(dtype)
        first = self._fetch(iter(loader), 'its first batch')
        if first is None:
            raise ValueError("DataLoaderIter: the loader gave no batch")
        data, label = first
        self.batch_size = data.shape[0]
        self.provide_data = [DataDesc(data_name, data.shape, self.dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, self.dtype)]
        self._current = None
        self.reset()

    @staticmethod
    def _fetch(iterator, what):
        try:
            batch = next(iterator)
        except StopIteration:
            return None
        if not isinstance(batch, (list, tuple)) or len(batch) != 2:
            raise ValueError(f"DataLoaderIter: {what} must be a (data, label) pair, got "
                             f"{type(batch).__name__} of {len(batch)} items"
                             if isinstance(batch, (list, tuple)) else
                             f"DataLoaderIter: {what} must be a (data, label) pair, got "
                             f"{type(batch).__name__}")
        return batch

    def reset(self):
        self._iter = iter(self._loader)
        self._current = None

    def iter_next(self):
        self._current = self._fetch(self._iter, 'a batch')
        return self._current is not None

    def _padded(self, arr, desc):
        arr = arr.astype(self.dtype) if np.dtype(arr.dtype) != self.dtype else arr
        rows = arr.shape[0]
        if rows == self.batch_size:
            return arr
        if rows > self.batch_size or arr.shape[1:] != desc.shape[1:]:
            raise ValueError(f"DataLoaderIter: a batch of {desc.name} has shape {arr.shape}; "
                             f"expected {desc.shape} (or fewer rows, for the last batch)")
        out = _nd.zeros(desc.shape, dtype=self.dtype)
        out[0:rows] = arr
        return out

    def getdata(self):
        return [self._padded(self._current[0], self.provide_data[0])]

    def getlabel(self):
        return [self._padded(self._current[1], self.provide_label[0])]

    def getpad(self):
        return self.batch_size - self._current[0].shape[0]

    def getindex(self):
        return None
