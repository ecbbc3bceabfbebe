"""``mx.io``: data iterators (MXNet 1.x names and arguments).

``NDArrayIter`` (in-memory arrays), ``MNISTIter`` (IDX files, gzipped or not),
``CSVIter``, ``LibSVMIter`` (dense batches; these three are ``MXDataIter``s),
``ResizeIter`` and ``PrefetchingIter``, on the ``DataIter`` / ``DataBatch`` /
``DataDesc`` protocol of ``mxcy.io.base``. Also ``read_idx`` / ``write_idx`` for the IDX
format and ``prepare_digits()``, which writes real MNIST digits shipped by a PyPI package
as IDX files for offline examples (``mxcy.io.digits``).
"""
from mxcy.io.base import DataBatch, DataDesc, DataIter, create
from mxcy.io.ndarray_iter import NDArrayIter
from mxcy.io.mnist import MNISTIter, read_idx, write_idx
from mxcy.io.csv_iter import CSVIter
from mxcy.io.libsvm_iter import LibSVMIter
from mxcy.io.mx_data_iter import MXDataIter
from mxcy.io.wrappers import PrefetchingIter, ResizeIter
from mxcy.io.digits import prepare_digits
from mxcy.io.image_record import ImageRecordInt8Iter, ImageRecordIter, ImageRecordUInt8Iter
from mxcy.io.image_det_record import ImageDetRecordIter

__all__ = ['CSVIter', 'DataBatch', 'DataDesc', 'DataIter', 'ImageDetRecordIter',
           'ImageRecordInt8Iter',
           'ImageRecordIter', 'ImageRecordUInt8Iter', 'LibSVMIter', 'MNISTIter',
           'MXDataIter', 'NDArrayIter',
           'PrefetchingIter', 'ResizeIter', 'create', 'prepare_digits', 'read_idx',
           'write_idx']
