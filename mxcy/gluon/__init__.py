"""``mx.gluon``: MXNet 1.x's imperative and hybrid front end.

Parameters and blocks (``Parameter``, ``Block``, ``HybridBlock``, ``SymbolBlock``), the
layers (``gluon.nn``, ``gluon.rnn``), losses, ``Trainer``, ``gluon.data`` and
``gluon.utils``.
"""
from mxcy.gluon import data, utils
from mxcy.gluon.parameter import Constant, DeferredInitializationError, Parameter
from mxcy.gluon.parameter_dict import ParameterDict
from mxcy.gluon.block import Block, HybridBlock
from mxcy.gluon.symbol_block import SymbolBlock
from mxcy.gluon import loss, nn, rnn
from mxcy.gluon.trainer import Trainer
from mxcy.gluon import model_zoo
