"""``mx.gluon``: MXNet 1.x's imperative and hybrid front end.

This file grows as Gluon lands; so far ``gluon.data`` (datasets, samplers, DataLoader) and
``gluon.utils`` (split_and_load, clip_global_norm, download, ...).
"""
from mxcy.gluon import data, utils
from mxcy.gluon.parameter import Constant, DeferredInitializationError, Parameter
from mxcy.gluon.parameter_dict import ParameterDict
from mxcy.gluon.block import Block, HybridBlock
from mxcy.gluon.symbol_block import SymbolBlock
