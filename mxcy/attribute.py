"""Attribute scopes (``mx.AttrScope``): attributes attached to symbols made in a block."""
import threading

_local = threading.local()


class AttrScope:
    """``with mx.AttrScope(ctx_group='dev1'):`` tags every symbol created in the block."""

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError(f"AttrScope: attribute {key!r} must be a string, got "
                                 f"{type(value).__name__} {value!r}")
        self._attr = kwargs
        self._old_scope = None

    def get(self, attr):
        """Scope attributes merged with `attr` (the explicit ones win)."""
        if not self._attr:
            return dict(attr) if attr else {}
        merged = dict(self._attr)
        merged.update(attr or {})
        return merged

    def __enter__(self):
        self._old_scope = current()
        merged = dict(self._old_scope._attr)
        merged.update(self._attr)
        self._attr = merged
        _local.value = self
        return self

    def __exit__(self, ptype, value, trace):
        _local.value = self._old_scope

    @staticmethod
    def current():
        return current()


def current():
    scope = getattr(_local, 'value', None)
    if scope is None:
        scope = _local.value = AttrScope()
    return scope
