"""``mx.sym``: symbolic graphs built from the same operator registry as ``mx.nd``."""
from mxcy.symbol.symbol import Symbol, Variable, var, Group
from mxcy.symbol._json import load, load_json
from mxcy.symbol import _gen

_gen.install(globals())

__all__ = ['Symbol', 'Variable', 'var', 'Group', 'load', 'load_json']
