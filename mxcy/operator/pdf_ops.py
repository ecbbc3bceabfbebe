"""Densities of MXNet's samplers: ``random_pdf_<dist>(sample, params..., is_log)``
(registered as ``_random_pdf_<dist>``), in NumPy/SciPy with gradients.

The parameters have a shape P; sample has P + E (one set of draws per parameter element)
and the output sample's shape (the pdf, or log-pdf when is_log, of each draw). For the
Dirichlet, alpha is P + (K,), sample P + E + (K,) and the output P + E. gamma's beta is
the rate; the uniform density is 0 outside [low, high] (NOTE: MXNet 1.9.1 returns
1 / (high - low) there too, a wrong density); generalized_negative_binomial(mu, alpha) is
the negative binomial with
k = 1/alpha and p = 1/(1 + alpha mu). Gradients are d log p (times p unless is_log) for
the sample (zero for the discrete distributions) and each parameter (summed over E).
"""
import numpy as np
from scipy import special

from mxcy import _ndarray
from mxcy._npkernels import uniform_pdf_select
from mxcy.operator._compute import bit_select
from mxcy.operator._numpy_op import NumpyOp
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op


def _nb_logp(x, k, p):
    return (special.gammaln(x + k) - special.gammaln(x + 1) - special.gammaln(k) +
            k * np.log(p) + x * np.log1p(-p))


def _nb_grads(x, k, p):
    return (special.digamma(x + k) - special.digamma(k) + np.log(p), k / p - x / (1 - p))


def _gnb(x, mu, alpha):
    k, p = 1 / alpha, 1 / (1 + alpha * mu)
    dk, dp = _nb_grads(x, k, p)
    dp_dmu, dp_dalpha = -alpha * p * p, -mu * p * p
    return _nb_logp(x, k, p), [0 * x, dp * dp_dmu, dk * (-k * k) + dp * dp_dalpha]


# dist: (parameter names, f(x, *params) -> (log p, [d/dx, d/dparam...] or a function
# returning that list, so that the forward does not compute the gradients))
DENSITIES = {
    'normal': (('mu', 'sigma'), lambda x, m, s: (
        -0.5 * np.log(2 * np.pi) - np.log(s) - (x - m) ** 2 / (2 * s * s),
        lambda: [-(x - m) / (s * s), (x - m) / (s * s), -1 / s + (x - m) ** 2 / s ** 3])),
    'uniform': (('low', 'high'), lambda x, lo, hi: (
        np.where((x >= lo) & (x <= hi), -np.log(hi - lo), -np.inf),
        lambda: [0 * x, 1 / (hi - lo) + 0 * x, -1 / (hi - lo) + 0 * x])),
    'gamma': (('alpha', 'beta'), lambda x, a, b: (
        a * np.log(b) + (a - 1) * np.log(x) - b * x - special.gammaln(a),
        lambda: [(a - 1) / x - b, np.log(b) + np.log(x) - special.digamma(a), a / b - x])),
    'exponential': (('lam',), lambda x, lam: (
        np.log(lam) - lam * x, lambda: [-lam + 0 * x, 1 / lam - x])),
    'poisson': (('lam',), lambda x, lam: (
        x * np.log(lam) - lam - special.gammaln(x + 1), [0 * x, x / lam - 1])),
    'negative_binomial': (('k', 'p'), lambda x, k, p: (
        _nb_logp(x, k, p), [0 * x, *_nb_grads(x, k, p)])),
    'generalized_negative_binomial': (('mu', 'alpha'), _gnb),
}


class _Pdf(NumpyOp):
    params = ParamSchema(Param('is_log', 'bool', False))
    backward_needs = ('out_grads', 'inputs', 'outputs')
    event = 0       # trailing axes of sample that belong to one draw (Dirichlet: 1)

    def arguments(self, p):
        return ['sample'] + list(self.pnames)

    def infer_shape(self, p, in_shapes):
        sample, params = in_shapes[0], in_shapes[1:]
        known = next((tuple(s) for s in params if s is not None), None)
        for name, s in zip(self.pnames, params):
            if s is not None and tuple(s) != known:
                raise self.shape_error(name, known, tuple(s), 'parameters share one shape')
        if sample is None:
            return list(in_shapes), [None], []
        sample = tuple(sample)
        lead = known[:len(known) - self.event] if known is not None else None
        if lead is not None and sample[:len(lead)] != lead:
            raise self.shape_error('sample', f'a shape starting with {lead} (the '
                                   'parameters\' shape)', sample)
        out = sample[:len(sample) - self.event] if self.event else sample
        return [sample] + [known] * len(params), [out], []

    def _expand(self, sample, params):
        k = params[0].ndim - self.event
        extra = sample.ndim - self.event - k
        return [q.reshape(q.shape[:k] + (1,) * extra + q.shape[k:]).astype(np.float64)
                for q in params]

    def compute(self, p, sample, *params):
        with np.errstate(all='ignore'):
            logp, _ = self.density(sample.astype(np.float64), *self._expand(sample, params))
        return logp if p.is_log else np.exp(logp)

    def grad(self, p, dys, xs, ys):
        sample, params = xs[0], xs[1:]
        with np.errstate(all='ignore'):
            _, grads = self.density(sample.astype(np.float64), *self._expand(sample, params))
            grads = grads() if callable(grads) else grads
        scale = dys[0] if p.is_log else dys[0] * ys[0]
        if self.event:
            scale = scale[..., None]
        out = [grads[0] * scale]
        k = params[0].ndim - self.event
        for q, g in zip(params, grads[1:]):
            full = np.broadcast_to(g * scale, sample.shape)
            axes = tuple(range(k, sample.ndim - self.event))
            out.append(full.sum(axis=axes).reshape(q.shape))
        return out


def _uniform_into(p, sample, low, high, out):
    """out := the uniform density without a log and an exp per draw: one value per
    parameter pair (1 / (high - low), or its log), kept where the draw lies in [low, high]
    (the draws compared in their own dtype; a NaN draw is outside)."""
    shape = low.shape + (1,) * (sample.ndim - low.ndim)
    low, high = low.reshape(shape), high.reshape(shape)
    with np.errstate(all='ignore'):
        width = high.astype(np.float64) - low
        inside = (-np.log(width) if p.is_log else 1 / width).astype(out.dtype)
    outside = -np.inf if p.is_log else 0.0
    if uniform_pdf_select(sample, np.ascontiguousarray(low), np.ascontiguousarray(high),
                          inside, outside, out):
        return out          # the C select (float32/float64 of one dtype, contiguous)
    mask = sample >= low
    mask &= sample <= high
    if p.is_log or not (np.isfinite(inside).all() and (inside >= 0).all()):
        bit_select(mask, np.broadcast_to(inside, out.shape), np.full((), outside, out.dtype),
                   out)
    else:           # inside · 1 or inside · 0 (finite, >= 0): one multiply pass, no select
        np.multiply(mask, inside, out=out)
    return out


def _uniform_compute(self, p, sample, low, high):
    return _uniform_into(p, sample, low, high,
                         np.empty(sample.shape, np.result_type(sample.dtype, np.float32)))


def _uniform_forward(self, p, is_train, req, ins, outs, aux):
    """Written straight into the output (req write): no copy of a computed array."""
    if req[0] not in ('write', 'inplace') or outs[0].dtype != np.result_type(ins[0].dtype,
                                                                              np.float32):
        NumpyOp.forward(self, p, is_train, req, ins, outs, aux)
        return
    _ndarray.push_numpy(lambda s, lo, hi, o: _uniform_into(p, s, lo, hi, o), list(ins),
                        [outs[0]], self.name)


def _uniform_grad(self, p, dys, xs, ys):
    """d log p / d(low, high) = ±1 / (high - low) is one value per parameter pair, so
    each gradient is it times the sum of the scales over the draws (no per-draw arrays);
    the sample's gradient is 0."""
    sample, low, high = xs
    scale = dys[0] if p.is_log else dys[0] * ys[0]
    axes = tuple(range(low.ndim, sample.ndim))
    total = scale.astype(np.float64).sum(axis=axes).reshape(low.shape)
    with np.errstate(all='ignore'):
        inv = 1 / (high.astype(np.float64) - low)
    return [np.zeros(sample.shape, scale.dtype), inv * total, -inv * total]


_COMPUTE = {'uniform': {'compute': _uniform_compute, 'grad': _uniform_grad,
                        'forward': _uniform_forward}}

for _dist, (_pnames, _density) in DENSITIES.items():
    register_op(type(f'_random_pdf_{_dist}', (_Pdf,), {
        'name': f'_random_pdf_{_dist}', 'aliases': (f'random_pdf_{_dist}',),
        'pnames': _pnames, 'density': staticmethod(_density),
        **_COMPUTE.get(_dist, {}),
        '__doc__': f"The {_dist} density of each draw in sample (log with is_log)."}))


def _dirichlet(x, alpha):
    logp = (special.gammaln(alpha.sum(-1)) - special.gammaln(alpha).sum(-1) +
            ((alpha - 1) * np.log(x)).sum(-1))
    return logp, [(alpha - 1) / x,
                  special.digamma(alpha.sum(-1, keepdims=True)) - special.digamma(alpha) +
                  np.log(x)]


@register_op
class _random_pdf_dirichlet(_Pdf):
    """The Dirichlet density of each draw (the last axis of sample) for alpha."""
    name = '_random_pdf_dirichlet'
    aliases = ('random_pdf_dirichlet',)
    pnames = ('alpha',)
    event = 1
    density = staticmethod(_dirichlet)
