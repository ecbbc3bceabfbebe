"""``rmsprop``: RMSProp, plain and centered (MXNet 1.x ``mx.optimizer.RMSProp``)."""
from mxcy._ndarray import zeros
from mxcy.ndarray.elemwise import add, clip, divide, sqrt, square
from mxcy.optimizer.optimizer import Optimizer, _number, register

__all__ = ['RMSProp']


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton (2012), or Graves (2013) with ``centered=True``.

    Update rule for one weight ``w`` with gradient ``g``; state ``n`` (and ``s``,
    ``delta`` when centered)::

        g = clip(rescale_grad * g + wd * w, clip_gradient)
        n = (1 - gamma1) * g**2 + gamma1 * n
        if not centered:
            w = w - lr * g / sqrt(n + epsilon)
        else:
            s = (1 - gamma1) * g + gamma1 * s
            delta = gamma2 * delta - lr * g / sqrt(n - s**2 + epsilon)
            w = w + delta
        if clip_weights:
            w = clip(w, -clip_weights, clip_weights)

    Parameters: ``learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
    centered=False, clip_weights=None`` (None or <= 0: no weight clipping); the rest
    as ``Optimizer``. The state is ``(n,)`` or, centered, ``(n, s, delta)``.
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = _number('RMSProp', 'gamma1', gamma1)
        self.gamma2 = _number('RMSProp', 'gamma2', gamma2)
        self.epsilon = _number('RMSProp', 'epsilon', epsilon)
        self.centered = bool(centered)
        self.clip_weights = (None if clip_weights is None else
                             _number('RMSProp', 'clip_weights', clip_weights))

    def create_state(self, index, weight):
        count = 3 if self.centered else 1
        return tuple(zeros(weight.shape, weight.context, dtype=weight.dtype)
                     for _ in range(count))

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        g = self._scaled_grad(grad, weight, wd)
        n = state[0]
        keep = self.gamma1
        n *= keep
        tmp = square(g)
        tmp *= 1.0 - keep
        n += tmp
        if not self.centered:
            add(n, self.epsilon, out=tmp)
            sqrt(tmp, out=tmp)
            divide(g, tmp, out=g)
            g *= lr
            weight -= g
        else:
            _, s, delta = state
            s *= keep
            tmp = g * (1.0 - keep)
            s += tmp
            square(s, out=tmp)
            denom = n - tmp
            denom += self.epsilon
            sqrt(denom, out=denom)
            g /= denom
            g *= lr
            delta *= self.gamma2
            delta -= g
            weight += delta
        c = self.clip_weights
        if c is not None and c > 0:
            clip(weight, -c, c, out=weight)
