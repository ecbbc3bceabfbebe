"""Public names of MXNet features mxcy does not have: calling one raises MXNetError
naming the feature (importing its module works)."""

from mxcy.base import MXNetError


def missing(module, name, feature):
    """A function `module.name` that raises MXNetError saying `feature` is not in mxcy."""
    def fn(*args, **kwargs):
        raise MXNetError(f"mx.contrib.{module}.{name}: {feature} is not available in mxcy "
                         "(it has no implementation of it); this call cannot run here")
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = f'mxcy.contrib.{module}'
    fn.__doc__ = f"Not available in mxcy: {feature}. Raises MXNetError when called."
    return fn


def install(namespace, module, names, feature):
    """Put a `missing` function for each of `names` into `namespace` (a module dict)."""
    for name in names:
        namespace[name] = missing(module, name, feature)
