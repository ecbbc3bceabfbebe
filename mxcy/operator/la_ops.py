"""MXNet's ``linalg`` operators (``_linalg_gemm`` ..., aliases ``linalg_gemm``; the
``mx.nd.linalg``/``mx.sym.linalg`` functions drop the prefix), computed in NumPy/LAPACK
inside one engine op. Every operator works on the last two axes and batches over the
leading ones. Triangular inputs use only their lower (or, lower=False, upper) triangle.

Gradients (T() swaps the last two axes, Y the output, dY its head gradient):
* gemm2 Y = a op(A) op(B): d op(A) = a dY T(op(B)), d op(B) = a T(op(A)) dY; gemm adds
  dC = b dY;  syrk Y = a A T(A): dA = a (dY + T(dY)) A (transposed form alike);
* trmm Y = a op(L) B: dB = a T(op(L)) dY, d op(L) = a dY T(B); trsm Y = a op(L)^-1 B:
  dB = a op(L)^-T dY, d op(L) = -op(L)^-T dY T(Y) (right-side forms mirrored), masked
  to the triangle;
* potrf L = chol(A): dA = sym(L^-T Phi(T(L) dL) L^-1), Phi = lower triangle with half the
  diagonal; potri Y = (L T(L))^-1: dL = tril(-Y (dY + T(dY)) Y L);
* inverse: dA = -T(Y) dY T(Y); det: dA = dY det A^-T; slogdet: dA = dlogabs A^-T;
  sumlogdiag: diag(dY / diag(A)); diagonal/triangle extract and make: the index maps.
gelqf and syevd have no gradient here (their backward is not written yet).

float32/float64 gemm and gemm2 push batched BLAS GEMMs forward and backward (`_la_blas`),
trsm's forward pushes `_seqattn.trsm` and its backward solves with BLAS trsm; float16 and
empty shapes take the NumPy path (the explicit fallback).
"""
import numpy as np

from mxcy import _seqattn
from mxcy.operator._compute import assign
from mxcy.operator._la_blas import blas_ready, push_grads, push_product, push_scaled
from mxcy.operator._numpy_op import NumpyOp, bmm
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op


def T(x):
    return np.swapaxes(x, -1, -2)


def _tri(x, lower):
    return np.tril(x) if lower else np.triu(x)


class _LA(NumpyOp):
    """A linalg op: arguments A (B, C), each at least 2-D (batched)."""
    args = ('A',)
    min_dims = 2

    def arguments(self, p):
        return list(self.args)

    def infer_shape(self, p, in_shapes):
        shapes = [None if s is None else tuple(s) for s in in_shapes]
        if any(s is None for s in shapes):
            return shapes, [None] * len(self.outputs(p)), []
        for name, s in zip(self.args, shapes):
            if len(s) < self.min_dims:
                raise self.shape_error(name, f'at least {self.min_dims} dimensions', s)
        return shapes, self.out_shapes(p, *shapes), []

    def square(self, name, s):
        if s[-1] != s[-2]:
            raise self.shape_error(name, 'square matrices in the last two axes', s)


class _Product(_LA):
    def _ops(self, p, a, b):
        return (T(a) if p.transpose_a else a), (T(b) if p.transpose_b else b)

    def _shape(self, p, a, b):
        if getattr(p, 'axis', -2) != -2:
            raise ValueError(f"{self.name}: parameter 'axis'={p.axis} is not supported; "
                             "the matrices must be the last two axes (axis=-2)")
        if a[:-2] != b[:-2]:
            raise self.shape_error('B', f'batch dimensions {a[:-2]} (as A {a})', b)
        m, k = (a[-1], a[-2]) if p.transpose_a else (a[-2], a[-1])
        k2, n = (b[-1], b[-2]) if p.transpose_b else (b[-2], b[-1])
        if k != k2:
            raise self.shape_error('B', f'{k} rows in op(B) (A {a}, transpose_a='
                                   f'{p.transpose_a}, transpose_b={p.transpose_b})', b)
        return a[:-2] + (m, n)

    def _grads(self, p, dy, a, b):
        oa, ob = self._ops(p, a, b)
        da, db = bmm(p.alpha * dy, T(ob)), bmm(p.alpha * T(oa), dy)
        return (T(da) if p.transpose_a else da), (T(db) if p.transpose_b else db)


_PRODUCT = (Param('transpose_a', 'bool', False), Param('transpose_b', 'bool', False),
            Param('alpha', 'float', 1.0))


@register_op
class _linalg_gemm(_Product):
    """alpha * op(A) op(B) + beta * C."""
    name = '_linalg_gemm'
    aliases = ('linalg_gemm',)
    args = ('A', 'B', 'C')
    params = ParamSchema(*_PRODUCT, Param('beta', 'float', 1.0), Param('axis', 'int', -2))

    def out_shapes(self, p, a, b, c):
        out = self._shape(p, a, b)
        if c != out:
            raise self.shape_error('C', out, c)
        return [out]

    def forward(self, p, is_train, req, ins, outs, aux):
        if not push_product(p, req[0], ins[0], ins[1], outs[0], ins[2], p.beta):
            super().forward(p, is_train, req, ins, outs, aux)

    def compute(self, p, a, b, c):
        oa, ob = self._ops(p, a, b)
        return p.alpha * bmm(oa, ob) + p.beta * c

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if push_grads(p, req, out_grads[0], ins[0], ins[1], *in_grads[:2]):
            push_scaled(in_grads[2], out_grads[0], p.beta, req[2])     # dC = beta dY
        else:
            super().backward(p, req, out_grads, ins, outs, in_grads, aux)

    def grad(self, p, dys, xs, ys):
        return self._grads(p, dys[0], xs[0], xs[1]) + (p.beta * dys[0],)


@register_op
class _linalg_gemm2(_Product):
    """alpha * op(A) op(B)."""
    name = '_linalg_gemm2'
    aliases = ('linalg_gemm2',)
    args = ('A', 'B')
    params = ParamSchema(*_PRODUCT, Param('axis', 'int', -2))

    def out_shapes(self, p, a, b):
        return [self._shape(p, a, b)]

    def forward(self, p, is_train, req, ins, outs, aux):
        if not push_product(p, req[0], ins[0], ins[1], outs[0]):
            super().forward(p, is_train, req, ins, outs, aux)

    def compute(self, p, a, b):
        oa, ob = self._ops(p, a, b)
        return p.alpha * bmm(oa, ob)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if not push_grads(p, req, out_grads[0], ins[0], ins[1], *in_grads):
            super().backward(p, req, out_grads, ins, outs, in_grads, aux)

    def grad(self, p, dys, xs, ys):
        return self._grads(p, dys[0], xs[0], xs[1])


@register_op
class _linalg_syrk(_LA):
    """alpha * A T(A) (transpose=False) or alpha * T(A) A."""
    name = '_linalg_syrk'
    aliases = ('linalg_syrk',)
    params = ParamSchema(Param('transpose', 'bool', False), Param('alpha', 'float', 1.0))

    def out_shapes(self, p, a):
        n = a[-1] if p.transpose else a[-2]
        return [a[:-2] + (n, n)]

    def compute(self, p, a):
        return p.alpha * (bmm(T(a), a) if p.transpose else bmm(a, T(a)))

    def grad(self, p, dys, xs, ys):
        s, a = dys[0] + T(dys[0]), xs[0]
        return (p.alpha * bmm(a, s) if p.transpose else p.alpha * bmm(s, a),)


_TRI = (Param('transpose', 'bool', False), Param('rightside', 'bool', False),
        Param('lower', 'bool', True), Param('alpha', 'float', 1.0))


class _Triangular(_LA):
    args = ('A', 'B')
    params = ParamSchema(*_TRI)

    def out_shapes(self, p, a, b):
        self.square('A', a)
        n = b[-1] if p.rightside else b[-2]
        if a[:-2] != b[:-2] or a[-1] != n:
            raise self.shape_error('B', f'batch {a[:-2]} and {a[-1]} '
                                   f"{'columns' if p.rightside else 'rows'} (A {a})", b)
        return [b]

    def _m(self, p, a):
        m = _tri(a, p.lower)
        return T(m) if p.transpose else m

    def _mask(self, p, dm):
        return _tri(T(dm) if p.transpose else dm, p.lower)


@register_op
class _linalg_trmm(_Triangular):
    """alpha * op(A) B (or B op(A) when rightside), A triangular."""
    name = '_linalg_trmm'
    aliases = ('linalg_trmm',)

    def compute(self, p, a, b):
        m = self._m(p, a)
        return p.alpha * (bmm(b, m) if p.rightside else bmm(m, b))

    def grad(self, p, dys, xs, ys):
        dy, (a, b) = dys[0], xs
        m = self._m(p, a)
        if p.rightside:
            return self._mask(p, bmm(p.alpha * T(b), dy)), bmm(p.alpha * dy, T(m))
        return self._mask(p, bmm(p.alpha * dy, T(b))), bmm(p.alpha * T(m), dy)


@register_op
class _linalg_trsm(_Triangular):
    """alpha * op(A)^-1 B (or B op(A)^-1 when rightside), A triangular."""
    name = '_linalg_trsm'
    aliases = ('linalg_trsm',)

    def forward(self, p, is_train, req, ins, outs, aux):
        (a, b), y = ins, outs[0]
        if req[0] == 'null' or y is None:
            return
        if not blas_ready(a, b, y):
            super().forward(p, is_train, req, ins, outs, aux)
            return
        assign(y, lambda out: _seqattn.trsm(a, b, out, p.rightside, p.lower, p.transpose,
                                            p.alpha, b'_linalg_trsm'), req[0])

    def compute(self, p, a, b):
        m = self._m(p, a)
        if p.rightside:
            return p.alpha * T(np.linalg.solve(T(m), T(b)))
        return p.alpha * np.linalg.solve(m, b)

    def _solve_t(self, p, a, dy):
        """op(A)^-T dY (rightside: dY op(A)^-T): BLAS trsm with the transpose flipped."""
        if blas_ready(a, dy):
            return _seqattn.trsm_np(a, dy, p.rightside, p.lower, not p.transpose, 1.0)
        m = self._m(p, a)
        if p.rightside:
            return T(np.linalg.solve(m, T(dy)))
        return np.linalg.solve(T(m), dy)

    def grad(self, p, dys, xs, ys):
        dy, a, y = dys[0], xs[0], ys[0]
        g = self._solve_t(p, a, dy)
        dm = -bmm(T(y), g) if p.rightside else -bmm(g, T(y))
        return self._mask(p, dm), p.alpha * g


class _Square(_LA):
    def out_shapes(self, p, a):
        self.square('A', a)
        return [a]


@register_op
class _linalg_potrf(_Square):
    """The lower Cholesky factor L of a symmetric positive definite A (A = L T(L))."""
    name = '_linalg_potrf'
    aliases = ('linalg_potrf',)

    def compute(self, p, a):
        try:
            return np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            raise ValueError(f"{self.name}: A is not symmetric positive definite") from None

    def grad(self, p, dys, xs, ys):
        lo, dl = ys[0], dys[0]
        phi = np.tril(T(lo) @ dl)
        phi -= 0.5 * np.eye(lo.shape[-1]) * phi
        linv = np.linalg.inv(lo)
        g = T(linv) @ phi @ linv
        return (0.5 * (g + T(g)),)


@register_op
class _linalg_potri(_Square):
    """(L T(L))^-1 from the lower Cholesky factor L."""
    name = '_linalg_potri'
    aliases = ('linalg_potri',)

    def compute(self, p, a):
        lo = np.tril(a)
        return np.linalg.inv(lo @ T(lo))

    def grad(self, p, dys, xs, ys):
        y, dy = ys[0], dys[0]
        return (np.tril(-y @ (dy + T(dy)) @ y @ np.tril(xs[0])),)


@register_op
class _linalg_inverse(_Square):
    """The inverse of A."""
    name = '_linalg_inverse'
    aliases = ('linalg_inverse',)

    def compute(self, p, a):
        return np.linalg.inv(a)

    def grad(self, p, dys, xs, ys):
        y = ys[0]
        return (-T(y) @ dys[0] @ T(y),)


class _Scalar(_LA):
    def out_shapes(self, p, a):
        self.square('A', a)
        return [a[:-2] or (1,)] * len(self.outputs(p))


@register_op
class _linalg_det(_Scalar):
    """The determinant of A."""
    name = '_linalg_det'
    aliases = ('linalg_det',)

    def compute(self, p, a):
        return np.linalg.det(a).reshape(a.shape[:-2] or (1,))

    def grad(self, p, dys, xs, ys):
        a = xs[0]
        d = ys[0].reshape(a.shape[:-2] + (1, 1))
        return (dys[0].reshape(d.shape) * d * T(np.linalg.inv(a)),)


@register_op
class _linalg_slogdet(_Scalar):
    """(sign, log|det A|) of A."""
    name = '_linalg_slogdet'
    aliases = ('linalg_slogdet',)

    def outputs(self, p):
        return ['sign', 'logdet']

    def compute(self, p, a):
        s, v = np.linalg.slogdet(a)
        shape = a.shape[:-2] or (1,)
        return s.reshape(shape), v.reshape(shape)

    def grad(self, p, dys, xs, ys):
        a = xs[0]
        return (dys[1].reshape(a.shape[:-2] + (1, 1)) * T(np.linalg.inv(a)),)


@register_op
class _linalg_sumlogdiag(_Scalar):
    """The sum of the logs of A's diagonal."""
    name = '_linalg_sumlogdiag'
    aliases = ('linalg_sumlogdiag',)

    def compute(self, p, a):
        return np.log(np.diagonal(a, axis1=-2, axis2=-1)).sum(-1).reshape(
            a.shape[:-2] or (1,))

    def grad(self, p, dys, xs, ys):
        a = xs[0]
        d = np.diagonal(a, axis1=-2, axis2=-1)
        g = dys[0].reshape(a.shape[:-2] + (1,)) / d
        return (g[..., :, None] * np.eye(a.shape[-1]),)


def _diag_index(n, m, offset):
    rows = np.arange(max(0, -offset), min(n, m - offset))
    return rows, rows + offset


@register_op
class _linalg_extractdiag(_LA):
    """The `offset` diagonal of A."""
    name = '_linalg_extractdiag'
    aliases = ('linalg_extractdiag',)
    params = ParamSchema(Param('offset', 'int', 0))

    def out_shapes(self, p, a):
        r, _ = _diag_index(a[-2], a[-1], p.offset)
        if not len(r):
            raise self.shape_error('A', f'a matrix with a diagonal at offset {p.offset}', a)
        return [a[:-2] + (len(r),)]

    def compute(self, p, a):
        r, c = _diag_index(a.shape[-2], a.shape[-1], p.offset)
        return a[..., r, c]

    def grad(self, p, dys, xs, ys):
        a = xs[0]
        r, c = _diag_index(a.shape[-2], a.shape[-1], p.offset)
        g = np.zeros(a.shape, dys[0].dtype)
        g[..., r, c] = dys[0]
        return (g,)


@register_op
class _linalg_makediag(_LA):
    """A square matrix with A (a vector per batch) on its `offset` diagonal."""
    name = '_linalg_makediag'
    aliases = ('linalg_makediag',)
    params = ParamSchema(Param('offset', 'int', 0))
    min_dims = 1

    def out_shapes(self, p, a):
        n = a[-1] + abs(p.offset)
        return [a[:-1] + (n, n)]

    def compute(self, p, a):
        n = a.shape[-1] + abs(p.offset)
        out = np.zeros(a.shape[:-1] + (n, n), a.dtype)
        r, c = _diag_index(n, n, p.offset)
        out[..., r, c] = a
        return out

    def grad(self, p, dys, xs, ys):
        n = dys[0].shape[-1]
        r, c = _diag_index(n, n, p.offset)
        return (dys[0][..., r, c],)


def _trian_index(n, offset, lower):
    """Row-major (rows, cols) of the triangle: offset > 0 strictly above the diagonal
    from that offset, offset < 0 below, offset 0 lower or upper by `lower`."""
    rows, cols = np.tril_indices(n, offset) if (offset < 0 or (offset == 0 and lower)) \
        else np.triu_indices(n, offset)
    return rows, cols


@register_op
class _linalg_extracttrian(_LA):
    """The triangle of A (see `_trian_index`) as a vector, row by row."""
    name = '_linalg_extracttrian'
    aliases = ('linalg_extracttrian',)
    params = ParamSchema(Param('offset', 'int', 0), Param('lower', 'bool', True))

    def out_shapes(self, p, a):
        self.square('A', a)
        if abs(p.offset) >= a[-1]:
            raise self.shape_error('A', f'more than {abs(p.offset)} rows for offset '
                                   f'{p.offset}', a)
        return [a[:-2] + (len(_trian_index(a[-1], p.offset, p.lower)[0]),)]

    def compute(self, p, a):
        r, c = _trian_index(a.shape[-1], p.offset, p.lower)
        return a[..., r, c]

    def grad(self, p, dys, xs, ys):
        a = xs[0]
        r, c = _trian_index(a.shape[-1], p.offset, p.lower)
        g = np.zeros(a.shape, dys[0].dtype)
        g[..., r, c] = dys[0]
        return (g,)


@register_op
class _linalg_maketrian(_LA):
    """The square matrix whose triangle (see `_trian_index`) holds the vector A."""
    name = '_linalg_maketrian'
    aliases = ('linalg_maketrian',)
    params = ParamSchema(Param('offset', 'int', 0), Param('lower', 'bool', True))
    min_dims = 1

    def _n(self, p, length):
        m = int(round((np.sqrt(8 * length + 1) - 1) / 2))
        if m * (m + 1) // 2 != length:
            raise self.shape_error('A', 'a length m(m+1)/2 (a triangle)', (length,))
        return m + abs(p.offset)

    def out_shapes(self, p, a):
        n = self._n(p, a[-1])
        return [a[:-1] + (n, n)]

    def compute(self, p, a):
        n = self._n(p, a.shape[-1])
        out = np.zeros(a.shape[:-1] + (n, n), a.dtype)
        r, c = _trian_index(n, p.offset, p.lower)
        out[..., r, c] = a
        return out

    def grad(self, p, dys, xs, ys):
        r, c = _trian_index(dys[0].shape[-1], p.offset, p.lower)
        return (dys[0][..., r, c],)


@register_op
class _linalg_gelqf(_LA):
    """LQ factorisation A = L Q of a wide (m <= n) A: Q with orthonormal rows (m, n) and
    L lower triangular (m, m)."""
    name = '_linalg_gelqf'
    aliases = ('linalg_gelqf',)

    def outputs(self, p):
        return ['Q', 'L']

    def out_shapes(self, p, a):
        if a[-2] > a[-1]:
            raise self.shape_error('A', 'at most as many rows as columns', a)
        return [a, a[:-1] + (a[-2],)]

    def compute(self, p, a):
        q, r = np.linalg.qr(T(a))
        return T(q), T(r)

    def grad(self, p, dys, xs, ys):
        # dA = L^-T (dQ + copyltu(M) Q) with M = L^T dL - dQ Q^T and copyltu(M) the
        # symmetric matrix of M's lower triangle
        dq, dl = dys
        q, low = ys
        m = T(low) @ dl - dq @ T(q)
        m = np.tril(m) + T(np.tril(m, -1))
        return (np.linalg.solve(T(low), dq + m @ q),)


@register_op
class _linalg_syevd(_LA):
    """Eigen-decomposition A = T(U) diag(L) U of a symmetric A: U's rows the eigenvectors,
    L the eigenvalues in ascending order."""
    name = '_linalg_syevd'
    aliases = ('linalg_syevd',)

    def outputs(self, p):
        return ['U', 'L']

    def out_shapes(self, p, a):
        self.square('A', a)
        return [a, a[:-1]]

    def compute(self, p, a):
        w, v = np.linalg.eigh(a)
        u = T(v)
        # MXNet's sign convention: each eigenvector's largest-magnitude entry is positive
        big = np.take_along_axis(u, np.abs(u).argmax(-1)[..., None], -1)
        return np.where(big < 0, -u, u), w

    def grad(self, p, dys, xs, ys):
        # dA = U^T (diag(dL) + F * (U dU^T)) U, F_ij = 1 / (L_j - L_i) off the diagonal,
        # symmetrised (A is symmetric)
        du, dl = dys
        u, w = ys
        gap = w[..., None, :] - w[..., :, None]
        off = ~np.eye(w.shape[-1], dtype=bool)
        f = np.where(off, 1.0 / np.where(off, gap, 1.0), 0.0)
        inner = f * (u @ T(du))
        inner = inner + dl[..., :, None] * np.eye(w.shape[-1])
        g = T(u) @ inner @ u
        return ((g + T(g)) / 2,)


LINALG_NAMES = ('gemm', 'gemm2', 'potrf', 'potri', 'trmm', 'trsm', 'sumlogdiag', 'syrk',
                'gelqf', 'syevd', 'inverse', 'det', 'slogdet', 'extractdiag', 'makediag',
                'extracttrian', 'maketrian')
