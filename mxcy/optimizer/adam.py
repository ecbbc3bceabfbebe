"""``adam``: Adam (MXNet 1.x ``mx.optimizer.Adam``)."""
import math

from mxcy.ndarray.elemwise import divide, sqrt, square
from mxcy._ops import push_optimizer_update
from mxcy.optimizer.optimizer import Optimizer, _fusable, _number, moment_states, register

__all__ = ['Adam']


@register
class Adam(Optimizer):
    """Adam (Kingma & Ba, 2014), with MXNet 1.x's placement of weight decay and clipping.

    Update rule for one weight ``w`` with gradient ``g``, mean ``m`` and variance ``v``;
    ``t`` is this weight's update count (1 on its first update)::

        g = clip(rescale_grad * g + wd * w, clip_gradient)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)
        w = w - lr_t * m / (sqrt(v) + epsilon)

    Parameters: ``learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8``;
    ``lazy_update=True`` is accepted for MXNet compatibility (sparse only); the rest as
    ``Optimizer``. The state is ``(m, v)``.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _number('Adam', 'beta1', beta1)
        self.beta2 = _number('Adam', 'beta2', beta2)
        self.epsilon = _number('Adam', 'epsilon', epsilon)
        self.lazy_update = bool(lazy_update)

    def create_state(self, index, weight):
        return moment_states(weight)

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        t = self._index_update_count[index]
        lr *= math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
        mean, var = state
        if _fusable(weight):                    # one C pass, no temporaries
            push_optimizer_update('adam', weight, grad, (mean, var), lr, wd,
                                  self.rescale_grad, self.clip_gradient, beta1=self.beta1,
                                  beta2=self.beta2, epsilon=self.epsilon)
            return
        g = self._scaled_grad(grad, weight, wd)
        mean *= self.beta1
        tmp = g * (1.0 - self.beta1)
        mean += tmp
        square(g, out=g)
        g *= 1.0 - self.beta2
        var *= self.beta2
        var += g
        sqrt(var, out=tmp)
        tmp += self.epsilon
        divide(mean, tmp, out=tmp)
        tmp *= lr
        weight -= tmp
