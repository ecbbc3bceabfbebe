"""``mx.npx``: MXNet 1.9.1's NumPy extension — the neural-network operators on
``mx.np.ndarray`` (``npx.relu``, ``npx.fully_connected``, ``npx.reshape`` with its codes,
...), the NumPy-mode switches (``npx.set_np()``) and device helpers.

The operators are the registry's (see `_op.OPS`); nothing here computes on its own.
"""
from mxcy.base import MXNetError
from mxcy.context import (Context, cpu, cpu_pinned, gpu, current_context, num_gpus)
from mxcy.ndarray.utils import waitall
from mxcy.util import set_np, reset_np, is_np_array, is_np_shape
from mxcy.numpy_extension import _op
from mxcy.numpy_extension._op import reshape, nonzero, constraint_check
from mxcy.numpy_extension.utils import save, load
from mxcy.numpy_extension import random

for _name, _op_name in _op.OPS.items():
    globals()[_name] = _op.make(_name, _op_name)
del _name, _op_name

__all__ = ['Context', 'cpu', 'cpu_pinned', 'gpu', 'current_context', 'num_gpus', 'waitall',
           'set_np', 'reset_np', 'is_np_array', 'is_np_shape', 'reshape', 'nonzero',
           'constraint_check', 'save', 'load', 'random', 'gpu_memory_info',
           'get_cuda_compute_capability', 'classproperty', 'with_metaclass'] + list(_op.OPS)


class classproperty:
    """A read-only property of the class: ``func(cls)`` (MXNet's base.classproperty)."""

    def __init__(self, func):
        self.fget = func

    def __get__(self, obj, owner):
        return self.fget(owner)


def with_metaclass(meta, *bases):
    """A base class whose subclasses are made by `meta` with `bases` (``class
    C(with_metaclass(Meta, Base))``), as MXNet's base.with_metaclass (six's)."""
    class _Temporary(meta):
        def __new__(cls, name, this_bases, namespace):
            return meta(name, bases, namespace)
    return type.__new__(_Temporary, 'temporary_class', (), {})


def gpu_memory_info(device_id=0):
    """(free, total) bytes of GPU `device_id`: mxcy runs on CPUs, so there is none."""
    raise MXNetError(f"gpu_memory_info: no GPU {device_id}: mxcy runs on CPUs "
                     f"(npx.num_gpus() is {num_gpus()})")


def get_cuda_compute_capability(ctx):
    """The CUDA compute capability of a GPU context: mxcy runs on CPUs, so there is none."""
    if not isinstance(ctx, Context):
        raise TypeError(f"get_cuda_compute_capability: ctx must be a Context, got "
                        f"{type(ctx).__name__}")
    raise MXNetError(f"get_cuda_compute_capability: {ctx} is not a GPU context mxcy can "
                     "use (mxcy runs on CPUs)")


# F.npx: MXNet's mx.nd.npx and mx.sym.npx are the extension's imperative and symbolic faces;
# mx.nd.np (F.np in an imperative hybrid_forward) is mx.np itself
def _attach():
    import sys
    from mxcy import ndarray as _nd, numpy as _np, symbol as _sym
    from mxcy.numpy_extension import _symbol
    _nd.npx = sys.modules[__name__]
    _sym.npx = _symbol
    from mxcy.symbol import numpy as _sym_np        # mx.sym.np: F.np while tracing
    _sym.np = _sym_np
    if not hasattr(_nd, 'np'):
        _nd.np = _np


_attach()
