"""mxcy: the MXNet 1.x programming model, compiled from Python and Cython.

``import mxcy as mx`` and use ``mx.nd``, ``mx.sym``, ``mx.engine``, ``mx.kv`` ... as in
MXNet 1.x.
"""
from mxcy import base, engine
from mxcy.base import MXNetError
from mxcy.context import Context, cpu, cpu_pinned, gpu, current_context, num_gpus
from mxcy import autograd
from mxcy import ndarray
from mxcy import ndarray as nd
from mxcy import random
from mxcy import kvstore
from mxcy import kvstore as kv
from mxcy import operator
from mxcy import name
from mxcy import attribute
from mxcy.attribute import AttrScope
from mxcy import symbol
from mxcy import symbol as sym
from mxcy import executor
from mxcy import visualization
from mxcy import visualization as viz
from mxcy import lr_scheduler
from mxcy import optimizer
from mxcy import optimizer as opt
from mxcy import test_utils
from mxcy import initializer
from mxcy import initializer as init
from mxcy import metric
from mxcy import io
from mxcy import recordio
from mxcy import image
from mxcy import image as img
from mxcy import monitor
from mxcy import monitor as mon
from mxcy import profiler


from mxcy import model
from mxcy import callback
from mxcy import module
from mxcy import module as mod
from mxcy import nn
from mxcy import rnn
from mxcy import gluon
from mxcy import util
from mxcy import contrib
from mxcy import numpy
from mxcy import numpy as np
from mxcy import numpy_extension
from mxcy import numpy_extension as npx

__version__ = '0.1.0'
