"""``adadelta``: AdaDelta (MXNet 1.x ``mx.optimizer.AdaDelta``)."""
from mxcy._ndarray import zeros
from mxcy.ndarray.elemwise import add, divide, sqrt, square
from mxcy.optimizer.optimizer import Optimizer, _number, register

__all__ = ['AdaDelta']


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler, 2012). As in MXNet 1.x the learning rate is not used: the
    step size comes from the ratio of the two running averages.

    Update rule for one weight ``w`` with gradient ``g`` and state ``acc_g``,
    ``acc_delta``::

        g = clip(rescale_grad * g, clip_gradient)
        acc_g = rho * acc_g + (1 - rho) * g**2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta**2
        w = w - (delta + wd * w)

    Parameters: ``rho=0.90, epsilon=1e-5``; the rest as ``Optimizer``. The state is
    ``(acc_g, acc_delta)``.
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = _number('AdaDelta', 'rho', rho)
        self.epsilon = _number('AdaDelta', 'epsilon', epsilon)

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype),    # acc_g
                zeros(weight.shape, weight.context, dtype=weight.dtype))    # acc_delta

    def update(self, index, weight, grad, state):
        _, wd = self._begin_update(index, weight, grad)
        acc_g, acc_delta = state
        rho, eps = self.rho, self.epsilon
        g = self._scaled_grad(grad)
        tmp = square(g)
        tmp *= 1.0 - rho
        acc_g *= rho
        acc_g += tmp
        # delta = sqrt(acc_delta + eps) / sqrt(acc_g + eps) * g, computed into g
        add(acc_delta, eps, out=tmp)
        sqrt(tmp, out=tmp)
        g *= tmp
        add(acc_g, eps, out=tmp)
        sqrt(tmp, out=tmp)
        divide(g, tmp, out=g)
        square(g, out=tmp)
        tmp *= 1.0 - rho
        acc_delta *= rho
        acc_delta += tmp
        if wd:
            g += weight * wd
        weight -= g
