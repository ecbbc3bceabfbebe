"""Constant and random initializers: Zero, One, Constant, Uniform, Normal, Orthogonal,
Xavier, MSRAPrelu. Random ones push sampling ops that write the array (no waits)."""
import json

import numpy as np

from mxcy._ndarray import NDArray
from mxcy.initializer.base import Initializer, alias, register
from mxcy.ndarray import random as _random


# ---------------------------------------------------------------- constants
@register
@alias('zeros')
class Zero(Initializer):
    """Initializes weights to zero."""
    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias('ones')
class One(Initializer):
    """Initializes weights to one."""
    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Initializes weights to `value`: a number, or an array broadcastable to the weight."""
    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value

    def dumps(self):
        val = self._kwargs['value']
        if not np.isscalar(val):
            val = val.asnumpy() if isinstance(val, NDArray) else np.asarray(val)
            val = val.tolist()
        return json.dumps([self.__class__.__name__.lower(), {'value': val}])


# ---------------------------------------------------------------- random
@register
class Uniform(Initializer):
    """Initializes weights with samples from U[-scale, scale]."""
    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _random.uniform(-self.scale, self.scale, arr.shape, out=arr)


@register
class Normal(Initializer):
    """Initializes weights with samples from N(0, sigma**2)."""
    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _random.normal(0, self.sigma, arr.shape, out=arr)


@register
class Orthogonal(Initializer):
    """Initializes the weight, seen as (shape[0], prod(shape[1:])), as `scale` times a
    matrix with orthonormal rows or columns (Saxe et al., arXiv:1312.6120).

    The random matrix is drawn from U[-1, 1] (`rand_type` ``'uniform'``) or N(0, 1)
    (``'normal'``) and orthogonalized by SVD, inside one engine op.
    """
    def __init__(self, scale=1.414, rand_type='uniform'):
        if rand_type not in ('uniform', 'normal'):
            raise ValueError(f"Orthogonal: rand_type must be 'uniform' or 'normal', got "
                             f"{rand_type!r}")
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        nout = arr.shape[0] if arr.shape else 1
        nin = int(np.prod(arr.shape[1:]))
        scale, rand_type = self.scale, self.rand_type

        def draw(gen, out):
            if rand_type == 'uniform':
                tmp = gen.uniform(-1.0, 1.0, size=(nout, nin))
            else:
                tmp = gen.standard_normal(size=(nout, nin))
            u, _, v = np.linalg.svd(tmp, full_matrices=False)
            res = u if u.shape == tmp.shape else v
            out[...] = (scale * res).reshape(out.shape)
        _random.push_random(draw, [], [arr], 'init_orthogonal')


_FACTOR_TYPES = ('avg', 'in', 'out')
_RND_TYPES = ('uniform', 'gaussian')


@register
class Xavier(Initializer):
    """"Xavier" initialization (Glorot & Bengio), keeping activation scale across layers.

    With ``hw_scale = prod(shape[2:])``, ``fan_in = shape[1] * hw_scale`` and
    ``fan_out = shape[0] * hw_scale``, the factor is ``(fan_in + fan_out) / 2``
    (`factor_type` ``'avg'``), ``fan_in`` (``'in'``) or ``fan_out`` (``'out'``), and
    ``scale = sqrt(magnitude / factor)``. Weights are drawn from U[-scale, scale]
    (`rnd_type` ``'uniform'``) or N(0, scale**2) (``'gaussian'``).
    """
    def __init__(self, rnd_type='uniform', factor_type='avg', magnitude=3):
        if rnd_type not in _RND_TYPES:
            raise ValueError(f"{type(self).__name__}: rnd_type must be 'uniform' or "
                             f"'gaussian', got {rnd_type!r}")
        if factor_type not in _FACTOR_TYPES:
            raise ValueError(f"{type(self).__name__}: factor_type must be 'avg', 'in' or "
                             f"'out', got {factor_type!r}")
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _scale(self, name, shape):
        if len(shape) < 2:
            raise ValueError(f"{type(self).__name__} cannot initialize {str(name)!r} of shape "
                             f"{shape}: it requires at least 2 dimensions")
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {'avg': (fan_in + fan_out) / 2.0, 'in': fan_in,
                  'out': fan_out}[self.factor_type]
        return float(np.sqrt(self.magnitude / factor))

    def _init_weight(self, name, arr):
        scale = self._scale(name, arr.shape)
        if self.rnd_type == 'uniform':
            _random.uniform(-scale, scale, arr.shape, out=arr)
        else:
            _random.normal(0, scale, arr.shape, out=arr)


@register
class MSRAPrelu(Xavier):
    """He et al. (arXiv:1502.01852) initialization for (P)ReLU networks: Xavier with
    gaussian samples and ``magnitude = 2 / (1 + slope**2)``."""
    def __init__(self, factor_type='avg', slope=0.25):
        magnitude = 2.0 / (1 + slope ** 2)
        super().__init__('gaussian', factor_type, magnitude)
        self._kwargs = {'factor_type': factor_type, 'slope': slope}
