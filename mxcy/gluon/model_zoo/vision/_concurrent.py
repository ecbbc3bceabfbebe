"""The two MXNet ``gluon.contrib.nn`` blocks the model zoo builds with.

``HybridConcurrent`` feeds its input to every child and concatenates their outputs along
`axis`; ``Identity`` returns its input. Their class names give MXNet's prefixes
(``hybridconcurrent0_``, ``identity0_``).
"""
from mxcy.gluon.nn import HybridSequential
from mxcy.gluon.block import HybridBlock

__all__ = ['HybridConcurrent', 'Identity']


class HybridConcurrent(HybridSequential):
    """Runs every child on the same input and concatenates the outputs along `axis`."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        outs = [block(x) for block in self._children.values()]
        return F.concat(*outs, dim=self.axis)


class Identity(HybridBlock):
    """Returns its input unchanged (a skip branch of a HybridConcurrent)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        return x
