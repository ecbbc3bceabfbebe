"""``sgd``: stochastic gradient descent with optional momentum (MXNet 1.x ``mx.optimizer.SGD``)."""
from mxcy._ndarray import zeros
from mxcy._ops import push_optimizer_update
from mxcy.optimizer.optimizer import Optimizer, _fusable, _number, register

__all__ = ['SGD', 'ccSGD']


@register
class SGD(Optimizer):
    """SGD with momentum and weight decay.

    Update rule for one weight ``w`` with gradient ``g`` and momentum state ``m``::

        g = clip(rescale_grad * g, clip_gradient) + wd * w
        if momentum == 0:
            w = w - lr * g
        else:
            m = momentum * m - lr * g
            w = w + m

    Parameters: ``momentum=0.0``; ``lazy_update=True`` is accepted for MXNet
    compatibility (it only matters for sparse gradients, which mxcy does not have);
    ``multi_precision`` keeps a float32 master copy of float16 weights; the rest as
    ``Optimizer``. The state is the momentum array, or None when ``momentum == 0``.
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = _number('SGD', 'momentum', momentum)
        self.lazy_update = bool(lazy_update)

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return zeros(weight.shape, weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        if _fusable(weight):                    # one C pass, no temporaries
            if state is None:
                push_optimizer_update('sgd', weight, grad, (), lr, wd, self.rescale_grad,
                                      self.clip_gradient)
            else:
                push_optimizer_update('sgd_mom', weight, grad, (state,), lr, wd,
                                      self.rescale_grad, self.clip_gradient, self.momentum)
            return
        if self._clips():
            step = self._scaled_grad(grad)
            if wd:
                step += weight * wd
            step *= lr
        else:                                   # fold lr into the one temporary
            step = grad * (lr * self.rescale_grad)
            if wd:
                step += weight * (lr * wd)
        if state is None:
            weight -= step
        else:
            state *= self.momentum
            state -= step
            weight += state


@register
class ccSGD(SGD):
    """[Deprecated in MXNet 1.x] SGD under its old name, ``create('ccsgd')``."""
