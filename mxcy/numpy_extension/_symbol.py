"""``mx.sym.npx``: the npx operators as Symbols (what ``F.npx`` is while a hybridized
block traces). Each is the registry operator's ``mx.sym`` node (`mxcy.symbol._gen`), so a
traced graph saves the operator names MXNet loads (``FullyConnected``, ``_npx_reshape``)."""
from mxcy.numpy_extension._op import OPS
from mxcy.symbol import _gen
from mxcy.symbol.symbol import Symbol

__all__ = ['reshape'] + list(OPS)


def _make(npx_name, op_name):
    def fn(*args, name=None, attr=None, out=None, **kwargs):
        return _gen.make_op_symbol(op_name, args, kwargs, name=name, attr=attr)
    fn.__name__ = fn.__qualname__ = npx_name
    fn.__signature__ = _gen.make_function(op_name).__signature__
    fn.__doc__ = f"``F.npx.{npx_name}`` while tracing: the {op_name} operator's Symbol."
    return fn


for _name, _op_name in OPS.items():
    globals()[_name] = _make(_name, _op_name)
del _name, _op_name


def reshape(a, newshape, reverse=False, order='C', name=None, attr=None):
    """``npx.reshape`` as a Symbol (the ``_npx_reshape`` operator)."""
    if not isinstance(a, Symbol):
        raise TypeError(f"reshape: a must be a Symbol, got {type(a).__name__}")
    if isinstance(newshape, int):
        newshape = (newshape,)
    return _gen.make_op_symbol('_npx_reshape', (a,), {'newshape': tuple(newshape),
                                                      'reverse': reverse, 'order': order},
                               name=name, attr=attr)
