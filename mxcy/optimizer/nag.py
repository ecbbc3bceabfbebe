"""``nag``: Nesterov accelerated gradient (MXNet 1.x ``mx.optimizer.NAG``)."""
from mxcy._ndarray import zeros
from mxcy.optimizer.optimizer import Optimizer, _number, register

__all__ = ['NAG']


@register
class NAG(Optimizer):
    """Nesterov accelerated SGD.

    Update rule for one weight ``w`` with gradient ``g`` and momentum state ``m``::

        g = clip(rescale_grad * g, clip_gradient) + wd * w
        if momentum == 0:
            w = w - lr * g
        else:
            m = momentum * m + g
            w = w - lr * (g + momentum * m)

    Parameters: ``momentum=0.0``; the rest as ``Optimizer``. The state is the momentum
    array, or None when ``momentum == 0``.
    """

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = _number('NAG', 'momentum', momentum)

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return zeros(weight.shape, weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        g = self._scaled_grad(grad)
        if wd:
            g += weight * wd
        if state is not None:
            state *= self.momentum
            state += g
            g += state * self.momentum
        g *= lr
        weight -= g
