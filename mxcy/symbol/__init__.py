"""``mx.sym``: symbolic graphs built from the same operator registry as ``mx.nd``."""
from mxcy.symbol.symbol import Symbol, Variable, var, Group
from mxcy.symbol._json import load, load_json
from mxcy.symbol import _gen
from mxcy.symbol.functions import (maximum, minimum, hypot, power, pow, zeros, ones, full,
                                   arange, linspace, eye, histogram, split_v2)

_gen.install(globals())
from mxcy.symbol import linalg  # noqa: E402
from mxcy.operator.random_ops import PUBLIC as _RANDOM_PUBLIC  # noqa: E402
for _name, _op in _RANDOM_PUBLIC.items():     # random_uniform, sample_gamma, shuffle, ...
    globals()[_name] = _gen.make_function(_op)
from mxcy.symbol import random  # noqa: E402
from mxcy.symbol import contrib  # noqa: E402

__all__ = ['Symbol', 'Variable', 'var', 'Group', 'load', 'load_json', 'maximum', 'minimum',
           'hypot', 'power', 'pow', 'zeros', 'ones', 'full', 'arange', 'linspace', 'eye',
           'histogram', 'split_v2']
