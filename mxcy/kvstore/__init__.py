"""``mx.kv``: key-value stores for parameter synchronisation (MXNet 1.x API).

``create('local')`` (or ``'device'`` and MXNet's other single-process names) returns
a ``KVStore`` that keeps one copy of each value in this process; see
``mxcy.kvstore.local`` for its semantics. Stores registered with
``@KVStoreBase.register`` are created by their lower-cased class name.
"""
from mxcy.kvstore.base import KVStoreBase
from mxcy.kvstore.local import KVStore, Updater, get_updater

__all__ = ['KVStore', 'KVStoreBase', 'Updater', 'create', 'get_updater']

# Single-process store types, all served by KVStore (one CPU device here).
LOCAL_TYPES = ('local', 'device', 'local_update_cpu', 'local_allreduce_cpu',
               'local_allreduce_device')


def _dist(name):
    from mxcy.kvstore.dist_mpi import DistKVStore
    return DistKVStore(name)


# Distributed types: synchronous data parallelism over MPI ranks (mxcy.kvstore.dist_mpi).
_BACKENDS = {'dist_sync': _dist, 'dist_device_sync': _dist}


def create(name='local'):
    """A new KVStore of the given type (MXNet 1.x ``mx.kv.create``)."""
    if not isinstance(name, str):
        raise TypeError(f"kv.create: name must be a str, got {type(name).__name__}")
    if name.lower() in KVStoreBase.kv_registry:      # a store registered by the user
        return KVStoreBase.kv_registry[name.lower()]()
    if name in LOCAL_TYPES:
        return KVStore(name)
    if name in _BACKENDS:
        return _BACKENDS[name](name)
    known = ', '.join(repr(n) for n in LOCAL_TYPES + tuple(_BACKENDS))
    raise ValueError(f"kv.create: unknown or unavailable KVStore type {name!r}; this build "
                     f"supports {known}")
