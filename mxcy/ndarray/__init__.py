"""``mx.nd``: imperative, asynchronous arrays."""
from mxcy._ndarray import NDArray, empty, full, zeros, ones, push_numpy
from mxcy.ndarray.utils import array, arange, waitall, zeros_like, ones_like, concatenate

__all__ = ['NDArray', 'array', 'empty', 'full', 'zeros', 'ones', 'arange', 'waitall',
           'zeros_like', 'ones_like', 'concatenate', 'push_numpy']
