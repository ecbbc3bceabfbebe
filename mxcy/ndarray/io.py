"""``mx.nd.save`` / ``mx.nd.load`` / ``mx.nd.load_frombuffer`` (MXNet 1.x binary format).

* ``save(fname, data)``: `data` is an NDArray (saved as a list of one, as MXNet does),
  a list/tuple of NDArrays or a dict str -> NDArray; `fname` is a path or a file
  object opened for binary writing. It waits for the arrays' pending writes.
* ``load(fname)``: a path or a binary file object; ``load_frombuffer(buf)``: bytes.
  Both return a list, or a dict when the file has names, of new CPU arrays that keep
  the saved dtypes (int64 stays int64, float16 stays float16).

Parsing is the codec in ``mxcy.ndarray._serialization``: files are data, never code,
and a truncated or corrupt file raises ``ValueError("mx.nd.load: ...")``.
"""
import errno
import os

from mxcy._ndarray import NDArray
from mxcy.base import DTYPE_CODES, DTYPE_NAMES
from mxcy.context import cpu
from mxcy.ndarray import _serialization
from mxcy.ndarray.utils import array
from mxcy.util import is_np_shape

__all__ = ['load', 'load_frombuffer', 'save']


def _to_numpy(data):
    """The list or dict of NumPy arrays that the codec writes."""
    if isinstance(data, NDArray):
        return [data.asnumpy()]
    if isinstance(data, (list, tuple)):
        for i, value in enumerate(data):
            if not isinstance(value, NDArray):
                raise TypeError(f"mx.nd.save: data[{i}] must be an NDArray, got "
                                f"{type(value).__name__}")
        return [value.asnumpy() for value in data]
    if isinstance(data, dict):
        for key, value in data.items():
            if not isinstance(key, str):
                raise TypeError(f"mx.nd.save: dict keys must be str, got "
                                f"{type(key).__name__} {key!r}")
            if not isinstance(value, NDArray):
                raise TypeError(f"mx.nd.save: data[{key!r}] must be an NDArray, got "
                                f"{type(value).__name__}")
        return {key: value.asnumpy() for key, value in data.items()}
    raise TypeError(f"mx.nd.save: data must be an NDArray, a list of NDArrays or a dict "
                    f"str -> NDArray, got {type(data).__name__}")


def save(fname, data):
    """Save arrays to `fname` in MXNet 1.x's binary NDArray format."""
    payload = _serialization.dumps(_to_numpy(data), np_shape=is_np_shape())
    if hasattr(fname, 'write'):
        fname.write(payload)
        return
    _check_path('save', fname)
    with open(fname, 'wb') as f:
        f.write(payload)


def load(fname):
    """Load arrays saved by ``mx.nd.save`` (mxcy or MXNet 1.x) from a path or file object."""
    if hasattr(fname, 'read'):
        return load_frombuffer(fname.read())
    _check_path('load', fname)
    try:
        with open(fname, 'rb') as f:
            buf = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, 'mx.nd.load: no such file',
                                os.fspath(fname)) from None
    return load_frombuffer(buf)


def load_frombuffer(buf):
    """Load arrays from bytes holding a file written by ``mx.nd.save``."""
    loaded = _serialization.loads(buf)
    if isinstance(loaded, dict):
        return {key: _to_ndarray(value, repr(key)) for key, value in loaded.items()}
    return [_to_ndarray(value, str(i)) for i, value in enumerate(loaded)]


def _to_ndarray(value, what):
    if value.dtype not in DTYPE_CODES:
        raise TypeError(f"mx.nd.load: array {what} has dtype {value.dtype}, which mxcy "
                        f"NDArrays do not support; supported: {DTYPE_NAMES}")
    return array(value, ctx=cpu(), dtype=value.dtype)


def _check_path(name, fname):
    if not isinstance(fname, (str, bytes, os.PathLike)):
        raise TypeError(f"mx.nd.{name}: fname must be a path or a binary file object, got "
                        f"{type(fname).__name__}")

