"""Convolution, Deconvolution and Pooling (1-D, 2-D and 3-D, channels first), and Pad.

A 2-D op runs the _conv kernels; a 1-D op (data (N, C, W), kernel (k,)) runs them on a
(N, C, 1, W) view; a 3-D op (N, C, D, H, W) runs the NumPy kernels of `_conv_numpy` in one
engine op per output. Only the channel-first layouts (NCW, NCHW, NCDHW) are computed; a
channel-last ``layout`` is refused rather than silently read as channel-first.
"""
import math

import numpy as np

from mxcy import _conv, _ndarray
from mxcy.operator import _conv_numpy as _np_kernels
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op, unify_shape

_LAYOUTS = {1: 'NCW', 2: 'NCHW', 3: 'NCDHW'}


def _spatial(op, p, name, value, nd, default):
    """A per-axis tuple (stride, pad, dilate) of length nd; () means the default."""
    if not value:
        return (default,) * nd
    if len(value) != nd:
        raise ValueError(f"{op}: {name}={value} must have {nd} values like kernel={p.kernel}")
    return tuple(value)


def _check_layout(op, layout, nd):
    """Only the channel-first layout of `nd` spatial axes (or None) is computed here."""
    if layout is None or layout == _LAYOUTS[nd]:
        return
    if layout in ('NWC', 'NHWC', 'NDHWC'):
        raise ValueError(f"{op}: layout={layout!r} (channels last) is not supported; only "
                         f"{_LAYOUTS[nd]} is computed for {nd}-D data")
    raise ValueError(f"{op}: layout={layout!r} does not fit a {nd}-D kernel/data, expected "
                     f"{_LAYOUTS[nd]}")


def _as_2d(shape):
    """(N, C, W) -> (N, C, 1, W); 4-D shapes unchanged."""
    return shape if len(shape) == 4 else (shape[0], shape[1], 1, shape[2])


def _pair(t):
    return t if len(t) == 2 else (1,) + tuple(t)


def _pad_pair(t):
    return t if len(t) == 2 else (0,) + tuple(t)


def _view4(arr, req='write'):
    """The 4-D view of a 3-D or 4-D array; None when the array is absent (req null)."""
    if arr is None or req == 'null':
        return None
    return arr.reshape(_as_2d(arr.shape))


class _ConvBase(OpSpec):
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'weight'] if p.no_bias else ['data', 'weight', 'bias']

    def geometry(self, p):
        nd = len(p.kernel)
        if nd not in (1, 2, 3):
            raise ValueError(f"{self.name}: kernel must have 1, 2 or 3 values, got {p.kernel}")
        _check_layout(self.name, p.layout, nd)
        if any(k < 1 for k in p.kernel):
            raise ValueError(f"{self.name}: kernel sizes must be positive, got {p.kernel}")
        stride = _spatial(self.name, p, 'stride', p.stride, nd, 1)
        pad = _spatial(self.name, p, 'pad', p.pad, nd, 0)
        dilate = _spatial(self.name, p, 'dilate', p.dilate, nd, 1)
        if any(s < 1 for s in stride) or any(d < 1 for d in dilate) or any(q < 0 for q in pad):
            raise ValueError(f"{self.name}: stride and dilate must be positive and pad "
                             f"non-negative, got stride={stride} dilate={dilate} pad={pad}")
        if p.num_filter < 1 or p.num_group < 1:
            raise ValueError(f"{self.name}: num_filter and num_group must be positive")
        return nd, stride, pad, dilate

    def check_data(self, p, dshape, nd):
        if len(dshape) != nd + 2:
            spatial = ('w', 'h, w', 'd, h, w')[nd - 1]
            raise self.shape_error('data', f"{nd + 2}-D (batch, channel, {spatial})", dshape,
                                   f"kernel={p.kernel}")


# ---------------------------------------------------------------- 3-D: NumPy kernels
def _push_conv(x, w, b, y, stride, pad, dilate, groups, req):
    """y (req) conv(x, w) + b (cropped to y: a deconvolution's adj adds unused input)."""
    if req == 'null' or y is None:
        return
    ins = [x, w] if b is None else [x, w, b]

    def run(*views):
        out = views[-1]
        value = _np_kernels.conv_forward(views[0], views[1], None if b is None else views[2],
                                         stride, pad, dilate, groups)
        _np_kernels.store(out, value[tuple(slice(0, n) for n in out.shape)], req)
    _ndarray.push_numpy(run, ins, [y], 'Convolution')


def _push_deconv(x, w, b, y, stride, pad, dilate, groups, req):
    """y (req) deconv(x, w) + b: the data gradient of a conv from y's shape, at dy = x."""
    if req == 'null':
        return
    ins = [x, w] if b is None else [x, w, b]
    nd = len(stride)

    def run(*views):
        out = views[-1]
        value = _np_kernels.conv_backward_data(views[0], views[1], out.shape, stride, pad,
                                               dilate, groups)
        if b is not None:
            value += views[2].reshape((1, -1) + (1,) * nd)
        _np_kernels.store(out, value, req)
    _ndarray.push_numpy(run, ins, [y], 'Deconvolution')


def _push_conv_data(dy, w, dx, req, stride, pad, dilate, groups):
    """dx (req) the data gradient of conv(x, w) for the output gradient dy."""
    if req == 'null' or dx is None:
        return

    def run(dyv, wv, out):
        _np_kernels.store(out, _np_kernels.conv_backward_data(
            dyv, wv, out.shape, stride, pad, dilate, groups), req)
    _ndarray.push_numpy(run, [dy, w], [dx], 'Convolution_backward_data')


def _push_conv_weight(x, dy, w, dw, req, stride, pad, dilate, groups):
    """dw (req) the weight gradient of conv(x, w) for the output gradient dy."""
    if req == 'null' or dw is None:
        return
    kernel = tuple(w.shape[2:])

    def run(xv, dyv, out):
        _np_kernels.store(out, _np_kernels.conv_backward_weight(
            xv, dyv, kernel, stride, pad, dilate, groups), req)
    _ndarray.push_numpy(run, [x, dy], [dw], 'Convolution_backward_weight')


def _push_bias_grad(dy, db, req, nd):
    if req == 'null' or db is None:
        return
    axes = (0,) + tuple(range(2, 2 + nd))
    _ndarray.push_numpy(lambda dyv, out: _np_kernels.store(out, dyv.sum(axis=axes), req),
                        [dy], [db], 'Convolution_backward_bias')


_CONV_PARAMS = (
    Param('kernel', 'shape'),
    Param('stride', 'shape', ()),
    Param('dilate', 'shape', ()),
    Param('pad', 'shape', ()),
    Param('num_filter', 'int'),
    Param('num_group', 'int', 1),
    Param('workspace', 'int', 1024),
    Param('no_bias', 'bool', False),
    Param('cudnn_tune', 'str', None, optional=True),
    Param('cudnn_off', 'bool', False),
    Param('layout', 'str', None, optional=True),
)


@register_op
class Convolution(_ConvBase):
    """y[n, f] = Σ_c w[f, c] ⋆ x[n, c] + b[f] (cross-correlation, im2col + GEMM).

    Output size per axis: (in + 2·pad − dilate·(k − 1) − 1) // stride + 1.
    """
    name = 'Convolution'
    params = ParamSchema(*_CONV_PARAMS)

    def infer_shape(self, p, in_shapes):
        nd, stride, pad, dilate = self.geometry(p)
        shapes = list(in_shapes)
        dshape, out = shapes[0], None
        if dshape is not None:
            self.check_data(p, dshape, nd)
            c = dshape[1]
            if c % p.num_group or p.num_filter % p.num_group:
                raise self.shape_error('data', f'channels divisible by num_group={p.num_group}',
                                       dshape)
            shapes[1] = unify_shape(self, 'weight',
                                    (p.num_filter, c // p.num_group) + tuple(p.kernel),
                                    shapes[1])
            spatial = []
            for size, k, s, q, d in zip(dshape[2:], p.kernel, stride, pad, dilate):
                o = (size + 2 * q - d * (k - 1) - 1) // s + 1
                if o < 1:
                    raise self.shape_error('data', f'spatial size >= {d * (k - 1) + 1 - 2 * q}',
                                           dshape, f'kernel={p.kernel}, pad={pad}')
                spatial.append(o)
            out = (dshape[0], p.num_filter) + tuple(spatial)
        if not p.no_bias and (dshape is not None or shapes[2] is not None):
            # as MXNet: the bias is inferred with the data, not from num_filter alone
            shapes[2] = unify_shape(self, 'bias', (p.num_filter,), shapes[2])
        return shapes, [out], []

    def forward(self, p, is_train, req, ins, outs, aux):
        nd, stride, pad, dilate = self.geometry(p)
        x, w = ins[0], ins[1]
        b = None if p.no_bias else ins[2]
        if nd == 3:
            _push_conv(x, w, b, outs[0], stride, pad, dilate, p.num_group, req[0])
            return
        _conv.conv_forward(x.reshape(_as_2d(x.shape)), w.reshape(_as_2d(w.shape)), b,
                           outs[0].reshape(_as_2d(outs[0].shape)), _pair(stride),
                           _pad_pair(pad), _pair(dilate), p.num_group, req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        nd, stride, pad, dilate = self.geometry(p)
        x, w = ins[0], ins[1]
        db = None if p.no_bias or req[2] == 'null' else in_grads[2]
        req_b = 'null' if p.no_bias else req[2]
        if nd == 3:
            geometry = (stride, pad, dilate, p.num_group)
            _push_conv_weight(x, out_grads[0], w, in_grads[1], req[1], *geometry)
            _push_conv_data(out_grads[0], w, in_grads[0], req[0], *geometry)
            if db is not None:
                _push_bias_grad(out_grads[0], db, req_b, nd)
            return
        x4, w4 = x.reshape(_as_2d(x.shape)), w.reshape(_as_2d(w.shape))
        dy4 = out_grads[0].reshape(_as_2d(out_grads[0].shape))
        geometry = (_pair(stride), _pad_pair(pad), _pair(dilate), p.num_group)
        # two independent engine ops, so the data and the weight gradients can be computed
        # on two workers at once
        _conv.conv_backward(x4, w4, dy4, None, _view4(in_grads[1], req[1]), db, *geometry,
                            'null', req[1], req_b)
        _conv.conv_backward(x4, w4, dy4, _view4(in_grads[0], req[0]), None, None, *geometry,
                            req[0], 'null', 'null')


@register_op
class Deconvolution(_ConvBase):
    """The transpose (adjoint) of Convolution: y = convᵀ(x, w) + b.

    weight: (in_channels, num_filter / num_group, k...). Output size per axis:
    (in − 1)·stride − 2·pad + dilate·(k − 1) + 1 + adj, or ``target_shape`` when given.
    """
    name = 'Deconvolution'
    # MXNet's order (positional calls bind the same): adj and target_shape after pad
    params = ParamSchema(*_CONV_PARAMS[:4], Param('adj', 'shape', ()),
                         Param('target_shape', 'shape', ()), *_CONV_PARAMS[4:7],
                         Param('no_bias', 'bool', True), *_CONV_PARAMS[8:])

    def _out_spatial(self, p, dshape, nd, stride, pad, dilate):
        adj = _spatial(self.name, p, 'adj', p.adj, nd, 0)
        out = []
        for i, (size, k, s, q, d) in enumerate(zip(dshape[2:], p.kernel, stride, pad, dilate)):
            o = (size - 1) * s - 2 * q + d * (k - 1) + 1 + adj[i]
            if p.target_shape:
                o = p.target_shape[i]
            out.append(o)
        return tuple(out)

    def _effective_pad(self, p, dshape, nd, stride, pad, dilate):
        """With target_shape, MXNet derives the padding from the requested size."""
        if not p.target_shape:
            return pad
        out = []
        for size, k, s, q, d, t in zip(dshape[2:], p.kernel, stride, pad, dilate,
                                       p.target_shape):
            full = (size - 1) * s + d * (k - 1) + 1
            out.append(max(0, math.ceil((full - t) / 2)))
        return tuple(out)

    def infer_shape(self, p, in_shapes):
        nd, stride, pad, dilate = self.geometry(p)
        shapes = list(in_shapes)
        dshape, out = shapes[0], None
        if dshape is not None:
            self.check_data(p, dshape, nd)
            shapes[1] = unify_shape(self, 'weight', (dshape[1], p.num_filter // p.num_group)
                                    + tuple(p.kernel), shapes[1])
            out = (dshape[0], p.num_filter) + self._out_spatial(p, dshape, nd, stride, pad,
                                                               dilate)
            if any(o < 1 for o in out[2:]):
                raise self.shape_error('data', 'a positive output size', dshape)
        if not p.no_bias:
            shapes[2] = unify_shape(self, 'bias', (p.num_filter,), shapes[2])
        return shapes, [out], []

    def forward(self, p, is_train, req, ins, outs, aux):
        # y = conv_backward_data(dy=x): a conv from y's channels to x's channels
        nd, stride, pad, dilate = self.geometry(p)
        x, w, y = ins[0], ins[1], outs[0]
        pad = self._effective_pad(p, x.shape, nd, stride, pad, dilate)
        if nd == 3:
            _push_deconv(x, w, None if p.no_bias else ins[2], y, stride, pad, dilate,
                         p.num_group, req[0])
            return
        y4 = y.reshape(_as_2d(y.shape))
        _conv.conv_backward(y4, w.reshape(_as_2d(w.shape)), x.reshape(_as_2d(x.shape)),
                            y4, None, None, _pair(stride), _pad_pair(pad), _pair(dilate),
                            p.num_group, req[0], 'null', 'null')
        if not p.no_bias and req[0] != 'null':
            from mxcy import _ndarray
            from mxcy._ops import BINARY_OPS
            b = ins[2].reshape((1, p.num_filter) + (1,) * nd)
            _ndarray.binary(y, b, BINARY_OPS['add'], out=y)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        nd, stride, pad, dilate = self.geometry(p)
        x, w, dy = ins[0], ins[1], out_grads[0]
        pad = self._effective_pad(p, x.shape, nd, stride, pad, dilate)
        if nd == 3:
            geometry = (stride, pad, dilate, p.num_group)
            _push_conv(dy, w, None, in_grads[0], *geometry, req[0])
            # dw: the weight gradient of conv(dy, w) whose output gradient is x
            _push_conv_weight(dy, x, w, in_grads[1], req[1], *geometry)
        else:
            self._backward_2d(p, req, x, w, dy, in_grads, stride, pad, dilate)
        if not p.no_bias and req[2] != 'null':
            from mxcy.operator._compute import assign
            from mxcy.ndarray.reduce import sum as nd_sum
            axes = (0,) + tuple(range(2, 2 + nd))
            assign(in_grads[2], lambda out: nd_sum(dy, axis=axes, out=out), req[2])

    def _backward_2d(self, p, req, x, w, dy, in_grads, stride, pad, dilate):
        x4, w4, dy4 = (t.reshape(_as_2d(t.shape)) for t in (x, w, dy))
        # dx = conv(dy, w); dw = the weight gradient of that conv with dy as its input
        if req[0] != 'null':
            _conv.conv_forward(dy4, w4, None, _view4(in_grads[0]), _pair(stride),
                               _pad_pair(pad), _pair(dilate), p.num_group, req[0])
        _conv.conv_backward(dy4, w4, x4, None, _view4(in_grads[1], req[1]), None,
                            _pair(stride), _pad_pair(pad), _pair(dilate), p.num_group,
                            'null', req[1], 'null')


_POOL_TYPES = {'max': 0, 'avg': 1, 'sum': 2}


@register_op
class Pooling(OpSpec):
    """Max, average or sum pooling over windows of the spatial axes (1-D, 2-D or 3-D).

    Output size per axis: valid: (in + 2·pad − k) // stride + 1; full: ceil instead of
    floor. ``global_pool`` pools the whole plane. Average pooling divides by the window
    size including padding unless ``count_include_pad`` is false.
    """
    name = 'Pooling'
    params = ParamSchema(
        Param('kernel', 'shape', ()),
        Param('pool_type', 'str', 'max', choices=('max', 'avg', 'sum', 'lp')),
        Param('global_pool', 'bool', False),
        Param('cudnn_off', 'bool', False),
        Param('pooling_convention', 'str', 'valid', choices=('valid', 'full')),
        Param('stride', 'shape', ()),
        Param('pad', 'shape', ()),
        Param('p_value', 'int', None, optional=True),
        Param('count_include_pad', 'bool', None, optional=True),
        Param('layout', 'str', None, optional=True),
    )
    backward_needs = ('out_grads', 'inputs')

    def geometry(self, p, dshape):
        nd = len(dshape) - 2
        if nd not in (1, 2, 3):
            raise self.shape_error('data', '3-D (N, C, W), 4-D (N, C, H, W) or 5-D '
                                   '(N, C, D, H, W)', dshape)
        _check_layout(self.name, p.layout, nd)
        if p.global_pool:
            return tuple(dshape[2:]), (1,) * nd, (0,) * nd
        if len(p.kernel) != nd:
            raise ValueError(f"Pooling: kernel={p.kernel} must have {nd} values for data of "
                             f"shape {dshape} (or set global_pool=True)")
        stride = _spatial(self.name, p, 'stride', p.stride, nd, 1)
        pad = _spatial(self.name, p, 'pad', p.pad, nd, 0)
        if any(k < 1 for k in p.kernel) or any(s < 1 for s in stride):
            raise ValueError(f"Pooling: kernel and stride must be positive, got "
                             f"kernel={p.kernel} stride={stride}")
        return tuple(p.kernel), stride, pad

    def infer_shape(self, p, in_shapes):
        dshape = in_shapes[0]
        if dshape is None:
            return list(in_shapes), [None], []
        kernel, stride, pad = self.geometry(p, dshape)
        spatial = []
        for size, k, s, q in zip(dshape[2:], kernel, stride, pad):
            span = size + 2 * q - k
            if span < 0:
                raise self.shape_error('data', f'spatial size >= {k - 2 * q}', dshape,
                                       f'kernel={kernel}, pad={pad}')
            o = (span // s if p.pooling_convention == 'valid' else -(-span // s)) + 1
            spatial.append(o)
        return list(in_shapes), [tuple(dshape[:2]) + tuple(spatial)], []

    def _args(self, p, x):
        kernel, stride, pad = self.geometry(p, x.shape)
        include = True if p.count_include_pad is None else p.count_include_pad
        return _pair(kernel), _pair(stride), _pad_pair(pad), _POOL_TYPES[p.pool_type], include

    def _args_nd(self, p, x):
        kernel, stride, pad = self.geometry(p, x.shape)
        include = True if p.count_include_pad is None else p.count_include_pad
        convention = 'valid' if p.global_pool else p.pooling_convention
        return kernel, stride, pad, p.pool_type, convention, include, \
            2 if p.p_value is None else p.p_value

    @staticmethod
    def _numpy_path(p, x):
        """3-D pooling, lp pooling and dtypes the C kernel lacks (float16) run in NumPy."""
        return len(x.shape) == 5 or p.pool_type == 'lp' or \
            x.dtype not in (np.float32, np.float64)

    def forward(self, p, is_train, req, ins, outs, aux):
        x, y = ins[0], outs[0]
        if self._numpy_path(p, x):
            if req[0] != 'null':
                args = self._args_nd(p, x)
                _ndarray.push_numpy(
                    lambda xv, out: _np_kernels.store(out, _np_kernels.pool_forward(xv, *args),
                                                      req[0]), [x], [y], 'Pooling')
            return
        kernel, stride, pad, ptype, include = self._args(p, x)
        _conv.pool_forward(x.reshape(_as_2d(x.shape)), y.reshape(_as_2d(y.shape)), kernel,
                           stride, pad, ptype, include, req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        x, dy = ins[0], out_grads[0]
        if req[0] == 'null':
            return
        if self._numpy_path(p, x):
            args = self._args_nd(p, x)
            _ndarray.push_numpy(
                lambda xv, dyv, out: _np_kernels.store(
                    out, _np_kernels.pool_backward(xv, dyv, *args), req[0]),
                [x, dy], [in_grads[0]], 'Pooling_backward')
            return
        kernel, stride, pad, ptype, include = self._args(p, x)
        _conv.pool_backward(x.reshape(_as_2d(x.shape)), dy.reshape(_as_2d(dy.shape)),
                            in_grads[0].reshape(_as_2d(x.shape)), kernel, stride, pad,
                            ptype, include, req[0])


@register_op
class Pad(OpSpec):
    """Pad the spatial axes of a 4-D or 5-D array (MXNet's ``Pad``/``pad``).

    ``pad_width`` is flat (before_0, after_0, before_1, ...), zero for the first two axes;
    ``mode`` constant (``constant_value``), edge or reflect (NumPy's modes of those names).
    The gradient of an edge/reflect pad adds each padded element into the one it copies.
    """
    name = 'Pad'
    aliases = ('pad',)
    params = ParamSchema(Param('mode', 'str'), Param('pad_width', 'shape'),
                         Param('constant_value', 'float', 0.0))
    backward_needs = ('out_grads',)

    def pairs(self, p, dshape):
        ndim = len(dshape)
        if ndim not in (4, 5):
            raise ValueError(f"Pad: needs a 4-D or 5-D input, got shape {tuple(dshape)}")
        if p.mode not in ('constant', 'edge', 'reflect'):
            raise ValueError(f"Pad: mode must be 'constant', 'edge' or 'reflect', got "
                             f"{p.mode!r}")
        widths = p.pad_width
        if len(widths) != 2 * ndim or any(w < 0 for w in widths):
            raise ValueError(f"Pad: pad_width must hold {2 * ndim} non-negative ints for a "
                             f"{ndim}-D input, got {widths}")
        if any(widths[:4]):
            raise ValueError(f"Pad: the first two axes cannot be padded, got pad_width "
                             f"{widths}")
        pairs = tuple((widths[2 * i], widths[2 * i + 1]) for i in range(ndim))
        for i, (b, a) in enumerate(pairs):
            if p.mode == 'reflect' and (b or a) and (b >= dshape[i] or a >= dshape[i]):
                raise ValueError(f"Pad: reflect padding {(b, a)} must be smaller than axis "
                                 f"{i} of size {dshape[i]}")
            if p.mode == 'edge' and (b or a) and dshape[i] == 0:
                raise ValueError(f"Pad: edge padding needs a non-empty axis {i}")
        return pairs

    def infer_shape(self, p, in_shapes):
        dshape = in_shapes[0]
        if dshape is None:
            return list(in_shapes), [None], []
        pairs = self.pairs(p, dshape)
        return list(in_shapes), [tuple(d + b + a for d, (b, a) in zip(dshape, pairs))], []

    def forward(self, p, is_train, req, ins, outs, aux):
        if req[0] == 'null':
            return
        pairs, mode, value = self.pairs(p, ins[0].shape), p.mode, p.constant_value
        _ndarray.push_numpy(
            lambda xv, out: _np_kernels.store(out, _np_kernels.pad_forward(xv, pairs, mode,
                                                                           value), req[0]),
            [ins[0]], [outs[0]], 'Pad')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if req[0] == 'null':
            return
        pairs, mode = self.pairs(p, in_grads[0].shape), p.mode
        _ndarray.push_numpy(
            lambda dyv, out: _np_kernels.store(out, _np_kernels.pad_backward(dyv, pairs, mode),
                                               req[0]),
            [out_grads[0]], [in_grads[0]], 'Pad_backward')
