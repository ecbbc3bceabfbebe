"""Former home of the hand-written reductions of ``mx.nd``.

sum, mean, max, min, prod, nansum, nanprod, argmax, argmin, argmax_channel and norm are
registry operators (`mxcy.operator.reduce`); ``mx.nd`` generates their functions. The old
import path keeps working: ``from mxcy.ndarray.reduce import sum`` is ``mx.nd.sum``.
"""


def __getattr__(name):
    from mxcy.ndarray._gen import module_attr
    return module_attr(__name__, name)
