"""``mx.io.MNISTIter`` and the IDX file format (plain or gzipped).

IDX (the MNIST distribution format): two zero bytes, a type code (0x08 uint8, 0x09 int8,
0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64), the number of dimensions, then each
dimension as a big-endian uint32, then the values, big-endian, C order. MNIST images are
``00 00 08 03`` (N, rows, cols) and labels ``00 00 08 01`` (N,).

Files are data: ``read_idx`` checks the magic, the type code and the dimensions against
the file size BEFORE it allocates (a gzip file cannot inflate past ~1032:1), and a
truncated, corrupt or over-long file raises ``ValueError`` naming the file and what is
wrong. Gzip is detected by its magic bytes (1f 8b), so the extension does not matter.

``MNISTIter`` (keyword arguments only, as MXNet's C++ iterators) follows MXNet 1.x:
images as float32 ``(batch, 1, rows, cols)``, or ``(batch, rows*cols)`` with
``flat=True``, scaled by 1/256 as MXNet did; labels float32 ``(batch,)``;
``num_parts``/``part_index`` take the contiguous shard ``[n*p/k, n*(p+1)/k)`` of the
file; the last incomplete batch is dropped, as MXNet's MNISTIter did
(``last_batch_handle`` is an mxcy addition that can change that). ``data_shape``, which
MXNet ignores, is accepted and must hold one image; ``prefetch_buffer`` and ``ctx`` are
checked hints (``mxcy.io.mx_data_iter``); ``dtype=None`` is float32. Where MXNet shuffled
once at load, this iterator reshuffles at every ``reset()`` from a generator seeded with
`seed`, so the sequence of epochs is reproducible and independent of global seeds. A
missing ``path`` whose ``path + '.gz'`` exists reads the gzipped file.
"""
import gzip
import logging
import math
import os
import struct
import tempfile
import zlib

import numpy as np

from mxcy._ndarray import NDArray
from mxcy.base import as_shape
from mxcy.io.base import register
from mxcy.io.mx_data_iter import MXDataIter, check_common
from mxcy.io.ndarray_iter import NDArrayIter
from mxcy.ndarray.utils import array

__all__ = ['MNISTIter', 'read_idx', 'write_idx']

IDX_TYPES = {0x08: np.dtype('u1'), 0x09: np.dtype('i1'), 0x0B: np.dtype('>i2'),
             0x0C: np.dtype('>i4'), 0x0D: np.dtype('>f4'), 0x0E: np.dtype('>f8')}
_CODES = {dt.newbyteorder('='): code for code, dt in IDX_TYPES.items()}
# NOTE: deflate expands at most ~1032:1, so a gzip of C bytes holds less than this much.
_MAX_INFLATE_RATIO = 1032
_GZIP_MAGIC = b'\x1f\x8b'
_MXNET_IMAGE_SCALE = np.float32(1.0 / 256.0)     # MXNet: img_ *= 1.0f / 256.0f
_LOG = logging.getLogger(__name__)
_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _is_gzip(path):
    with open(path, 'rb') as f:
        return f.read(2) == _GZIP_MAGIC


def read_idx(path, what='read_idx'):
    """The array stored in the IDX file `path` (gzipped or not), in native byte order."""
    path = os.fspath(path)
    file_size = os.path.getsize(path)
    compressed = _is_gzip(path)
    with open(path, 'rb') as raw:
        stream = gzip.GzipFile(fileobj=raw, mode='rb') if compressed else raw
        try:
            return _parse(stream, file_size, compressed, f"{what}: {path}")
        except (EOFError, OSError, zlib.error) as err:
            if not compressed:
                raise
            raise ValueError(f"{what}: {path}: corrupt or truncated gzip data ({err})") \
                from None
        finally:
            if compressed:
                stream.close()


def _parse(f, file_size, compressed, where):
    magic = f.read(4)
    if len(magic) < 4:
        raise ValueError(f"{where}: truncated: {len(magic)} bytes, an IDX file starts "
                         "with a 4-byte magic number")
    if magic[0] or magic[1]:
        raise ValueError(f"{where}: not an IDX file: magic number 0x{magic.hex()} does not "
                         "start with two zero bytes")
    code, ndim = magic[2], magic[3]
    if code not in IDX_TYPES:
        raise ValueError(f"{where}: unknown IDX type code 0x{code:02x} in magic number "
                         f"0x{magic.hex()}; known: "
                         f"{', '.join(f'0x{c:02x}' for c in IDX_TYPES)}")
    if ndim == 0:
        raise ValueError(f"{where}: the magic number 0x{magic.hex()} declares 0 dimensions")
    raw_dims = f.read(4 * ndim)
    if len(raw_dims) < 4 * ndim:
        raise ValueError(f"{where}: truncated: the header declares {ndim} dimensions but "
                         f"the file ends inside them")
    dims = struct.unpack(f'>{ndim}I', raw_dims)
    dtype = IDX_TYPES[code]
    header = 4 + 4 * ndim
    payload = math.prod(dims) * dtype.itemsize
    if not compressed and file_size != header + payload:
        state = 'truncated' if file_size < header + payload else 'corrupt (trailing bytes)'
        raise ValueError(f"{where}: {state}: the header declares shape {dims} of "
                         f"{dtype.newbyteorder('=')} ({payload} bytes of data) but "
                         f"{file_size - header} bytes follow the header")
    if compressed and payload > _MAX_INFLATE_RATIO * file_size + 4096:
        raise ValueError(f"{where}: corrupt: the header declares shape {dims} ({payload} "
                         f"bytes of data), more than a gzip file of {file_size} bytes can "
                         f"hold")
    data = f.read(payload)
    if len(data) < payload:
        raise ValueError(f"{where}: truncated: the header declares shape {dims} "
                         f"({payload} bytes of data) but only {len(data)} bytes follow")
    if compressed and f.read(1):          # also makes gzip verify its CRC and length
        raise ValueError(f"{where}: corrupt (trailing bytes): more data than the header's "
                         f"shape {dims} declares")
    return np.frombuffer(data, dtype).reshape(dims).astype(dtype.newbyteorder('='))


def write_idx(path, array, compress=None):
    """Write `array` (NumPy or NDArray) as an IDX file; gzipped when `compress` is True
    or, by default, when `path` ends with '.gz'. The file is replaced atomically.

    Gzip output is reproducible (no timestamp) at level 6: level 9 is 12x slower on
    MNIST images for 2% smaller files."""
    path = os.fspath(path)
    arr = array.asnumpy() if isinstance(array, NDArray) else np.asarray(array)
    native = arr.dtype.newbyteorder('=')
    if native not in _CODES:
        raise TypeError(f"write_idx: unsupported dtype {arr.dtype}; IDX holds uint8, int8, "
                        "int16, int32, float32 or float64")
    if not 1 <= arr.ndim <= 255:
        raise ValueError(f"write_idx: an IDX array has 1 to 255 dimensions, got shape "
                         f"{arr.shape}")
    if max(arr.shape) >= 1 << 32:
        raise ValueError(f"write_idx: dimensions must be below 2**32, got {arr.shape}")
    code = _CODES[native]
    body = (bytes([0, 0, code, arr.ndim]) + struct.pack(f'>{arr.ndim}I', *arr.shape) +
            np.ascontiguousarray(arr, dtype=IDX_TYPES[code]).tobytes())
    if compress is None:
        compress = path.endswith('.gz')
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                               prefix=os.path.basename(path) + '.', suffix='.tmp')
    try:
        with os.fdopen(fd, 'wb') as f:
            if compress:
                with gzip.GzipFile(filename='', mode='wb', fileobj=f, mtime=0,
                                   compresslevel=6) as gz:
                    gz.write(body)
            else:
                f.write(body)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def _resolve(path, what):
    path = os.fspath(path)
    if os.path.exists(path):
        return path
    if os.path.exists(path + '.gz'):
        return path + '.gz'
    raise FileNotFoundError(f"MNISTIter: {what} file {path!r} not found (nor {path}.gz)")


def _check_int(value, name, low):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"MNISTIter: {name} must be an int >= {low}, got {value!r}")
    return int(value)


@register
class MNISTIter(MXDataIter, NDArrayIter):
    """Batches of MNIST images and labels read from IDX files (see the module docstring)."""

    def __init__(self, *, image='./train-images-idx3-ubyte',
                 label='./train-labels-idx1-ubyte', batch_size=128, shuffle=True,
                 flat=False, seed=0, silent=False, num_parts=1, part_index=0,
                 prefetch_buffer=4, ctx='gpu', dtype=None, data_shape=None,
                 input_shape=None, last_batch_handle='discard', data_name='data',
                 label_name='softmax_label'):
        num_parts = _check_int(num_parts, 'num_parts', 1)
        part_index = _check_int(part_index, 'part_index', 0)
        if part_index >= num_parts:
            raise ValueError(f"MNISTIter: part_index must be in [0, num_parts={num_parts}), "
                             f"got {part_index}")
        dtype = check_common('MNISTIter', prefetch_buffer, ctx, dtype, _DTYPES)
        images = read_idx(_resolve(image, 'image'), 'MNISTIter: image')
        labels = read_idx(_resolve(label, 'label'), 'MNISTIter: label')
        if images.dtype != np.uint8 or images.ndim != 3:
            raise ValueError(f"MNISTIter: image {image!r} must be an IDX3 uint8 file "
                             f"(magic 0x00000803), got {images.dtype} of shape {images.shape}")
        if labels.dtype != np.uint8 or labels.ndim != 1:
            raise ValueError(f"MNISTIter: label {label!r} must be an IDX1 uint8 file "
                             f"(magic 0x00000801), got {labels.dtype} of shape {labels.shape}")
        if len(images) != len(labels):
            raise ValueError(f"MNISTIter: image holds {len(images)} images but label holds "
                             f"{len(labels)} labels")
        n = len(images)
        lo, hi = n * part_index // num_parts, n * (part_index + 1) // num_parts
        images, labels = images[lo:hi], labels[lo:hi]
        rows, cols = images.shape[1:]
        if input_shape is not None:
            sample_shape = tuple(int(d) for d in input_shape)
            if math.prod(sample_shape) != rows * cols:
                raise ValueError(f"MNISTIter: input_shape {sample_shape} must hold "
                                 f"{rows}x{cols} = {rows * cols} pixels")
        else:
            sample_shape = (rows * cols,) if flat else (1, rows, cols)
        if data_shape is not None:
            # MXNet ignores data_shape here (examples pass (784,) with flat=True); a shape
            # that cannot hold one image is surely a mistake, so it is checked.
            data_shape = as_shape(data_shape, 'MNISTIter: data_shape')
            if math.prod(data_shape) != rows * cols:
                raise ValueError(f"MNISTIter: data_shape {data_shape} must hold {rows}x{cols}"
                                 f" = {rows * cols} pixels; the sample shape comes from "
                                 f"flat ({sample_shape})")
        pixels = images.reshape((len(images),) + sample_shape).astype(np.float32)
        pixels *= _MXNET_IMAGE_SCALE
        self._rng = np.random.RandomState(seed)      # used by _permutation at every reset
        self.flat = bool(flat)
        self.seed = seed
        self.num_parts, self.part_index = num_parts, part_index
        self.prefetch_buffer, self.ctx = prefetch_buffer, ctx
        super().__init__(array(pixels, dtype=dtype), array(labels, dtype=np.float32),
                         batch_size=batch_size, shuffle=shuffle,
                         last_batch_handle=last_batch_handle, data_name=data_name,
                         label_name=label_name)
        if not silent:
            _LOG.info("MNISTIter: %d images (part %d of %d) from %s, batches of %s, "
                      "shuffle=%s", len(images), part_index, num_parts, image,
                      self.provide_data[0].shape, shuffle)

    def _permutation(self, n):
        return self._rng.permutation(n).astype(np.int64)
