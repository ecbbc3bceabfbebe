"""``mx.sym.random``: sampling symbols. Number parameters build a ``_random_<dist>`` node,
Symbol parameters a ``_sample_<dist>`` node (one sample set per element), as MXNet's
``mx.sym.random`` chooses; ``*_like`` build ``_random_<dist>_like``."""
import inspect
import numbers

from mxcy.symbol.symbol import Symbol

__all__ = ['uniform', 'normal', 'randn', 'poisson', 'exponential', 'gamma',
           'negative_binomial', 'generalized_negative_binomial', 'multinomial', 'shuffle',
           'randint', 'uniform_like', 'normal_like', 'poisson_like', 'exponential_like',
           'gamma_like', 'negative_binomial_like', 'generalized_negative_binomial_like']


def _op(op, args=(), **kwargs):
    from mxcy.symbol._gen import make_op_symbol
    name, attr = kwargs.pop('name', None), kwargs.pop('attr', None)
    return make_op_symbol(op, tuple(args), {k: v for k, v in kwargs.items() if v is not None},
                          name=name, attr=attr)


def _sample(dist, params, sample_names, shape, dtype, kwargs):
    values = [v for _, v in params]
    if all(isinstance(v, Symbol) for v in values):
        return _op(f'_sample_{dist}', values, shape=shape, dtype=dtype, **kwargs)
    if all(isinstance(v, numbers.Real) for v in values):
        return _op(f'_random_{dist}', (), shape=shape, dtype=dtype,
                   **dict(params), **kwargs)
    raise TypeError(f"random.{dist}: parameters {[n for n, _ in params]} must all be "
                    f"numbers or all Symbols, got {[type(v).__name__ for v in values]}")


def uniform(low=0, high=1, shape=None, dtype=None, **kwargs):
    return _sample('uniform', [('low', low), ('high', high)], None, shape, dtype, kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, **kwargs):
    return _sample('normal', [('loc', loc), ('scale', scale)], None, shape, dtype, kwargs)


def randn(*shape, **kwargs):
    loc, scale = kwargs.pop('loc', 0), kwargs.pop('scale', 1)
    return normal(loc, scale, shape or None, **kwargs)


def poisson(lam=1, shape=None, dtype=None, **kwargs):
    return _sample('poisson', [('lam', lam)], None, shape, dtype, kwargs)


def exponential(scale=1, shape=None, dtype=None, **kwargs):
    """Exponential samples of the given scale (the ops take the rate 1/scale)."""
    return _sample('exponential', [('lam', 1.0 / scale)], None, shape, dtype, kwargs)


def gamma(alpha=1, beta=1, shape=None, dtype=None, **kwargs):
    return _sample('gamma', [('alpha', alpha), ('beta', beta)], None, shape, dtype, kwargs)


def negative_binomial(k=1, p=1, shape=None, dtype=None, **kwargs):
    return _sample('negative_binomial', [('k', k), ('p', p)], None, shape, dtype, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, **kwargs):
    return _sample('generalized_negative_binomial', [('mu', mu), ('alpha', alpha)], None,
                   shape, dtype, kwargs)


def randint(low, high, shape=None, dtype=None, **kwargs):
    return _op('_random_randint', (), low=low, high=high, shape=shape, dtype=dtype, **kwargs)


def multinomial(data, shape=None, get_prob=False, dtype='int32', **kwargs):
    return _op('_sample_multinomial', (data,), shape=shape, get_prob=get_prob, dtype=dtype,
               **kwargs)


def shuffle(data, **kwargs):
    return _op('_shuffle', (data,), **kwargs)


def _like(dist):
    from mxcy.operator.random_ops import like_params
    pnames = like_params(dist)
    P = inspect.Parameter

    def fn(data=None, *args, name=None, attr=None, out=None, **kwargs):
        kwargs.update(zip(pnames, args))
        return _op(f'_random_{dist}_like', (data,), name=name, attr=attr, **kwargs)
    fn.__signature__ = inspect.Signature(
        [P('data', P.POSITIONAL_OR_KEYWORD, default=None)] +
        [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in pnames] +
        [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in ('name', 'attr', 'out')] +
        [P('kwargs', P.VAR_KEYWORD)])
    fn.__name__ = fn.__qualname__ = f'{dist}_like'
    fn.__doc__ = f"Samples of the {dist} distribution with data's shape and dtype."
    return fn


uniform_like = _like('uniform')
normal_like = _like('normal')
poisson_like = _like('poisson')
exponential_like = _like('exponential')
gamma_like = _like('gamma')
negative_binomial_like = _like('negative_binomial')
generalized_negative_binomial_like = _like('generalized_negative_binomial')
