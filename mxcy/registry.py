"""One ``register`` / ``alias`` / ``create`` helper for every family created by name
(optimizers, initializers, metrics, lr schedulers, iterators), as MXNet's registry.py.

``create`` accepts an instance (returned as is), a registered name (case-insensitive)
with keyword arguments, a ``[name, kwargs]`` JSON string as ``dumps`` writes, or a dict
``{'name': ..., **kwargs}``.
"""
import json

_REGISTRIES = {}


def _registry(base_class, nickname):
    return _REGISTRIES.setdefault((base_class, nickname), {})


def get_register_func(base_class, nickname):
    """A decorator registering subclasses of `base_class` under their lower-case name."""
    registry = _registry(base_class, nickname)

    def register(klass, name=None):
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise TypeError(f"can only register subclasses of {base_class.__name__}, got "
                            f"{klass!r}")
        key = (name or klass.__name__).lower()
        registry[key] = klass
        return klass
    register.__doc__ = f"Register a {nickname} class (``@register`` on the class)."
    return register


def get_alias_func(base_class, nickname):
    """A decorator factory adding extra names: ``@alias('sgd', 'vanilla')``."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        def reg(klass):
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class, nickname):
    """``create(spec, *args, **kwargs)`` for the family (see the module docstring)."""
    registry = _registry(base_class, nickname)

    def create(*args, **kwargs):
        if not args:
            if 'name' not in kwargs:
                raise TypeError(f"{nickname}.create needs a name or an instance")
            name = kwargs.pop('name')
        else:
            name, args = args[0], args[1:]
        if isinstance(name, base_class):
            if args or kwargs:
                raise ValueError(f"{nickname}.create: an instance was given, so no further "
                                 "arguments are allowed")
            return name
        if isinstance(name, dict):
            spec = dict(name)
            name = spec.pop('name')
            kwargs = {**spec, **kwargs}
        if isinstance(name, str) and name.startswith('['):
            try:
                name, extra = json.loads(name)
            except (ValueError, TypeError):
                raise ValueError(f"{nickname}.create: malformed JSON spec {name!r}") from None
            kwargs = {**extra, **kwargs}
        if not isinstance(name, str):
            raise TypeError(f"{nickname}.create: expected a name, an instance, a dict or a "
                            f"JSON string, got {type(name).__name__}")
        key = name.lower()
        if key not in registry:
            raise ValueError(f"unknown {nickname} {name!r}; registered: "
                             f"{sorted(registry)}")
        return registry[key](*args, **kwargs)
    create.__doc__ = f"Create a {nickname} from an instance, a name, a dict or JSON."
    return create


def list_registered(base_class, nickname):
    return sorted(_registry(base_class, nickname))
