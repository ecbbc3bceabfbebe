"""``signum``: signSGD and Signum (MXNet 1.x ``mx.optimizer.Signum``)."""
from mxcy._ndarray import zeros
from mxcy.ndarray.elemwise import sign
from mxcy.optimizer.optimizer import Optimizer, _number, register

__all__ = ['Signum']


@register
class Signum(Optimizer):
    """Sign of the gradient (signSGD) or of its momentum (Signum), Bernstein et al. 2018.

    Update rule for one weight ``w`` with gradient ``g`` and momentum state ``m``::

        if momentum == 0:                # signSGD
            w = (1 - lr * wd) * w - lr * sign(g)
        else:                            # Signum
            g = clip(rescale_grad * g, clip_gradient) + wd * w
            m = momentum * m + (1 - momentum) * g
            w = (1 - lr * wd_lh) * w - lr * sign(m)

    Parameters: ``learning_rate=0.01, momentum=0.9, wd_lh=0.0`` (decoupled weight
    decay, Loshchilov & Hutter); the rest as ``Optimizer``. The state is ``m``, or None
    when ``momentum == 0``.
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = _number('Signum', 'momentum', momentum)
        self.wd_lh = _number('Signum', 'wd_lh', wd_lh)

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return zeros(weight.shape, weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        if state is None:
            decay, direction = wd, sign(grad)
        else:
            g = self._scaled_grad(grad)
            if wd:
                g += weight * wd
            g *= 1.0 - self.momentum
            state *= self.momentum
            state += g
            decay, direction = self.wd_lh, sign(state)
        if decay:
            weight *= 1.0 - lr * decay
        direction *= lr
        weight -= direction
