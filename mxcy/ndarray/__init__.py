"""``mx.nd``: imperative, asynchronous arrays."""
from mxcy._ndarray import NDArray, empty, full, zeros, ones, push_numpy
from mxcy.ndarray.utils import array, arange, waitall, zeros_like, ones_like, concatenate
from mxcy.ndarray.io import save, load, load_frombuffer
from mxcy.ndarray import random
from mxcy.ndarray.random import (random_uniform, random_normal, random_randint,
                                 random_exponential, random_gamma, random_poisson,
                                 sample_uniform, sample_normal, sample_gamma, sample_poisson)

from mxcy.ndarray import elemwise as _elemwise, reduce as _reduce, shaping as _shaping
from mxcy.ndarray import indexing as _indexing, linalg as _linalg
from mxcy.ndarray.elemwise import *  # noqa: F401,F403  (exports listed in __all__)
from mxcy.ndarray.reduce import *  # noqa: F401,F403
from mxcy.ndarray.shaping import *  # noqa: F401,F403
from mxcy.ndarray.indexing import *  # noqa: F401,F403
from mxcy.ndarray.linalg import *  # noqa: F401,F403

__all__ = ['NDArray', 'array', 'empty', 'full', 'zeros', 'ones', 'arange', 'waitall',
           'zeros_like', 'ones_like', 'concatenate', 'push_numpy']

__all__ += (_elemwise.__all__ + _reduce.__all__ + _shaping.__all__ + _indexing.__all__ +
            _linalg.__all__)
__all__ += ['save', 'load', 'load_frombuffer', 'random', 'random_uniform', 'random_normal',
            'random_randint', 'random_exponential', 'random_gamma', 'random_poisson',
            'sample_uniform', 'sample_normal', 'sample_gamma', 'sample_poisson']

# mx.nd.<Op> for every registered operator not defined above (FullyConnected, ...)
from mxcy.ndarray import _gen as _opgen  # noqa: E402
_opgen.install(globals())
