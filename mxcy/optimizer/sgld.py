"""``sgld``, ``dcasgd`` and ``test``: SGD's smaller relatives (MXNet 1.x ``SGLD``,
``DCASGD``, ``Test``)."""
from mxcy._ndarray import push_numpy, zeros
from mxcy.ndarray import random as nd_random
from mxcy.operator.optimizer_ops import clip_
from mxcy.optimizer.optimizer import Optimizer, _number, register

__all__ = ['SGLD', 'DCASGD', 'Test']


@register
class SGLD(Optimizer):
    """Stochastic Gradient Langevin Dynamics (Welling & Teh, 2011): half an SGD step
    plus Gaussian noise of variance ``lr``.

    Update rule for one weight ``w`` with gradient ``g``::

        g = clip(rescale_grad * g, clip_gradient)
        w = w - lr / 2 * (g + wd * w) + normal(0, sqrt(lr))

    The noise comes from ``mx.random`` (seeded by ``mx.random.seed``). No state.
    """

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        noise = nd_random.normal(0.0, lr ** 0.5, shape=weight.shape, ctx=weight.context,
                                 dtype=weight.dtype)
        rs, c = self.rescale_grad, self.clip_gradient or -1

        def step(g, n, w):
            g = clip_(g * rs, c)
            w -= lr / 2 * (g + wd * w)
            w += n
        push_numpy(step, [grad, noise], [weight], 'sgld_update')


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al., 2016).

    Update rule for one weight ``w`` with gradient ``g``, the weight ``w_prev`` of the
    previous update and (when ``momentum != 0``) momentum ``m``::

        g = clip(rescale_grad * g, clip_gradient)
        step = -lr * (g + wd * w + lamda * g * g * (w - w_prev))
        m = momentum * m + step        (m = step without momentum)
        w_prev = w
        w = w + m

    Parameters: ``momentum=0.0, lamda=0.04``; the rest as ``Optimizer``. The state is
    ``(m or None, w_prev)``. (MXNet 1.9.1 fails on ``momentum != 0``: it tests an
    NDArray's truth value; mxcy applies the rule above.)
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = _number('DCASGD', 'momentum', momentum)
        self.weight_previous = {}
        self.lamda = _number('DCASGD', 'lamda', lamda)

    def create_state(self, index, weight):
        mom = None if self.momentum == 0.0 else \
            zeros(weight.shape, weight.context, dtype=weight.dtype)
        return (mom, weight.copy())

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        mom, previous = state
        rs, c, lamda, momentum = (self.rescale_grad, self.clip_gradient or -1,
                                  self.lamda, self.momentum)

        def step(g, w, prev, *m):
            g = clip_(g * rs, c)
            d = -lr * (g + wd * w + lamda * g * g * (w - prev))
            if m:
                m[0][...] = momentum * m[0] + d
                d = m[0]
            prev[...] = w
            w += d
        push_numpy(step, [grad], [weight, previous] + ([mom] if mom is not None else []),
                   'dcasgd_update')


@register
class Test(Optimizer):
    """The test optimizer of MXNet: ``w = w + rescale_grad * g``; the state (zeros
    like the weight) is set to the new weight."""

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        rs = self.rescale_grad

        def step(g, w, s):
            w += rs * g
            s[...] = w
        push_numpy(step, [grad], [weight, state], 'test_update')

