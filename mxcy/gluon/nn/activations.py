"""``gluon.nn`` activation layers (MXNet 1.9.1's ``activations``).

Each is a HybridBlock over ``Activation`` or ``LeakyReLU`` (or, for Swish, a product with
``sigmoid``); PReLU holds its learnable slope ``alpha`` (``prelu0_alpha``).
"""
from mxcy import initializer
from mxcy.gluon.block import HybridBlock

__all__ = ['Activation', 'LeakyReLU', 'PReLU', 'ELU', 'SELU', 'Swish', 'GELU']


class Activation(HybridBlock):
    """An ``Activation`` operator: 'relu', 'sigmoid', 'tanh', 'softrelu' or 'softsign'.
    Its default prefix is the activation's name (``relu0_``)."""

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name='fwd')

    def __repr__(self):
        return f'{type(self).__name__}({self._act_type})'


class LeakyReLU(HybridBlock):
    """x for x >= 0, alpha·x below (alpha >= 0)."""

    def __init__(self, alpha, **kwargs):
        if alpha < 0:
            raise AssertionError("Slope coefficient for LeakyReLU must be no less than 0.")
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='leaky', slope=self._alpha, name='fwd')

    def __repr__(self):
        return f'{type(self).__name__}({self._alpha})'


class PReLU(HybridBlock):
    """Leaky ReLU with a learned slope per channel (axis 1); `in_channels` slopes, a
    single shared one by default."""

    def __init__(self, alpha_initializer=initializer.Constant(0.25), in_channels=1,
                 **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get('alpha', shape=(in_channels,),
                                         init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, gamma=alpha, act_type='prelu', name='fwd')


class ELU(HybridBlock):
    """x for x > 0, alpha·(exp(x) − 1) below."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='elu', slope=self._alpha)


class SELU(HybridBlock):
    """Scaled ELU with the self-normalizing constants (Klambauer et al., 2017)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='selu', name='fwd')


class GELU(HybridBlock):
    """x·Φ(x), Φ the standard normal CDF (the exact, erf form)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='gelu', name='fwd')


class Swish(HybridBlock):
    """x·sigmoid(beta·x)."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x, name='fwd')
