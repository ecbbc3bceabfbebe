"""Containers: ``Sequential`` (Gluon: ``net.add(layer, ...)``) and ``Chain`` (Flux-style
``Chain(Dense(64), relu, Dense(10), softmax)``). Both call their parts in order; a part
may be a layer, another container, a user model or a plain function such as ``relu``."""
from mxcy.nn.tracing import Block


def _check_part(container, part):
    if not callable(part):
        raise TypeError(f"{container}: every part must be callable (a layer, a model or a "
                        f"function like mx.nn.relu), got {type(part).__name__}")
    return part


class Sequential(Block):
    """Layers applied one after another."""
    _hint = 'sequential'

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix, params)
        self._layers = []

    def add(self, *blocks):
        for block in blocks:
            self._layers.append(_check_part(type(self).__name__, block))
            if isinstance(block, Block):
                self._children.append(block)
        return self

    def forward(self, x):
        for layer in self._layers:
            x = layer(x)
        return x

    def __getitem__(self, key):
        if isinstance(key, slice):
            net = type(self).__new__(type(self))
            Sequential.__init__(net)
            net.add(*self._layers[key])
            return net
        return self._layers[key]

    def __len__(self):
        return len(self._layers)

    def __iter__(self):
        return iter(self._layers)

    def __repr__(self):
        lines = [f"  ({i}): {layer.__name__ if hasattr(layer, '__name__') else repr(layer)}"
                 for i, layer in enumerate(self._layers)]
        return f"{type(self).__name__}(\n" + '\n'.join(lines) + "\n)"


HybridSequential = Sequential


class Chain(Sequential):
    """``Chain(*parts)``: a Sequential built from its parts at once (Flux's ``Chain``)."""
    _hint = 'chain'

    def __init__(self, *parts, prefix=None):
        super().__init__(prefix)
        self.add(*parts)
