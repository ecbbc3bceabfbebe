"""Layers of MXNet 1.9.1 without a C kernel here, in NumPy (`NumpyOp`): UpSampling,
Crop, L2Normalization, LRN, SVMOutput, SoftmaxActivation, im2col and col2im.

* UpSampling nearest: each input (N, C_i, h_i, w_i) repeated to (H, W) = first input's
  size x scale, then concatenated on channels (multi_input_mode='concat') or summed;
  bilinear: a depthwise Deconvolution of data with `weight` (C, 1, 2s - s%2, same),
  stride s, pad ceil((s - 1) / 2) (MXNet's definition; the weight is learnable).
* Crop: data[0] cropped to h_w (or to data[1]'s spatial size) at `offset` (y, x) or
  centred; its gradient is dy placed back into zeros.
* L2Normalization: y = x / sqrt(sum(x^2) + eps) over all but axis 0 ('instance'), over
  axis 1 ('channel') or over the spatial axes ('spatial'); dx = (dy - y sum(dy y)) / n.
* LRN: y_c = x_c / (knorm + alpha / nsize * sum of x^2 over the nsize channels around c)
  ^ beta.
* SVMOutput: forward is the identity; backward is the gradient of the one-vs-all hinge
  loss (squared unless use_linear) times regularization_coefficient (no head gradient);
  the classes are on the last axis, label has data's shape without it.
* SoftmaxActivation: softmax over all but axis 0 ('instance') or over axis 1 ('channel').
* im2col: (N, C, spatial) -> (N, C * prod(kernel), L) sliding blocks; col2im sums blocks
  back into (N, C, output_size); each is the other's gradient. 2-D blocks use the C
  kernels of mxcy._sampling, 1-D and 3-D the NumPy code here.
"""
import numpy as np

from mxcy import _ndarray, _sampling
from mxcy._lrn import lrn_forward, lrn_scale
from mxcy.operator._kernel_op import push_kernel
from mxcy.operator._numpy_op import NumpyOp
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import get_op, register_op


# ---------------------------------------------------------------- UpSampling
@register_op
class UpSampling(NumpyOp):
    """Nearest (any number of inputs) or bilinear (data + weight) upsampling by scale."""
    name = 'UpSampling'
    variadic = 'num_args'
    params = ParamSchema(Param('scale', 'int'), Param('num_filter', 'int', 0),
                         Param('sample_type', 'str', 'nearest',
                               choices=('nearest', 'bilinear')),
                         Param('multi_input_mode', 'str', 'concat', choices=('concat', 'sum')),
                         Param('num_args', 'int', 1), Param('workspace', 'int', 512))

    def arguments(self, p):
        if p.sample_type == 'bilinear':
            return ['data', 'weight']
        return [f'arg{i}' for i in range(p.num_args)]

    def _deconv(self, p, channels):
        s = p.scale
        k = 2 * s - s % 2
        q = int(np.ceil((s - 1) / 2.0))
        spec = get_op('Deconvolution')
        return spec, spec.params.parse('Deconvolution', dict(
            kernel=(k, k), stride=(s, s), pad=(q, q), num_filter=channels,
            num_group=channels, no_bias=True))

    def infer_shape(self, p, in_shapes):
        if p.scale < 1:
            raise ValueError(f"{self.name}: parameter 'scale' must be >= 1, got {p.scale}")
        d = in_shapes[0]
        if d is None:
            return list(in_shapes), [None], []
        if len(d) != 4:
            raise self.shape_error(self.arguments(p)[0], 'a 4-D (N, C, H, W) shape', tuple(d))
        if p.sample_type == 'bilinear':
            spec, q = self._deconv(p, d[1])
            ins, outs, _ = spec.infer_shape(q, [tuple(d), in_shapes[1]])
            return ins, outs, []
        h, w = d[2] * p.scale, d[3] * p.scale
        channels = 0
        for i, s in enumerate(in_shapes):
            if s is None:
                return list(in_shapes), [None], []
            if len(s) != 4 or s[0] != d[0] or h % s[2] or w % s[3]:
                raise self.shape_error(f'arg{i}', f'(N={d[0]}, C, h, w) with h, w dividing '
                                       f'({h}, {w})', tuple(s))
            if p.multi_input_mode == 'sum' and s[1] != d[1]:
                raise self.shape_error(f'arg{i}', f'{d[1]} channels (mode sum)', tuple(s))
            channels += s[1]
        c = d[1] if p.multi_input_mode == 'sum' else channels
        return [tuple(s) for s in in_shapes], [(d[0], c, h, w)], []

    def forward(self, p, is_train, req, ins, outs, aux):
        if p.sample_type == 'bilinear':
            spec, q = self._deconv(p, ins[0].shape[1])
            spec.forward(q, is_train, req, ins, outs, aux)
            return
        if req[0] == 'null':
            return
        total = p.multi_input_mode == 'sum'

        def run(xs, bufs, adds):
            c0 = 0
            for i, x in enumerate(xs):      # C loops: each input pixel into its block
                _sampling.upsample_nearest(x, bufs[0], 0 if total else c0,
                                           adds[0] or (total and i > 0))
                c0 += x.shape[1]
        push_kernel(run, ins, outs, req, self.name, can_add=True)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if p.sample_type == 'bilinear':
            spec, q = self._deconv(p, ins[0].shape[1])
            spec.backward(q, req, out_grads, ins, outs, in_grads, aux)
            return
        super().backward(p, req, out_grads, ins, outs, in_grads, aux)

    def compute(self, p, *xs):
        h, w = xs[0].shape[2] * p.scale, xs[0].shape[3] * p.scale
        ups = [x.repeat(h // x.shape[2], axis=2).repeat(w // x.shape[3], axis=3) for x in xs]
        return sum(ups) if p.multi_input_mode == 'sum' else np.concatenate(ups, axis=1)

    def grad(self, p, dys, xs, ys):
        dy, grads, c0 = dys[0], [], 0
        for x in xs:
            fh, fw = dy.shape[2] // x.shape[2], dy.shape[3] // x.shape[3]
            part = dy if p.multi_input_mode == 'sum' else dy[:, c0:c0 + x.shape[1]]
            c0 += x.shape[1]
            # fh x fw strided adds: a reduction over the inner (3, 5) axes of a 6-D view
            # is ~50x slower
            g = part[:, :, 0::fh, 0::fw].astype(np.result_type(part.dtype, np.float32))
            for i in range(fh):
                for j in range(fw):
                    if i or j:
                        g += part[:, :, i::fh, j::fw]
            grads.append(g)
        return grads


# ---------------------------------------------------------------- Crop
@register_op
class Crop(NumpyOp):
    """data[0] (N, C, H, W) cropped to h_w, or to data[1]'s (H, W)."""
    name = 'Crop'
    variadic = 'num_args'
    params = ParamSchema(Param('num_args', 'int'), Param('offset', 'shape', (0, 0)),
                         Param('h_w', 'shape', (0, 0)), Param('center_crop', 'bool', False))

    def arguments(self, p):
        if p.num_args not in (1, 2):
            raise ValueError(f"{self.name}: parameter 'num_args' must be 1 or 2, got "
                             f"{p.num_args}")
        return ['arg0', 'arg1'][:p.num_args]

    def _box(self, p, shape, like):
        h, w = like[2:] if like is not None else p.h_w
        if h <= 0 or w <= 0 or h > shape[2] or w > shape[3]:
            raise self.shape_error('arg0', f'at least ({h}, {w}) spatially to crop to', shape)
        if p.center_crop:
            y, x = (shape[2] - h) // 2, (shape[3] - w) // 2
        else:
            y, x = p.offset
        if y < 0 or x < 0 or y + h > shape[2] or x + w > shape[3]:
            raise self.shape_error('arg0', f'room for a ({h}, {w}) crop at offset ({y}, {x})',
                                   shape)
        return y, x, h, w

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        like = in_shapes[1] if p.num_args == 2 else None
        if d is None or (p.num_args == 2 and like is None):
            return list(in_shapes), [None], []
        if len(d) != 4:
            raise self.shape_error('arg0', 'a 4-D (N, C, H, W) shape', tuple(d))
        _, _, h, w = self._box(p, tuple(d), like)
        return list(in_shapes), [tuple(d[:2]) + (h, w)], []

    def compute(self, p, x, like=None):
        y0, x0, h, w = self._box(p, x.shape, None if like is None else like.shape)
        return x[:, :, y0:y0 + h, x0:x0 + w]

    def grad(self, p, dys, xs, ys):
        like = xs[1] if len(xs) > 1 else None
        y0, x0, h, w = self._box(p, xs[0].shape, None if like is None else like.shape)
        g = np.zeros(xs[0].shape, dys[0].dtype)
        g[:, :, y0:y0 + h, x0:x0 + w] = dys[0]
        return (g, None) if like is not None else (g,)


# ---------------------------------------------------------------- normalisation
def _norm_axes(mode, ndim):
    return {'instance': tuple(range(1, ndim)), 'channel': (1,),
            'spatial': tuple(range(2, ndim))}[mode]


@register_op
class L2Normalization(NumpyOp):
    """y = x / sqrt(sum(x^2) + eps) per instance, channel or spatial position set."""
    name = 'L2Normalization'
    params = ParamSchema(Param('eps', 'float', 1e-10),
                         Param('mode', 'str', 'instance',
                               choices=('instance', 'channel', 'spatial')))

    def _n(self, p, x):
        return np.sqrt((x * x).sum(axis=_norm_axes(p.mode, x.ndim), keepdims=True) + p.eps)

    def compute(self, p, x):
        if x.ndim < (3 if p.mode == 'spatial' else 2):
            raise ValueError(f"{self.name}: mode '{p.mode}' needs more dimensions than data "
                             f"{x.shape}")
        return x / self._n(p, x)

    def grad(self, p, dys, xs, ys):
        x, dy = xs[0], dys[0]
        n = self._n(p, x)
        y = x / n
        return ((dy - y * (dy * y).sum(axis=_norm_axes(p.mode, x.ndim), keepdims=True)) / n,)


def _channel_window_sum(v, nsize):
    """sum of v over the channels k - nsize // 2 .. k + nsize // 2 around each channel k
    (those that exist): one shifted add per offset (a cumsum along axis 1 is slow)."""
    half = nsize // 2
    out = v.copy()
    for d in range(1, min(half, v.shape[1] - 1) + 1):
        out[:, d:] += v[:, :-d]
        out[:, :-d] += v[:, d:]
    return out


_LRN_DTYPES = (np.float32, np.float64)


@register_op
class LRN(NumpyOp):
    """Local response normalisation across channels."""
    name = 'LRN'
    params = ParamSchema(Param('alpha', 'float', 1e-4), Param('beta', 'float', 0.75),
                         Param('knorm', 'float', 2.0), Param('nsize', 'int'))

    def _s(self, p, x):
        if x.dtype in _LRN_DTYPES and x.flags.c_contiguous:
            return lrn_scale(x, p.nsize, p.alpha, p.knorm)
        return p.knorm + p.alpha / p.nsize * _channel_window_sum(x * x, p.nsize)

    def compute(self, p, x):
        t = _pow_neg(self._s(p, x), p.beta)
        t *= x
        return t

    def forward(self, p, is_train, req, ins, outs, aux):
        if req[0] not in ('write', 'inplace') or ins[0].dtype not in _LRN_DTYPES:
            NumpyOp.forward(self, p, is_train, req, ins, outs, aux)
            return
        nsize, alpha, beta, knorm = p.nsize, p.alpha, p.beta, p.knorm
        # the C kernel (mxcy/_lrn.pyx), straight into the output
        _ndarray.push_numpy(lambda x, o: lrn_forward(np.ascontiguousarray(x), o, nsize, alpha,
                                                     beta, knorm), [ins[0]], [outs[0]],
                            self.name)

    def grad(self, p, dys, xs, ys):
        x, dy = xs[0], dys[0]
        s = self._s(p, x)
        sb = _pow_neg(s, p.beta)                          # s^-beta
        inner = _channel_window_sum(dy * x * sb / s, p.nsize)
        return (dy * sb - 2 * p.alpha * p.beta / p.nsize * x * inner,)


def _pow_neg(s, beta):
    """s ** -beta (s > 0, a fresh array); beta = 0.75 (LRN's default) and 0.5 by square
    roots, a fifth of the cost of NumPy's pow (within 2 ulp of it)."""
    if beta == 0.75:
        r = np.sqrt(s)
        t = np.sqrt(r)
        t *= r
        return np.reciprocal(t, out=t)
    if beta == 0.5:
        t = np.sqrt(s)
        return np.reciprocal(t, out=t)
    return s ** -beta


# ---------------------------------------------------------------- losses / activations
@register_op
class SVMOutput(NumpyOp):
    """Identity forward; the one-vs-all hinge loss gradient backward."""
    name = 'SVMOutput'
    params = ParamSchema(Param('margin', 'float', 1.0),
                         Param('regularization_coefficient', 'float', 1.0),
                         Param('use_linear', 'bool', False))
    backward_needs = ('inputs',)

    def arguments(self, p):
        return ['data', 'label']

    def infer_shape(self, p, in_shapes):
        d, lab = in_shapes
        if d is not None:
            want = tuple(d[:-1])        # the classes are on the last axis
            if lab is not None and tuple(lab) != want:
                raise self.shape_error('label', want, tuple(lab))
            lab = want
        return [d and tuple(d), lab], [d and tuple(d)], []

    def infer_type(self, p, in_types):
        return [in_types[0], in_types[1] or in_types[0]], [in_types[0]], []

    def compute(self, p, x, label):
        return x

    def grad(self, p, dys, xs, ys):
        x, label = xs
        # in x's precision (float16: float32), as MXNet; masks by multiplication, not
        # np.where (five times the cost of the arithmetic)
        x2 = x.reshape(-1, x.shape[-1]).astype(np.result_type(x.dtype, np.float32))
        lab = label.reshape(-1).astype(np.int64)
        sign = -np.ones_like(x2)
        sign[np.arange(len(lab)), lab] = 1
        slack = p.margin - sign * x2          # hinge: max(0, margin - sign * x)
        if p.use_linear:
            g = -sign * (slack > 0)
        else:
            np.maximum(slack, 0, out=slack)
            g = sign * slack
            g *= -2
        g *= p.regularization_coefficient
        return g.reshape(x.shape), None


@register_op
class SoftmaxActivation(NumpyOp):
    """Softmax over all but axis 0 ('instance') or over the channels ('channel')."""
    name = 'SoftmaxActivation'
    params = ParamSchema(Param('mode', 'str', 'instance', choices=('instance', 'channel')))
    backward_needs = ('out_grads', 'outputs')

    def compute(self, p, x):
        axes = tuple(range(1, x.ndim)) if p.mode == 'instance' else (1,)
        e = np.exp(x - x.max(axis=axes, keepdims=True))
        return e / e.sum(axis=axes, keepdims=True)

    def grad(self, p, dys, xs, ys):
        y, dy = ys[0], dys[0]
        axes = tuple(range(1, y.ndim)) if p.mode == 'instance' else (1,)
        return (y * (dy - (dy * y).sum(axis=axes, keepdims=True)),)


# ---------------------------------------------------------------- im2col / col2im
_BLOCK = (Param('kernel', 'shape'), Param('stride', 'shape', ()), Param('dilate', 'shape', ()),
          Param('pad', 'shape', ()))


def _geometry(op, p, spatial):
    nd = len(p.kernel)
    if len(spatial) != nd:
        raise op.shape_error('data', f'{nd} spatial dimensions (kernel {p.kernel})',
                             tuple(spatial))
    stride, dilate, pad = (tuple(v) or (d,) * nd for v, d in
                           ((p.stride, 1), (p.dilate, 1), (p.pad, 0)))
    out = tuple((s + 2 * q - d * (k - 1) - 1) // st + 1 for s, q, d, k, st in
                zip(spatial, pad, dilate, p.kernel, stride))
    if any(o < 1 for o in out):
        raise op.shape_error('data', f'spatial size at least the dilated kernel {p.kernel}',
                             tuple(spatial))
    return stride, dilate, pad, out


def _blocks(spatial, p, stride, dilate, out):
    """(kernel offset, slices into the padded input) for every kernel position."""
    for off in np.ndindex(*p.kernel):
        yield off, tuple(slice(o * d, o * d + st * (n - 1) + 1, st) for o, d, st, n in
                         zip(off, dilate, stride, out))


def _push_blocks(op, p, spatial, to_cols, ins, outs, req, name):
    """2-D: im2col (to_cols) or col2im with the C kernels of mxcy._sampling, one op."""
    stride, dilate, pad, out = _geometry(op, p, spatial)
    geo = tuple(p.kernel) + stride + pad + dilate + out

    def run(xs, bufs, adds):
        if to_cols:
            _sampling.im2col2d(xs[0], bufs[0], *geo)
        else:
            _sampling.col2im2d(xs[0], bufs[0], *geo, adds[0])
    push_kernel(run, ins, outs, req, name, can_add=not to_cols)


@register_op
class im2col(NumpyOp):
    """Sliding blocks of (N, C, spatial...) as columns (N, C * prod(kernel), L)."""
    name = 'im2col'
    params = ParamSchema(*_BLOCK)
    backward_needs = ('out_grads', 'inputs')

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None], []
        _, _, _, out = _geometry(self, p, d[2:])
        return [tuple(d)], [(d[0], d[1] * int(np.prod(p.kernel)), int(np.prod(out)))], []

    def forward(self, p, is_train, req, ins, outs, aux):
        if len(p.kernel) != 2:
            return super().forward(p, is_train, req, ins, outs, aux)
        _push_blocks(self, p, ins[0].shape[2:], True, ins, outs, req, self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if len(p.kernel) != 2:
            return super().backward(p, req, out_grads, ins, outs, in_grads, aux)
        _push_blocks(self, p, ins[0].shape[2:], False, out_grads[:1], in_grads, req,
                     self.name + '_backward')

    def compute(self, p, x):
        stride, dilate, pad, out = _geometry(self, p, x.shape[2:])
        xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad])
        cols = [xp[(slice(None), slice(None)) + sl].reshape(x.shape[0], x.shape[1], -1)
                for _, sl in _blocks(x.shape[2:], p, stride, dilate, out)]
        return np.stack(cols, axis=2).reshape(x.shape[0], -1, int(np.prod(out)))

    def grad(self, p, dys, xs, ys):
        return (col2im_values(self, p, dys[0], xs[0].shape),)


def col2im_values(op, p, cols, shape):
    stride, dilate, pad, out = _geometry(op, p, shape[2:])
    n, c = shape[:2]
    k = int(np.prod(p.kernel))
    cols = cols.reshape(n, c, k, *out)
    acc = np.zeros((n, c) + tuple(s + 2 * q for s, q in zip(shape[2:], pad)), cols.dtype)
    for i, (_, sl) in enumerate(_blocks(shape[2:], p, stride, dilate, out)):
        acc[(slice(None), slice(None)) + sl] += cols[:, :, i]
    crop = tuple(slice(q, q + s) for q, s in zip(pad, shape[2:]))
    return acc[(slice(None), slice(None)) + crop]


@register_op
class col2im(NumpyOp):
    """Columns (N, C * prod(kernel), L) summed back into (N, C, output_size)."""
    name = 'col2im'
    params = ParamSchema(Param('output_size', 'shape'), *_BLOCK)
    backward_needs = ('out_grads', 'inputs')

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None], []
        _, _, _, out = _geometry(self, p, p.output_size)
        k = int(np.prod(p.kernel))
        if len(d) != 3 or d[1] % k or d[2] != int(np.prod(out)):
            raise self.shape_error('data', f'(N, C * {k}, {int(np.prod(out))})', tuple(d))
        return [tuple(d)], [(d[0], d[1] // k) + tuple(p.output_size)], []

    def forward(self, p, is_train, req, ins, outs, aux):
        if len(p.kernel) != 2:
            return super().forward(p, is_train, req, ins, outs, aux)
        _push_blocks(self, p, p.output_size, False, ins, outs, req, self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if len(p.kernel) != 2:
            return super().backward(p, req, out_grads, ins, outs, in_grads, aux)
        _push_blocks(self, p, p.output_size, True, out_grads[:1], in_grads, req,
                     self.name + '_backward')

    def compute(self, p, cols):
        k = int(np.prod(p.kernel))
        shape = (cols.shape[0], cols.shape[1] // k) + tuple(p.output_size)
        return col2im_values(self, p, cols, shape)

    def grad(self, p, dys, xs, ys):
        return (im2col.compute(self, p, dys[0]),)
