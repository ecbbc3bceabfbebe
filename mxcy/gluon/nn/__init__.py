"""``gluon.nn``: MXNet 1.x's layers, as HybridBlocks over the operator registry."""
from mxcy.gluon.nn.activations import *  # noqa: F401,F403
from mxcy.gluon.nn.basic_layers import *  # noqa: F401,F403
from mxcy.gluon.nn.conv_layers import *  # noqa: F401,F403
from mxcy.gluon.block import Block, HybridBlock  # noqa: F401
from mxcy.gluon.symbol_block import SymbolBlock  # noqa: F401
