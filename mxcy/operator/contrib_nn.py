"""Contrib layers of MXNet 1.9.1 in NumPy (`NumpyOp`), registered as ``_contrib_<name>``:
the interleaved attention products, AdaptiveAvgPooling2D and BilinearResize2D.

* interleaved_matmul_selfatt_qk(qkv, heads): qkv (L, B, 3·H·D) holds, per position,
  (H, 3, D) query/key/value projections; the output (B·H, L, L) is (q / sqrt(D)) · kᵀ.
  selfatt_valatt(qkv, attention, heads): attention (B·H, L, L) · v -> (L, B, H·D).
  encdec_qk(queries (Lq, B, H·D), keys_values (Lk, B, 2·H·D), heads) -> (B·H, Lq, Lk);
  encdec_valatt(keys_values, attention (B·H, Lq, Lk), heads) -> (Lq, B, H·D).
* AdaptiveAvgPooling2D(data, output_size): bin i of n over a size s covers
  [floor(i s / n), ceil((i + 1) s / n)).
* BilinearResize2D(data, height, width | scale_height, scale_width): bilinear resampling
  with corners aligned (MXNet's default mode 'size').
"""
import math

import numpy as np

from mxcy.operator import _att_gemm as ag
from mxcy.operator._numpy_op import NumpyOp, bmm
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op


def _contrib(cls):
    cls.name = '_contrib_' + cls.__name__
    cls.aliases = ()
    return register_op(cls)


def _bt(x):
    """(B, m, n) -> (B, n, m), a view."""
    return x.transpose(0, 2, 1)


def _scale(d):
    """1 / sqrt(d) as a Python float: a NumPy float64 scalar would turn float32 data
    into float64 (and its matmul off BLAS)."""
    return 1.0 / math.sqrt(d)


def _heads(x, h, parts):
    """(L, B, parts·H·D) -> list of `parts` arrays (B·H, L, D)."""
    n, b = x.shape[:2]
    d = x.shape[2] // (h * parts)
    t = x.reshape(n, b, h, parts, d)
    return [t[:, :, :, i, :].transpose(1, 2, 0, 3).reshape(b * h, n, d) for i in range(parts)]


def _unheads(parts_list, shape, h):
    """Inverse of _heads: list of (B·H, L, D) -> (L, B, parts·H·D)."""
    n, b = shape[:2]
    d = parts_list[0].shape[2]
    t = np.stack([g.reshape(b, h, n, d).transpose(2, 0, 1, 3) for g in parts_list], axis=3)
    return t.reshape(shape)


def _merge(out, n, b, h):
    """(B·H, L, D) -> (L, B, H·D)."""
    d = out.shape[2]
    return out.reshape(b, h, n, d).transpose(2, 0, 1, 3).reshape(n, b, h * d)


class _Att(NumpyOp):
    """float32/float64: strided batched GEMMs over the heads where they lie
    (`_att_gemm`); other dtypes and empty shapes: the NumPy `compute`/`grad` below."""
    params = ParamSchema(Param('heads', 'int'))
    backward_needs = ('out_grads', 'inputs')

    def forward(self, p, is_train, req, ins, outs, aux):
        if not self.push_forward(p, req[0], ins, outs[0]):
            super().forward(p, is_train, req, ins, outs, aux)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if not self.push_backward(p, req, out_grads[0], ins, in_grads):
            super().backward(p, req, out_grads, ins, outs, in_grads, aux)

    def _check(self, name, s, parts, p):
        if len(s) != 3 or s[2] % (parts * p.heads):
            raise self.shape_error(name, f'(L, B, {parts}·heads·D) with heads={p.heads}',
                                   tuple(s))


@_contrib
class interleaved_matmul_selfatt_qk(_Att):
    """(q / sqrt(D)) · kᵀ per head from interleaved projections."""

    def arguments(self, p):
        return ['queries_keys_values']

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        self._check('queries_keys_values', s, 3, p)
        return [tuple(s)], [(s[1] * p.heads, s[0], s[0])], []

    def push_forward(self, p, req, ins, y):
        x = ins[0]
        return ag.qk_forward(self.name, (x, 3, 0), (x, 3, 1), y, req, p.heads)

    def push_backward(self, p, req, dy, ins, in_grads):
        x, dx = ins[0], in_grads[0]
        return ag.qk_backward(self.name + '_backward', dy, (x, 3, 0), (x, 3, 1), dx, dx, req,
                              p.heads)

    def compute(self, p, x):
        q, k, _ = _heads(x, p.heads, 3)
        return bmm(q * _scale(q.shape[2]), _bt(k))

    def grad(self, p, dys, xs, ys):
        x, dy = xs[0], dys[0]
        q, k, v = _heads(x, p.heads, 3)
        scale = _scale(q.shape[2])
        return (_unheads([bmm(dy, k) * scale, bmm(_bt(dy), q) * scale, 0 * v],
                         x.shape, p.heads),)


@_contrib
class interleaved_matmul_selfatt_valatt(_Att):
    """attention · v per head, merged back to (L, B, H·D)."""

    def arguments(self, p):
        return ['queries_keys_values', 'attention']

    def infer_shape(self, p, in_shapes):
        s, a = in_shapes
        if s is None:
            return list(in_shapes), [None], []
        self._check('queries_keys_values', s, 3, p)
        want = (s[1] * p.heads, s[0], s[0])
        if a is not None and tuple(a) != want:
            raise self.shape_error('attention', want, tuple(a))
        return [tuple(s), want], [(s[0], s[1], s[2] // 3)], []

    def push_forward(self, p, req, ins, y):
        return ag.valatt_forward(self.name, ins[0], 3, ins[1], y, req, p.heads)

    def push_backward(self, p, req, dy, ins, in_grads):
        return ag.valatt_backward(self.name + '_backward', dy, ins[0], 3, ins[1], *in_grads,
                                  req, p.heads)

    def compute(self, p, x, att):
        _, _, v = _heads(x, p.heads, 3)
        return _merge(bmm(att, v), x.shape[0], x.shape[1], p.heads)

    def grad(self, p, dys, xs, ys):
        x, att = xs
        q, k, v = _heads(x, p.heads, 3)
        dout = _heads(dys[0], p.heads, 1)[0]
        return (_unheads([0 * q, 0 * k, bmm(_bt(att), dout)], x.shape, p.heads),
                bmm(dout, _bt(v)))


@_contrib
class interleaved_matmul_encdec_qk(_Att):
    """(q / sqrt(D)) · kᵀ per head, keys from interleaved key/value projections."""

    def arguments(self, p):
        return ['queries', 'keys_values']

    def infer_shape(self, p, in_shapes):
        q, kv = in_shapes
        if q is None or kv is None:
            return list(in_shapes), [None], []
        self._check('queries', q, 1, p)
        self._check('keys_values', kv, 2, p)
        if kv[2] != 2 * q[2] or kv[1] != q[1]:
            raise self.shape_error('keys_values', f'(Lk, {q[1]}, {2 * q[2]})', tuple(kv))
        return [tuple(q), tuple(kv)], [(q[1] * p.heads, q[0], kv[0])], []

    def push_forward(self, p, req, ins, y):
        return ag.qk_forward(self.name, (ins[0], 1, 0), (ins[1], 2, 0), y, req, p.heads)

    def push_backward(self, p, req, dy, ins, in_grads):
        return ag.qk_backward(self.name + '_backward', dy, (ins[0], 1, 0), (ins[1], 2, 0),
                              *in_grads, req, p.heads)

    def compute(self, p, queries, kv):
        q = _heads(queries, p.heads, 1)[0]
        k, _ = _heads(kv, p.heads, 2)
        return bmm(q * _scale(q.shape[2]), _bt(k))

    def grad(self, p, dys, xs, ys):
        queries, kv = xs
        q = _heads(queries, p.heads, 1)[0]
        k, v = _heads(kv, p.heads, 2)
        scale, dy = _scale(q.shape[2]), dys[0]
        return (_unheads([bmm(dy, k) * scale], queries.shape, p.heads),
                _unheads([bmm(_bt(dy), q) * scale, 0 * v], kv.shape, p.heads))


@_contrib
class interleaved_matmul_encdec_valatt(_Att):
    """attention · v per head (values from interleaved key/value projections)."""

    def arguments(self, p):
        return ['keys_values', 'attention']

    def infer_shape(self, p, in_shapes):
        kv, a = in_shapes
        if kv is None or a is None:
            return list(in_shapes), [None], []
        self._check('keys_values', kv, 2, p)
        if len(a) != 3 or a[0] != kv[1] * p.heads or a[2] != kv[0]:
            raise self.shape_error('attention', f'({kv[1] * p.heads}, Lq, {kv[0]})', tuple(a))
        return [tuple(kv), tuple(a)], [(a[1], kv[1], kv[2] // 2)], []

    def push_forward(self, p, req, ins, y):
        return ag.valatt_forward(self.name, ins[0], 2, ins[1], y, req, p.heads)

    def push_backward(self, p, req, dy, ins, in_grads):
        return ag.valatt_backward(self.name + '_backward', dy, ins[0], 2, ins[1], *in_grads,
                                  req, p.heads)

    def compute(self, p, kv, att):
        _, v = _heads(kv, p.heads, 2)
        return _merge(bmm(att, v), att.shape[1], kv.shape[1], p.heads)

    def grad(self, p, dys, xs, ys):
        kv, att = xs
        k, v = _heads(kv, p.heads, 2)
        dout = _heads(dys[0], p.heads, 1)[0]
        return (_unheads([0 * k, bmm(_bt(att), dout)], kv.shape, p.heads),
                bmm(dout, _bt(v)))


def _adaptive_matrix(size, n):
    """(n, size) averaging matrix of adaptive pooling along one axis."""
    m = np.zeros((n, size))
    for i in range(n):
        lo, hi = (i * size) // n, -((-(i + 1) * size) // n)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return m


def _bilinear_matrix(size, n):
    """(n, size) interpolation matrix with aligned corners."""
    m = np.zeros((n, size))
    pos = np.arange(n) * ((size - 1) / (n - 1) if n > 1 else 0.0)
    lo = np.clip(np.floor(pos).astype(int), 0, size - 1)
    hi = np.minimum(lo + 1, size - 1)
    f = pos - lo
    np.add.at(m, (np.arange(n), lo), 1 - f)
    np.add.at(m, (np.arange(n), hi), f)
    return m


class _Separable(NumpyOp):
    """out = Mh · x · Mwᵀ per image and channel, Mh/Mw from the sizes."""
    backward_needs = ('out_grads', 'inputs')

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        if d is None:
            return list(in_shapes), [None], []
        if len(d) != 4:
            raise self.shape_error('data', 'a 4-D (N, C, H, W) shape', tuple(d))
        oh, ow = self.out_size(p, d, in_shapes)
        if oh < 1 or ow < 1:
            raise ValueError(f"{self.name}: the output size ({oh}, {ow}) must be positive")
        return list(in_shapes), [tuple(d[:2]) + (oh, ow)], []

    def _mats(self, p, x, like=None):
        """The two matrices in x's float dtype (float32 for float16), so the GEMMs run in
        it as MXNet's do, not promoted to float64."""
        oh, ow = self.out_size(p, x.shape, [x.shape, like])
        dt = x.dtype if x.dtype in (np.float32, np.float64) else np.float32
        return (self.matrix(x.shape[2], oh).astype(dt, copy=False),
                self.matrix(x.shape[3], ow).astype(dt, copy=False))

    def compute(self, p, x, *like):
        mh, mw = self._mats(p, x, like[0].shape if like else None)
        return bmm(mh, bmm(x, mw.T))     # two GEMMs (a three-operand einsum loops in C)

    def grad(self, p, dys, xs, ys):
        x = xs[0]
        mh, mw = self._mats(p, x, xs[1].shape if len(xs) > 1 else None)
        gx = bmm(mh.T, bmm(dys[0], mw))
        return (gx,) + ((None,) if len(xs) > 1 else ())


@_contrib
class AdaptiveAvgPooling2D(_Separable):
    """Average pooling to output_size (one int: square; empty: (1, 1))."""
    params = ParamSchema(Param('output_size', 'shape', ()))
    matrix = staticmethod(_adaptive_matrix)

    def out_size(self, p, d, in_shapes):
        size = tuple(p.output_size) or (1,)
        return (size[0], size[0]) if len(size) == 1 else size[:2]


@_contrib
class BilinearResize2D(_Separable):
    """Bilinear resize to (height, width), or by (scale_height, scale_width), or to like's
    size (mode='like'); corners aligned."""
    params = ParamSchema(Param('height', 'int', 1), Param('width', 'int', 1),
                         Param('scale_height', 'float', None, optional=True),
                         Param('scale_width', 'float', None, optional=True),
                         Param('mode', 'str', 'size', choices=('size', 'like')),
                         Param('align_corners', 'bool', True))
    matrix = staticmethod(_bilinear_matrix)

    def arguments(self, p):
        return ['data', 'like'] if p.mode == 'like' else ['data']

    def out_size(self, p, d, in_shapes):
        if p.mode == 'like':
            like = in_shapes[1]
            if like is None:
                raise ValueError(f"{self.name}: mode='like' needs the 'like' input's shape")
            return tuple(like[2:4])
        if p.scale_height is not None or p.scale_width is not None:
            return (int(d[2] * (p.scale_height or 1)), int(d[3] * (p.scale_width or 1)))
        return p.height, p.width

    def infer_shape(self, p, in_shapes):
        if p.mode == 'like' and (len(in_shapes) < 2 or in_shapes[1] is None):
            return list(in_shapes), [None], []
        if not p.align_corners:
            raise ValueError(f"{self.name}: align_corners=False is not supported")
        return super().infer_shape(p, in_shapes)
