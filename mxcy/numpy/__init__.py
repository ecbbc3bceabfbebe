"""``mx.np``: MXNet's NumPy interface (``mxnet.numpy``) on mxcy's engine.

``mx.np.ndarray`` (`multiarray`) subclasses ``mx.nd.NDArray``: same memory, same engine,
NumPy semantics. Functions come from three places, each name from one:

* `_creation` (array, zeros, arange, eye, linspace ...);
* `_ops` and `_shape_ops`: elementwise maths, reductions, shapes and products through
  the operator registry (pushed to the engine, recorded by autograd);
* `_fallback`: every other name of MXNet 1.9.1's ``mx.np`` (sorting, set operations,
  polynomials, histograms, einsum ...) computed by NumPy on the values, with MXNet's
  parameter names (`_signatures`), as MXNet itself does for its fallback names.

``mx.np.random`` and ``mx.np.linalg`` are sub-modules.
"""
import numpy as _onp

from mxcy.numpy.multiarray import ndarray
from mxcy.numpy._creation import (array, asarray, zeros, ones, empty, full, arange,
                                  zeros_like, ones_like, full_like, empty_like, eye,
                                  identity, linspace, logspace, meshgrid, indices, hanning,
                                  hamming, blackman)
from mxcy.numpy._ops import (sum, mean, prod, max, min, amax, amin, var, std, argmax,
                             argmin, cumsum, maximum, minimum, hypot, install_unary, install_binary)
from mxcy.numpy._shape_ops import (reshape, ravel, transpose, swapaxes, moveaxis,
                                   expand_dims, squeeze, broadcast_to, broadcast_arrays, tile,
                                   repeat, flip, fliplr, flipud, concatenate, append, stack,
                                   vstack, row_stack, hstack, dstack, column_stack, split,
                                   array_split, hsplit, vsplit, dsplit, where, clip, dot,
                                   vdot, inner, outer, matmul, tensordot, take, diag, trace,
                                   tril, einsum)
from mxcy.numpy import _fallback
from mxcy.numpy._signatures import NP as _NP_SIGNATURES, FALLBACK as _FALLBACK
from mxcy.numpy import random
from mxcy.numpy import linalg

install_unary(globals())
install_binary(globals())

float16 = _onp.float16
float32 = _onp.float32
float64 = _onp.float64
int8 = _onp.int8
int32 = _onp.int32
int64 = _onp.int64
uint8 = _onp.uint8
bool_ = _onp.bool_
bool = _onp.bool_           # noqa: A001  (MXNet's name)
newaxis = None
pi = _onp.pi
e = _onp.e
inf = _onp.inf
nan = NAN = NaN = _onp.nan
PINF = _onp.inf
NINF = -_onp.inf
PZERO = 0.0
NZERO = -0.0
finfo = _onp.finfo
promote_types = _onp.promote_types
result_type = _onp.result_type
min_scalar_type = _onp.min_scalar_type

# every other name of MXNet 1.9.1's mx.np: NumPy on the values (see _fallback)
for _name, _spec in _NP_SIGNATURES.items():
    if _name in globals():
        continue
    _impl = _fallback.numpy_impl(_name)
    if _impl is not None:
        globals()[_name] = _fallback.numpy_function(_name, _impl, _spec or '*args **kwargs',
                                                    scalars=_name in _FALLBACK)

from mxcy.numpy import _methods  # noqa: E402  (needs the functions above)
_methods.install(ndarray, globals())

__all__ = sorted(n for n in _NP_SIGNATURES if n in globals()) + ['asarray']
