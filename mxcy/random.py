"""``mx.random``: seeding and the samplers of ``mx.nd.random`` (MXNet 1.x names).

``seed(s)`` is pushed as an engine op ordered with every sampling op (see
``mxcy.ndarray.random``), so ``sample; seed(1); sample`` gives the same second sample
as ``seed(1); sample``, on any engine type and worker count.
"""
import numbers

from mxcy.context import Context, check_usable
from mxcy.ndarray.random import (
    exponential,
    gamma,
    generalized_negative_binomial,
    negative_binomial,
    normal,
    poisson,
    push_seed,
    randint,
    randn,
    shuffle,
    uniform,
)

__all__ = [
    'exponential',
    'gamma',
    'generalized_negative_binomial',
    'negative_binomial',
    'normal',
    'poisson',
    'randint',
    'randn',
    'seed',
    'shuffle',
    'uniform',
]


def seed(seed_state, ctx='all'):
    """Seed the random number generator used by every sampling op.

    `seed_state` is an integer (taken modulo 2**64). `ctx` is ``'all'`` or a CPU
    context; this build has one generator, shared by all CPU contexts.
    """
    if isinstance(seed_state, bool) or not isinstance(seed_state, numbers.Integral):
        raise ValueError(f"seed: seed_state must be an int, got "
                         f"{type(seed_state).__name__} {seed_state!r}")
    if isinstance(ctx, Context):
        check_usable(ctx, 'seed')
    elif ctx != 'all':
        raise ValueError(f"seed: ctx must be 'all' or a Context, got {ctx!r}")
    push_seed(int(seed_state))
