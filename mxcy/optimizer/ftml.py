"""``ftml``: Follow the Moving Leader (MXNet 1.x ``mx.optimizer.FTML``)."""
from mxcy._ndarray import zeros
from mxcy import ndarray as nd
from mxcy.optimizer.optimizer import Optimizer, _number, register

__all__ = ['FTML']


@register
class FTML(Optimizer):
    """FTML (Zheng & Kwok, 2017), one ``ftml_update`` per step.

    Update rule for one weight ``w`` with gradient ``g`` and states ``d``, ``v``,
    ``z``; ``t`` is this weight's update count::

        g = clip(rescale_grad * g + wd * w, clip_gradient)
        v = beta2 * v + (1 - beta2) * g**2
        d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * w
        d = d_t
        w = -z / d_t

    Parameters: ``beta1=0.6, beta2=0.999, epsilon=1e-8``; the rest as ``Optimizer``.
    The state is ``(d, v, z)``.
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = _number('FTML', 'beta1', beta1)
        self.beta2 = _number('FTML', 'beta2', beta2)
        self.epsilon = _number('FTML', 'epsilon', epsilon)

    def create_state(self, index, weight):
        return tuple(zeros(weight.shape, weight.context, dtype=weight.dtype)
                     for _ in range(3))

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        t = self._index_update_count[index]
        d, v, z = state
        nd.ftml_update(weight, grad, d, v, z, out=weight, lr=lr, wd=wd, t=t,
                    beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
                    rescale_grad=self.rescale_grad,
                    clip_grad=self.clip_gradient if self.clip_gradient else -1.0)
