"""``mx.np.random``: samplers drawing from the engine-ordered generator of
``mx.random.seed`` (``mxcy.ndarray.random.push_random``), so a seed reproduces ``mx.np``
samples as it does ``mx.nd`` ones. Array parameters are read through the engine."""
import numbers

import numpy as _onp

from mxcy._ndarray import NDArray
from mxcy.ndarray.random import push_random
from mxcy.numpy.multiarray import new_array

__all__ = ['beta', 'chisquare', 'choice', 'exponential', 'gamma', 'gumbel', 'logistic',
           'lognormal', 'multinomial', 'multivariate_normal', 'normal', 'pareto', 'power',
           'rand', 'randint', 'randn', 'rayleigh', 'shuffle', 'uniform', 'weibull']


def _size(size, fname):
    if size is None:
        return None
    if isinstance(size, numbers.Integral):
        return (int(size),)
    try:
        return tuple(int(d) for d in size)
    except (TypeError, ValueError):
        raise TypeError(f"{fname}: size must be an int or a tuple of ints, got "
                        f"{size!r}") from None


def _sample(fname, draw, params, size, dtype, ctx, out):
    """out (or a new array) := draw(generator, *param values, size=shape)."""
    arrays = [p for p in params if isinstance(p, NDArray)]
    shape = _size(size, fname)
    if shape is None:
        shape = _onp.broadcast_shapes(*[p.shape for p in arrays]) if arrays else ()
    if out is None:
        ctx = ctx or (arrays[0].context if arrays else None)
        out = new_array(shape, _onp.float32 if dtype is None else dtype, ctx)
    elif out.shape != shape:
        raise ValueError(f"{fname}: out has shape {out.shape}, the sample {shape}")

    def run(gen, *views):
        it = iter(views[:-1])
        values = [next(it) if isinstance(p, NDArray) else p for p in params]
        views[-1][...] = draw(gen, *values, size=shape)
    push_random(run, arrays, [out], fname)
    return out


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, out=None):
    return _sample('uniform', lambda g, lo, hi, size: g.uniform(lo, hi, size),
                   [low, high], size, dtype, ctx, out)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    return _sample('normal', lambda g, m, s, size: g.normal(m, s, size), [loc, scale],
                   size, dtype, ctx, out)


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, out=None):
    return _sample('lognormal', lambda g, m, s, size: g.lognormal(m, s, size),
                   [mean, sigma], size, dtype, ctx, out)


def randint(low, high=None, size=None, dtype=None, ctx=None, out=None):
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: low ({low}) must be less than high ({high})")
    return _sample('randint', lambda g, lo, hi, size: g.integers(lo, hi, size),
                   [low, high], size, _onp.int64 if dtype is None else dtype, ctx, out)


def rand(*size, **kwargs):
    return uniform(0.0, 1.0, size=size, **kwargs)


def randn(*size, **kwargs):
    return normal(0.0, 1.0, size=size, **kwargs)


def exponential(scale=1.0, size=None, ctx=None, out=None):
    return _sample('exponential', lambda g, s, size: g.exponential(s, size), [scale],
                   size, None, ctx, out)


def gamma(shape, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    return _sample('gamma', lambda g, k, s, size: g.gamma(k, s, size), [shape, scale],
                   size, dtype, ctx, out)


def beta(a, b, size=None, dtype=None, ctx=None):
    return _sample('beta', lambda g, x, y, size: g.beta(x, y, size), [a, b], size, dtype,
                   ctx, None)


def chisquare(df, size=None, dtype=None, ctx=None):
    return _sample('chisquare', lambda g, d, size: g.chisquare(d, size), [df], size, dtype,
                   ctx, None)


def gumbel(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    return _sample('gumbel', lambda g, m, s, size: g.gumbel(m, s, size), [loc, scale],
                   size, None, ctx, out)


def logistic(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    return _sample('logistic', lambda g, m, s, size: g.logistic(m, s, size), [loc, scale],
                   size, None, ctx, out)


def pareto(a, size=None, ctx=None, out=None):
    return _sample('pareto', lambda g, x, size: g.pareto(x, size), [a], size, None, ctx,
                   out)


def power(a, size=None):
    return _sample('power', lambda g, x, size: g.power(x, size), [a], size, None, None,
                   None)


def rayleigh(scale=1.0, size=None, ctx=None, out=None):
    return _sample('rayleigh', lambda g, s, size: g.rayleigh(s, size), [scale], size, None,
                   ctx, out)


def weibull(a, size=None, ctx=None, out=None):
    return _sample('weibull', lambda g, x, size: g.weibull(x, size), [a], size, None, ctx,
                   out)


def multinomial(n, pvals, size=None, **kwargs):
    pv = pvals.asnumpy() if isinstance(pvals, NDArray) else _onp.asarray(pvals, float)
    shape = (_size(size, 'multinomial') or ()) + (len(pv),)
    out = new_array(shape, _onp.int64, kwargs.get('ctx'))
    push_random(lambda g, o: o.__setitem__(Ellipsis, g.multinomial(n, pv, shape[:-1])),
                [], [out], 'multinomial')
    return out


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None):
    m = mean.asnumpy() if isinstance(mean, NDArray) else _onp.asarray(mean, float)
    c = cov.asnumpy() if isinstance(cov, NDArray) else _onp.asarray(cov, float)
    shape = (_size(size, 'multivariate_normal') or ()) + m.shape[-1:]
    out = new_array(shape, _onp.float32)
    push_random(lambda g, o: o.__setitem__(Ellipsis, g.multivariate_normal(
        m, c, shape[:-1] or None)), [], [out], 'multivariate_normal')
    return out


def choice(a, size=None, replace=True, p=None, ctx=None, out=None):
    """Samples of `a` (an array, or range(a) for an int), with probabilities `p`."""
    pool = a.asnumpy() if isinstance(a, NDArray) else a
    probs = p.asnumpy() if isinstance(p, NDArray) else p
    shape = _size(size, 'choice') or ()
    dtype = _onp.int64 if isinstance(pool, numbers.Integral) else _onp.asarray(pool).dtype
    if out is None:
        out = new_array(shape, dtype, ctx)

    def run(g, o):
        o[...] = g.choice(pool, shape, replace, probs)
    push_random(run, [], [out], 'choice')
    return out


def shuffle(x):
    """Shuffle `x` in place along its first axis."""
    if not isinstance(x, NDArray):
        raise TypeError(f"shuffle: x must be an mx.np.ndarray, got {type(x).__name__}")

    def run(g, o):
        g.shuffle(o)
    push_random(run, [], [x], 'shuffle')


