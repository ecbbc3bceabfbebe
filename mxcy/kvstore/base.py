"""``mx.kv.KVStoreBase``: the interface every key-value store implements (MXNet 1.9.1),
and the registry through which ``mx.kv.create(name)`` finds stores defined outside mxcy.

A store subclasses ``KVStoreBase``, implements the abstract methods and properties below
and is registered with ``@KVStoreBase.register`` under its lower-cased class name; an
incomplete subclass cannot be instantiated (TypeError naming what is missing).
"""
import abc

__all__ = ['KVStoreBase']


class KVStoreBase(abc.ABC):
    """An abstract key-value store for data-parallel training."""

    OPTIMIZER = 'optimizer'   # capability: the store can run the optimizer itself
    kv_registry = {}

    @abc.abstractmethod
    def broadcast(self, key, value, out, priority=0):
        """Initialise `key` with `value` (rank 0's) and pull it into `out`."""

    @abc.abstractmethod
    def pushpull(self, key, value, out=None, priority=0):
        """Reduce `value` over devices and workers and write the result to `out` (or
        back into `value`)."""

    @abc.abstractmethod
    def is_capable(self, capability):
        """Whether the store supports `capability` (e.g. ``KVStoreBase.OPTIMIZER``)."""

    @abc.abstractmethod
    def set_optimizer(self, optimizer):
        """Run `optimizer` on the stored values at each push."""

    @abc.abstractmethod
    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer's states (and, with `dump_optimizer`, the optimizer)."""

    @abc.abstractmethod
    def load_optimizer_states(self, fname):
        """Read optimizer states written by ``save_optimizer_states``."""

    @property
    @abc.abstractmethod
    def type(self):
        """The store's type name."""

    @property
    @abc.abstractmethod
    def rank(self):
        """This worker's rank."""

    @property
    @abc.abstractmethod
    def num_workers(self):
        """The number of workers."""

    @staticmethod
    def register(klass):
        """Class decorator: register a KVStoreBase subclass under its lower-cased name,
        for ``mx.kv.create``."""
        if not (isinstance(klass, type) and issubclass(klass, KVStoreBase)):
            raise TypeError(f"KVStoreBase.register: expected a subclass of KVStoreBase, got "
                            f"{klass!r}")
        name = klass.__name__.lower()
        if name in KVStoreBase.kv_registry:
            raise ValueError(f"KVStoreBase.register: a store named {name!r} is already "
                             f"registered ({KVStoreBase.kv_registry[name].__name__})")
        KVStoreBase.kv_registry[name] = klass
        return klass
