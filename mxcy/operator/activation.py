"""Parametrised activations and dropout: LeakyReLU and Dropout (MXNet 1.x semantics).

LeakyReLU, by ``act_type`` (x the input, y the output):

* ``leaky``: y = x if x > 0 else slope·x
* ``elu``:   y = x if x > 0 else slope·(eˣ − 1)
* ``selu``:  y = λ·(x if x > 0 else α·(eˣ − 1)), α ≈ 1.6733, λ ≈ 1.0507
* ``gelu``:  y = x·Φ(x) = ½·x·(1 + erf(x/√2)) (the exact form, as MXNet 1.x)
* ``prelu``: y = x if x > 0 else γ·x, with a learned argument ``gamma`` of shape (C,)
  (one slope per channel, axis 1) or (1,) (one shared slope); gradients for data and gamma
* ``rrelu``: y = x if x > 0 else s·x, with s ~ U(lower_bound, upper_bound) drawn per
  element in training and s = (lower_bound + upper_bound) / 2 in inference. The slopes
  are the second output ``mask`` (visible, as in MXNet). NOTE: MXNet leaves the mask
  zero in inference; here it holds the slope used, so backward is right in both modes.

Dropout (``p``, ``mode``, ``axes``): in training (``is_train``, or always with
``mode='always'``) each element is kept with probability 1 − p and scaled by 1/(1 − p);
``axes`` lists axes along which one draw is shared (the mask has size 1 there). In
inference the output is the input. The hidden output ``mask`` holds the factor applied
to every element (0, 1/(1 − p), or 1 in inference) and is all that backward reads:
dx = dy·mask. With p = 1 everything is dropped (output and gradient 0; MXNet gives NaN).
Random draws go through ``push_random``, so they follow ``mx.random.seed``.
"""
import math

import numpy as np
from scipy.special import erf

from mxcy import _ndarray
from mxcy._ops import BINARY_OPS, GRAD_OPS, UNARY_OPS, push_grad
from mxcy.ndarray.random import push_random
from mxcy.operator._compute import assign, bit_select
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op

_MUL = BINARY_OPS['multiply']
_GELU, _GELU_GRAD = UNARY_OPS['gelu'], GRAD_OPS['gelu']
# gelu by the vector kernels of _vecmath.h (float16 forward: the float64 reference);
# the float dtypes where leaky's forward is computed in its output
_GELU_FWD_DTYPES = (np.float16, np.float32, np.float64)
_GELU_BWD_DTYPES = (np.float32, np.float64)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _store(out, value, req):
    """Write `value` into the view `out` according to req (inside an engine op)."""
    if req == 'add':
        out += value
    elif req != 'null':
        out[...] = value


def _negative_part_expm1(x):
    # expm1 only where it is used: avoids overflow warnings from the x > 0 branch
    return np.expm1(np.minimum(x, 0))


_FORWARD = {
    'leaky': lambda x, a: _leaky(x, a),
    'elu': lambda x, a: np.where(x > 0, x, a * _negative_part_expm1(x)),
    'selu': lambda x, a: _SELU_LAMBDA * np.where(x > 0, x, _SELU_ALPHA * _negative_part_expm1(x)),
    'gelu': lambda x, a: _gelu(x),
}


def _leaky(x, a):
    """np.where(x > 0, x, a x) by max(x, a x) (a < 1) or min (a > 1): the same values,
    NaN and signed zeros included, at a fifth of the cost, for a positive slope; others keep
    np.where (0 · inf would turn a max into NaN, a negative slope flips zeros' signs)."""
    if not a > 0:
        return np.where(x > 0, x, a * x)
    return (np.maximum if a <= 1 else np.minimum)(x, a * x)


def _leaky_into(x, a, y):
    """y := _leaky(x, a) for a > 0, computed in y (two passes, no temporary) unless y and
    x overlap (in place: a·x would overwrite x before the max reads it)."""
    if np.may_share_memory(x, y):
        y[...] = _leaky(x, a)
        return
    np.multiply(x, a, out=y, casting='unsafe')
    (np.maximum if a <= 1 else np.minimum)(x, y, out=y, casting='unsafe')


def _gelu(x):
    """½·x·(1 + erf(x/√2)), in place on one temporary (five passes, no extra arrays)."""
    t = np.multiply(x, _INV_SQRT2, dtype=np.result_type(x.dtype, np.float32))
    erf(t, out=t)
    t += 1
    t *= x
    t *= 0.5
    return t

def _leaky_backward(dy, x, dx, slope, req):
    """dx (req) dy if x > 0 else slope·dy, selected bit for bit by integer masks: NumPy's
    where/copyto with a mask branch per element (1.3 ms for 2^18 random signs, 0.3 here)."""
    positive = x > 0                   # before any write: dx may be x's buffer
    scaled = np.multiply(dy, slope, dtype=dx.dtype, casting='unsafe')
    out = dx if req != 'add' else np.empty_like(dx)
    bit_select(positive, dy.astype(dx.dtype, copy=False), scaled, out)
    if req == 'add':
        dx += out


# dy/dx from the input x (and the slope a)
_DERIVATIVE = {
    'leaky': lambda x, a: np.where(x > 0, 1, a).astype(x.dtype, copy=False),
    'elu': lambda x, a: np.where(x > 0, 1, a * np.exp(np.minimum(x, 0))).astype(x.dtype,
                                                                                 copy=False),
    'selu': lambda x, a: (_SELU_LAMBDA * np.where(
        x > 0, 1, _SELU_ALPHA * np.exp(np.minimum(x, 0)))).astype(x.dtype, copy=False),
    'gelu': lambda x, a: (0.5 * (1 + erf(x * _INV_SQRT2)) +
                          x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI).astype(x.dtype, copy=False),
}


def _channel_gamma(gamma, ndim):
    """gamma (C,) as (1, C, 1, ...) to broadcast over axis 1; (1,) stays a scalar slope."""
    if gamma.size == 1 or ndim < 2:
        return gamma.reshape(())
    return gamma.reshape((1, gamma.size) + (1,) * (ndim - 2))


@register_op
class LeakyReLU(OpSpec):
    """Leaky/parametric/randomized rectifiers, ELU, SELU and GELU (see the module doc)."""
    name = 'LeakyReLU'
    params = ParamSchema(
        Param('act_type', 'str', 'leaky',
              choices=('elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu')),
        Param('slope', 'float', 0.25),
        Param('lower_bound', 'float', 0.125),
        Param('upper_bound', 'float', 0.334),
    )
    # rrelu's backward reads its mask output; the others read the inputs (x, gamma)
    backward_needs = ('out_grads', 'inputs', 'outputs')

    def arguments(self, p):
        return ['data', 'gamma'] if p.act_type == 'prelu' else ['data']

    def outputs(self, p):
        return ['output', 'mask'] if p.act_type == 'rrelu' else ['output']

    def infer_shape(self, p, in_shapes):
        if p.act_type == 'rrelu' and not p.lower_bound <= p.upper_bound:
            raise ValueError(f"LeakyReLU: rrelu needs lower_bound <= upper_bound, got "
                             f"lower_bound={p.lower_bound}, upper_bound={p.upper_bound}")
        shapes = list(in_shapes)
        dshape = shapes[0]
        if p.act_type == 'prelu':
            gshape = shapes[1]
            if dshape is not None:
                channels = dshape[1] if len(dshape) >= 2 else 1
                if gshape is None:
                    shapes[1] = (channels,)
                elif tuple(gshape) not in ((channels,), (1,)):
                    raise self.shape_error('gamma', f"({channels},) or (1,)", tuple(gshape),
                                           'one slope per channel (axis 1 of data) or one '
                                           'shared slope')
            elif gshape is not None and len(gshape) != 1:
                raise self.shape_error('gamma', '(channels,) or (1,)', tuple(gshape))
        return shapes, [dshape] * len(self.outputs(p)), []

    # ------------------------------------------------------------ forward
    def forward(self, p, is_train, req, ins, outs, aux):
        kind = p.act_type
        if kind == 'rrelu':
            self._forward_rrelu(p, is_train, req, ins[0], outs[0], outs[1])
        elif kind == 'prelu':
            def run(x, gamma, y):
                slope = _channel_gamma(gamma, x.ndim)
                _store(y, np.where(x > 0, x, slope * x), req[0])
            _ndarray.push_numpy(run, [ins[0], ins[1]], [outs[0]], 'LeakyReLU')
        elif (kind == 'leaky' and p.slope > 0 and req[0] in ('write', 'inplace') and
              ins[0].dtype in _GELU_FWD_DTYPES):
            slope = p.slope
            _ndarray.push_numpy(lambda x, y: _leaky_into(x, slope, y), [ins[0]], [outs[0]],
                                'LeakyReLU')
        elif kind == 'gelu' and ins[0].dtype in _GELU_FWD_DTYPES:
            assign(outs[0], lambda out: _ndarray.unary(ins[0], _GELU, out=out), req[0])
        elif req[0] != 'null':
            fn, slope = _FORWARD[kind], p.slope
            _ndarray.push_numpy(lambda x, y: _store(y, fn(x, slope), req[0]), [ins[0]],
                                [outs[0]], 'LeakyReLU')

    def _forward_rrelu(self, p, is_train, req, x, y, mask):
        if is_train:
            lo, hi = p.lower_bound, p.upper_bound

            def run(gen, xv, yv, mv):
                draw_dtype = np.float64 if mv.dtype == np.float64 else np.float32
                mv[...] = lo + (hi - lo) * gen.random(mv.shape, dtype=draw_dtype)
                _store(yv, np.where(xv > 0, xv, mv * xv), req[0])
            push_random(run, [x], [y, mask], 'LeakyReLU')
        else:
            slope = (p.lower_bound + p.upper_bound) / 2

            def run(xv, yv, mv):
                mv[...] = slope
                _store(yv, np.where(xv > 0, xv, slope * xv), req[0])
            _ndarray.push_numpy(run, [x], [y, mask], 'LeakyReLU')

    # ------------------------------------------------------------ backward
    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        kind, dy, x = p.act_type, out_grads[0], ins[0]
        if kind == 'prelu':
            self._backward_prelu(req, dy, x, ins[1], in_grads)
            return
        if req[0] == 'null':
            return
        if kind == 'rrelu':
            def run(dyv, xv, mv, dx):
                _store(dx, dyv * np.where(xv > 0, 1, mv), req[0])
            _ndarray.push_numpy(run, [dy, x, outs[1]], [in_grads[0]], 'LeakyReLU_backward')
            return
        if kind == 'gelu' and x.dtype in _GELU_BWD_DTYPES and dy.dtype == x.dtype:
            push_grad(_GELU_GRAD, x, dy, in_grads[0], req[0])
            return
        if kind == 'leaky':
            _ndarray.push_numpy(lambda dyv, xv, dx: _leaky_backward(dyv, xv, dx, p.slope,
                                                                     req[0]),
                                [dy, x], [in_grads[0]], 'LeakyReLU_backward')
            return
        deriv, slope = _DERIVATIVE[kind], p.slope
        _ndarray.push_numpy(lambda dyv, xv, dx: _store(dx, dyv * deriv(xv, slope), req[0]),
                            [dy, x], [in_grads[0]], 'LeakyReLU_backward')

    def _backward_prelu(self, req, dy, x, gamma, in_grads):
        targets = [(i, g) for i, g in enumerate(in_grads[:2]) if req[i] != 'null']
        if not targets:
            return

        def run(dyv, xv, gv, *grads):
            positive = xv > 0
            for (i, _), out in zip(targets, grads):
                if i == 0:
                    _store(out, dyv * np.where(positive, 1, _channel_gamma(gv, xv.ndim)),
                           req[0])
                else:
                    contrib = np.where(positive, 0, xv * dyv)
                    if gv.size == 1 or xv.ndim < 2:
                        total = contrib.sum().reshape(gv.shape)
                    else:
                        total = contrib.sum(axis=(0,) + tuple(range(2, xv.ndim)))
                    _store(out, total, req[1])
        _ndarray.push_numpy(run, [dy, x, gamma], [g for _, g in targets],
                            'LeakyReLU_backward')


@register_op
class Dropout(OpSpec):
    """Randomly zero elements in training, scaling the kept ones by 1/(1 − p)."""
    name = 'Dropout'
    params = ParamSchema(
        Param('p', 'float', 0.5),
        Param('mode', 'str', 'training', choices=('training', 'always')),
        Param('axes', 'shape', ()),
        Param('cudnn_off', 'bool', False, optional=True),
    )
    backward_needs = ('out_grads', 'outputs')
    inplace_ok = True       # y = x·mask elementwise; backward reads only the mask

    def outputs(self, p):
        return ['output', 'mask']

    def num_visible_outputs(self, p):
        return 1

    def infer_shape(self, p, in_shapes):
        if not 0.0 <= p.p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got p={p.p}")
        dshape = in_shapes[0]
        if dshape is not None:
            bad = [a for a in p.axes if not -len(dshape) <= a < len(dshape)]
            if bad:
                raise self.shape_error('data', f"at least {max(abs(a) for a in bad) + 1} axes",
                                       tuple(dshape), f"axes={p.axes}")
        return list(in_shapes), [dshape, dshape], []

    def forward(self, p, is_train, req, ins, outs, aux):
        x, y, mask = ins[0], outs[0], outs[1]
        if not ((is_train or p.mode == 'always') and p.p > 0):
            _ndarray.full(mask.shape, 1, out=mask)
            if req[0] != 'null' and y is not x:
                assign(y, lambda out: out.__setitem__(slice(None), x), req[0])
            return
        keep = 1.0 - p.p
        axes = {a % x.ndim for a in p.axes}

        def run(gen, xv, yv, mv):
            draw_shape = tuple(1 if i in axes else n for i, n in enumerate(xv.shape))
            draw_dtype = np.float64 if mv.dtype == np.float64 else np.float32
            if keep > 0:
                kept = gen.random(draw_shape, dtype=draw_dtype) < keep
                mv[...] = kept * (1.0 / keep)
            else:
                mv[...] = 0
            _store(yv, xv * mv, req[0])
        push_random(run, [x], [y, mask], 'Dropout')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        dy, mask = out_grads[0], outs[1]
        assign(in_grads[0], lambda out: _ndarray.binary(dy, mask, _MUL, out=out), req[0])
