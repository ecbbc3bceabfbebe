"""``mx.io.CSVIter``: batches from CSV files of numbers (MXNet 1.x, keyword arguments only).

Each line of `data_csv` is one sample of ``prod(data_shape)`` comma-separated values,
reshaped to `data_shape`; each line of `label_csv` (same number of lines) is its label of
``prod(label_shape)`` values. Without `label_csv` (or with MXNet's 'NULL') every label is
0. A file argument may be a directory, whose files are read in name order. A label of
shape ``(1,)`` comes as a ``(batch,)`` array, as SoftmaxOutput expects;
other label shapes come as ``(batch,) + label_shape``.

Every batch has `batch_size` rows. With ``round_batch=True`` (the default) the last batch
is completed with samples from the start of the file; with ``round_batch=False`` it is
completed with zeros. Either way ``pad`` counts the filler rows, and every epoch starts
at the first line (MXNet's round_batch instead started the next epoch after the samples
it borrowed). Values are parsed as `dtype` (None: float32; int32 or int64); a line with the
wrong number of values raises ValueError naming the file.
"""
import io
import math
import os

import numpy as np

from mxcy.base import as_shape
from mxcy.io.base import check_batch_size, register
from mxcy.io.libsvm_iter import read_stream
from mxcy.io.mx_data_iter import MXDataIter, check_common
from mxcy.io.ndarray_iter import NDArrayIter
from mxcy.ndarray.utils import array

__all__ = ['CSVIter']

_DTYPES = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64))


def read_csv(path, width, dtype, what):
    """The (lines, width) array of a CSV file of numbers, with errors naming the file."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"CSVIter: {what} {path!r} not found")
    source = path
    if os.path.isdir(path):              # a directory: its files in name order
        source = io.BytesIO(read_stream(path, 'CSVIter', what))
        if not source.getbuffer().nbytes:
            return np.zeros((0, width), dtype)
    elif os.path.getsize(path) == 0:
        return np.zeros((0, width), dtype)
    # NOTE: integers are parsed as int64 directly so large values keep every digit.
    parse_dtype = np.float64 if dtype.kind == 'f' else np.int64
    try:
        values = np.loadtxt(source, delimiter=',', dtype=parse_dtype, ndmin=2)
    except ValueError as err:
        raise ValueError(f"CSVIter: {what} {path!r} is not a CSV file of {dtype} numbers "
                         f"with the same count on every line: {err}") from None
    if values.shape[1] != width and values.shape[0]:
        raise ValueError(f"CSVIter: every line of {what} {path!r} must hold {width} values, "
                         f"got {values.shape[1]}")
    return values.astype(dtype)


@register
class CSVIter(MXDataIter, NDArrayIter):
    """Batches of samples read from CSV files (see the module docstring)."""

    _pad_with_zeros = False

    def __init__(self, *, data_csv, data_shape, label_csv=None, label_shape=(1,),
                 batch_size, round_batch=True, prefetch_buffer=4, ctx='gpu', dtype=None,
                 data_name='data', label_name='softmax_label'):
        check_batch_size(batch_size, 'CSVIter')
        data_shape = as_shape(data_shape, 'CSVIter: data_shape')
        label_shape = as_shape(label_shape, 'CSVIter: label_shape')
        dtype = check_common('CSVIter', prefetch_buffer, ctx, dtype, _DTYPES)
        self.prefetch_buffer, self.ctx = prefetch_buffer, ctx
        data = read_csv(data_csv, math.prod(data_shape), dtype, 'data_csv')
        n = len(data)
        if label_csv is None or label_csv == 'NULL':
            labels = np.zeros((n, math.prod(label_shape)), dtype)
        else:
            labels = read_csv(label_csv, math.prod(label_shape), dtype, 'label_csv')
            if len(labels) != n:
                raise ValueError(f"CSVIter: data_csv {data_csv!r} has {n} lines but "
                                 f"label_csv {label_csv!r} has {len(labels)}")
        labels = labels.reshape((n,) if label_shape == (1,) else (n,) + label_shape)
        self.round_batch = bool(round_batch)
        self._pad_with_zeros = not self.round_batch
        super().__init__(array(data.reshape((n,) + data_shape), dtype=dtype),
                         array(labels, dtype=dtype), batch_size=batch_size, shuffle=False,
                         last_batch_handle='pad', data_name=data_name,
                         label_name=label_name)
