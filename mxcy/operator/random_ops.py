"""Sampling operators (MXNet's ``_random_<dist>``, ``_sample_<dist>``,
``_random_<dist>_like``, ``_sample_multinomial``, ``_shuffle``), so ``mx.sym.random``,
executors and autograd have them too.

They draw from mx.random's one generator through `push_random` (mxcy.ndarray.random),
so their values depend only on the seed and the push order, as mx.nd.random's do.
* ``_random_<dist>(params..., shape, ctx, dtype)``: number parameters, output `shape`
  (``()`` gives ``(1,)``), float32 unless dtype says otherwise;
* ``_sample_<dist>(param arrays..., shape, dtype)``: one sample set per element of the
  (equal-shaped) parameter arrays: output ``param.shape + shape``;
* ``_random_<dist>_like(data, params...)``: data's shape and dtype;
* ``_sample_multinomial(data, shape, get_prob, dtype)``: indices drawn from the
  probabilities on data's last axis; with get_prob also their log-probabilities, whose
  gradient (REINFORCE) is dy / p at the drawn index;
* ``_shuffle(data)``: data permuted along its first axis.
Number parameters are checked at the call; array parameters inside the op (the error
comes back at the next wait). Samplers have zero gradients.
"""
import numpy as np

from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op
from mxcy.operator.tensor import zero_grads


def _push_random(*args):
    from mxcy.ndarray.random import push_random
    push_random(*args)


def _unit(gen, o, a, b):
    from mxcy.ndarray.random import _fill_unit
    _fill_unit(gen, o)          # as mx.nd.random.uniform: same seed, same values
    o *= b - a
    o += a


def _normal(gen, o, mu, sigma):
    from mxcy.ndarray.random import _fill_std_normal
    _fill_std_normal(gen, o)
    o *= sigma
    o += mu


def _gnb(gen, o, mu, alpha):
    mu, alpha = np.broadcast_to(mu, o.shape), np.broadcast_to(alpha, o.shape)
    safe = np.where(alpha > 0, alpha, 1.0)
    rate = np.where(alpha > 0, gen.gamma(1.0 / safe, mu * safe), mu)
    o[...] = gen.poisson(rate)


def _filler(f):
    """draw(gen, out, *params) from f(gen, *params, size)."""
    def draw(gen, o, *params):
        o[...] = f(gen, *params, o.shape)
    return draw


def _positive(**kw):
    bad = [k for k, v in kw.items() if not np.all(np.asarray(v) > 0)]
    return f"{bad[0]} must be positive" if bad else None


def _non_negative(**kw):
    bad = [k for k, v in kw.items() if not np.all(np.asarray(v) >= 0)]
    return f"{bad[0]} must be non-negative" if bad else None


# dist: (random_ param names and defaults, sample_ param names, draw(gen, out, *params)
#        writing the samples into out, check(*params) -> message or None)
DISTS = {
    'uniform': ((('low', 0.0), ('high', 1.0)), ('low', 'high'), _unit,
                lambda a, b: None if np.all(np.asarray(a) <= b) else
                'low must be less than or equal to high'),
    'normal': ((('loc', 0.0), ('scale', 1.0)), ('mu', 'sigma'), _normal,
               lambda m, sd: _non_negative(scale=sd)),
    'gamma': ((('alpha', 1.0), ('beta', 1.0)), ('alpha', 'beta'),
              _filler(lambda g, a, b, s: g.gamma(a, b, s)),
              lambda a, b: _positive(alpha=a, beta=b)),
    'exponential': ((('lam', 1.0),), ('lam',),
                    _filler(lambda g, lam, s: g.exponential(1.0 / lam, s)),
                    lambda lam: _positive(lam=lam)),
    'poisson': ((('lam', 1.0),), ('lam',), _filler(lambda g, lam, s: g.poisson(lam, s)),
                lambda lam: _non_negative(lam=lam)),
    'negative_binomial': ((('k', 1.0), ('p', 1.0)), ('k', 'p'),
                          _filler(lambda g, k, p, s: g.negative_binomial(k, p, s)),
                          lambda k, p: _positive(k=k) or (
                              None if np.all((np.asarray(p) > 0) & (np.asarray(p) <= 1))
                              else 'p must be in (0, 1]')),
    'generalized_negative_binomial': ((('mu', 1.0), ('alpha', 1.0)), ('mu', 'alpha'), _gnb,
                                      lambda m, a: _non_negative(mu=m, alpha=a)),
}


class _Sampler(OpSpec):
    backward_needs = ()

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        zero_grads(req, in_grads)

    def _check(self, values):
        message = self.check(*values)
        if message:
            raise ValueError(f"{self.name}: {message}, got "
                             f"{dict(zip(self.pnames, values)) if self.pnames else values}")


class _RandomOp(_Sampler):
    has_backward = False

    def arguments(self, p):
        return []

    def _values(self, p):
        return [getattr(p, n) for n in self.pnames]

    def infer_shape(self, p, in_shapes):
        self._check(self._values(p))
        return [], [tuple(p.shape) or (1,)], []

    def infer_type(self, p, in_types):
        return [], [p.dtype or self.default_dtype], []

    def forward(self, p, is_train, req, ins, outs, aux):
        draw, values = self.draw, self._values(p)

        def run(gen, o):
            draw(gen, o, *values)
        _push_random(run, [], [outs[0]], self.name)


class _SampleOp(_Sampler):
    def arguments(self, p):
        return list(self.pnames)

    def infer_shape(self, p, in_shapes):
        known = next((tuple(s) for s in in_shapes if s is not None), None)
        for name, s in zip(self.pnames, in_shapes):
            if s is not None and tuple(s) != known:
                raise self.shape_error(name, known, tuple(s), 'parameter arrays must have '
                                       'one shape')
        out = None if known is None else known + tuple(p.shape)
        return [known] * len(in_shapes), [out], []

    def infer_type(self, p, in_types):
        return list(in_types), [p.dtype or in_types[0] or 'float32'], []

    def forward(self, p, is_train, req, ins, outs, aux):
        draw, check, name = self.draw, self.check, self.name

        def run(gen, *views):
            *params, o = views
            expand = (1,) * (o.ndim - params[0].ndim)
            arrays = [np.asarray(v, np.float64).reshape(v.shape + expand) for v in params]
            message = check(*arrays)
            if message:
                raise ValueError(f"{name}: {message}")
            draw(gen, o, *arrays)
        _push_random(run, list(ins), [outs[0]], self.name)


class _LikeOp(_RandomOp):
    has_backward = True

    def arguments(self, p):
        return ['data']

    def infer_shape(self, p, in_shapes):
        self._check(self._values(p))
        return list(in_shapes), [in_shapes[0]], []

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0]], []

    def forward(self, p, is_train, req, ins, outs, aux):
        super().forward(p, is_train, req, [], outs, aux)



def like_params(dist):
    """The number parameters of ``_random_<dist>_like`` in order (mx.nd/mx.sym front ends)."""
    return tuple(n for n, _ in DISTS[dist][0])


_OUT = (Param('ctx', 'any', None, optional=True), Param('dtype', 'dtype', None, optional=True))

for _dist, (_rparams, _snames, _draw, _check) in DISTS.items():
    _fields = {'draw': staticmethod(_draw), 'check': staticmethod(_check),
               'default_dtype': 'float32'}
    _rp = tuple(Param(n, 'float', d) for n, d in _rparams)
    register_op(type(f'_random_{_dist}', (_RandomOp,), {
        **_fields, 'name': f'_random_{_dist}', 'aliases': (), 'pnames': [n for n, _ in
                                                                          _rparams],
        'params': ParamSchema(*_rp, Param('shape', 'shape', ()), *_OUT),
        '__doc__': f"Samples of the {_dist} distribution (number parameters)."}))
    register_op(type(f'_sample_{_dist}', (_SampleOp,), {
        **_fields, 'name': f'_sample_{_dist}', 'aliases': (), 'pnames': list(_snames),
        'params': ParamSchema(Param('shape', 'shape', ()), _OUT[1]),
        '__doc__': f"Samples of the {_dist} distribution, one set per parameter element."}))
    register_op(type(f'_random_{_dist}_like', (_LikeOp,), {
        **_fields, 'name': f'_random_{_dist}_like', 'aliases': (),
        'pnames': [n for n, _ in _rparams], 'params': ParamSchema(*_rp),
        '__doc__': f"Samples of the {_dist} distribution with data's shape and dtype."}))


@register_op
class _random_randint(_RandomOp):
    """Integers drawn uniformly from [low, high)."""
    name = '_random_randint'
    params = ParamSchema(Param('low', 'int'), Param('high', 'int'),
                         Param('shape', 'shape', ()), *_OUT)
    pnames = ['low', 'high']
    default_dtype = 'int32'

    @staticmethod
    def check(lo, hi):
        return None if lo < hi else 'low must be less than high'

    @staticmethod
    def draw(gen, o, lo, hi):
        o[...] = gen.integers(lo, hi, size=o.shape, dtype=o.dtype)


@register_op
class _shuffle(_Sampler):
    """data permuted along its first axis."""
    name = '_shuffle'
    has_backward = False

    def forward(self, p, is_train, req, ins, outs, aux):
        def run(gen, src, dst):
            dst[...] = src[gen.permutation(src.shape[0])] if src.ndim else src
        _push_random(run, list(ins), [outs[0]], self.name)


@register_op
class _sample_multinomial(OpSpec):
    """Indices drawn from the probabilities on data's last axis (see module docstring)."""
    name = '_sample_multinomial'
    params = ParamSchema(Param('shape', 'shape', ()), Param('get_prob', 'bool', False),
                         Param('dtype', 'dtype', 'int32'))
    backward_needs = ('out_grads', 'inputs', 'outputs')

    def outputs(self, p):
        return ['output', 'prob'] if p.get_prob else ['output']

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None] * len(self.outputs(p)), []
        if not d:
            raise self.shape_error('data', 'at least 1 dimension (the categories)', tuple(d))
        out = tuple(d[:-1]) + tuple(p.shape)
        return [tuple(d)], [out] * len(self.outputs(p)), []

    def infer_type(self, p, in_types):
        return list(in_types), [p.dtype] + [in_types[0]] * p.get_prob, []

    def forward(self, p, is_train, req, ins, outs, aux):
        extra = len(tuple(p.shape))

        def run(gen, data, *views):
            probs = data.reshape(-1, data.shape[-1]).astype(np.float64)
            if np.any(probs < 0):
                raise ValueError("_sample_multinomial: probabilities must be >= 0")
            cum = np.cumsum(probs, axis=1)
            cum /= cum[:, -1:]
            n = int(np.prod(p.shape)) if extra else 1
            u = gen.random((probs.shape[0], n))
            idx = np.array([np.searchsorted(c, r, side='right') for c, r in zip(cum, u)])
            idx = np.minimum(idx, probs.shape[1] - 1)
            views[0][...] = idx.reshape(views[0].shape)
            if len(views) > 1:
                picked = np.take_along_axis(probs, idx, axis=1)
                views[1][...] = np.log(picked).reshape(views[1].shape)
        _push_random(run, list(ins), list(outs), self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if not p.get_prob:
            zero_grads(req, in_grads)
            return
        from mxcy.operator._numpy_op import push_multi

        def run(data, idx, dprob):
            k = data.shape[-1]
            probs = data.reshape(-1, k)
            i = idx.reshape(probs.shape[0], -1).astype(np.int64)
            g = np.zeros(probs.shape, np.float64)
            rows = np.repeat(np.arange(probs.shape[0]), i.shape[1])
            np.add.at(g, (rows, i.ravel()), dprob.reshape(-1) /
                      probs[rows, i.ravel()])
            return (g.reshape(data.shape),)
        push_multi(run, [ins[0], outs[0], out_grads[1]], in_grads, req,
                   self.name + '_backward')


# public mx.nd / mx.sym names of the sampling operators (MXNet's aliases)
PUBLIC = {'uniform': '_random_uniform', 'normal': '_random_normal',
          'random_randint': '_random_randint', 'shuffle': '_shuffle',
          'sample_multinomial': '_sample_multinomial'}
for _dist in DISTS:
    PUBLIC[f'random_{_dist}'] = f'_random_{_dist}'
    PUBLIC[f'sample_{_dist}'] = f'_sample_{_dist}'
