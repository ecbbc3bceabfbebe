"""The ``mx.np`` names without a symbolic form: functions NumPy computes on the values
(sorting, set operations, histograms, ...) and creation from data. Under ``mx.sym.np``
they raise, naming the function, as MXNet does for a function it cannot hybridize."""
from mxcy.base import MXNetError


def no_symbol_error(name):
    from mxcy import numpy as np
    fn = getattr(np, name, None)
    why = 'is computed by NumPy on the values (no registry operator)' \
        if 'fallback' in getattr(fn, '__module__', '') or name.startswith('bitwise') else \
        "needs its operands' values or shapes, which a Symbol does not carry"
    return MXNetError(
        f"mx.np.{name} {why}, so it has no symbolic form: it cannot be used on Symbols, "
        f"in F.np while a hybridized block traces; call it on mx.np arrays outside "
        f"hybrid_forward, or do not hybridize this block")


def _raiser(name):
    def fn(*args, **kwargs):
        raise no_symbol_error(name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"mx.np.{name} has no symbolic form: calling it raises MXNetError."
    return fn


# dtypes, constants and dtype functions: the same objects as mx.np's (F.np.float32 ...)
PASS_THROUGH = ('float16', 'float32', 'float64', 'int8', 'int32', 'int64', 'uint8', 'bool_',
                'bool', 'newaxis', 'pi', 'e', 'inf', 'nan', 'NAN', 'NaN', 'PINF', 'NINF',
                'PZERO', 'NZERO', 'finfo', 'promote_types', 'result_type', 'min_scalar_type')


def install(namespace):
    """Add mx.np's dtypes and constants, and a raising function for every other public
    mx.np function not in `namespace`; returns the names added."""
    from mxcy import numpy as np
    added = []
    for name in PASS_THROUGH:
        namespace[name] = getattr(np, name)
        added.append(name)
    for name in np.__all__:
        if name in namespace or not callable(getattr(np, name, None)) or \
                isinstance(getattr(np, name), type):
            continue
        namespace[name] = _raiser(name)
        added.append(name)
    return added
