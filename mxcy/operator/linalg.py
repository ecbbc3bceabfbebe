"""Matrix products: dot and batch_dot (MXNet 1.x semantics), forward and backward by GEMM.

``dot(lhs, rhs)`` reads lhs as a matrix (prod(shape[:-1]), shape[-1]) and rhs as
(shape[0], prod(shape[1:])); ``transpose_a`` reads lhs as (shape[0], prod(shape[1:]))
transposed, ``transpose_b`` reads rhs as (prod(shape[:-1]), shape[-1]) transposed. The
result has the free axes of lhs then those of rhs; vector · vector has shape (1,).
``batch_dot`` multiplies (B..., M, K) · (B..., K, N) -> (B..., M, N) (equal leading
batch dims, N-D with N >= 3); transpose flags swap the last two axes.

float32/float64 run BLAS (`mxcy._ndarray.gemm`, no copies: the arrays' row-major memory
is the matrix); other dtypes run np.matmul inside one engine op, an explicit fallback.
Backward, with op(A)·op(B) = Y and A, B as stored:
  dA = dY·op(B)ᵀ  (stored transposed: op(B)·dYᵀ),   dB = op(A)ᵀ·dY  (stored: dYᵀ·op(A)).
"""
import numpy as np

from mxcy.operator._compute import gemm, nd
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op
from mxcy.operator.tensor import prod, push_value

_BLAS = (np.float32, np.float64)


def matmul(a, b, c, m, n, k, trans_a, trans_b, req, batch=1):
    """c (req) op(a)·op(b) for `batch` stacked (m×k)·(k×n) products of any dtype."""
    if req == 'null' or c is None:
        return
    if c.dtype in _BLAS and a.dtype == b.dtype == c.dtype:
        if batch * m * n == 0:
            return
        if k == 0:      # an empty contraction: the product is zero
            if req != 'add':
                c[:] = 0
            return
        gemm(a, b, c, m, n, k, trans_a, trans_b, req, batch)
        return

    def product(x, y):
        x = x.reshape((batch, k, m) if trans_a else (batch, m, k))
        y = y.reshape((batch, n, k) if trans_b else (batch, k, n))
        x = x.transpose(0, 2, 1) if trans_a else x
        y = y.transpose(0, 2, 1) if trans_b else y
        if x.dtype == np.float16:     # accumulate half precision in float32
            x, y = x.astype(np.float32), y.astype(np.float32)
        return np.matmul(x, y).reshape(c.shape)
    push_value(product, [a, b], c, req, 'matmul')


def product_grads(p, req, dy, a, b, da, db, m, n, k, batch=1):
    """Push both gradients of Y = op(a)·op(b) (see the module docstring)."""
    ta, tb = p.transpose_a, p.transpose_b
    if ta:      # dA stored (k×m) = op(B)·dYᵀ
        matmul(b, dy, da, k, m, n, tb, True, req[0], batch)
    else:       # dA (m×k) = dY·op(B)ᵀ
        matmul(dy, b, da, m, k, n, False, not tb, req[0], batch)
    if tb:      # dB stored (n×k) = dYᵀ·op(A)
        matmul(dy, a, db, n, k, m, True, ta, req[1], batch)
    else:       # dB (k×n) = op(A)ᵀ·dY
        matmul(a, dy, db, k, n, m, not ta, False, req[1], batch)


class _Product(OpSpec):
    params = ParamSchema(Param('transpose_a', 'bool', False),
                         Param('transpose_b', 'bool', False),
                         Param('forward_stype', 'str', None, optional=True))
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['lhs', 'rhs']

    def infer_shape(self, p, in_shapes):
        lhs, rhs = (None if s is None else tuple(s) for s in in_shapes)
        if lhs is None or rhs is None:
            return [lhs, rhs], [None], []
        return [lhs, rhs], [self._dims(p, lhs, rhs)[0]], []

    def forward(self, p, is_train, req, ins, outs, aux):
        _, m, n, k, batch = self._dims(p, ins[0].shape, ins[1].shape)
        matmul(ins[0], ins[1], outs[0], m, n, k, p.transpose_a, p.transpose_b, req[0], batch)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        _, m, n, k, batch = self._dims(p, ins[0].shape, ins[1].shape)
        product_grads(p, req, out_grads[0], ins[0], ins[1], in_grads[0], in_grads[1],
                      m, n, k, batch)

    def grad_graph(self, p, out_grads, ins, outs):
        """product_grads as recorded calls of this op (matrices: dot, or batch_dot)."""
        _, m, n, k, batch = self._dims(p, ins[0].shape, ins[1].shape)
        a, b = ins
        if self.name == 'dot':
            a, b = a.reshape((k, m) if p.transpose_a else (m, k)), \
                b.reshape((n, k) if p.transpose_b else (k, n))
        dy = out_grads[0].reshape(a.shape[:-2] + (m, n))
        op, ta, tb = nd(self.name), p.transpose_a, p.transpose_b
        da = op(b, dy, transpose_a=tb, transpose_b=True) if ta else \
            op(dy, b, transpose_b=not tb)
        db = op(dy, a, transpose_a=True, transpose_b=ta) if tb else \
            op(a, dy, transpose_a=not ta)
        return [da.reshape(ins[0].shape), db.reshape(ins[1].shape)]


@register_op
class dot(_Product):
    """MXNet's dot: lhs flattened to a matrix on its last axis, rhs on its first (see the
    module docstring); backward by two GEMMs."""
    name = 'dot'

    def _dims(self, p, ls, rs):
        """(output shape, m, n, k, batch)."""
        if not ls or not rs:
            raise self.shape_error('lhs' if not ls else 'rhs', 'at least 1 dimension',
                                   ls if not ls else rs)
        if len(ls) == 1 and len(rs) == 1 and (p.transpose_a or p.transpose_b):
            raise self.shape_error('lhs', 'a matrix to transpose', ls,
                                   'vectors cannot be transposed')
        k_l, l_rest = (ls[0], ls[1:]) if p.transpose_a else (ls[-1], ls[:-1])
        k_r, r_rest = (rs[-1], rs[:-1]) if p.transpose_b else (rs[0], rs[1:])
        if k_l != k_r:
            raise self.shape_error('rhs', f'{k_l} on the contracted axis (lhs {ls}, '
                                   f'transpose_a={p.transpose_a}, transpose_b='
                                   f'{p.transpose_b})', rs)
        return (l_rest + r_rest) or (1,), prod(l_rest), prod(r_rest), k_l, 1


@register_op
class batch_dot(_Product):
    """(B..., M, K) · (B..., K, N) -> (B..., M, N), one GEMM call over the batch."""
    name = 'batch_dot'

    def _dims(self, p, ls, rs):
        if len(ls) < 3 or len(ls) != len(rs):
            raise self.shape_error('rhs' if len(ls) >= 3 else 'lhs',
                                   'N-D arrays with the same N >= 3', rs if len(ls) >= 3
                                   else ls, f'lhs {ls}, rhs {rs}')
        if ls[:-2] != rs[:-2]:
            raise self.shape_error('rhs', f'batch dimensions {ls[:-2]} (as lhs {ls})', rs)
        m, k_l = (ls[-1], ls[-2]) if p.transpose_a else (ls[-2], ls[-1])
        k_r, n = (rs[-1], rs[-2]) if p.transpose_b else (rs[-2], rs[-1])
        if k_l != k_r:
            raise self.shape_error('rhs', f'{k_l} on the contracted axis (lhs {ls}, '
                                   f'transpose_a={p.transpose_a}, transpose_b='
                                   f'{p.transpose_b})', rs)
        return ls[:-2] + (m, n), m, n, k_l, prod(ls[:-2])
