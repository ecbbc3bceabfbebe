"""``mx.np``: MXNet's NumPy interface (``mxnet.numpy``) on mxcy's engine.

``mx.np.ndarray`` (`multiarray`) subclasses ``mx.nd.NDArray``: same memory, same engine,
NumPy semantics. The functions are in family modules (`_creation`, ...); ``mx.np.random``
and ``mx.np.linalg`` are sub-modules.
"""
import numpy as _onp

from mxcy.numpy.multiarray import ndarray
from mxcy.numpy._creation import (array, asarray, zeros, ones, empty, full, arange,
                                  zeros_like, ones_like, full_like, empty_like)

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
