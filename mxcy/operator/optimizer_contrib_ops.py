"""MXNet 1.x's contrib optimizer updates: AdamW, multi-tensor AdamW and LAMB, group
AdaGrad, and the LARS coefficients ``multi_lars``.

``mx.nd.contrib.adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, ...)``
(and ``mp_``, ``multi_``, ``multi_mp_``) are MXNet's Python front ends over the
registered ops ``_adamw_update`` ... (`install_fronts` builds them for mx.nd.contrib and
mx.sym.contrib): `rescale_grad` is an array of one value (a number is made into one);
when it is 0, NaN or Inf the update is skipped and the weight and states are left as
they are. The rule (g the gradient)::

    g = clip(rescale_grad * g, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * g;  var = beta2 * var + (1 - beta2) * g**2
    weight -= eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)

``multi_lamb_update`` is LAMB's two phases per tensor in one op (see ``lamb``), with
per-tensor ``learning_rates``, ``wds`` and ``step_count``. ``group_adagrad_update`` keeps
one history value per row (``history`` has shape (rows, 1)). States change in place; the
outputs are the updated weights, as in ``optimizer_ops``.
"""
import math

import numpy as np

from mxcy._ndarray import push_numpy
from mxcy.base import MXNetError
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op
from mxcy.operator.optimizer_multi_ops import _floats, lamb_phase1
from mxcy.operator.optimizer_ops import UpdateOp, UpdateTypeError, clip_, f


# ---------------------------------------------------------------- the rules
def adamw(w, g, mean, var, rescale, lr, eta, beta1, beta2, epsilon, wd, clip_gradient):
    """One AdamW step in place (see the module docstring); skipped for a rescale_grad of
    0, NaN or Inf."""
    r = float(np.asarray(rescale).reshape(-1)[0])
    if r == 0.0 or not math.isfinite(r):
        return
    g = clip_(g.astype(mean.dtype) * r, clip_gradient)
    mean *= beta1
    mean += (1 - beta1) * g
    var *= beta2
    var += (1 - beta2) * np.square(g)
    w -= eta * (lr * mean / (np.sqrt(var) + epsilon) + wd * w)


def lamb(w, g, mean, var, lr, wd, t, beta1, beta2, epsilon, rescale_grad, lower_bound,
         upper_bound, clip_gradient, bias_correction, norm_of=None):
    """One LAMB step in place: ``g = clip(rescale_grad * g)``; moving ``mean``/``var``
    (bias-corrected by ``1 - beta**t`` when asked); ``r = mean / (sqrt(var) + epsilon) +
    wd * w``; ``r1 = norm(w)`` clamped to [lower_bound, upper_bound] (a bound <= 0 is
    off), ``r2 = norm(r)``; ``w -= lr * (r1 / r2) * r`` (ratio 1 when r1 or r2 is 0)."""
    r = np.empty_like(mean)         # the direction: lamb_update_phase1's rule
    lamb_phase1(g, w, mean, var, r, beta1, beta2, epsilon, t, bias_correction, wd,
                rescale_grad, clip_gradient)
    # NOTE: the mp_ form takes r1 from the float16 weight, as MXNet 1.9.1 does
    r1 = float(np.sqrt(np.square(w if norm_of is None else norm_of,
                                 dtype=np.float64).sum()))
    r2 = float(np.sqrt(np.square(r, dtype=np.float64).sum()))
    if lower_bound > 0:
        r1 = max(r1, lower_bound)
    if upper_bound > 0:
        r1 = min(r1, upper_bound)
    ratio = r1 / r2 if r1 != 0.0 and r2 != 0.0 else 1.0
    w -= lr * ratio * r


def group_adagrad(w, g, history, lr, rescale_grad, clip_gradient, epsilon):
    """``g = clip(rescale_grad * g)``; ``history += mean(g**2 over each row)``;
    ``w -= lr * g / sqrt(history + epsilon)`` (one rate per row)."""
    g = clip_(g * rescale_grad, clip_gradient)
    rows = g.reshape(g.shape[0], -1)
    history += np.square(rows).mean(axis=1, keepdims=True)
    div = rows / np.sqrt(history + epsilon)
    w -= lr * div.reshape(w.shape)


# ---------------------------------------------------------------- single-weight ops
_ADAMW = (f('lr'), f('eta'), f('beta1', 0.9), f('beta2', 0.999), f('epsilon', 1e-8),
          f('wd', 0.0), f('clip_gradient', -1.0))


class _RescaleArg(UpdateOp):
    """An update whose last argument ``rescale_grad`` is a one-value array of any float
    dtype (MXNet makes it float32 whatever the weight's dtype)."""
    scalar_args = ('rescale_grad',)

    def infer_type(self, p, in_types):
        names = self.arguments(p)
        at = names.index('rescale_grad')
        t = in_types[at]
        if t is not None and np.dtype(t).kind != 'f':
            raise UpdateTypeError(f"{self.name}: argument 'rescale_grad' has dtype {t}, "
                                  "expected a float dtype")
        ins, outs, aux = super().infer_type(p, in_types[:at] + [None] + in_types[at + 1:])
        ins[at] = t
        return ins, outs, aux


@register_op
class _adamw_update(_RescaleArg):
    """AdamW (decoupled weight decay): see the module docstring."""
    name = '_adamw_update'
    args = ('weight', 'grad', 'mean', 'var', 'rescale_grad')
    params = ParamSchema(*_ADAMW)

    def compute(self, p, ins, out):
        weight, grad, mean, var, rescale = ins
        if out is not weight:
            weight.copyto(out)
        hyper = p.as_dict()
        push_numpy(lambda g, r, w, m, v: adamw(w, g, m, v, r, **hyper), [grad, rescale],
                   [out, mean, var], self.name)


@register_op
class _mp_adamw_update(_RescaleArg):
    """AdamW on the float32 master copy `weight32` (`mean`, `var` float32); the output
    is its cast to the weight's dtype."""
    name = '_mp_adamw_update'
    args = ('weight', 'grad', 'mean', 'var', 'weight32', 'rescale_grad')
    f32_args = ('mean', 'var', 'weight32')
    params = ParamSchema(*_ADAMW)

    def compute(self, p, ins, out):
        weight, grad, mean, var, weight32, rescale = ins
        hyper = p.as_dict()

        def run(g, r, o, w32, m, v):
            adamw(w32, g.astype(np.float32), m, v, r, **hyper)
            o[...] = w32
        push_numpy(run, [grad, rescale], [out, weight32, mean, var], self.name)


@register_op
class group_adagrad_update(UpdateOp):
    """Group AdaGrad: one AdaGrad history value per row of the weight (see
    ``group_adagrad``). MXNet's CPU build runs it only for a row_sparse gradient; the
    rule here is that one, for every row of a dense gradient."""
    name = '_contrib_group_adagrad_update'
    args = ('weight', 'grad', 'history')
    params = ParamSchema(f('lr'), f('rescale_grad', 1.0), f('clip_gradient', -1.0),
                         f('epsilon', 1e-5))
    rule = staticmethod(group_adagrad)

    def weight_shapes(self, p, names, in_shapes):
        w = next((tuple(s) for s in in_shapes[:2] if s is not None), None)
        if w is not None and len(w) < 1:
            raise self.shape_error('weight', 'at least 1 dimension', w)
        return [w, w, (w[0], 1) if w is not None else None]


# ---------------------------------------------------------------- multi-tensor ops
class _Grouped(UpdateOp):
    """Updates of ``count`` weights in one op: groups of ``group`` arguments per weight,
    then the ``tail`` arguments; one output (the updated weight) per group."""
    group = ('weight', 'grad', 'mean', 'var')
    tail = ()
    count = 'num_weights'
    mp = False
    mp_norm = False         # the rule's weight norm is the low-precision weight's

    def arguments(self, p):
        n = getattr(p, self.count)
        if n < 1:
            raise MXNetError(f"{self.name}: {self.count} must be >= 1, got {n}")
        return [f'{a}_{i}' for i in range(n) for a in self.group] + list(self.tail)

    def outputs(self, p):
        return [f'output_{i}' for i in range(getattr(p, self.count))]

    def groups(self, p, items):
        k, n = len(self.group), getattr(p, self.count)
        return [items[i * k:(i + 1) * k] for i in range(n)], items[n * k:]

    def infer_shape(self, p, in_shapes):
        groups, tail = self.groups(p, list(in_shapes))
        want = []
        for i, group in enumerate(groups):
            shape = next((tuple(s) for s in group if s is not None), None)
            for name, s in zip(self.group, group):
                if s is not None and tuple(s) != shape:
                    raise self.shape_error(f'{name}_{i}', shape, tuple(s),
                                           f"every array of weight {i} has its shape")
            want += [shape] * len(group)
        for name, s in zip(self.tail, tail):
            if s is not None and tuple(s) != (1,):
                raise self.shape_error(name, (1,), tuple(s), 'it holds one value')
            want.append((1,))
        return want, [want[i * len(self.group)] for i in range(len(groups))], []

    def infer_type(self, p, in_types):
        groups, tail = self.groups(p, list(in_types))
        want, outs = [], []
        for i, group in enumerate(groups):
            wt = group[0]
            for name, t in zip(self.group, group):
                expect = 'float32' if self.mp and name not in ('weight', 'grad') else wt
                if t is not None and expect is not None and t != expect:
                    raise UpdateTypeError(f"{self.name}: argument '{name}_{i}' has dtype "
                                          f"{t}, expected {expect}")
                want.append(expect)
            outs.append(wt)
        return want + list(tail), outs, []

    def forward(self, p, is_train, req, ins, outs, aux):
        groups, tail = self.groups(p, list(ins))
        for i, (group, out) in enumerate(zip(groups, outs)):
            if req[i] != 'null':
                self.update_one(p, i, group, tail, out)

    def update_one(self, p, i, group, tail, out):
        weight, grad, *states = group
        if self.mp:
            *states, master = states
        elif out is not weight:
            weight.copyto(out)
        rule, hyper = self.rule, self.hyper_of(p, i)
        mp = self.mp

        low = [weight] if self.mp_norm else []

        def run(g, *rest):
            norm = {'norm_of': rest[0]} if low else {}
            rest = rest[len(low):]
            extra, rest = rest[:len(tail)], rest[len(tail):]
            o = rest[0]
            if mp:
                w, st = rest[1], rest[2:]
                rule(w, g.astype(np.float32), *st, *extra, **hyper, **norm)
                o[...] = w
            else:
                rule(o, g, *rest[1:], *extra, **hyper)
        writes = [out] + ([master] if self.mp else []) + list(states)
        push_numpy(run, [grad] + low + list(tail), writes, self.name)


class _MultiAdamW(_Grouped):
    tail = ('rescale_grad',)
    params = ParamSchema(Param('lrs', 'any'), f('beta1', 0.9), f('beta2', 0.999),
                         f('epsilon', 1e-8), Param('wds', 'any'), Param('etas', 'any'),
                         f('clip_gradient', -1.0), Param('num_weights', 'int', 1))

    def hyper_of(self, p, i):
        n = p.num_weights
        return {'lr': _floats(self.name, 'lrs', p.lrs, n)[i],
                'wd': _floats(self.name, 'wds', p.wds, n)[i],
                'eta': _floats(self.name, 'etas', p.etas, n)[i], 'beta1': p.beta1,
                'beta2': p.beta2, 'epsilon': p.epsilon, 'clip_gradient': p.clip_gradient}

    def infer_type(self, p, in_types):
        ins, outs, aux = super().infer_type(p, in_types)
        t = ins[-1]
        if t is not None and np.dtype(t).kind != 'f':
            raise UpdateTypeError(f"{self.name}: argument 'rescale_grad' has dtype {t}, "
                                  "expected a float dtype")
        return ins, outs, aux

    @staticmethod
    def rule(w, g, mean, var, rescale, **hyper):
        adamw(w, g, mean, var, rescale, **hyper)


@register_op
class _multi_adamw_update(_MultiAdamW):
    """AdamW on ``num_weights`` (weight, grad, mean, var) groups, each with its own
    ``lrs[i]``, ``wds[i]``, ``etas[i]``; one `rescale_grad` array for all."""
    name = '_multi_adamw_update'


@register_op
class _multi_mp_adamw_update(_MultiAdamW):
    """``_multi_adamw_update`` over (weight, grad, mean, var, weight32) groups."""
    name = '_multi_mp_adamw_update'
    group = ('weight', 'grad', 'mean', 'var', 'weight32')
    mp = True


class _MultiLamb(_Grouped):
    count = 'num_tensors'
    params = ParamSchema(Param('learning_rates', 'any'), f('beta1', 0.9),
                         f('beta2', 0.999), f('epsilon', 1e-6), Param('wds', 'any'),
                         f('rescale_grad', 1.0), f('lower_bound', -1.0),
                         f('upper_bound', -1.0), f('clip_gradient', -1.0),
                         Param('bias_correction', 'bool', True),
                         Param('step_count', 'any'), Param('num_tensors', 'int', 1))
    rule = staticmethod(lamb)

    def hyper_of(self, p, i):
        n = p.num_tensors
        hyper = {k: v for k, v in p.as_dict().items()
                 if k not in ('learning_rates', 'wds', 'step_count', 'num_tensors')}
        steps = _floats(self.name, 'step_count', p.step_count, n)
        if steps[i] < 1 or steps[i] != int(steps[i]):
            raise MXNetError(f"{self.name}: step_count[{i}] must be an integer >= 1, "
                             f"got {steps[i]}")
        return dict(hyper, lr=_floats(self.name, 'learning_rates', p.learning_rates, n)[i],
                    wd=_floats(self.name, 'wds', p.wds, n)[i], t=int(steps[i]))


@register_op
class _multi_lamb_update(_MultiLamb):
    """LAMB on ``num_tensors`` (weight, grad, mean, var) groups (see ``lamb``)."""
    name = '_multi_lamb_update'


@register_op
class _multi_mp_lamb_update(_MultiLamb):
    """``_multi_lamb_update`` over (weight, grad, mean, var, weight32) groups."""
    name = '_multi_mp_lamb_update'
    group = ('weight', 'grad', 'mean', 'var', 'weight32')
    mp = True
    mp_norm = True


# ---------------------------------------------------------------- LARS
@register_op
class multi_lars(UpdateOp):
    """The LARS learning rates from sums of squares: per i, ``lrs[i] * eta * w /
    (g * rescale_grad + wds[i] * w + eps)`` with ``w = sqrt(weights_sum_sq[i])``,
    ``g = sqrt(grads_sum_sq[i])``; ``lrs[i]`` unchanged where either sum is 0."""
    name = 'multi_lars'
    args = ('lrs', 'weights_sum_sq', 'grads_sum_sq', 'wds')
    params = ParamSchema(f('eta'), f('eps'), f('rescale_grad', 1.0))

    def weight_shapes(self, p, names, in_shapes):
        n = next((tuple(s) for s in in_shapes if s is not None), None)
        if n is not None and len(n) != 1:
            raise self.shape_error('lrs', '(num_weights,)', n, 'all four are 1-D')
        return [n] * 4

    def compute(self, p, ins, out):
        eta, eps, rescale = p.eta, p.eps, p.rescale_grad

        def run(lrs, wsq, gsq, wds, o):
            w, g = np.sqrt(wsq), np.sqrt(gsq)
            ok = (wsq > 0) & (gsq > 0)
            with np.errstate(divide='ignore', invalid='ignore'):
                lars = lrs * eta * w / (g * rescale + wds * w + eps)
            o[...] = np.where(ok, lars, lrs)
        push_numpy(run, list(ins), [out], self.name)


# ---------------------------------------------------------------- front ends
def _rescale(F, value, like):
    if isinstance(value, (int, float)):
        if F.__name__.startswith('mxcy.symbol'):
            from mxcy.symbol import full
            return full(shape=(1,), val=value)
        from mxcy.ndarray import full
        return full((1,), value, ctx=getattr(like, 'context', None))
    return value


def install_fronts(namespace, F, multi=True):
    """Put MXNet's front ends of the AdamW/LAMB ops into `namespace` (mx.nd.contrib or
    mx.sym.contrib's globals); `F` is the module holding the generated ops (mx.nd or
    mx.sym). `multi`: also the multi-tensor forms (MXNet has them in mx.nd only)."""
    def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9,
                     beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None,
                     name=None, **kwargs):
        """AdamW step (see mxcy.operator.optimizer_contrib_ops)."""
        return F._adamw_update(weight, grad, mean, var, _rescale(F, rescale_grad, weight),
                               lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon,
                               wd=wd, clip_gradient=clip_gradient, out=out, name=name,
                               **kwargs)

    def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta,
                        beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1,
                        out=None, name=None, **kwargs):
        """AdamW step on the float32 master copy weight32."""
        return F._mp_adamw_update(weight, grad, mean, var, weight32,
                                  _rescale(F, rescale_grad, weight), lr=lr, eta=eta,
                                  beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                  clip_gradient=clip_gradient, out=out, name=name,
                                  **kwargs)

    def _lists(op, **lists):
        sizes = {k: len(v) for k, v in lists.items()}
        if len(set(sizes.values())) != 1:
            raise MXNetError(f"{op}: the lists must be equally long, got {sizes}")
        return [a for group in zip(*lists.values()) for a in group]

    def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas,
                           out=None, name=None, size=0, **kwargs):
        """AdamW on lists of weights, each with its own lr, wd and eta."""
        flat = _lists('multi_adamw_update', weights=weights, grads=grads, mean=mean,
                      var=var)
        return F._multi_adamw_update(*flat, _rescale(F, rescale_grad, weights[0]),
                                     num_weights=size or len(weights), lrs=lrs, wds=wds,
                                     etas=etas, out=out, name=name, **kwargs)

    def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs,
                              wds, etas, out=None, name=None, size=0, **kwargs):
        """multi_adamw_update on float32 master copies weights32."""
        flat = _lists('multi_mp_adamw_update', weights=weights, grads=grads, mean=mean,
                      var=var, weights32=weights32)
        return F._multi_mp_adamw_update(*flat, _rescale(F, rescale_grad, weights[0]),
                                        num_weights=size or len(weights), lrs=lrs,
                                        wds=wds, etas=etas, out=out, name=name, **kwargs)

    def multi_lamb_update(weights, grads, mean, var, step_count, lrs, wds, out=None,
                          num_tensors=0, **kwargs):
        """LAMB on lists of weights, each with its own step count, lr and wd."""
        flat = _lists('multi_lamb_update', weights=weights, grads=grads, mean=mean,
                      var=var)
        return F._multi_lamb_update(*flat, num_tensors=num_tensors or len(weights),
                                    step_count=step_count, learning_rates=lrs, wds=wds,
                                    out=out, **kwargs)

    def multi_mp_lamb_update(weights, grads, mean, var, weights32, step_count, lrs, wds,
                             out=None, num_tensors=0, **kwargs):
        """multi_lamb_update on float32 master copies weights32."""
        flat = _lists('multi_mp_lamb_update', weights=weights, grads=grads, mean=mean,
                      var=var, weights32=weights32)
        return F._multi_mp_lamb_update(*flat, num_tensors=num_tensors or len(weights),
                                       step_count=step_count, learning_rates=lrs,
                                       wds=wds, out=out, **kwargs)

    fronts = [adamw_update, mp_adamw_update]
    if multi:
        fronts += [multi_adamw_update, multi_mp_adamw_update, multi_lamb_update,
                   multi_mp_lamb_update]
    for fn in fronts:
        namespace[fn.__name__] = fn
    return [fn.__name__ for fn in fronts]


# ---------------------------------------------------------------- reset_arrays
@register_op
class reset_arrays(UpdateOp):
    """Set each of the ``num_arrays`` inputs to zero, in place; no outputs (MXNet's
    multi-precision helper). ``mx.nd.reset_arrays`` is the hand-written function in
    mxcy.ndarray.extra; this record gives ``mx.sym.reset_arrays``."""
    name = 'reset_arrays'
    variadic = 'num_arrays'
    params = ParamSchema(Param('num_arrays', 'int'))

    def arguments(self, p):
        return [f'data_{i}' for i in range(p.num_arrays)]

    def outputs(self, p):
        return []

    def infer_shape(self, p, in_shapes):
        return list(in_shapes), [], []

    def infer_type(self, p, in_types):
        return list(in_types), [], []

    def forward(self, p, is_train, req, ins, outs, aux):
        for a in ins:
            a[:] = 0
