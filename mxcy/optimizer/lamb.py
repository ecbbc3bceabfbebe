"""``lamb``: LAMB, layer-wise adaptive moments (MXNet 1.x ``mx.optimizer.LAMB``)."""
import numpy as np

from mxcy._ndarray import push_numpy
from mxcy.ndarray.elemwise import add, divide, sqrt, square
from mxcy.optimizer.optimizer import Optimizer, _number, moment_states, register

__all__ = ['LAMB']


@register
class LAMB(Optimizer):
    """LAMB (You et al., 2019): Adam's direction scaled by a per-weight trust ratio.

    Update rule for one weight ``w`` with gradient ``g``, mean ``m`` and variance ``v``;
    ``t`` is this weight's update count (1 on its first update)::

        g = clip(rescale_grad * g, clip_gradient)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        if bias_correction:
            m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
        else:
            m_hat, v_hat = m, v
        r = m_hat / (sqrt(v_hat) + epsilon) + wd * w
        r1 = norm(w), clamped to [lower_bound, upper_bound] when they are set
        r2 = norm(r)
        ratio = r1 / r2 if r1 != 0 and r2 != 0 else 1
        w = w - lr * ratio * r

    Parameters: ``learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
    lower_bound=None, upper_bound=None`` (None or 0: no bound, as in MXNet),
    ``bias_correction=True``; the rest as ``Optimizer``. The state is ``(m, v)``.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _number('LAMB', 'beta1', beta1)
        self.beta2 = _number('LAMB', 'beta2', beta2)
        self.epsilon = _number('LAMB', 'epsilon', epsilon)
        self.lower_bound = (None if lower_bound is None else
                            _number('LAMB', 'lower_bound', lower_bound))
        self.upper_bound = (None if upper_bound is None else
                            _number('LAMB', 'upper_bound', upper_bound))
        self.bias_correction = bool(bias_correction)

    def create_state(self, index, weight):
        return moment_states(weight)

    def update(self, index, weight, grad, state):
        lr, wd = self._begin_update(index, weight, grad)
        t = self._index_update_count[index]
        mean, var = state
        g = self._scaled_grad(grad)
        mean *= self.beta1
        tmp = g * (1.0 - self.beta1)
        mean += tmp
        square(g, out=g)
        g *= 1.0 - self.beta2
        var *= self.beta2
        var += g
        # r = m_hat / (sqrt(v_hat) + epsilon) + wd * w, computed into g
        v_scale = 1.0 - self.beta2 ** t if self.bias_correction else 1.0
        m_scale = 1.0 - self.beta1 ** t if self.bias_correction else 1.0
        divide(var, v_scale, out=tmp)
        sqrt(tmp, out=tmp)
        tmp += self.epsilon
        divide(mean, m_scale, out=g)
        g /= tmp
        if wd:
            add(g, weight * wd, out=g)
        push_numpy(_trust_ratio_step(lr, self.lower_bound, self.upper_bound),
                   [g], [weight], 'lamb_update_phase2')


def _trust_ratio_step(lr, lower_bound, upper_bound):
    """The engine op ``w -= lr * ratio * r`` (the norms need the finished arrays)."""
    def step(r, w):
        r1 = float(np.linalg.norm(w.ravel()))
        r2 = float(np.linalg.norm(r.ravel()))
        if lower_bound:
            r1 = max(r1, lower_bound)
        if upper_bound:
            r1 = min(r1, upper_bound)
        ratio = r1 / r2 if r1 != 0.0 and r2 != 0.0 else 1.0
        w -= (lr * ratio) * r
    return step
