"""``mx.sym.linalg``: MXNet's linear-algebra operators without their ``linalg_`` prefix
(``mx.sym.linalg.gemm`` builds an ``_linalg_gemm`` node; `mxcy.operator.la_ops`)."""
from mxcy.operator.la_ops import LINALG_NAMES
from mxcy.symbol._gen import make_function

for _name in LINALG_NAMES:
    globals()[_name] = make_function('_linalg_' + _name)

__all__ = list(LINALG_NAMES)
