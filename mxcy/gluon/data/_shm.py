"""Moving one batch from a DataLoader worker process to the parent through shared memory.

The worker packs the batch (any nest of lists, tuples, dicts and leaves) into ONE POSIX
shared-memory block named by the parent; the pipe back to the parent then carries only
a few bytes, so it never fills and a killed worker cannot leave half a message in it.

Block layout: an 8-byte little-endian header length, the pickled header
``(skeleton, specs)``, then each array's bytes, 64-byte aligned. In the skeleton every
array leaf is replaced by a ``_Slot``; ``specs[i]`` is ``(dtype, shape, offset, kind)``
where kind 'nd' becomes an NDArray in the parent and 'np' a NumPy array (a batch keeps
the types the worker's batchify_fn returned). Arrays of Python objects stay in the
pickled header.

Who frees a block: the parent unlinks it as soon as it has mapped it (``read``); blocks of
batches never read are unlinked by name (``unlink``) after the workers are stopped, so
none can be created behind the clean-up. Python's resource tracker, shared by the parent
and its forked workers, sees each block registered at creation and unregistered at the
parent's unlink, so it only steps in (and warns) if the whole process tree died.
"""
import os
import pickle
import struct
from multiprocessing import resource_tracker, shared_memory

import numpy as np

from mxcy._ndarray import NDArray
from mxcy.ndarray.utils import array

try:
    import _posixshmem
except ImportError:             # not a POSIX CPython: fall back to SharedMemory
    _posixshmem = None

__all__ = ['PREFIX', 'NDLeaf', 'block_name', 'write', 'read', 'unlink']

PREFIX = 'mxcy_dl_'         # every block's name starts with this (tests look for it)
_ALIGN = 64
_LEN = struct.Struct('<Q')


def block_name(token, idx):
    """The block of batch `idx` of the iterator whose token is `token`."""
    return f"{PREFIX}{token}_{idx}"


class NDLeaf:
    """A NumPy array the parent turns into an NDArray (the default batchify's output)."""
    __slots__ = ('value',)

    def __init__(self, value):
        self.value = value


class _Slot:
    __slots__ = ('index',)

    def __init__(self, index):
        self.index = index

    def __reduce__(self):
        return _Slot, (self.index,)


def _split(tree, arrays):
    """The skeleton of `tree`, its raw arrays appended to `arrays` as (ndarray, kind)."""
    if isinstance(tree, NDArray):
        return _take(tree.asnumpy(), 'nd', arrays)
    if isinstance(tree, NDLeaf):
        return _take(np.asarray(tree.value), 'nd', arrays)
    if isinstance(tree, np.ndarray):
        return _take(tree, 'np', arrays)
    if isinstance(tree, list):
        return [_split(x, arrays) for x in tree]
    if isinstance(tree, tuple):
        items = [_split(x, arrays) for x in tree]
        return type(tree)(*items) if hasattr(tree, '_fields') else tuple(items)
    if isinstance(tree, dict):
        return type(tree)((k, _split(v, arrays)) for k, v in tree.items())
    return tree


def _take(arr, kind, arrays):
    if arr.dtype.hasobject:             # no raw bytes to share: pickle it in the header
        return NDLeaf(arr) if kind == 'nd' else arr
    arrays.append((np.ascontiguousarray(arr), kind))
    return _Slot(len(arrays) - 1)


def _align(n):
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def write(tree, name):
    """Pack `tree` into a new block `name` (in the worker); returns its size in bytes."""
    arrays = []
    skeleton = _split(tree, arrays)
    specs, offset = [], 0
    for arr, kind in arrays:
        specs.append((arr.dtype.str, arr.shape, offset, kind))
        offset = _align(offset + arr.nbytes)
    header = pickle.dumps((skeleton, specs), protocol=pickle.HIGHEST_PROTOCOL)
    start = _align(_LEN.size + len(header))
    size = start + offset
    shm = shared_memory.SharedMemory(name=name, create=True, size=size)
    try:
        _reserve(shm, size)
        buf = shm.buf
        _LEN.pack_into(buf, 0, len(header))
        buf[_LEN.size:_LEN.size + len(header)] = header
        for (arr, _), (_, _, off, _) in zip(arrays, specs):
            if arr.nbytes:
                dst = np.ndarray(arr.shape, arr.dtype, buffer=buf, offset=start + off)
                dst[...] = arr
                del dst                 # a live view would make close() fail
        del buf
    except BaseException:
        shm.close()
        shm.unlink()
        raise
    shm.close()
    return size


def _reserve(shm, size):
    """Allocate the block's pages now: on a full /dev/shm (docker's 64 MB) this raises
    OSError here instead of killing the worker with SIGBUS at the first write."""
    fd = getattr(shm, '_fd', -1)
    if fd < 0 or not hasattr(os, 'posix_fallocate'):
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as err:
        raise OSError(err.errno, f"cannot allocate {size} bytes of shared memory in "
                                 f"/dev/shm for a DataLoader batch ({err.strerror}); free "
                                 f"space there, or lower num_workers / prefetch / "
                                 f"batch_size") from None


def read(name):
    """The batch in block `name` (in the parent), copied out; the block is unlinked."""
    shm = shared_memory.SharedMemory(name=name)
    try:
        shm.unlink()            # the name goes now; the mapping lasts until close()
        buf = shm.buf
        (hlen,) = _LEN.unpack_from(buf, 0)
        skeleton, specs = pickle.loads(bytes(buf[_LEN.size:_LEN.size + hlen]))
        start = _align(_LEN.size + hlen)
        leaves = [_copy_out(buf, start, spec) for spec in specs]
        del buf
    finally:
        shm.close()
    return _join(skeleton, leaves)


def _copy_out(buf, start, spec):
    dtype, shape, offset, kind = spec
    dtype = np.dtype(dtype)
    if 0 in shape:
        view = np.empty(shape, dtype)
    else:
        view = np.ndarray(shape, dtype, buffer=buf, offset=start + offset)
    try:
        return ('nd', array(view, dtype=dtype)) if kind == 'nd' else ('np', view.copy())
    except Exception as exc:    # e.g. a dtype NDArray lacks: raised after the block is freed
        return ('err', exc)
    finally:
        del view


def _join(skeleton, leaves):
    if isinstance(skeleton, _Slot):
        kind, value = leaves[skeleton.index]
        if kind == 'err':
            raise value
        return value
    if isinstance(skeleton, NDLeaf):
        return array(skeleton.value, dtype=skeleton.value.dtype)
    if isinstance(skeleton, list):
        return [_join(x, leaves) for x in skeleton]
    if isinstance(skeleton, tuple):
        items = [_join(x, leaves) for x in skeleton]
        return type(skeleton)(*items) if hasattr(skeleton, '_fields') else tuple(items)
    if isinstance(skeleton, dict):
        return type(skeleton)((k, _join(v, leaves)) for k, v in skeleton.items())
    return skeleton


def unlink(name):
    """Remove block `name` if it exists (a batch a worker made but nobody read, or one it
    was killed while making: possibly still empty, so it is not mapped here)."""
    if _posixshmem is None:
        try:
            shm = shared_memory.SharedMemory(name=name)
        except (FileNotFoundError, ValueError):
            return
        shm.close()
        shm.unlink()
        return
    try:
        _posixshmem.shm_unlink('/' + name)
    except FileNotFoundError:
        return
    # register + unregister leaves the tracker without the name whether or not the dead
    # worker got to register it (it is a set), so it neither warns nor unlinks again
    resource_tracker.register('/' + name, 'shared_memory')
    resource_tracker.unregister('/' + name, 'shared_memory')
