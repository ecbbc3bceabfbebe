"""Automatic names (``mx.name``): per-thread managers, fresh counters per manager."""
import threading

_local = threading.local()


class NameManager:
    """Names unnamed symbols ``<hint><n>`` with a counter per hint (``fullyconnected0``).

    ``with mx.name.NameManager():`` starts fresh counters for the block, on this thread.
    """

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        if name:
            return name
        hint = hint.lower()
        index = self._counter.get(hint, 0)
        self._counter[hint] = index + 1
        return f"{hint}{index}"

    def __enter__(self):
        self._old_manager = current()
        _local.value = self
        return self

    def __exit__(self, ptype, value, trace):
        _local.value = self._old_manager

    @staticmethod
    def current():
        return current()


class Prefix(NameManager):
    """Prepends ``prefix`` to every name made (given or automatic) inside the block."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


def current():
    manager = getattr(_local, 'value', None)
    if manager is None:
        manager = _local.value = NameManager()
    return manager
