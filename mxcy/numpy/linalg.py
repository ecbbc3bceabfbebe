"""``mx.np.linalg``: ``norm`` through the registry (recorded by autograd); the other
functions are computed by ``numpy.linalg`` on the values (`_fallback`)."""
import numbers

import numpy as _onp

from mxcy.numpy import _fallback
from mxcy.numpy._ops import _arr, _axes, _op
from mxcy.numpy._signatures import FALLBACK_LINALG, LINALG


def norm(x, ord=None, axis=None, keepdims=False):      # noqa: A002  (NumPy's name)
    """Vector 2-norm / Frobenius norm (default), and 1/inf/-inf vector norms, recorded
    by autograd; other orders are computed by numpy.linalg.norm."""
    x = _arr(x, 'norm')
    if x.dtype.kind != 'f':
        x = x.astype(_onp.float32)
    vector = axis is None and x.ndim == 1 or isinstance(axis, numbers.Integral) or \
        (isinstance(axis, tuple) and len(axis) == 1)
    axes = _axes(axis, x.ndim, 'norm')
    from mxcy.numpy._ops import _reduce
    if ord is None or ord == 'fro' and not vector or ord == 2 and vector:
        return _op('sqrt')(_reduce(x * x, 'sum', axes, keepdims, 'norm'))
    if vector and ord == 1:
        return _reduce(abs(x), 'sum', axes, keepdims, 'norm')
    if vector and ord == _onp.inf:
        return _reduce(abs(x), 'max', axes, keepdims, 'norm')
    return _fallback.numpy_function('norm', _onp.linalg.norm, LINALG['norm'])(
        x, ord, axis, keepdims)


for _name, _spec in LINALG.items():
    if _name not in globals() and _spec is not None:
        globals()[_name] = _fallback.numpy_function(_name, getattr(_onp.linalg, _name),
                                                    _spec, scalars=_name in FALLBACK_LINALG)
__all__ = sorted(n for n in LINALG if n in globals())
