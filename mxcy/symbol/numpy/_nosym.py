"""The ``mx.np`` names without a symbolic form: functions NumPy computes on the values
(sorting, set operations, histograms, ...) and creation from data. Under ``mx.sym.np``
they raise, naming the function, as MXNet does for a function it cannot hybridize."""
from mxcy.base import MXNetError


def no_symbol_error(name):
    return MXNetError(
        f"mx.np.{name} is computed by NumPy on the values (it has no operator in the "
        f"registry), so it has no symbolic form: it cannot be used on Symbols, in "
        f"F.np while a hybridized block traces; call it on mx.np arrays outside "
        f"hybrid_forward, or do not hybridize this block")


def _raiser(name):
    def fn(*args, **kwargs):
        raise no_symbol_error(name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"mx.np.{name} has no symbolic form: calling it raises MXNetError."
    return fn


def install(namespace):
    """Add a raising function for every public mx.np function not in `namespace`."""
    from mxcy import numpy as np
    added = []
    for name in np.__all__:
        if name in namespace or not callable(getattr(np, name, None)) or \
                isinstance(getattr(np, name), type):
            continue
        namespace[name] = _raiser(name)
        added.append(name)
    return added
