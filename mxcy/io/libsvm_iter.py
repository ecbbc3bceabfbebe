"""``mx.io.LibSVMIter``: batches from LibSVM text files (MXNet 1.9.1 arguments, keyword
only), as dense arrays.

Each line of `data_libsvm` is ``label index:value index:value ...`` with zero-based
feature indices below ``data_shape[0]``; features not listed are 0. The sample's label is
its first token, a ``(batch,)`` array. With `label_libsvm` the labels come from that file
instead: each line's ``index:value`` pairs fill a label of `label_shape` (its first token
is ignored), a ``(batch,) + label_shape`` array. A file argument may be a directory: its
files are read in name order, as one stream.

``num_parts``/``part_index`` split the stream by bytes as MXNet's (dmlc) input split does:
part ``p`` of ``k`` starts at byte ``p * ceil(size/k)`` moved past the end of the line
under it, so a line belongs to the part where it ends. With a label file both files are
split the same way and must give the same number of lines.

Every batch has `batch_size` rows; the last one is completed (``pad`` counts the filler)
with samples from the start of the part when ``round_batch=True`` (the default), with
zeros otherwise (MXNet 1.9.1 failed there). Every epoch starts at the first sample (MXNet
started the next epoch after the samples it borrowed).

Differences from MXNet: the data (and a `label_libsvm` label) is a dense NDArray, not a
CSRNDArray; a feature index outside ``data_shape`` raises ValueError naming the file and
line (MXNet wrote it into the next row).
"""
import math
import os

import numpy as np

from mxcy.base import as_shape
from mxcy.io.base import check_batch_size, register
from mxcy.io.mx_data_iter import MXDataIter, check_common
from mxcy.io.ndarray_iter import NDArrayIter
from mxcy.ndarray.utils import array

__all__ = ['LibSVMIter', 'read_stream', 'split_part']

_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
_NEWLINES = b'\r\n'


def read_stream(path, where, what):
    """The bytes of `path`, or of the files of the directory `path` in name order."""
    path = os.fspath(path)
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path)
                       if os.path.isfile(os.path.join(path, n)))
        parts = []
        for name in names:
            with open(os.path.join(path, name), 'rb') as f:
                chunk = f.read()
            if chunk and chunk[-1:] not in (b'\n', b'\r'):
                chunk += b'\n'
            parts.append(chunk)
        return b''.join(parts)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{where}: {what} {path!r} not found")
    with open(path, 'rb') as f:
        return f.read()


def _record_begin(data, offset):
    """The first line start after the line that holds byte `offset` (dmlc's rule)."""
    if offset <= 0 or offset >= len(data):
        return max(0, min(offset, len(data)))
    while offset < len(data) and data[offset] not in _NEWLINES:
        offset += 1
    while offset < len(data) and data[offset] in _NEWLINES:
        offset += 1
    return offset


def split_part(data, num_parts, part_index):
    """The bytes of part `part_index` of `num_parts` (see the module docstring)."""
    step = -(-len(data) // num_parts)
    begin = _record_begin(data, step * part_index)
    end = _record_begin(data, step * (part_index + 1))
    return data[begin:end]


def _parse(text, width, where, what, path, with_label):
    """(labels, dense rows) of the LibSVM lines in `text`."""
    lines = [line for line in text.decode('utf-8').splitlines() if line.strip()]
    labels = np.zeros(len(lines), np.float64)
    rows = np.zeros((len(lines), width), np.float64)
    for i, line in enumerate(lines):
        tokens = line.split()
        try:
            if with_label:
                labels[i] = float(tokens[0])
            for token in tokens[1:]:
                index, _, value = token.partition(':')
                col = int(index)
                if not 0 <= col < width:
                    raise IndexError(col)
                rows[i, col] = float(value)
        except IndexError as err:
            raise ValueError(f"{where}: {what} {path!r}, line {i + 1} of the part: feature "
                             f"index {err} is outside [0, {width}) given by the shape"
                             ) from None
        except ValueError:
            raise ValueError(f"{where}: {what} {path!r}, line {i + 1} of the part is not "
                             f"'label index:value ...': {line[:80]!r}") from None
    return labels, rows


def _check_part(num_parts, part_index, where):
    for name, value, low in (('num_parts', num_parts, 1), ('part_index', part_index, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{where}: {name} must be an int >= {low}, got {value!r}")
    if part_index >= num_parts:
        raise ValueError(f"{where}: part_index must be in [0, num_parts={num_parts}), got "
                         f"{part_index}")


@register
class LibSVMIter(MXDataIter, NDArrayIter):
    """Batches of samples read from LibSVM files (see the module docstring)."""

    def __init__(self, *, data_libsvm, data_shape, label_libsvm=None, label_shape=(1,),
                 num_parts=1, part_index=0, batch_size, round_batch=True,
                 prefetch_buffer=4, ctx='gpu', dtype=None, data_name='data',
                 label_name='softmax_label'):
        where = 'LibSVMIter'
        check_batch_size(batch_size, where)
        data_shape = as_shape(data_shape, f'{where}: data_shape')
        label_shape = as_shape(label_shape, f'{where}: label_shape')
        if len(data_shape) != 1:
            raise ValueError(f"{where}: data_shape must be (num_features,), got {data_shape}")
        _check_part(num_parts, part_index, where)
        dtype = check_common(where, prefetch_buffer, ctx, dtype, _DTYPES)
        text = split_part(read_stream(data_libsvm, where, 'data_libsvm'), num_parts,
                          part_index)
        labels, data = _parse(text, data_shape[0], where, 'data_libsvm', data_libsvm, True)
        if label_libsvm is not None and label_libsvm != 'NULL':
            text = split_part(read_stream(label_libsvm, where, 'label_libsvm'), num_parts,
                              part_index)
            _, labels = _parse(text, math.prod(label_shape), where, 'label_libsvm',
                               label_libsvm, False)
            if len(labels) != len(data):
                raise ValueError(f"{where}: data_libsvm {data_libsvm!r} has {len(data)} "
                                 f"samples but label_libsvm {label_libsvm!r} has "
                                 f"{len(labels)}")
            labels = labels.reshape((len(labels),) + label_shape)
        elif label_shape != (1,):
            raise ValueError(f"{where}: label_shape {label_shape} needs label_libsvm; "
                             "labels read from data_libsvm are one number per sample")
        self.round_batch = bool(round_batch)
        self._pad_with_zeros = not self.round_batch
        self.num_parts, self.part_index = int(num_parts), int(part_index)
        self.prefetch_buffer, self.ctx = prefetch_buffer, ctx
        super().__init__(array(data, dtype=dtype), array(labels, dtype=np.float32),
                         batch_size=batch_size, shuffle=False, last_batch_handle='pad',
                         data_name=data_name, label_name=label_name)
