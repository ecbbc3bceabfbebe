"""Optimizer update operators by MXNet 1.x's names: ``sgd_update``, ``adam_update``, ...

Each op reads ``weight`` and ``grad``, updates its state arrays (``mom``, ``mean``,
``var``, ``weight32`` ...) **in place**, and writes the updated weight to its output:
``mx.nd.sgd_mom_update(w, g, mom, lr=0.1, out=w)`` is one step of SGD; without ``out``
the weight is left alone and a new array is returned, while the states still change
(as MXNet). The ``mp_`` forms take a float16 weight and grad, keep a float32 master copy
``weight32`` (updated in place; it and the states are float32) and write the float16
cast. The optimizer classes in ``mx.optimizer`` call these ops: each rule is written once.

Rules are NumPy functions over the arrays' memory, pushed as one engine op; SGD, SGD with
momentum and Adam on float32/float64 use the fused C kernels instead. ``clip_gradient``
(and ``clip_grad``, ``clip_weights``) <= 0 means no clipping, as MXNet's kernels.
Wrong shapes or dtypes raise ``MXNetError`` naming the op, the argument, what was
expected and what was given, before anything is pushed.

The multi-weight forms live in ``optimizer_multi_ops``; LAMB's two phases there too.
"""
import numpy as np

from mxcy._ndarray import NDArray, push_numpy
from mxcy._ops import push_optimizer_update
from mxcy.base import MXNetError
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op


class UpdateTypeError(MXNetError, TypeError):
    """An update op's argument has the wrong dtype (the message names op and argument)."""


def clip_(g, c):
    """Clip `g` in place to [-c, c] when c > 0."""
    if c > 0:
        np.clip(g, -c, c, out=g)
    return g


def f(name, default=None):
    """A float parameter (required when `default` is None)."""
    return Param(name, 'float') if default is None else Param(name, 'float', default)


COMMON = (f('wd', 0.0), f('rescale_grad', 1.0), f('clip_gradient', -1.0))
LAZY = (Param('lazy_update', 'bool', True),)


class UpdateOp(OpSpec):
    """One update op: ``args`` are its array arguments (weight first); with ``mp`` the
    arguments in ``f32_args`` are float32 whatever the weight's dtype."""
    args = ('weight', 'grad')
    f32_args = ()
    out_f32 = False             # the output is float32 (mp_lamb_update_phase1)
    scalar_args = ()            # arguments of shape (1,) (LAMB's norms)
    backward_needs = ()
    has_backward = False

    def arguments(self, p):
        return list(self.args)

    def infer_shape(self, p, in_shapes):
        names = self.arguments(p)
        want = self.weight_shapes(p, names, in_shapes)
        for name, shape, expect in zip(names, in_shapes, want):
            if shape is not None and expect is not None and tuple(shape) != expect:
                raise self.shape_error(name, expect, tuple(shape),
                                       "every array has the weight's shape"
                                       if expect != (1,) else 'a norm holds one value')
        return list(want), [self.out_shape(p, want)], []

    def weight_shapes(self, p, names, in_shapes):
        w = in_shapes[0]
        w = tuple(w) if w is not None else None
        return [(1,) if n in self.scalar_args else w for n in names]

    def out_shape(self, p, shapes):
        return shapes[0]

    def infer_type(self, p, in_types):
        names = self.arguments(p)
        wt = in_types[0]
        want = []
        for name, t in zip(names, in_types):
            expect = 'float32' if self.is_f32(name) else wt
            if t is not None and expect is not None and t != expect:
                why = ('the master copy and states of an mp_ update are float32' if
                       self.is_f32(name) else "every array has the weight's dtype")
                raise UpdateTypeError(f"{self.name}: argument '{name}' has dtype {t}, "
                                      f"expected {expect} ({why})")
            want.append(expect)
        return want, ['float32' if self.out_f32 else wt], []

    def is_f32(self, name):
        base, _, idx = name.rpartition('_')
        return (base if base and idx.isdigit() else name) in self.f32_args

    # ------------------------------------------------------------ compute
    def forward(self, p, is_train, req, ins, outs, aux):
        if req[0] == 'null':
            return
        self.compute(p, ins, outs[0])

    def compute(self, p, ins, out):
        """Default for the single-weight ops: `out` gets the weight, then the rule runs
        on it (the states in place)."""
        weight, grad, *states = ins
        if out is not weight:
            weight.copyto(out)
        if _fusable(out) and self.fused(p, out, grad, states):
            return
        rule, hyper = self.rule, self.hyper(p)
        push_numpy(lambda g, w, *s: rule(w, g, *s, **hyper), [grad], [out, *states],
                   self.name)

    def fused(self, p, weight, grad, states):
        """Push a fused C kernel for a float32/float64 `weight` when there is one."""
        return False

    def hyper(self, p):
        return {k: v for k, v in p.as_dict().items() if k != 'lazy_update'}


class MPUpdateOp(UpdateOp):
    """The ``mp_`` form of a rule: it runs on ``weight32`` (the last argument) with the
    gradient cast to float32; the output is ``weight32`` cast to the weight's dtype."""
    f32_args = ('mom', 'weight32')

    def compute(self, p, ins, out):
        grad, *states, weight32 = ins[1:]
        rule, hyper = self.rule, self.hyper(p)

        def run(g, o, w32, *s):
            rule(w32, g.astype(np.float32), *s, **hyper)
            o[...] = w32
        push_numpy(run, [grad], [out, weight32, *states], self.name)


# ---------------------------------------------------------------- the rules
def sgd(w, g, lr, wd, rescale_grad, clip_gradient, momentum=0.0, mom=None):
    """``w -= lr * (clip(rescale_grad * g) + wd * w)``, or with momentum
    ``mom = momentum * mom - lr * (...)``, ``w += mom``."""
    step = clip_(g * rescale_grad, clip_gradient)
    step += wd * w
    step *= lr
    if mom is None:
        w -= step
    else:
        mom *= momentum
        mom -= step
        w += mom


def nag(w, g, mom, lr, momentum, wd, rescale_grad, clip_gradient, from_updated=True):
    """``g = clip(rescale_grad * g) + wd * w; w += momentum * (momentum * mom - lr * g)
    - lr * g`` (the look-ahead step), then ``mom = momentum * mom - lr * (clip(...) +
    wd * weight)``, where MXNet 1.9.1 reads `weight` after it wrote the output: the
    updated weight when the update is in place (``out=weight``, and always for
    mp_nag_mom_update's master copy), the old one otherwise (`from_updated`)."""
    # NOTE: an MXNet quirk kept on purpose (the golden fixtures pin both cases); with
    # wd == 0 it is the textbook NAG.
    g = clip_(g * rescale_grad, clip_gradient)
    old = None if from_updated else w.copy()
    step = lr * (g + wd * w)
    w += momentum * (momentum * mom - step) - step
    mom *= momentum
    mom -= lr * (g + wd * (w if from_updated else old))


def adam(w, g, mean, var, lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient):
    """``g = clip(rescale_grad * g + wd * w)``; moving mean and variance;
    ``w -= lr * mean / (sqrt(var) + epsilon)`` (bias correction is the caller's lr)."""
    g = clip_(g * rescale_grad + wd * w, clip_gradient)
    mean *= beta1
    mean += (1 - beta1) * g
    var *= beta2
    var += (1 - beta2) * np.square(g)
    w -= lr * mean / (np.sqrt(var) + epsilon)


def rmsprop(w, g, n, lr, gamma1, epsilon, wd, rescale_grad, clip_gradient, clip_weights,
            gamma2=None, gs=None, delta=None):
    """``g = clip(rescale_grad * g + wd * w)``; ``n = (1 - gamma1) * g**2 + gamma1 * n``;
    plain: ``w -= lr * g / sqrt(n + epsilon)``; centered (Graves): also
    ``gs = (1 - gamma1) * g + gamma1 * gs``, ``delta = gamma2 * delta - lr * g /
    sqrt(n - gs**2 + epsilon)``, ``w += delta``; then ``clip(w, clip_weights)``."""
    g = clip_(g * rescale_grad + wd * w, clip_gradient)
    n *= gamma1
    n += (1 - gamma1) * np.square(g)
    if gs is None:
        w -= lr * g / np.sqrt(n + epsilon)
    else:
        gs *= gamma1
        gs += (1 - gamma1) * g
        delta *= gamma2
        delta -= lr * g / np.sqrt(n - np.square(gs) + epsilon)
        w += delta
    clip_(w, clip_weights)


def rmspropalex(w, g, n, gs, delta, gamma2, **kw):
    """Centered RMSProp (see ``rmsprop``)."""
    rmsprop(w, g, n, gamma2=gamma2, gs=gs, delta=delta, **kw)


def ftrl(w, g, z, n, lr, lamda1, beta, wd, rescale_grad, clip_gradient):
    """``g = clip(rescale_grad * g)``; ``z += g - (sqrt(n + g**2) - sqrt(n)) * w / lr``;
    ``n += g**2``; ``w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd)`` where
    ``|z| > lamda1``, else 0."""
    g = clip_(g * rescale_grad, clip_gradient)
    g2 = np.square(g)
    z += g - (np.sqrt(n + g2) - np.sqrt(n)) * w / lr
    n += g2
    w[...] = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + wd) * \
        (np.abs(z) > lamda1)


def ftml(w, g, d, v, z, lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_grad):
    """``g = clip(rescale_grad * g + wd * w)``; ``v = beta2 * v + (1 - beta2) * g**2``;
    ``d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)``;
    ``z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * w``; ``d = d_t``;
    ``w = -z / d_t``."""
    g = clip_(g * rescale_grad + wd * w, clip_grad)
    v *= beta2
    v += (1 - beta2) * np.square(g)
    d_t = (1 - beta1 ** t) / lr * (np.sqrt(v / (1 - beta2 ** t)) + epsilon)
    z *= beta1
    z += (1 - beta1) * g - (d_t - beta1 * d) * w
    d[...] = d_t
    w[...] = -z / d_t


def signsgd(w, g, lr, wd, rescale_grad, clip_gradient):
    """``w = (1 - lr * wd) * w - lr * sign(g)``."""
    w *= 1 - lr * wd
    w -= lr * np.sign(clip_(g * rescale_grad, clip_gradient))


def signum(w, g, mom, lr, momentum, wd, rescale_grad, clip_gradient, wd_lh):
    """``mom = momentum * mom - (1 - momentum) * (clip(rescale_grad * g) + wd * w)``;
    ``w = (1 - lr * wd_lh) * w + lr * sign(mom)``."""
    g = clip_(g * rescale_grad, clip_gradient)
    g += wd * w
    mom *= momentum
    mom -= (1 - momentum) * g
    w *= 1 - lr * wd_lh
    w += lr * np.sign(mom)


# ---------------------------------------------------------------- the operators
SGD_PARAMS = (f('lr'),) + COMMON + LAZY
MOM_PARAMS = (f('lr'), f('momentum', 0.0)) + COMMON


@register_op
class sgd_update(UpdateOp):
    """SGD: ``weight - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)``."""
    name = 'sgd_update'
    params = ParamSchema(*SGD_PARAMS)
    rule = staticmethod(sgd)

    def fused(self, p, weight, grad, states):
        push_optimizer_update('sgd_mom' if states else 'sgd', weight, grad, states,
                              p.lr, p.wd, p.rescale_grad, p.clip_gradient,
                              getattr(p, 'momentum', 0.0))
        return True


@register_op
class sgd_mom_update(sgd_update):
    """SGD with momentum: ``mom = momentum * mom - lr * (clip(rescale_grad * grad) +
    wd * weight)``; ``weight + mom``. `mom` is updated in place."""
    name = 'sgd_mom_update'
    args = ('weight', 'grad', 'mom')
    params = ParamSchema(*MOM_PARAMS, *LAZY)
    rule = staticmethod(lambda w, g, mom, **kw: sgd(w, g, mom=mom, **kw))


@register_op
class mp_sgd_update(MPUpdateOp):
    """``sgd_update`` on the float32 master copy `weight32`; writes its cast."""
    name = 'mp_sgd_update'
    args = ('weight', 'grad', 'weight32')
    params = ParamSchema(*SGD_PARAMS)
    rule = staticmethod(sgd)


@register_op
class mp_sgd_mom_update(MPUpdateOp):
    """``sgd_mom_update`` on the float32 master copy `weight32` (`mom` is float32)."""
    name = 'mp_sgd_mom_update'
    args = ('weight', 'grad', 'mom', 'weight32')
    params = ParamSchema(*MOM_PARAMS, *LAZY)
    rule = staticmethod(sgd_mom_update.rule)


@register_op
class nag_mom_update(UpdateOp):
    """Nesterov momentum (see ``nag`` for the exact order of MXNet 1.9.1)."""
    name = 'nag_mom_update'
    args = ('weight', 'grad', 'mom')
    params = ParamSchema(*MOM_PARAMS)
    rule = staticmethod(nag)

    def compute(self, p, ins, out):
        weight, grad, mom = ins
        in_place = out is weight
        if not in_place:
            weight.copyto(out)
        hyper = dict(self.hyper(p), from_updated=in_place)
        push_numpy(lambda g, w, m: nag(w, g, m, **hyper), [grad], [out, mom], self.name)


@register_op
class mp_nag_mom_update(MPUpdateOp):
    """``nag_mom_update`` on the float32 master copy `weight32` (`mom` is float32)."""
    name = 'mp_nag_mom_update'
    args = ('weight', 'grad', 'mom', 'weight32')
    params = ParamSchema(*MOM_PARAMS)
    rule = staticmethod(nag)


@register_op
class adam_update(UpdateOp):
    """Adam without bias correction (fold it into `lr`): ``g = clip(rescale_grad *
    grad + wd * weight)``; ``mean``/``var`` moving moments of g and g**2 (in place);
    ``weight - lr * mean / (sqrt(var) + epsilon)``."""
    name = 'adam_update'
    args = ('weight', 'grad', 'mean', 'var')
    params = ParamSchema(f('lr'), f('beta1', 0.9), f('beta2', 0.999), f('epsilon', 1e-8),
                         *COMMON, *LAZY)
    rule = staticmethod(adam)

    def fused(self, p, weight, grad, states):
        push_optimizer_update('adam', weight, grad, states, p.lr, p.wd,
                              p.rescale_grad, p.clip_gradient, beta1=p.beta1,
                              beta2=p.beta2, epsilon=p.epsilon)
        return True


@register_op
class rmsprop_update(UpdateOp):
    """RMSProp (Tieleman & Hinton): ``g = clip(rescale_grad * grad + wd * weight)``;
    ``n = (1 - gamma1) * g**2 + gamma1 * n``; ``weight - lr * g / sqrt(n + epsilon)``,
    clipped to ``clip_weights`` when > 0."""
    name = 'rmsprop_update'
    args = ('weight', 'grad', 'n')
    params = ParamSchema(f('lr'), f('gamma1', 0.95), f('epsilon', 1e-8), *COMMON,
                         f('clip_weights', -1.0))
    rule = staticmethod(rmsprop)


@register_op
class rmspropalex_update(UpdateOp):
    """Centered RMSProp (Graves, 2013): as ``rmsprop_update`` plus the mean gradient
    ``g`` and the step ``delta`` (both in place):
    ``delta = gamma2 * delta - lr * g / sqrt(n - gmean**2 + epsilon)``; ``weight + delta``."""
    name = 'rmspropalex_update'
    args = ('weight', 'grad', 'n', 'g', 'delta')
    params = ParamSchema(f('lr'), f('gamma1', 0.95), f('gamma2', 0.9), f('epsilon', 1e-8),
                         *COMMON, f('clip_weights', -1.0))
    rule = staticmethod(rmspropalex)


@register_op
class ftrl_update(UpdateOp):
    """FTRL-Proximal: states ``z``, ``n`` in place (see ``ftrl`` in this module)."""
    name = 'ftrl_update'
    args = ('weight', 'grad', 'z', 'n')
    params = ParamSchema(f('lr'), f('lamda1', 0.01), f('beta', 1.0), *COMMON)
    rule = staticmethod(ftrl)


@register_op
class ftml_update(UpdateOp):
    """FTML (Zheng & Kwok, 2017): states ``d``, ``v``, ``z`` in place, ``t`` the step
    (see ``ftml`` in this module). Its clipping parameter is ``clip_grad``, as MXNet."""
    name = 'ftml_update'
    args = ('weight', 'grad', 'd', 'v', 'z')
    params = ParamSchema(f('lr'), f('beta1', 0.6), f('beta2', 0.999), f('epsilon', 1e-8),
                         Param('t', 'int'), f('wd', 0.0), f('rescale_grad', 1.0),
                         f('clip_grad', -1.0))
    rule = staticmethod(ftml)


@register_op
class signsgd_update(UpdateOp):
    """signSGD: ``(1 - lr * wd) * weight - lr * sign(grad)``."""
    name = 'signsgd_update'
    params = ParamSchema(f('lr'), *COMMON)
    rule = staticmethod(signsgd)


@register_op
class signum_update(UpdateOp):
    """Signum: ``mom = momentum * mom - (1 - momentum) * (clip(rescale_grad * grad) +
    wd * weight)``; ``(1 - lr * wd_lh) * weight + lr * sign(mom)``."""
    name = 'signum_update'
    args = ('weight', 'grad', 'mom')
    params = ParamSchema(*MOM_PARAMS, f('wd_lh', 0.0))
    rule = staticmethod(signum)


def _fusable(weight):
    return isinstance(weight, NDArray) and weight.dtype in (np.float32, np.float64)
