"""``npx.random``: MXNet's NumPy-extension samplers (batched draws and Bernoulli).

They draw from the one generator of ``mx.random`` (`mxcy.ndarray.random.push_random`), in
push order with every other sampling op, so ``npx.random.seed(n)`` makes them repeat.
Parameters may be numbers or mx.np arrays (broadcast together); ``uniform_n`` and
``normal_n`` put ``batch_shape`` in front of the parameters' broadcast shape.
"""
import numbers

import numpy as _onp

from mxcy._ndarray import NDArray, new_empty
from mxcy.base import dtype_code
from mxcy.context import current_context
from mxcy.ndarray.random import push_random
from mxcy.numpy_extension._op import as_np
from mxcy.random import seed as _seed

__all__ = ['seed', 'bernoulli', 'uniform_n', 'normal_n']


def seed(seed, ctx='all'):
    """Seed the generator of every sampling op (``mx.random.seed``)."""
    _seed(seed, ctx)


def _params(name, values):
    """(arrays among the parameters, their broadcast shape) with a clear error."""
    arrays = []
    for key, v in values:
        if isinstance(v, NDArray):
            arrays.append(v)
        elif not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise TypeError(f"npx.random.{name}: {key} must be a number or an mx.np "
                            f"array, got {type(v).__name__}")
    try:
        shape = _onp.broadcast_shapes(*[a.shape for a in arrays]) if arrays else ()
    except ValueError:
        raise ValueError(f"npx.random.{name}: the parameters' shapes "
                         f"{[a.shape for a in arrays]} do not broadcast") from None
    return arrays, shape


def _batch(name, batch_shape):
    if batch_shape is None:
        return ()
    if isinstance(batch_shape, numbers.Integral):
        return (int(batch_shape),)
    if not isinstance(batch_shape, (tuple, list)) or \
            not all(isinstance(d, numbers.Integral) and d >= 0 for d in batch_shape):
        raise TypeError(f"npx.random.{name}: batch_shape must be an int or a tuple of "
                        f"non-negative ints, got {batch_shape!r}")
    return tuple(int(d) for d in batch_shape)


def _draw(name, values, shape, dtype, ctx, fill):
    """Allocate an array of `shape` and push `fill(gen, out_view, *param_values)`."""
    arrays, _ = _params(name, values)
    dt = _onp.dtype('float32' if dtype is None else dtype)
    if ctx is None:
        ctx = arrays[0].context if arrays else current_context()
    out = new_empty(shape, dtype_code(dt), ctx)
    positions = [i for i, (_, v) in enumerate(values) if isinstance(v, NDArray)]

    def run(gen, *views):
        *param_views, o = views
        vals = [v for _, v in values]
        for i, view in zip(positions, param_views):
            vals[i] = _onp.array(view, _onp.float64)
        fill(gen, o, *vals)
    push_random(run, arrays, [out], f'npx.random.{name}')
    return as_np(out)


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    """Samples of U[low, high) of shape batch_shape + broadcast(low, high).shape."""
    _, shape = _params('uniform_n', [('low', low), ('high', high)])

    def fill(gen, o, lo, hi):
        o[...] = lo + (_onp.asarray(hi) - lo) * gen.random(o.shape)
    return _draw('uniform_n', [('low', low), ('high', high)],
                 _batch('uniform_n', batch_shape) + shape, dtype, ctx, fill)


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    """Samples of N(loc, scale**2) of shape batch_shape + broadcast(loc, scale).shape."""
    _, shape = _params('normal_n', [('loc', loc), ('scale', scale)])

    def fill(gen, o, mu, sigma):
        o[...] = mu + _onp.asarray(sigma) * gen.standard_normal(o.shape)
    return _draw('normal_n', [('loc', loc), ('scale', scale)],
                 _batch('normal_n', batch_shape) + shape, dtype, ctx, fill)


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """Samples of Bernoulli(prob) (or of sigmoid(logit)): 1 with that probability, else
    0; exactly one of prob and logit is given. Shape: `size`, else the parameter's."""
    if (prob is None) == (logit is None):
        raise ValueError("npx.random.bernoulli: give exactly one of prob and logit, got "
                         f"prob={prob!r}, logit={logit!r}")
    key, value = ('prob', prob) if prob is not None else ('logit', logit)
    _, pshape = _params('bernoulli', [(key, value)])
    shape = pshape if size is None else _batch('bernoulli', size)
    if size is not None and pshape and _onp.broadcast_shapes(pshape, shape) != shape:
        raise ValueError(f"npx.random.bernoulli: {key} of shape {pshape} does not "
                         f"broadcast to size {shape}")
    if prob is not None and not isinstance(prob, NDArray) and not 0 <= prob <= 1:
        raise ValueError(f"npx.random.bernoulli: prob must be in [0, 1], got {prob}")

    def fill(gen, o, p):
        if key == 'logit':
            p = 1 / (1 + _onp.exp(-_onp.asarray(p)))
        o[...] = gen.random(o.shape) < p
    result = _draw('bernoulli', [(key, value)], shape, dtype, ctx, fill)
    if out is not None:
        out[...] = result
        return out
    return result
