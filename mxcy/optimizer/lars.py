"""``lars`` and ``lbsgd``: SGD with layer-wise rate scaling (MXNet 1.x ``LARS``,
``LBSGD``)."""
import math

import numpy as np

from mxcy._ndarray import push_numpy, zeros
from mxcy.operator.optimizer_ops import sgd
from mxcy.optimizer.optimizer import Optimizer, _number, register

__all__ = ['LARS', 'LBSGD']


def _norm(x):
    return float(np.sqrt(np.sum(np.square(x, dtype=np.float64))))


def _sgd_step(lr_of, wd, momentum, rs, clip):
    """An engine step: ``sgd`` (with momentum when a state is given) at the rate
    ``lr_of(w, g)``, computed inside the op from the finished arrays."""
    def step(g, w, *mom):
        lr = lr_of(w, g)
        if mom:
            sgd(w, g, lr, wd, rs, clip, momentum=momentum, mom=mom[0])
        else:
            sgd(w, g, lr, wd, rs, clip)
    return step


@register
class LARS(Optimizer):
    """LARS (You et al., 2017): SGD with momentum whose rate is scaled per layer.

    For one weight ``w`` with gradient ``g`` (``g`` rescaled by ``rescale_grad``)::

        w_norm, g_norm = norm(w), norm(g)
        if w_norm > 0 and g_norm > 0 and the name does not end in gamma/beta/bias:
            lr = lr * eta * w_norm / (g_norm + wd * w_norm + eps)
        then one ``sgd_mom_update`` (``sgd_update`` without momentum) at that rate

    With ``momentum_correction`` (and an lr scheduler) the momentum is scaled by the
    ratio of this rate to the previous one (Goyal et al., 2017). Parameters:
    ``momentum=0.0, lazy_update=True, eta=0.001, eps=0, momentum_correction=True``.
    The state is the momentum, or None without momentum.
    """

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = _number('LARS', 'momentum', momentum)
        self.lazy_update = bool(lazy_update)
        self.eta = _number('LARS', 'eta', eta)
        self.eps = _number('LARS', 'eps', eps)
        self.momentum_correction = bool(momentum_correction)
        self.last_lr = None
        self.cur_lr = None

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return zeros(weight.shape, weight.context, dtype=weight.dtype)

    def _scaled(self, index):
        name = self.idx2name.get(index, str(index))
        return not name.endswith(('gamma', 'beta', 'bias'))

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        momentum = self.momentum
        if self.lr_scheduler is not None:
            self.last_lr, self.cur_lr = self.cur_lr, self.lr_scheduler(self.num_update)
            if self.momentum_correction and self.last_lr:
                momentum *= self.cur_lr / self.last_lr
        eta, eps, rs = self.eta, self.eps, self.rescale_grad
        scaled = self._scaled(index)

        def lr_of(w, g):
            if not scaled:
                return lr
            w_norm, g_norm = _norm(w), _norm(g * rs)
            if w_norm > 0.0 and g_norm > 0.0:
                return lr * eta * w_norm / (g_norm + wd * w_norm + eps)
            return lr
        push_numpy(_sgd_step(lr_of, wd, momentum, rs, self.clip_gradient or -1.0),
                   [grad], [weight] + ([state] if state is not None else []),
                   'lars_update')


@register
class LBSGD(Optimizer):
    """Large-batch SGD: gradients are summed over ``batch_scale`` calls, then one SGD
    step (with momentum) is taken with their mean at a warmed-up rate.

    The rate multiplier at update ``n`` (``n_w = warmup_epochs * updates_per_epoch``,
    ``B = batch_scale``): ``'linear'``: ``1 + (B - 1) * n / n_w``, ``'power2'``:
    ``1 + (B - 1) * (n / n_w)**2``, ``'sqrt'``: ``1 + (B - 1) * sqrt(n / n_w)``, and
    ``B`` once ``n >= n_w``; ``'lars'``: ``norm(w) / norm(g)`` (1 if either is 0).
    Parameters: ``momentum=0.0, multi_precision=False, warmup_strategy='linear',
    warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
    num_epochs=60``; the rest as ``Optimizer``. The state is ``(momentum or None,
    summed gradient)``; with ``batch_scale == 1`` this is SGD.
    """

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy='linear',
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super().__init__(multi_precision=multi_precision, **kwargs)
        if warmup_strategy not in ('linear', 'power2', 'sqrt', 'lars'):
            raise ValueError(f"LBSGD: warmup_strategy must be 'linear', 'power2', 'sqrt' "
                             f"or 'lars', got {warmup_strategy!r}")
        self.momentum = _number('LBSGD', 'momentum', momentum)
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = int(warmup_epochs)
        self.batch_scale = int(batch_scale)
        self.updates_per_epoch = int(updates_per_epoch)
        self.begin_epoch = int(begin_epoch)
        self.num_epochs = int(num_epochs)
        self.init_updates = self.begin_epoch * self.updates_per_epoch
        self.cumgrads = {}

    def create_state(self, index, weight):
        mom = None if self.momentum == 0.0 else \
            zeros(weight.shape, weight.context, dtype=weight.dtype)
        return mom

    def _multiplier(self, nup):
        nwup = self.warmup_epochs * self.updates_per_epoch
        big = float(self.batch_scale)
        if nup >= nwup or nwup <= 0:
            return big
        frac = nup / nwup
        if self.warmup_strategy == 'power2':
            frac *= frac
        elif self.warmup_strategy == 'sqrt':
            frac = math.sqrt(frac)
        return 1.0 + (big - 1.0) * frac

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        cum = self.cumgrads.get(index)
        if cum is None or cum[0] == 0:
            cum = [0, zeros(weight.shape, weight.context, dtype=weight.dtype)]
            self.cumgrads[index] = cum
        cum[1] += grad
        cum[0] += 1
        if cum[0] < self.batch_scale:
            return
        total, cum[0] = cum[1], 0
        scale = 1.0 / self.batch_scale
        if self.warmup_strategy == 'lars':
            mult = None
        else:
            mult = self._multiplier(self.init_updates + self.num_update)

        def lr_of(w, g):
            if mult is not None:
                return lr * mult
            w_norm, g_norm = _norm(w), _norm(g)
            return lr * (w_norm / g_norm if w_norm > 0.0 and g_norm > 0.0 else 1.0)
        push_numpy(_sgd_step(lr_of, wd, self.momentum, self.rescale_grad * scale,
                             self.clip_gradient or -1.0) if mult is not None else
                   _lars_avg(lr_of, wd, self.momentum, self.rescale_grad, scale,
                             self.clip_gradient or -1.0),
                   [total], [weight] + ([state] if state is not None else []),
                   'lbsgd_update')


def _lars_avg(lr_of, wd, momentum, rs, scale, clip):
    inner = _sgd_step(lr_of, wd, momentum, rs, clip)

    def step(g, w, *mom):
        inner(g * scale, w, *mom)
    return step
