"""``DataDesc``, ``DataBatch`` and the ``DataIter`` protocol of ``mx.io`` (MXNet 1.x).

Contract of a data iterator (what Module.fit / score / predict rely on):

* ``reset()`` rewinds to the start of an epoch; ``iter_next()`` moves to the next batch
  and returns whether there was one; ``getdata() / getlabel() / getpad() / getindex()``
  describe the current batch; ``next()`` (and ``__next__``) do both and return a
  ``DataBatch`` or raise ``StopIteration`` at the end of the epoch. Iterating does not
  reset: ``for batch in it`` after an exhausted epoch yields nothing until ``reset()``.
* Every batch has exactly ``batch_size`` examples along the batch axis; ``pad`` counts
  the trailing examples that are filler (a consumer drops the last ``pad`` rows of the
  outputs and keeps them out of metrics); ``index`` holds the sample ids of the rows
  when the iterator knows them.
* ``reset_for_predict()`` (an mxcy addition, see mx#5690) rewinds for ONE pass in which
  every sample appears exactly once, whatever the training-time handling of the last
  batch. predict/score should call it instead of ``reset()``; the default is ``reset()``.

``DataDesc`` is the tuple ``(name, shape)`` with ``dtype`` and ``layout`` attributes, as in
MXNet, so ``name, shape = desc`` and ``desc.dtype`` both work.
"""
from collections import namedtuple

import numpy as np

from mxcy.base import mx_real_t
from mxcy.registry import get_create_func, get_register_func, list_registered

__all__ = ['DataBatch', 'DataDesc', 'DataIter', 'create', 'register']


class DataDesc(namedtuple('DataDesc', ['name', 'shape'])):
    """Name, shape, dtype and layout of one data or label input (MXNet 1.x)."""

    def __new__(cls, name, shape, dtype=mx_real_t, layout='NCHW'):
        ret = super().__new__(cls, name, tuple(shape))
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout):
        """The axis holding the batch in `layout` ('N'); 0 when `layout` is None."""
        if layout is None:
            return 0
        return layout.find('N')

    @staticmethod
    def get_list(shapes, types):
        """DataDescs from ``[(name, shape), ...]`` and optionally ``[(name, dtype), ...]``."""
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(name, shape, type_dict[name]) for name, shape in shapes]
        return [DataDesc(name, shape) for name, shape in shapes]


class DataBatch:
    """One batch: lists of data and label NDArrays, plus pad / index / bucket_key."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError(f"DataBatch: data must be a list of NDArrays, got "
                            f"{type(data).__name__}")
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError(f"DataBatch: label must be a list of NDArrays, got "
                            f"{type(label).__name__}")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [lab.shape for lab in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """Base class of the data iterators (see the module docstring for the contract)."""

    # Subclasses set these (lists of DataDesc), as attributes or properties.
    provide_data = None
    provide_label = None

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Rewind to the start of the data."""

    def reset_for_predict(self):
        """Rewind for one pass over every sample exactly once (default: ``reset()``)."""
        self.reset()

    def next(self):
        """The next DataBatch; StopIteration at the end of the epoch."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; return whether there was one."""
        return False

    def getdata(self):
        """The data NDArrays of the current batch."""
        return None

    def getlabel(self):
        """The label NDArrays of the current batch."""
        return None

    def getindex(self):
        """The sample ids of the current batch (a NumPy array), or None."""
        return None

    def getpad(self):
        """The number of filler examples at the end of the current batch."""
        return 0


register = get_register_func(DataIter, 'iterator')
_create = get_create_func(DataIter, 'iterator')


def create(*args, **kwargs):
    """An iterator from an instance, a registered name with kwargs, a dict or JSON."""
    return _create(*args, **kwargs)


def list_iterators():
    return list_registered(DataIter, 'iterator')


def check_batch_size(batch_size, where):
    """`batch_size` as a positive int, or a TypeError/ValueError naming `where`."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise TypeError(f"{where}: batch_size must be a positive int, got "
                        f"{type(batch_size).__name__} {batch_size!r}")
    if batch_size < 1:
        raise ValueError(f"{where}: batch_size must be a positive int, got {batch_size}")
    return int(batch_size)
