"""``mx.contrib``: MXNet 1.9.1's contributed modules, by the same names.

Working here: ``autograd`` (the early autograd API, over ``mx.autograd``), ``io``
(``DataLoaderIter``), ``ndarray``/``nd`` and ``symbol``/``sym`` (the contrib operators
mxcy has, e.g. ``ctc_loss``), ``tensorboard`` (``LogMetricsCallback``, with mxboard,
tensorboardX or torch installed) and ``text`` (token counting and ``Vocabulary``; no
pretrained embeddings).

Importable, but features mxcy does not have: ``amp`` (mixed precision), ``onnx`` and
``quantization`` (alias ``quant``). Their functions raise MXNetError naming the feature
when called; importing them never fails, so scripts that import them but take another
path still run.
"""
from mxcy.contrib import autograd, io, ndarray, symbol, tensorboard, text  # noqa: F401
from mxcy.contrib import amp, onnx, quantization  # noqa: F401
from mxcy.contrib import ndarray as nd  # noqa: F401
from mxcy.contrib import symbol as sym  # noqa: F401
from mxcy.contrib import quantization as quant  # noqa: F401

__all__ = ['amp', 'autograd', 'io', 'nd', 'ndarray', 'onnx', 'quant', 'quantization', 'sym',
           'symbol', 'tensorboard', 'text']
