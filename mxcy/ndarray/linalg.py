"""``mx.nd.linalg``: MXNet's linear-algebra operators without their ``linalg_`` prefix
(``mx.nd.linalg.gemm`` is the generated ``_linalg_gemm``; `mxcy.operator.la_ops`).

The former hand-written dot/batch_dot lived here; they are registry operators now, and
``from mxcy.ndarray.linalg import dot`` still gives ``mx.nd.dot``.
"""
from mxcy.operator.la_ops import LINALG_NAMES


def _install():
    from mxcy.ndarray._gen import function
    for name in LINALG_NAMES:
        globals()[name] = function('_linalg_' + name)


_install()


def __getattr__(name):
    from mxcy.ndarray._gen import module_attr
    return module_attr(__name__, name)


__all__ = list(LINALG_NAMES)
