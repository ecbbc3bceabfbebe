"""``npx.save`` / ``npx.load``: MXNet's binary NDArray format, arrays as mx.np.ndarray.

The format is ``mx.nd.save``'s (`mxcy.ndarray.io`); a file with a 0-d array is written
in the NumPy-shape layout (V3) as MXNet does under ``npx.set_np()``.
"""
from mxcy._ndarray import NDArray
from mxcy.ndarray import io as _io
from mxcy.numpy_extension._op import as_np

__all__ = ['save', 'load']


def save(file, arr):
    """Save one mx.np.ndarray, a list of them or a dict str -> ndarray to `file`."""
    if isinstance(arr, NDArray):
        arr = [arr]
    _io.save(file, arr)


def load(file):
    """The arrays saved in `file`: a list, or a dict for a file saved from a dict, of
    mx.np.ndarray."""
    loaded = _io.load(file)
    if isinstance(loaded, dict):
        return {k: as_np(v) for k, v in loaded.items()}
    return [as_np(v) for v in loaded]
