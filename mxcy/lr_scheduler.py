"""``mx.lr_scheduler``: learning rate as a function of the update count (MXNet 1.x API).

A scheduler is called as ``scheduler(num_update)`` and returns the learning rate for
that update. Unlike MXNet 1.x, whose Factor/MultiFactor/Poly/Cosine schedulers kept a
running state and so returned wrong rates after a resume or when called out of order
(mx#3251), every scheduler here is a pure function of `num_update`: calling it at 1000
directly gives the same rate as calling it at 1, 2, ..., 1000.

``base_lr`` is the rate the schedule starts from; an ``Optimizer`` given a scheduler
sets it to its own ``learning_rate`` (as MXNet does), and every schedule, including the
end of a linear warmup, follows that value (MXNet's Poly/Cosine kept the value from
construction and its warmup ended at it, then jumped).

Warmup (all schedulers): for ``num_update < warmup_steps`` the rate is
``warmup_begin_lr + (base_lr - warmup_begin_lr) * num_update / warmup_steps``
(``warmup_mode='linear'``) or ``warmup_begin_lr`` (``'constant'``).

``register`` / ``create`` follow ``mxcy.registry`` (``create('factor', step=10)`` ...).
"""
import bisect
import math
import numbers

from mxcy import registry

__all__ = ['LRScheduler', 'FactorScheduler', 'MultiFactorScheduler', 'PolyScheduler',
           'CosineScheduler', 'register', 'create']

_WARMUP_MODES = ('linear', 'constant')


def _check_number(owner, arg, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{owner}: {arg} must be a number, got {type(value).__name__} "
                        f"{value!r}")
    return float(value)


def _check_int(owner, arg, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{owner}: {arg} must be an int, got {type(value).__name__} "
                        f"{value!r}")
    if value < minimum:
        raise ValueError(f"{owner}: {arg} must be >= {minimum}, got {value}")
    return int(value)


def _check_factor(owner, factor):
    factor = _check_number(owner, 'factor', factor)
    if not 0.0 < factor <= 1.0:
        raise ValueError(f"{owner}: factor must be in (0, 1] so that the rate decreases, "
                         f"got {factor}")
    return factor


class LRScheduler:
    """Base class: ``__call__(num_update) -> learning rate``; holds the warmup."""

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        owner = type(self).__name__
        self.base_lr = _check_number(owner, 'base_lr', base_lr)
        self.warmup_steps = _check_int(owner, 'warmup_steps', warmup_steps, 0)
        self.warmup_begin_lr = _check_number(owner, 'warmup_begin_lr', warmup_begin_lr)
        if self.warmup_begin_lr > self.base_lr:
            raise ValueError(f"{owner}: warmup_begin_lr ({self.warmup_begin_lr}) must not "
                             f"exceed base_lr ({self.base_lr})")
        if warmup_mode not in _WARMUP_MODES:
            raise ValueError(f"{owner}: warmup_mode must be one of {_WARMUP_MODES}, got "
                             f"{warmup_mode!r}")
        self.warmup_mode = warmup_mode

    @property
    def warmup_final_lr(self):
        """The rate warmup ends at: always the current ``base_lr``."""
        return self.base_lr

    def get_warmup_lr(self, num_update):
        """The warmup rate for ``num_update < warmup_steps``."""
        if not num_update < self.warmup_steps:
            raise ValueError(f"{type(self).__name__}.get_warmup_lr: num_update "
                             f"({num_update}) must be below warmup_steps "
                             f"({self.warmup_steps})")
        if self.warmup_mode == 'constant':
            return self.warmup_begin_lr
        frac = float(num_update) / float(self.warmup_steps)
        return self.warmup_begin_lr + (self.base_lr - self.warmup_begin_lr) * frac

    def __call__(self, num_update):
        raise NotImplementedError(f"{type(self).__name__} must override __call__")

    def __repr__(self):
        return f"{type(self).__name__}(base_lr={self.base_lr})"


register = registry.get_register_func(LRScheduler, 'lr_scheduler')
_alias = registry.get_alias_func(LRScheduler, 'lr_scheduler')
create = registry.get_create_func(LRScheduler, 'lr_scheduler')


@_alias('factor')
@register
class FactorScheduler(LRScheduler):
    """Multiply the rate by `factor` every `step` updates, never going below
    `stop_factor_lr`.

    ``lr(n) = base_lr`` for ``n <= step``; else, with ``k = (n - 1) // step`` decays,
    ``lr(n) = max(base_lr * factor**k, stop_factor_lr)``. (Decays are counted from update
    0, warmup included, as in MXNet.)
    """

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.step = _check_int('FactorScheduler', 'step', step, 1)
        self.factor = _check_factor('FactorScheduler', factor)
        self.stop_factor_lr = _check_number('FactorScheduler', 'stop_factor_lr',
                                            stop_factor_lr)

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        decays = (int(num_update) - 1) // self.step if num_update > self.step else 0
        if decays == 0:
            return self.base_lr
        return max(self.base_lr * self.factor ** decays, self.stop_factor_lr)


@_alias('multifactor')
@register
class MultiFactorScheduler(LRScheduler):
    """Multiply the rate by `factor` after each update count in `step`.

    ``lr(n) = base_lr * factor**k`` where ``k`` is the number of entries ``s`` of `step`
    with ``n > s``. `step` is a strictly increasing list of ints >= 1.
    """

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, (list, tuple)) or not step:
            raise TypeError(f"MultiFactorScheduler: step must be a non-empty list of ints, "
                            f"got {step!r}")
        steps = [_check_int('MultiFactorScheduler', f'step[{i}]', s, 1)
                 for i, s in enumerate(step)]
        for i in range(1, len(steps)):
            if steps[i] <= steps[i - 1]:
                raise ValueError(f"MultiFactorScheduler: step must be strictly increasing, "
                                 f"got {steps}")
        self.step = steps
        self.factor = _check_factor('MultiFactorScheduler', factor)

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        decays = bisect.bisect_left(self.step, num_update)   # entries s < num_update
        return self.base_lr * self.factor ** decays


class _ToMaxUpdate(LRScheduler):
    """Shared checks of the schedules that end at `max_update` with `final_lr`."""

    def __init__(self, max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                 warmup_mode):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        owner = type(self).__name__
        self.max_update = _check_int(owner, 'max_update', max_update, 1)
        if self.max_update <= self.warmup_steps:
            raise ValueError(f"{owner}: max_update ({self.max_update}) must exceed "
                             f"warmup_steps ({self.warmup_steps})")
        self.final_lr = _check_number(owner, 'final_lr', final_lr)

    @property
    def max_steps(self):
        """Updates between the end of warmup and `max_update`."""
        return self.max_update - self.warmup_steps

    def _progress(self, num_update):
        """Fraction of the schedule done, in [0, 1]."""
        return min(1.0, float(num_update - self.warmup_steps) / self.max_steps)


@_alias('poly')
@register
class PolyScheduler(_ToMaxUpdate):
    """Polynomial decay from `base_lr` to `final_lr` at `max_update`.

    ``lr(n) = final_lr + (base_lr - final_lr) * (1 - p)**pwr`` with
    ``p = min(1, (n - warmup_steps) / (max_update - warmup_steps))``.
    """

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)
        self.power = _check_number('PolyScheduler', 'pwr', pwr)

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        remaining = 1.0 - self._progress(num_update)
        return self.final_lr + (self.base_lr - self.final_lr) * remaining ** self.power


@_alias('cosine')
@register
class CosineScheduler(_ToMaxUpdate):
    """Cosine decay from `base_lr` to `final_lr` at `max_update`.

    ``lr(n) = final_lr + (base_lr - final_lr) * (1 + cos(pi * p)) / 2`` with
    ``p = min(1, (n - warmup_steps) / (max_update - warmup_steps))``.
    """

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        cosine = (1.0 + math.cos(math.pi * self._progress(num_update))) / 2.0
        return self.final_lr + (self.base_lr - self.final_lr) * cosine
