"""``mx.sym.contrib``: the ``_contrib_*`` registry operators without their prefix."""
from mxcy.operator import list_ops
from mxcy.symbol._gen import make_function

__all__ = []
for _op in list_ops():
    if _op.startswith('_contrib_'):
        globals()[_op[len('_contrib_'):]] = make_function(_op)
        __all__.append(_op[len('_contrib_'):])

import sys  # noqa: E402
from mxcy.operator.optimizer_contrib_ops import install_fronts  # noqa: E402
__all__ += install_fronts(globals(), sys.modules['mxcy.symbol'], multi=False)
