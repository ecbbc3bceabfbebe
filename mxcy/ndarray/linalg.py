"""Matrix products of ``mx.nd``: ``dot`` and ``batch_dot`` (MXNet 1.x semantics).

``dot(lhs, rhs)`` flattens lhs to 2-D (prod(shape[:-1]), shape[-1]) and rhs to
(shape[0], prod(shape[1:])), multiplies, and returns shape lhs.shape[:-1] + rhs.shape[1:].
``transpose_a`` instead reads lhs as (shape[0], prod(shape[1:])) transposed, leaving
lhs.shape[1:]; ``transpose_b`` reads rhs as (prod(shape[:-1]), shape[-1]) transposed,
leaving rhs.shape[:-1]. A 1-D operand contributes no axes, so vector · vector has
shape (1,) (MXNet has no 0-d arrays); vectors cannot be transposed.

``batch_dot`` multiplies (B..., M, K) · (B..., K, N) -> (B..., M, N) for N-D operands
(N >= 3) with equal leading batch dims; transpose flags swap the last two axes.

float32/float64 run BLAS GEMM through ``mxcy._ndarray.gemm`` on the arrays themselves
(row-major contiguous memory, no reshaping copy); other dtypes (float16, integers) run
``np.matmul`` inside a Python op, an explicit fallback. Both push and return at once.
"""
import numpy as np

from mxcy._ndarray import gemm, push_numpy
from mxcy.ndarray.elemwise import check_nd, prepare_out

_BLAS_TYPES = (np.float32, np.float64)


def _prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def _check_pair(lhs, rhs, fname):
    check_nd(lhs, fname, 'lhs')
    check_nd(rhs, fname, 'rhs')
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"{fname}: lhs has dtype {np.dtype(lhs.dtype)} and rhs "
                        f"{np.dtype(rhs.dtype)}; convert one with astype()")
    if not lhs.shape or not rhs.shape:
        raise ValueError(f"{fname}: operands need at least 1 dimension, got lhs "
                         f"{lhs.shape} and rhs {rhs.shape}")


def _matmul_fallback(m, n, k, trans_a, trans_b, batch):
    """out := op(a) · op(b) through NumPy for the dtypes BLAS does not take."""
    def run(a, b, o):
        a = a.reshape((batch, k, m) if trans_a else (batch, m, k))
        b = b.reshape((batch, n, k) if trans_b else (batch, k, n))
        if trans_a:
            a = a.transpose(0, 2, 1)
        if trans_b:
            b = b.transpose(0, 2, 1)
        if o.dtype == np.float16:     # accumulate half precision in float32
            a, b = a.astype(np.float32), b.astype(np.float32)
        o[...] = np.matmul(a, b).reshape(o.shape)
    return run


def _push_product(lhs, rhs, res, m, n, k, trans_a, trans_b, batch, fname):
    if lhs.dtype in _BLAS_TYPES:
        gemm(lhs, rhs, res, m, n, k, trans_a, trans_b, batch)
    else:
        push_numpy(_matmul_fallback(m, n, k, trans_a, trans_b, batch), [lhs, rhs], [res],
                   fname)
    return res


def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None, out=None):
    """The MXNet 1.x dot product of two arrays (see the module docstring for shapes)."""
    _check_pair(lhs, rhs, 'dot')
    ls, rs = lhs.shape, rhs.shape
    if len(ls) == 1 and len(rs) == 1 and (transpose_a or transpose_b):
        raise ValueError(f"dot: cannot transpose vectors (lhs {ls}, rhs {rs})")
    if transpose_a:
        k_l, lhs_rest = ls[0], ls[1:]
    else:
        k_l, lhs_rest = ls[-1], ls[:-1]
    if transpose_b:
        k_r, rhs_rest = rs[-1], rs[:-1]
    else:
        k_r, rhs_rest = rs[0], rs[1:]
    if k_l != k_r:
        raise ValueError(f"dot: shape mismatch: lhs {ls} and rhs {rs}: contracted "
                         f"dimensions {k_l} and {k_r} differ (transpose_a={transpose_a}, "
                         f"transpose_b={transpose_b})")
    shape = (lhs_rest + rhs_rest) or (1,)
    res = prepare_out(out, shape, lhs.dtype, lhs.context, 'dot')
    m, n = _prod(lhs_rest), _prod(rhs_rest)
    return _push_product(lhs, rhs, res, m, n, k_l, bool(transpose_a), bool(transpose_b),
                         1, 'dot')


def batch_dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None,
              out=None):
    """Batched matrix product: (B..., M, K) · (B..., K, N) -> (B..., M, N)."""
    _check_pair(lhs, rhs, 'batch_dot')
    ls, rs = lhs.shape, rhs.shape
    if len(ls) < 3 or len(rs) < 3 or len(ls) != len(rs):
        raise ValueError(f"batch_dot: needs two N-D arrays with the same N >= 3, got lhs "
                         f"{ls} and rhs {rs}")
    if ls[:-2] != rs[:-2]:
        raise ValueError(f"batch_dot: the leading batch dimensions differ: lhs {ls} and "
                         f"rhs {rs}")
    m, k_l = (ls[-1], ls[-2]) if transpose_a else (ls[-2], ls[-1])
    k_r, n = (rs[-1], rs[-2]) if transpose_b else (rs[-2], rs[-1])
    if k_l != k_r:
        raise ValueError(f"batch_dot: shape mismatch: lhs {ls} and rhs {rs}: contracted "
                         f"dimensions {k_l} and {k_r} differ (transpose_a={transpose_a}, "
                         f"transpose_b={transpose_b})")
    res = prepare_out(out, ls[:-2] + (m, n), lhs.dtype, lhs.context, 'batch_dot')
    batch = _prod(ls[:-2])
    if batch == 0:
        return res
    return _push_product(lhs, rhs, res, m, n, k_l, bool(transpose_a), bool(transpose_b),
                         batch, 'batch_dot')

__all__ = ['dot', 'batch_dot']
