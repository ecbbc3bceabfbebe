"""``adagrad``: AdaGrad (MXNet 1.x ``mx.optimizer.AdaGrad``)."""
from mxcy._ndarray import zeros
from mxcy.ndarray.elemwise import add, divide, sqrt, square
from mxcy.optimizer.optimizer import Optimizer, _number, register

__all__ = ['AdaGrad']


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al., 2011).

    Update rule for one weight ``w`` with gradient ``g`` and history ``h``::

        g = clip(rescale_grad * g, clip_gradient)
        h = h + g**2
        w = w - lr * (g / sqrt(h + eps) + wd * w)

    Parameters: ``eps=1e-7`` (kept as ``float_stable_eps``, as MXNet names it); the
    rest as ``Optimizer``. The state is ``h``.
    """

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = _number('AdaGrad', 'eps', eps)

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context, dtype=weight.dtype)     # history

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        history = state
        g = self._scaled_grad(grad)
        tmp = square(g)
        history += tmp
        add(history, self.float_stable_eps, out=tmp)
        sqrt(tmp, out=tmp)
        divide(g, tmp, out=g)
        if wd:
            g += weight * wd
        g *= lr
        weight -= g
