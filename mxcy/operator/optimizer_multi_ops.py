"""Multi-weight SGD updates and LAMB's two phases (MXNet 1.x names).

``multi_sgd_update(w0, g0, w1, g1, ..., lrs=(...), wds=(...), num_weights=n, out=[w0,
w1, ...])`` is ``sgd_update`` on each pair with its own ``lrs[i]``/``wds[i]``; the
``_mom`` forms take ``(weight, grad, mom)`` groups, the ``mp_`` forms add ``weight32``
(``(weight, grad, [mom,] weight32)``); the ``preloaded_`` forms take the rates as two
trailing arrays ``lrs`` and ``wds`` of ``num_weights`` values instead of parameters.
There are ``num_weights`` outputs, the updated weights; states change in place.

LAMB: ``lamb_update_phase1`` updates ``mean``/``var`` in place and returns the direction
``g``; the caller takes the norms ``r1 = norm(weight)``, ``r2 = norm(g)`` and
``lamb_update_phase2`` returns ``weight - lr * (r1 / r2) * g`` (ratio 1 when a norm is 0;
r1 first clamped to ``lower_bound``/``upper_bound`` when they are >= 0).
"""
import ast

import numpy as np

from mxcy._ndarray import push_numpy
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op
from mxcy.operator.optimizer_ops import (MPUpdateOp, UpdateOp, clip_, f, sgd,
                                         sgd_mom_update)


def _floats(op, name, value, n):
    """A tuple of `n` floats from a tuple/list or its string form."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            pass
    if isinstance(value, (int, float)):
        value = (value,)
    try:
        out = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        out = None
    if out is None or len(out) != n:
        from mxcy.base import MXNetError
        raise MXNetError(f"{op}: parameter '{name}' must hold num_weights={n} numbers, "
                         f"got {value!r}")
    return out


class _Multi(UpdateOp):
    group = ('weight', 'grad')
    preloaded = False
    rule = staticmethod(sgd)

    def arguments(self, p):
        names = [f'{a}_{i}' for i in range(p.num_weights) for a in self.group]
        return names + (['lrs', 'wds'] if self.preloaded else [])

    def outputs(self, p):
        return [f'output_{i}' for i in range(p.num_weights)]

    def infer_shape(self, p, in_shapes):
        names = self.arguments(p)
        k = len(self.group)
        want = []
        for i, (name, shape) in enumerate(zip(names, in_shapes)):
            if name in ('lrs', 'wds'):
                expect = (p.num_weights,)
            else:
                expect = in_shapes[i - i % k]
                expect = tuple(expect) if expect is not None else None
            if shape is not None and expect is not None and tuple(shape) != expect:
                raise self.shape_error(name, expect, tuple(shape))
            want.append(expect)
        return want, [want[i * k] for i in range(p.num_weights)], []

    def infer_type(self, p, in_types):
        names = self.arguments(p)
        k = len(self.group)
        want, outs = [], []
        for i, (name, t) in enumerate(zip(names, in_types)):
            wt = in_types[i - i % k] if name not in ('lrs', 'wds') else None
            expect = 'float32' if self.is_f32(name) else wt
            if t is not None and expect is not None and t != expect:
                from mxcy.operator.optimizer_ops import UpdateTypeError
                raise UpdateTypeError(f"{self.name}: argument '{name}' has dtype {t}, "
                                      f"expected {expect}")
            want.append(expect if expect is not None else t)
        outs = [in_types[i * k] for i in range(p.num_weights)]
        return want, outs, []

    def compute_all(self, p, ins, outs):
        n, k = p.num_weights, len(self.group)
        hyper = {'rescale_grad': p.rescale_grad, 'clip_gradient': p.clip_gradient}
        if 'momentum' in p.as_dict():
            hyper['momentum'] = p.momentum
        rates = None
        if not self.preloaded:
            rates = list(zip(_floats(self.name, 'lrs', p.lrs, n),
                             _floats(self.name, 'wds', p.wds, n)))
        for i in range(n):
            group = ins[i * k:(i + 1) * k]
            self.compute_one(hyper, group, outs[i], rates and rates[i],
                             ins[n * k:] if self.preloaded else None, i)

    def forward(self, p, is_train, req, ins, outs, aux):
        self.compute_all(p, ins, outs)

    def compute_one(self, hyper, group, out, rate, tables, i):
        weight, grad, *states = group
        mp = isinstance(self, MPUpdateOp)
        if mp:
            *states, weight32 = states
        elif out is not weight:
            weight.copyto(out)
        rule = self.rule

        def run(g, *rest):
            if tables is not None:
                lrs, wds, *rest = rest
                lr, wd = float(lrs[i]), float(wds[i])
            else:
                lr, wd = rate
            if mp:
                o, w32, *s = rest
                rule(w32, g.astype(np.float32), *s, lr=lr, wd=wd, **hyper)
                o[...] = w32
            else:
                rule(rest[0], g, *rest[1:], lr=lr, wd=wd, **hyper)
        writes = [out] + ([weight32] if mp else []) + list(states)
        push_numpy(run, [grad] + (list(tables) if tables is not None else []), writes,
                   self.name)


_N = Param('num_weights', 'int', 1)
_RATES = (Param('lrs', 'any'), Param('wds', 'any'))
_RS = (f('rescale_grad', 1.0), f('clip_gradient', -1.0))
_MOM = (f('momentum', 0.0),)


def _declare(name, group, mom, mp, preloaded):
    params = (() if preloaded else _RATES) + (_MOM if mom else ()) + _RS + (_N,)
    bases = (MPUpdateOp, _Multi) if mp else (_Multi,)
    doc = (f"{'Preloaded ' if preloaded else ''}multi-weight "
           f"{'mp_' if mp else ''}sgd{'_mom' if mom else ''}_update over "
           f"{'(' + ', '.join(group) + ')'} groups (see the module docstring).")
    klass = type(name, bases, {'name': name, 'group': group, 'preloaded': preloaded,
                               'params': ParamSchema(*params), '__doc__': doc,
                               'rule': staticmethod(sgd_mom_update.rule if mom else sgd)})
    register_op(klass)
    return klass


for _pre in (False, True):
    _prefix = 'preloaded_' if _pre else ''
    _declare(_prefix + 'multi_sgd_update', ('weight', 'grad'), False, False, _pre)
    _declare(_prefix + 'multi_sgd_mom_update', ('weight', 'grad', 'mom'), True, False, _pre)
    _declare(_prefix + 'multi_mp_sgd_update', ('weight', 'grad', 'weight32'), False, True,
             _pre)
    _declare(_prefix + 'multi_mp_sgd_mom_update', ('weight', 'grad', 'mom', 'weight32'),
             True, True, _pre)


# ---------------------------------------------------------------- LAMB
def lamb_phase1(g, w, mean, var, out, beta1, beta2, epsilon, t, bias_correction, wd,
                rescale_grad, clip_gradient):
    """``g = clip(rescale_grad * g)``; moving ``mean``/``var``; with bias correction
    ``m / (1 - beta1**t)``, ``v / (1 - beta2**t)``; ``out = m / (sqrt(v) + epsilon) +
    wd * w``."""
    g = clip_(g.astype(mean.dtype) * rescale_grad, clip_gradient)
    mean *= beta1
    mean += (1 - beta1) * g
    var *= beta2
    var += (1 - beta2) * np.square(g)
    m, v = mean, var
    if bias_correction:
        m = mean / (1 - beta1 ** t)
        v = var / (1 - beta2 ** t)
    out[...] = m / (np.sqrt(v) + epsilon) + wd * w


def lamb_phase2(g, r1, r2, w, lr, lower_bound, upper_bound):
    """``w -= lr * ratio * g``, ``ratio = r1 / r2`` (1 when either is 0)."""
    r1, r2 = float(r1[0]), float(r2[0])
    if lower_bound >= 0:
        r1 = max(r1, lower_bound)
    if upper_bound >= 0:
        r1 = min(r1, upper_bound)
    ratio = r1 / r2 if r1 != 0.0 and r2 != 0.0 else 1.0
    w -= lr * ratio * g


_PHASE1 = ParamSchema(f('beta1', 0.9), f('beta2', 0.999), f('epsilon', 1e-6),
                      Param('t', 'int'), Param('bias_correction', 'bool', True), f('wd'),
                      f('rescale_grad', 1.0), f('clip_gradient', -1.0))
_PHASE2 = ParamSchema(f('lr'), f('lower_bound', -1.0), f('upper_bound', -1.0))


@register_op
class lamb_update_phase1(UpdateOp):
    """LAMB phase 1: updates `mean`, `var` in place; returns the direction ``g``."""
    name = 'lamb_update_phase1'
    args = ('weight', 'grad', 'mean', 'var')
    params = _PHASE1

    def compute(self, p, ins, out):
        weight, grad, mean, var = ins[:4]
        master = ins[4] if len(ins) > 4 else weight
        hyper = p.as_dict()
        push_numpy(lambda g, w, m, v, o: lamb_phase1(g, w, m, v, o, **hyper),
                   [grad, master], [mean, var, out], self.name)


@register_op
class mp_lamb_update_phase1(lamb_update_phase1):
    """LAMB phase 1 on the float32 master copy `weight32`; ``g`` is float32."""
    name = 'mp_lamb_update_phase1'
    args = ('weight', 'grad', 'mean', 'var', 'weight32')
    f32_args = ('mean', 'var', 'weight32')
    out_f32 = True


@register_op
class lamb_update_phase2(UpdateOp):
    """LAMB phase 2: ``weight - lr * (r1 / r2) * g`` (see the module docstring)."""
    name = 'lamb_update_phase2'
    args = ('weight', 'g', 'r1', 'r2')
    scalar_args = ('r1', 'r2')
    params = _PHASE2

    def compute(self, p, ins, out):
        weight, g, r1, r2 = ins[:4]
        hyper = p.as_dict()
        if len(ins) > 4:
            # mp: the step from the master copy, cast into out; as MXNet 1.9.1, weight32
            # itself is left alone (the caller copies the result back into it)
            def run(g, r1, r2, w32, o):
                w = w32.copy()
                lamb_phase2(g, r1, r2, w, **hyper)
                o[...] = w
            push_numpy(run, [g, r1, r2, ins[4]], [out], self.name)
            return
        if out is not weight:
            weight.copyto(out)
        push_numpy(lambda g, r1, r2, w: lamb_phase2(g, r1, r2, w, **hyper), [g, r1, r2],
                   [out], self.name)


@register_op
class mp_lamb_update_phase2(lamb_update_phase2):
    """LAMB phase 2 on the float32 master copy `weight32`; writes its cast."""
    name = 'mp_lamb_update_phase2'
    args = ('weight', 'g', 'r1', 'r2', 'weight32')
    f32_args = ('g', 'r1', 'r2', 'weight32')
