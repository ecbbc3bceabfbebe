"""``mx.nn``: the Flux-style front end over ``gluon.nn``: models written as Python code
that calls gluon layers, traced into Symbols and compiled.

    import mxcy as mx
    from mxcy.nn import Dense, relu, softmax

    class MLP:                                   # any Python class (or a gluon Block)
        def __init__(self):
            self.hidden = Dense(64, in_units=784)
            self.out = Dense(10)
        def __call__(self, x):
            return softmax(self.out(relu(self.hidden(x))))

    model = MLP()
    cm = mx.nn.compile(model, (100, 784))        # executor with grad_req='add'
    y = cm(x); dx = cm.backward(dy); cm.update(0.1)
    ff = mx.model.FeedForward.from_model(model, num_epoch=5)   # softmax -> SoftmaxOutput

The layers, ``Block``/``HybridBlock``, ``Parameter`` and ``ParameterDict`` ARE gluon's
(``mx.nn.Dense is mx.gluon.nn.Dense``; ``LSTM`` is ``gluon.rnn.LSTM``), with MXNet's
names (see ``mxcy.nn.tracing``). What the front end adds:

* ``mxcy.nn.chain``: ``Chain(layer, relu, ...)`` and the functions relu/sigmoid/tanh/
  softmax (on NDArrays and Symbols).
* ``mxcy.nn.tracing``: ``trace``/``collect_params`` of plain Python models.
* ``mxcy.nn.compiled``: ``compile`` and ``CompiledModel``.
* ``initialize``, ``save_parameters`` and ``load_parameters`` for any traced model; files
  use the checkpoint format (``arg:``/``aux:`` keys, readable by ``mx.model.load_params``;
  ``load_parameters`` also reads plain keys).
"""
from mxcy import initializer as _init
from mxcy.gluon import Block, Constant, HybridBlock, Parameter, ParameterDict
from mxcy.gluon.nn import *  # noqa: F401,F403  (every gluon.nn layer)
from mxcy.gluon.rnn import LSTM
from mxcy.nn.chain import Chain, relu, sigmoid, softmax, tanh
from mxcy.nn.compiled import CompiledModel, compile, save_params
from mxcy.nn.tracing import Traced, collect_params, trace


def initialize(model, init=None, ctx=None, force_reinit=False):
    """Initialize every parameter of `model` (`init` is the default for parameters
    without their own initializer; deferred shapes wait for ``compile``)."""
    collect_params(model).initialize(init or _init.Uniform(), ctx,
                                     force_reinit=force_reinit)


def save_parameters(model, filename):
    """Write the model's parameters (``arg:``/``aux:`` keys, the checkpoint format)."""
    traced = trace(model)
    save_params(traced.params, traced.aux_names(), filename)


def load_parameters(model, filename, ctx=None, allow_missing=False, ignore_extra=False):
    """Read parameters saved by `save_parameters`, a checkpoint or ``collect_params().save``
    (into the current arrays, or initializing those without a value)."""
    collect_params(model).load(filename, ctx, allow_missing=allow_missing,
                               ignore_extra=ignore_extra)


__all__ = [name for name in dir() if not name.startswith('_')]
