"""``mx.nn``: models written as Python layers, traced into Symbols and compiled.

    import mxcy as mx
    from mxcy.nn import Dense, relu, softmax

    class MLP:                                   # any Python class (or mx.nn.Block)
        def __init__(self):
            self.hidden = Dense(64, in_units=784)
            self.out = Dense(10)
        def __call__(self, x):
            return softmax(self.out(relu(self.hidden(x))))

    model = MLP()
    cm = mx.nn.compile(model, (100, 784))        # executor with grad_req='add'
    y = cm(x); dx = cm.backward(dy); cm.update(0.1)
    ff = mx.model.FeedForward.from_model(model, num_epoch=5)   # softmax -> SoftmaxOutput

* ``mxcy.nn.layers``: Dense, Conv2D, pooling, Flatten, Activation, BatchNorm, Dropout,
  Embedding and the functions relu/sigmoid/tanh/softmax; ``mxcy.nn.recurrent``: LSTM.
* ``mxcy.nn.containers``: Sequential (``add``), Chain (``Chain(layer, ...)``).
* ``mxcy.nn.tracing``: how a model becomes a Symbol and how its layers are named
  (``dense0_weight``: per model, in call order, never from global counters).
* ``mxcy.nn.parameter``: Parameter and ParameterDict; files in the checkpoint format
  (``arg:``/``aux:`` keys, readable by ``mx.model.load_params``).
* ``mxcy.nn.compiled``: ``compile`` and ``CompiledModel``.

``collect_params``, ``initialize``, ``save_parameters`` and ``load_parameters`` are
methods of ``Block``s and, for plain Python models, functions of this module.
"""
from mxcy.nn.compiled import CompiledModel, compile
from mxcy.nn.containers import Chain, HybridSequential, Sequential
from mxcy.nn.layers import (
    Activation,
    AvgPool2D,
    BatchNorm,
    Conv2D,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    GlobalAvgPool2D,
    GlobalMaxPool2D,
    MaxPool2D,
    relu,
    sigmoid,
    softmax,
    tanh,
)
from mxcy.nn.parameter import Parameter, ParameterDict
from mxcy.nn.recurrent import LSTM
from mxcy.nn.tracing import Block, Traced, collect_params, trace

HybridBlock = Block


def initialize(model, init=None, ctx=None, force_reinit=False):
    """Initialize every parameter of `model` (a Block or a plain Python model)."""
    collect_params(model).initialize(init, ctx, force_reinit=force_reinit)


def save_parameters(model, filename):
    """Write the model's parameters (``arg:``/``aux:`` keys, the checkpoint format)."""
    collect_params(model).save(filename)


def load_parameters(model, filename, allow_missing=False, ignore_extra=False):
    """Read parameters saved by `save_parameters`, a checkpoint or a Gluon file."""
    collect_params(model).load(filename, allow_missing=allow_missing,
                               ignore_extra=ignore_extra)


__all__ = [
    'LSTM',
    'Activation',
    'AvgPool2D',
    'BatchNorm',
    'Block',
    'Chain',
    'CompiledModel',
    'Conv2D',
    'Dense',
    'Dropout',
    'Embedding',
    'Flatten',
    'GlobalAvgPool2D',
    'GlobalMaxPool2D',
    'HybridBlock',
    'HybridSequential',
    'MaxPool2D',
    'Parameter',
    'ParameterDict',
    'Sequential',
    'Traced',
    'collect_params',
    'compile',
    'initialize',
    'load_parameters',
    'relu',
    'save_parameters',
    'sigmoid',
    'softmax',
    'tanh',
    'trace',
]
