"""What the front end adds to ``gluon.nn``: ``Chain`` and functions usable as layers.

``relu``, ``sigmoid``, ``tanh`` and ``softmax`` run ``mx.nd`` on an NDArray (or a NumPy
array) and emit an ``Activation``/``softmax`` node on a Symbol, named by the current
``mx.name`` manager (``relu0``, or ``<block prefix>relu0`` inside a block's name scope).

``Chain(Dense(64), relu, Dense(10), softmax)`` (Flux's ``Chain``) is a gluon
``Sequential`` built from its parts at once; a part that is a plain callable rather than
a Block is wrapped in ``gluon.nn.Lambda``.
"""
import numpy as np

from mxcy import name as _name
from mxcy import ndarray as nd
from mxcy import symbol as sym
from mxcy.gluon.block import Block
from mxcy.gluon.nn import Lambda, Sequential


def _function(hint, x, imperative, symbolic):
    if isinstance(x, np.ndarray):
        x = nd.array(x)
    if isinstance(x, nd.NDArray):
        return imperative(x)
    if not isinstance(x, sym.Symbol):
        raise TypeError(f"{hint}: expected a Symbol, NDArray or NumPy array, got "
                        f"{type(x).__name__}")
    return symbolic(x, _name.current().get(None, hint))


def relu(x):
    """max(x, 0) (``Activation(act_type='relu')``)."""
    return _function('relu', x, lambda a: nd.Activation(a, act_type='relu'),
                     lambda s, name: sym.Activation(s, act_type='relu', name=name))


def sigmoid(x):
    """1 / (1 + exp(-x)) (``Activation(act_type='sigmoid')``)."""
    return _function('sigmoid', x, lambda a: nd.Activation(a, act_type='sigmoid'),
                     lambda s, name: sym.Activation(s, act_type='sigmoid', name=name))


def tanh(x):
    """tanh(x) (``Activation(act_type='tanh')``)."""
    return _function('tanh', x, lambda a: nd.Activation(a, act_type='tanh'),
                     lambda s, name: sym.Activation(s, act_type='tanh', name=name))


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x), axis) (the ``softmax`` operator). A model ending with it can
    become a ``FeedForward`` (``FeedForward.from_model`` makes it a SoftmaxOutput)."""
    return _function('softmax', x, lambda a: nd.softmax(a, axis=axis),
                     lambda s, name: sym.softmax(s, axis=axis, name=name))


class Chain(Sequential):
    """``Chain(*parts)``: a gluon Sequential of `parts` (Blocks or plain callables)."""

    def __init__(self, *parts, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.add(*parts)

    def add(self, *blocks):
        for block in blocks:
            if not isinstance(block, Block):
                if not callable(block):
                    raise TypeError(f"{type(self).__name__}: every part must be a Block or "
                                    "a callable (a function like mx.nn.relu), got "
                                    f"{type(block).__name__}")
                with self.name_scope():
                    block = Lambda(block)
            super().add(block)
