"""``nag``: Nesterov accelerated gradient (MXNet 1.x ``mx.optimizer.NAG``)."""
import numpy as np

from mxcy import ndarray as nd
from mxcy._ndarray import zeros
from mxcy.optimizer.optimizer import Optimizer, _number, register

__all__ = ['NAG']


@register
class NAG(Optimizer):
    """Nesterov accelerated SGD.

    Update rule for one weight ``w`` with gradient ``g`` and momentum state ``m``::

        c = clip(rescale_grad * g, clip_gradient)
        g = c + wd * w
        if momentum == 0:
            w = w - lr * g
        else:
            w = w + momentum * (momentum * m - lr * g) - lr * g
            m = momentum * m - lr * (c + wd * w)      # w: the updated weight, as MXNet

    One ``nag_mom_update`` (``mp_nag_mom_update`` for float16 with
    ``multi_precision``) per step, as MXNet.

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
        kw = dict(out=weight, lr=lr, wd=wd, rescale_grad=self.rescale_grad,
                  clip_gradient=self.clip_gradient if self.clip_gradient else -1.0)
        if state is None:
            nd.sgd_update(weight, grad, **kw)
        else:
            nd.nag_mom_update(weight, grad, state, momentum=self.momentum, **kw)

    def update_multi_precision(self, index, weight, grad, state):
        if not (self.multi_precision and weight.dtype == np.float16):
            return self.update(index, weight, grad, state)
        weight32, mom = state
        lr, wd = self._begin_update(index, weight, grad)
        kw = dict(out=weight, lr=lr, wd=wd, rescale_grad=self.rescale_grad,
                  clip_gradient=self.clip_gradient if self.clip_gradient else -1.0)
        if mom is None:
            nd.mp_sgd_update(weight, grad, weight32, **kw)
        else:
            nd.mp_nag_mom_update(weight, grad, mom, weight32, momentum=self.momentum, **kw)
