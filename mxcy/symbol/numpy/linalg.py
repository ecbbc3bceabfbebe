"""``mx.sym.np.linalg``: ``norm`` (Frobenius / 2-norm of vectors) as registry nodes."""
from mxcy.symbol.numpy import _node, _reduce, _sym, binary

__all__ = ['norm']


def norm(x, ord=None, axis=None, keepdims=False):      # noqa: A002  (NumPy's name)
    """sqrt(sum(x**2)) over `axis` (all axes when None): ord None, 'fro', or 2 for a
    vector axis; other orders need singular values or sorting and have no symbol here."""
    x = _sym(x, 'linalg.norm', 'x')
    if ord not in (None, 'fro', 2) or ord == 2 and not isinstance(axis, int):
        raise ValueError(f"mx.sym.np.linalg.norm: ord={ord!r} with axis={axis!r} has no "
                         "symbolic form; use ord=None, 'fro', or 2 with an int axis")
    return _node('sqrt', (_reduce(binary('multiply', x, x), 'sum', axis, keepdims),))
