"""mx.np.random: shapes, dtypes, ranges, seeding through mx.random.seed."""
import numpy as onp
import pytest

import mxcy as mx
from mxcy import numpy as np


def test_seed_reproduces_samples():
    mx.random.seed(7)
    a = np.random.normal(size=(3, 4)).asnumpy()
    mx.random.seed(7)
    b = np.random.normal(size=(3, 4)).asnumpy()
    assert (a == b).all() and a.dtype == onp.float32
    assert not (np.random.normal(size=(3, 4)).asnumpy() == b).all()


@pytest.mark.parametrize('fn,args,kwargs,dtype', [
    ('uniform', (2.0, 3.0), {}, onp.float32), ('normal', (0.0, 2.0), {}, onp.float32),
    ('randint', (5, 9), {}, onp.int64), ('exponential', (), {}, onp.float32),
    ('gamma', (2.0,), {}, onp.float32), ('beta', (2.0, 3.0), {}, onp.float32),
    ('lognormal', (), {}, onp.float32), ('gumbel', (), {}, onp.float32),
    ('logistic', (), {}, onp.float32), ('pareto', (3.0,), {}, onp.float32),
    ('rayleigh', (), {}, onp.float32), ('weibull', (2.0,), {}, onp.float32),
    ('chisquare', (3.0,), {}, onp.float32), ('power', (2.0,), {}, onp.float32),
])
def test_samplers(fn, args, kwargs, dtype):
    x = getattr(np.random, fn)(*args, size=(200,), **kwargs)
    assert type(x) is np.ndarray and x.shape == (200,) and x.dtype == dtype
    v = x.asnumpy()
    if fn == 'uniform':
        assert (v >= 2).all() and (v < 3).all()
    if fn == 'randint':
        assert set(v.tolist()) <= set(range(5, 9))
    if fn in ('exponential', 'gamma', 'beta', 'lognormal', 'rayleigh', 'weibull'):
        assert (v > 0).all()


def test_array_parameters_broadcast():
    loc = np.array([0.0, 100.0])
    x = np.random.normal(loc, 1.0)
    assert x.shape == (2,) and x.asnumpy()[1] > 50


def test_rand_randn_choice_shuffle_multinomial():
    assert np.random.rand(2, 3).shape == (2, 3)
    assert np.random.randn(4).shape == (4,)
    c = np.random.choice(5, size=10)
    assert c.dtype == onp.int64 and set(c.asnumpy().tolist()) <= set(range(5))
    c = np.random.choice(np.array([1.0, 2.0]), size=(3,), p=np.array([0.0, 1.0]))
    assert c.asnumpy().tolist() == [2.0, 2.0, 2.0]
    x = np.arange(10)
    np.random.shuffle(x)
    assert sorted(x.asnumpy().tolist()) == list(range(10))
    m = np.random.multinomial(10, [0.5, 0.5], size=3)
    assert m.shape == (3, 2) and (m.asnumpy().sum(axis=1) == 10).all()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match='randint: low'):
        np.random.randint(5, 5)
    with pytest.raises(TypeError, match='uniform: size'):
        np.random.uniform(size='x')
