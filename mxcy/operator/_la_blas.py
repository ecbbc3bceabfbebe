"""linalg gemm/gemm2 forward and backward as batched BLAS GEMMs (`_ndarray.gemm`, one
engine op each, no NumPy): the float32/float64 path of `la_ops._Product`. Each pushing
function returns False, having pushed nothing, when the arrays are not BLAS-ready
(float16, mixed dtypes, an empty array): the caller then runs its NumPy path.
"""
import math

import numpy as np

from mxcy import _ndarray
from mxcy._ops import BINARY_OPS
from mxcy.operator._compute import assign

_MUL = BINARY_OPS['multiply']


def blas_ready(*arrays):
    """Whether the arrays share one BLAS dtype (float32/float64) and none is empty."""
    dt = np.dtype(arrays[0].dtype)
    return dt in (np.float32, np.float64) and \
        all(np.dtype(x.dtype) == dt and x.size > 0 for x in arrays)


def _same_memory(x, y):
    return x._chunk is y._chunk and x._span() == y._span()


def _dims(p, a, b):
    """(m, n, k, batch) of op(a) · op(b)."""
    m, k = (a.shape[-1], a.shape[-2]) if p.transpose_a else a.shape[-2:]
    n = b.shape[-2] if p.transpose_b else b.shape[-1]
    return m, n, k, math.prod(a.shape[:-2])


def push_product(p, req, a, b, y, c=None, beta=0.0):
    """y (req) alpha · op(a) · op(b) + beta · c: one batched GEMM onto a copy of c (no copy
    when beta is 0: BLAS then ignores C, NaN included, as MXNet does)."""
    if req == 'null' or y is None:
        return True
    if not blas_ready(a, b, y, *(() if c is None else (c,))):
        return False
    m, n, k, batch = _dims(p, a, b)
    beta = beta if c is not None else 0.0

    def value(out):
        if beta != 0.0 and not _same_memory(c, out):
            c.copyto(out)
        _ndarray.gemm(a, b, out, m, n, k, p.transpose_a, p.transpose_b, batch, p.alpha, beta)
    assign(y, value, req)
    return True


def push_grads(p, req, dy, a, b, da, db):
    """da, db (req) of Y = alpha op(A) op(B), one batched GEMM each, as stored:
    dA = alpha dY op(B)ᵀ (transpose_a: alpha op(B) dYᵀ), dB = alpha op(A)ᵀ dY (transpose_b:
    alpha dYᵀ op(A)); req 'add' is BLAS's beta = 1."""
    live = [g for g, r in zip((da, db), req) if g is not None and r != 'null']
    if not blas_ready(dy, a, b, *live):
        return False
    ta, tb = p.transpose_a, p.transpose_b
    m, n, k, batch = _dims(p, a, b)
    if da is not None and req[0] != 'null':
        args = (b, dy, da, k, m, n, tb, True) if ta else (dy, b, da, m, k, n, False, not tb)
        _ndarray.gemm(*args, batch, p.alpha, 1.0 if req[0] == 'add' else 0.0)
    if db is not None and req[1] != 'null':
        args = (dy, a, db, n, k, m, True, ta) if tb else (a, dy, db, k, n, m, not ta, False)
        _ndarray.gemm(*args, batch, p.alpha, 1.0 if req[1] == 'add' else 0.0)
    return True


def push_scaled(g, dy, scale, req):
    """g (req) scale · dy (an elementwise kernel)."""
    if g is not None and req != 'null':
        assign(g, lambda out: _ndarray.binary(dy, scale, _MUL, out=out), req)
