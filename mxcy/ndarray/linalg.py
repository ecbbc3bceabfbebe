"""Former home of the hand-written matrix products of ``mx.nd``.

dot and batch_dot are registry operators (`mxcy.operator.linalg`); ``mx.nd`` generates
their functions. The old import path keeps working: ``from mxcy.ndarray.linalg import
dot`` is ``mx.nd.dot``.
"""


def __getattr__(name):
    from mxcy.ndarray._gen import module_attr
    return module_attr(__name__, name)
