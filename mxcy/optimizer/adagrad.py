"""``adagrad``: AdaGrad (MXNet 1.x ``mx.optimizer.AdaGrad``)."""
import numpy as np

from mxcy._ndarray import push_numpy, zeros
from mxcy.operator.optimizer_ops import clip_
from mxcy.ndarray.elemwise import add, divide, sqrt, square
from mxcy.optimizer.optimizer import Optimizer, _number, register

__all__ = ['AdaGrad', 'GroupAdaGrad']


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


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one history value per row (the first axis) of the weight.

    Update rule for one weight ``w`` with gradient ``g`` and history ``h`` (one value
    per row)::

        g = clip(rescale_grad * g, clip_gradient)
        h = h + mean(g**2 over every axis but the first)
        w = w - lr * g / sqrt(h + eps)

    Parameters: ``eps=1e-5``; weight decay is not supported (``wd`` must be 0, as
    MXNet). The state is ``h`` of shape ``(rows, 1)``.
    """

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        if self.wd != 0.0:
            raise ValueError("GroupAdaGrad: weight decay is not supported; got wd="
                             f"{self.wd}")
        self.float_stable_eps = _number('GroupAdaGrad', 'eps', eps)

    def create_state(self, index, weight):
        return zeros((weight.shape[0], 1), weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        lr, _ = self._begin_update(index, weight, grad)
        rs, c, eps = self.rescale_grad, self.clip_gradient or -1, self.float_stable_eps

        def step(g, w, h):
            g = clip_(g * rs, c).reshape(w.shape[0], -1)
            h += np.mean(np.square(g), axis=1, keepdims=True)
            w -= (lr * g / np.sqrt(h + eps)).reshape(w.shape)
        push_numpy(step, [grad], [weight, state], 'group_adagrad_update')
