"""``adamax`` and ``nadam``: Adam's variants (MXNet 1.x ``Adamax``, ``Nadam``)."""
import numpy as np

from mxcy._ndarray import push_numpy
from mxcy.operator.optimizer_ops import clip_
from mxcy.optimizer.optimizer import Optimizer, _number, moment_states, register

__all__ = ['Adamax', 'Nadam']


@register
class Adamax(Optimizer):
    """AdaMax (Kingma & Ba, 2014, section 7): Adam with the infinity norm.

    Update rule for one weight ``w`` with gradient ``g``, mean ``m`` and norm ``u``;
    ``t`` is this weight's update count::

        g = clip(rescale_grad * g + wd * w, clip_gradient)
        m = beta1 * m + (1 - beta1) * g
        u = maximum(beta2 * u, abs(g))
        w = w - lr / (1 - beta1**t) * m / u

    Parameters: ``learning_rate=0.002, beta1=0.9, beta2=0.999``; the rest as
    ``Optimizer``. The state is ``(m, u)``.
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _number('Adamax', 'beta1', beta1)
        self.beta2 = _number('Adamax', 'beta2', beta2)

    def create_state(self, index, weight):
        return moment_states(weight)

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        t = self._index_update_count[index]
        lr /= 1.0 - self.beta1 ** t
        b1, b2, rs, c = self.beta1, self.beta2, self.rescale_grad, self.clip_gradient or -1

        def step(g, w, m, u):
            g = clip_(g * rs + wd * w, c)
            m *= b1
            m += (1 - b1) * g
            np.maximum(b2 * u, np.abs(g), out=u)
            w -= lr * m / u
        push_numpy(step, [grad], [weight, *state], 'adamax_update')


@register
class Nadam(Optimizer):
    """Nadam (Dozat, 2016): Adam with Nesterov momentum and a momentum schedule.

    Update rule for one weight ``w`` with gradient ``g``, mean ``m`` and variance ``v``;
    ``t`` is this weight's update count, ``mu(t) = beta1 * (1 - 0.5 * 0.96**(t *
    schedule_decay))`` and ``m_schedule`` the running product of the ``mu(t)`` (kept on
    the optimizer and shared by every weight, as MXNet)::

        g = clip(rescale_grad * g + wd * w, clip_gradient)
        m_schedule = m_schedule * mu(t)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        m_bar = (1 - mu(t)) * g / (1 - m_schedule)
                + mu(t + 1) * m / (1 - m_schedule * mu(t + 1))
        w = w - lr * m_bar / (sqrt(v / (1 - beta2**t)) + epsilon)

    Parameters: ``learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
    schedule_decay=0.004``; the rest as ``Optimizer``. The state is ``(m, v)``.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _number('Nadam', 'beta1', beta1)
        self.beta2 = _number('Nadam', 'beta2', beta2)
        self.epsilon = _number('Nadam', 'epsilon', epsilon)
        self.schedule_decay = _number('Nadam', 'schedule_decay', schedule_decay)
        self.m_schedule = 1.0

    def create_state(self, index, weight):
        return moment_states(weight)

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        t = self._index_update_count[index]
        b1, b2, eps = self.beta1, self.beta2, self.epsilon
        mu_t = b1 * (1.0 - 0.5 * 0.96 ** (t * self.schedule_decay))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * self.schedule_decay))
        self.m_schedule *= mu_t
        sched, sched_next = self.m_schedule, self.m_schedule * mu_next
        rs, c = self.rescale_grad, self.clip_gradient or -1

        def step(g, w, m, v):
            g = clip_(g * rs + wd * w, c)
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * np.square(g)
            m_bar = (1 - mu_t) * g / (1 - sched) + mu_next * m / (1 - sched_next)
            w -= lr * m_bar / (np.sqrt(v / (1 - b2 ** t)) + eps)
        push_numpy(step, [grad], [weight, *state], 'nadam_update')
