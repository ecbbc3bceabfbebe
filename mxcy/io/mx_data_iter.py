"""``mx.io.MXDataIter``: the common base of the iterators MXNet implemented in C++
(``MNISTIter``, ``CSVIter``, ``LibSVMIter``), and the checks of the arguments they share.

In MXNet an ``MXDataIter`` wraps a C iterator handle; here it is the base class of the
file-backed iterators, so ``isinstance(it, mx.io.MXDataIter)`` holds as in MXNet, and it
carries MXNet's ``debug_skip_load()``. It is not constructed directly (there is no C
handle to wrap): create an iterator by name instead.

Shared arguments, as MXNet 1.9.1 documents them:

* ``prefetch_buffer`` (non-negative int, default 4) and ``ctx`` ('cpu' or 'gpu') are
  performance hints; they are checked and kept as attributes. Batches are produced on
  demand by the engine, so there is nothing to prefetch.
* ``dtype=None`` means "no change": float32, MXNet's default.
"""
import logging

import numpy as np

from mxcy.io.base import DataIter

__all__ = ['MXDataIter', 'check_common']

_LOG = logging.getLogger(__name__)


def check_common(where, prefetch_buffer, ctx, dtype, allowed):
    """Check the shared arguments; return `dtype` as a NumPy dtype (None -> float32)."""
    if prefetch_buffer is not None and (
            isinstance(prefetch_buffer, bool)
            or not isinstance(prefetch_buffer, (int, np.integer)) or prefetch_buffer < 0):
        raise ValueError(f"{where}: prefetch_buffer must be a non-negative int, got "
                         f"{prefetch_buffer!r}")
    if ctx is not None and ctx not in ('cpu', 'gpu'):
        raise ValueError(f"{where}: ctx must be 'cpu' or 'gpu', got {ctx!r}")
    if dtype is None:
        return np.dtype(np.float32)
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        dtype = None
    if dtype not in allowed:
        raise TypeError(f"{where}: dtype must be None or one of "
                        f"{', '.join(str(np.dtype(d)) for d in allowed)}, got {dtype!r}")
    return dtype


class MXDataIter(DataIter):
    """Base class of ``MNISTIter``, ``CSVIter`` and ``LibSVMIter`` (see the module
    docstring). Subclasses list it first, before the class that produces the batches."""

    def __init__(self, *args, **kwargs):
        if type(self) is MXDataIter:
            raise TypeError("MXDataIter wraps a C iterator handle in MXNet and is not "
                            "created directly in mxcy; create an iterator by name "
                            "(mx.io.MNISTIter, mx.io.CSVIter, mx.io.LibSVMIter)")
        self._debug_skip_load = False
        self._debug_batch = None
        super().__init__(*args, **kwargs)

    def debug_skip_load(self):
        """From now on, return the first batch read over and over, without loading (and
        without ever ending an epoch): MXNet's way to time a network without its I/O."""
        self._debug_skip_load = True
        _LOG.info('Set debug_skip_load to be true, will simply return first batch')

    def next(self):
        if self._debug_skip_load and self._debug_batch is not None:
            return self._debug_batch
        batch = super().next()
        if self._debug_skip_load:
            self._debug_batch = batch
        return batch
