"""``mx.nd``: imperative, asynchronous arrays.

Every registered operator (``sum``, ``dot``, ``concat``, ``FullyConnected`` ...) is a
function generated from its registry record (`mxcy.ndarray._gen`), the same record
``mx.sym`` is built from. The hand-written functions imported below are the ones that are
not operators: constructors, I/O, random sampling, MXNet's ufunc-style dispatchers
(``add``, ``maximum`` ...: they call the generated ``broadcast_*``/``*_scalar`` ops) and
a few functions without a registry record yet.
"""
from mxcy._ndarray import NDArray, full, ones, push_numpy
from mxcy.ndarray.utils import array, arange, waitall, concatenate
from mxcy.ndarray.extra import (zeros, empty, eye, linspace, from_numpy, moveaxis,
                                onehot_encode, histogram, split_v2, to_dlpack_for_read,
                                to_dlpack_for_write, from_dlpack, reset_arrays,
                                get_oshape_of_gather_nd_op)
from mxcy.ndarray.io import save, load, load_frombuffer
from mxcy.ndarray.imdecode import imdecode
from mxcy.ndarray import random
from mxcy.ndarray.elemwise import (add, subtract, multiply, divide, modulo, power, maximum,
                                   minimum, equal, not_equal, greater, greater_equal, lesser,
                                   lesser_equal, logical_and, logical_or, logical_xor,
                                   true_divide)

__all__ = ['NDArray', 'array', 'empty', 'full', 'zeros', 'ones', 'arange', 'waitall',
           'concatenate', 'push_numpy', 'eye', 'linspace', 'from_numpy', 'moveaxis',
           'onehot_encode', 'histogram', 'split_v2', 'to_dlpack_for_read',
           'to_dlpack_for_write', 'from_dlpack', 'reset_arrays',
           'get_oshape_of_gather_nd_op', 'imdecode', 'save', 'load', 'load_frombuffer', 'random',
           'add', 'subtract', 'multiply', 'divide', 'modulo', 'power', 'maximum', 'minimum',
           'equal', 'not_equal', 'greater', 'greater_equal', 'lesser', 'lesser_equal',
           'logical_and', 'logical_or', 'logical_xor', 'true_divide',]

# mx.nd.<Op> for every registered operator (FullyConnected, sum, dot, concat, ...)
from mxcy.ndarray import _gen as _opgen
_opgen.install(globals())
__all__ += [n for n in _opgen._FUNCTIONS if not n.startswith('_')]
from mxcy.ndarray import linalg  # noqa: E402  (after the registry is loaded)
from mxcy.ndarray import contrib  # noqa: E402
contrib._install()
from mxcy.operator.random_ops import PUBLIC as _RANDOM_PUBLIC  # noqa: E402
for _name, _op in _RANDOM_PUBLIC.items():     # random_uniform, sample_gamma, shuffle, ...
    globals()[_name] = _opgen.make_function(_op, _name)
    __all__.append(_name)
