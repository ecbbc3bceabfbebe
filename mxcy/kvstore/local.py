"""The single-process KVStore (MXNet 1.x ``mx.kv.create('local')`` semantics).

* ``init(key, value)`` stores a copy of `value`; keys are ints or strs (or lists of
  them), one kind per store. Initialising a key twice is an error.
* ``push(key, value)``: several values for one key (a list, or the same key repeated
  in a key list) are summed; with an updater (``set_optimizer`` / ``_set_updater``)
  ``updater(key, merged, stored)`` runs, else the stored value is replaced by a copy
  of the merged value. (MXNet may keep a reference to a single pushed array; mxcy
  always copies, so writing to the array after the push does not change the store.)
* ``pull(key, out)`` copies the stored value into every output given for the key,
  casting to the output's dtype.
* Pushed values must have the stored value's shape and dtype (MXNet would silently
  replace a float32 value by a pushed float64 one); ``priority`` must be an int and
  is a hint only: the engine runs ops in dependency order.
* Every check (key known, shapes and dtypes match) runs before anything is pushed,
  so a failing call changes nothing; the arithmetic is NDArray ops, pushed to the
  engine and never waited for here (only saving/loading optimizer states waits).
"""
import numbers

import numpy as np

from mxcy._ndarray import NDArray
from mxcy.base import MXNetError
from mxcy.kvstore.base import KVStoreBase
from mxcy.optimizer import Updater, get_updater

__all__ = ['KVStore', 'Updater', 'get_updater']


def _normalise_key(op, key):
    if isinstance(key, str):
        return key
    if isinstance(key, numbers.Integral) and not isinstance(key, bool):
        return int(key)
    raise TypeError(f"{op}: keys must be int or str, got {type(key).__name__} {key!r}")


def _as_value_list(op, key, value, what):
    """The NDArrays given for one key (one array or a non-empty list of arrays)."""
    values = [value] if isinstance(value, NDArray) else value
    if not isinstance(values, (list, tuple)) or not values:
        raise TypeError(f"{op}: {what} for key {key!r} must be an NDArray or a non-empty "
                        f"list of NDArrays, got {type(value).__name__}")
    for i, v in enumerate(values):
        if not isinstance(v, NDArray):
            raise TypeError(f"{op}: {what} {i} for key {key!r} must be an NDArray, got "
                            f"{type(v).__name__}")
    return list(values)


def _pairs(op, key, value, what='value'):
    """[(key, [NDArray, ...])] from MXNet's key/value forms, keys in the given order."""
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            got = f"{len(value)} values" if isinstance(value, (list, tuple)) else \
                type(value).__name__
            raise ValueError(f"{op}: {len(key)} keys need a list of {len(key)} "
                             f"{what}s, got {got}")
        keys = [_normalise_key(op, k) for k in key]
        return [(k, _as_value_list(op, k, v, what)) for k, v in zip(keys, value)]
    k = _normalise_key(op, key)
    return [(k, _as_value_list(op, k, value, what))]


def _grouped(pairs):
    """Merge repeated keys, keeping first-appearance order (MXNet sums them on push)."""
    groups = {}
    for k, values in pairs:
        groups.setdefault(k, []).extend(values)
    return list(groups.items())


class KVStore(KVStoreBase):
    """A key-value store in this process; MXNet 1.x's KVStore API."""

    OPTIMIZER = 'optimizer'

    def __init__(self, name='local'):
        self._type = name
        self._store = {}
        self._key_type = None
        self._updater = None
        self._optimizer = None

    @property
    def type(self):
        return self._type

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    def is_capable(self, capability):
        """Whether this store supports `capability` (only ``'optimizer'`` exists)."""
        if capability.lower() == self.OPTIMIZER:
            return True
        raise ValueError(f"is_capable: unknown capability {capability!r}; expected "
                         f"{self.OPTIMIZER!r}")

    # ------------------------------------------------------------ key checks
    def _check_key_type(self, op, keys):
        kinds = {type(k) for k in keys}
        if self._key_type is not None:
            kinds.add(self._key_type)
        if len(kinds) > 1:
            have = f"this store uses {self._key_type.__name__} keys" \
                if self._key_type is not None else "the keys mix int and str"
            raise MXNetError(f"{op}: mixing int and str keys is not allowed; {have}, got "
                             f"keys {list(keys)!r}")

    def _stored(self, op, key):
        try:
            return self._store[key]
        except KeyError:
            raise MXNetError(f"{op}: key {key!r} has not been initialised; call "
                             "init(key, value) first") from None

    # ------------------------------------------------------------ API
    def init(self, key, value):
        """Store a copy of `value` under `key` (each key once)."""
        pairs = _pairs('init', key, value)
        keys = [k for k, _ in pairs]
        self._check_key_type('init', keys)
        seen = set()
        for k, values in pairs:
            if k in self._store or k in seen:
                raise MXNetError(f"init: key {k!r} is already initialised")
            if len(values) != 1:
                raise ValueError(f"init: key {k!r} needs exactly one value, got "
                                 f"{len(values)}")
            seen.add(k)
        for k, values in pairs:
            self._store[k] = values[0].copy()
        if keys and self._key_type is None:
            self._key_type = type(keys[0])

    def broadcast(self, key, value, out, priority=0):
        """Initialise `key` with `value`, then pull it into `out`."""
        self.init(key, value)
        self.pull(key, out=out, priority=priority)

    def push(self, key, value, priority=0):
        """Sum the values given for each key, then update or replace the stored value."""
        _check_priority('push', priority)
        self._apply_push(self._push_groups('push', key, value))

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored value of each key into its output array(s)."""
        _check_priority('pull', priority)
        self._apply_pull(self._pull_pairs('pull', key, out))

    def pushpull(self, key, value, out=None, priority=0):
        """push(key, value), then pull(key) into `out`, or into `value` itself when `out`
        is not given (as MXNet 1.x)."""
        _check_priority('pushpull', priority)
        groups = self._push_groups('pushpull', key, value)
        pairs = self._pull_pairs('pushpull', key, value if out is None else out)
        self._apply_push(groups)
        self._apply_pull(pairs)

    # ------------------------------------------------------------ push/pull internals
    def _push_groups(self, op, key, value):
        """Validated [(key, [values])], repeated keys merged."""
        groups = _grouped(_pairs(op, key, value))
        self._check_key_type(op, [k for k, _ in groups])
        for k, values in groups:
            stored = self._stored(op, k)
            for i, v in enumerate(values):
                if v.shape != stored.shape:
                    raise ValueError(f"{op}: value {i} for key {k!r} has shape {v.shape}, "
                                     f"but the stored value has shape {stored.shape}")
                if v.dtype != stored.dtype:
                    raise TypeError(f"{op}: value {i} for key {k!r} has dtype "
                                    f"{np.dtype(v.dtype)}, but the stored value has "
                                    f"dtype {np.dtype(stored.dtype)}")
        return groups

    def _apply_push(self, groups):
        for k, values in groups:
            merged = values[0]
            if len(values) > 1:
                merged = values[0] + values[1]
                for v in values[2:]:
                    merged += v
            stored = self._store[k]
            if self._updater is not None:
                self._updater(k, merged, stored)
            else:
                merged.copyto(stored)

    def _pull_pairs(self, op, key, out):
        """Validated [(key, [outputs])]."""
        if out is None:
            raise ValueError(f"{op}: out is required (the NDArray or list of NDArrays to "
                             "pull into)")
        pairs = _pairs(op, key, out, what='out')
        self._check_key_type(op, [k for k, _ in pairs])
        for k, outs in pairs:
            stored = self._stored(op, k)
            for i, o in enumerate(outs):
                if o.shape != stored.shape:
                    raise ValueError(f"{op}: out {i} for key {k!r} has shape {o.shape}, "
                                     f"but the stored value has shape {stored.shape}")
        return pairs

    def _apply_pull(self, pairs):
        for k, outs in pairs:
            stored = self._store[k]
            for o in outs:
                if o.dtype == stored.dtype:
                    stored.copyto(o)
                else:
                    o[:] = stored           # a casting copy

    def set_optimizer(self, optimizer):
        """Apply `optimizer` to every push (as ``_set_updater(get_updater(optimizer))``)."""
        for method in ('create_state', 'update'):
            if not callable(getattr(optimizer, method, None)):
                raise TypeError(f"set_optimizer: expected an Optimizer (with "
                                f"create_state and update), got {type(optimizer).__name__}")
        self._optimizer = optimizer
        self._set_updater(get_updater(optimizer))

    def _set_updater(self, updater):
        """Call ``updater(key, merged_value, stored_value)`` on every push."""
        if updater is not None and not callable(updater):
            raise TypeError(f"_set_updater: updater must be callable, got "
                            f"{type(updater).__name__}")
        self._updater = updater

    def _barrier(self):
        """Nothing to wait for: a local store has one worker."""

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Save the optimizer states (MXNet's NDArray file format, never a pickle)."""
        updater = self._optimizer_updater('save_optimizer_states')
        with open(fname, 'wb') as f:
            f.write(updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        """Load optimizer states written by ``save_optimizer_states``."""
        updater = self._optimizer_updater('load_optimizer_states')
        with open(fname, 'rb') as f:
            updater.set_states(f.read())

    def _optimizer_updater(self, op):
        if not isinstance(self._updater, Updater):
            raise MXNetError(f"{op}: no optimizer is set; call set_optimizer first")
        return self._updater


def _check_priority(op, priority):
    if isinstance(priority, bool) or not isinstance(priority, numbers.Integral):
        raise TypeError(f"{op}: priority must be an int, got {type(priority).__name__}")
