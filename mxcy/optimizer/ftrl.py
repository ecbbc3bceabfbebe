"""``ftrl``: FTRL-Proximal (MXNet 1.x ``mx.optimizer.Ftrl``)."""
from mxcy._ndarray import zeros
from mxcy.ndarray.elemwise import abs as nd_abs, sign, sqrt, square
from mxcy.optimizer.optimizer import Optimizer, _number, register

__all__ = ['Ftrl']


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., 2013), with L1 strength `lamda1` and the L2
    strength given by `wd`.

    Update rule for one weight ``w`` with gradient ``g`` and state ``z``, ``n``::

        g = clip(rescale_grad * g, clip_gradient)
        z = z + g - (sqrt(n + g**2) - sqrt(n)) * w / lr
        n = n + g**2
        w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (abs(z) > lamda1)

    Parameters: ``lamda1=0.01, learning_rate=0.1, beta=1``; the rest as ``Optimizer``.
    The state is ``(z, n)``.
    """

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.lamda1 = _number('Ftrl', 'lamda1', lamda1)
        self.beta = _number('Ftrl', 'beta', beta)

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype),    # z
                zeros(weight.shape, weight.context, dtype=weight.dtype))    # n

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        z, n = state
        g = self._scaled_grad(grad)
        g2 = square(g)
        # z += g - (sqrt(n + g2) - sqrt(n)) * w / lr
        z += g
        sigma = n + g2
        sqrt(sigma, out=sigma)
        sigma -= sqrt(n)
        sigma *= weight
        sigma /= lr
        z -= sigma
        n += g2
        # w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (abs(z) > lamda1)
        num = sign(z)
        num *= self.lamda1
        num -= z
        den = sqrt(n)
        den += self.beta
        den /= lr
        den += wd
        num /= den
        num *= nd_abs(z) > self.lamda1
        num.copyto(weight)
