"""Gluon parameters (MXNet 1.x ``gluon.Parameter``, ``Constant``).

A Parameter holds one array per context plus, unless grad_req is 'null', a gradient
buffer per context that autograd writes (the array is marked as an autograd variable).
A shape with unknown dimensions (0 or -1, as MXNet writes them) defers initialization
to the first forward pass, which fills the shape in (`_finish_deferred_init`).
"""
import numpy as np

from mxcy import autograd
from mxcy import initializer as _init
from mxcy import symbol as _sym
from mxcy._ndarray import NDArray
from mxcy.base import MXNetError
from mxcy.context import Context, cpu, current_context
from mxcy import ndarray as _nd
from mxcy import util as _util

_REQS = ('write', 'add', 'null')


class DeferredInitializationError(MXNetError):
    """A parameter's data was asked for before its shape was known."""


def _shape_known(shape):
    return shape is not None and all(d > 0 for d in shape)


def _as_ctx_list(ctx):
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    ctx = list(ctx)
    if not ctx or not all(isinstance(c, Context) for c in ctx):
        raise ValueError(f"ctx must be a Context or a non-empty list of Contexts, got {ctx}")
    return ctx


class Parameter:
    """A weight of a Block: data and gradient on one or more contexts."""

    def __init__(self, name, grad_req='write', shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype='default', grad_stype='default'):
        if stype != 'default' or grad_stype != 'default':
            raise ValueError(f"Parameter '{name}': only dense storage ('default') is "
                             f"supported, got stype={stype!r}, grad_stype={grad_stype!r}")
        self.name = name
        self._shape = tuple(shape) if isinstance(shape, (tuple, list)) else \
            ((shape,) if shape is not None else None)
        self.dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.init = init
        self.allow_deferred_init = allow_deferred_init
        self._differentiable = differentiable
        self._data = None           # list of NDArrays, one per context
        self._grad = None
        self._grad_req = None
        self.grad_req = grad_req if differentiable else 'null'
        self._ctx_list = None
        self._deferred = None       # (init, ctx list, default_init) while deferred
        self._var = None
        self._trainer = None

    @property
    def dtype(self):
        """The data type of the parameter's arrays (``cast`` changes it)."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self._dtype = dtype

    def __repr__(self):
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    # ------------------------------------------------------------ attributes
    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        new_shape = tuple(new_shape)
        if self._shape is not None:
            ok = len(self._shape) == len(new_shape) and all(
                old <= 0 or old == new for old, new in zip(self._shape, new_shape))
            if not ok:
                raise ValueError(f"Expected shape {new_shape} is incompatible with given "
                                 f"shape {self._shape} for Parameter '{self.name}'")
        self._shape = new_shape

    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in _REQS:
            raise ValueError(f"Parameter '{self.name}': grad_req must be one of {_REQS}, "
                             f"got {req!r}")
        if not self._differentiable:
            req = 'null'
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == 'null':
            self._grad = None
            if self._data is not None:
                for d in self._data:
                    d._ag = None
        elif self._data is not None:
            self._init_grad()

    # ------------------------------------------------------------ initialization
    def initialize(self, init=None, ctx=None, default_init=_init.Uniform(),
                   force_reinit=False):
        """Allocate and fill the data on `ctx` (deferred while the shape is unknown)."""
        if self._data is not None and not force_reinit:
            return
        self._data = self._grad = None
        ctx = _as_ctx_list(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        if not _shape_known(self._shape):
            if self.allow_deferred_init:
                self._deferred = (init, ctx, default_init)
                return
            raise ValueError(f"Cannot initialize Parameter '{self.name}' because it has "
                             f"invalid shape: {self._shape}.")
        self._deferred = (init, ctx, default_init)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        """Allocate and fill the data now that the shape is known."""
        if self._deferred is None:
            return
        init, ctx, default_init = self._deferred
        if not _shape_known(self._shape):
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has unknown shape {self._shape}: cannot finish "
                "its deferred initialization")
        self._deferred = None
        data = _nd.zeros(self._shape, ctx=cpu(), dtype=self.dtype)
        # as MXNet: the chosen initializer's weight rule fills the parameter, whatever its
        # name (layers give biases their own init, 'zeros')
        _init.create(default_init)(_init.InitDesc(self.name, {'__init__': init}), data)
        self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        self._ctx_list = list(ctx_list)
        self._data = [data.copyto(c) for c in self._ctx_list]
        self._init_grad()

    def _init_grad(self):
        if self._grad_req == 'null' or self._data is None:
            self._grad = None
            return
        self._grad = [_nd.zeros(d.shape, ctx=d.context, dtype=d.dtype) for d in self._data]
        autograd.mark_variables(self._data, self._grad, self._grad_req)

    def _check_and_get(self, arrays, ctx):
        if arrays is not None:
            if ctx is None:
                if len(arrays) == 1:
                    return arrays[0]
                ctx = current_context()
            if isinstance(ctx, (list, tuple)):
                return [self._check_and_get(arrays, c) for c in ctx]
            for c, arr in zip(self._ctx_list, arrays):
                if c == ctx:
                    return arr
            raise RuntimeError(f"Parameter '{self.name}' was not initialized on context "
                               f"{ctx}. It was only initialized on {self._ctx_list}.")
        if self._deferred is not None:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because "
                "initialization was deferred. Actual initialization happens during the "
                "first forward pass. Please pass one batch of data through the network "
                "before accessing Parameters. You can also avoid deferred initialization "
                "by specifying in_units, num_features, etc., for network layers.")
        raise RuntimeError(f"Parameter '{self.name}' has not been initialized. Note that "
                           "you should initialize parameters and create Trainer with "
                           "Block.collect_params() instead of Block.params because the "
                           "later does not include Parameters of nested child Blocks")

    # ------------------------------------------------------------ access
    # under npx.set_np() the arrays are handed out as mx.np.ndarray (the same memory and
    # autograd record; MXNet does the same)
    def data(self, ctx=None):
        """The array on `ctx` (the only one when there is one context)."""
        return _in_mode(self._check_and_get(self._data, ctx))

    def list_data(self):
        return _in_mode(self._nd_list('data'))

    def grad(self, ctx=None):
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' "
                               "because grad_req='null'")
        return _in_mode(self._check_and_get(self._grad, ctx))

    def list_grad(self):
        return _in_mode(self._nd_list('grad'))

    def _nd_list(self, which):
        """list_data() / list_grad() as mx.nd arrays in either mode (for the Trainer)."""
        if which == 'data':
            if self._data is None:
                self._check_and_get(None, None)         # raises, saying why
            return list(self._data)
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' "
                               "because grad_req='null'")
        return list(self._grad) if self._grad is not None else \
            self._check_and_get(None, None)

    def list_ctx(self):
        if self._data is None:
            if self._deferred is not None:
                return list(self._deferred[1])
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
        return list(self._ctx_list)

    def set_data(self, data):
        """Set the value on every context (or the value deferred initialization will use)."""
        self.shape = data.shape
        if self._data is None:
            if self._deferred is None:
                raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
            init, ctx, default_init = self._deferred
            self._deferred = (_init.Constant(_as_numpy(data)), ctx, default_init)
            return
        for arr in self._data:
            arr[:] = data

    def zero_grad(self):
        if self._grad is None:
            return
        for g in self._grad:
            g[:] = 0

    def reset_ctx(self, ctx):
        """Move the data (and gradients) to other contexts."""
        ctx = _as_ctx_list(ctx)
        if self._data is not None:
            value = self._data[0]
            self._init_impl(value.copyto(cpu()), ctx)
        elif self._deferred is not None:
            init, _, default_init = self._deferred
            self._deferred = (init, ctx, default_init)
        else:
            raise ValueError(f"Cannot reset context for Parameter '{self.name}' because it "
                             "has not been initialized.")

    def cast(self, dtype):
        """Convert data and gradients to `dtype`."""
        self.dtype = dtype
        self._var = None        # its __dtype__ was the old dtype: a new trace makes a new one
        if self._data is None:
            return
        self._data = [d.astype(dtype) for d in self._data]
        self._init_grad()

    def _reduce(self):
        """The value to save: the first context's data, on the CPU."""
        return self.list_data()[0].copyto(cpu())

    def _load_init(self, value, ctx, cast_dtype=False, dtype_source='current'):
        """Take `value` as this parameter's data (initializing it on `ctx` if needed)."""
        if cast_dtype:
            if dtype_source == 'current':
                value = value.astype(self.dtype)
            else:
                self.dtype = value.dtype
        if self.shape is not None:
            ok = len(self.shape) == len(value.shape) and all(
                s <= 0 or s == v for s, v in zip(self.shape, value.shape))
            if not ok:
                raise AssertionError(f"Failed loading Parameter '{self.name}' from saved params: "
                                     f"shape incompatible expected {self.shape} vs saved "
                                     f"{value.shape}")
        self.shape = value.shape
        if np.dtype(self.dtype) != np.dtype(value.dtype):
            raise AssertionError(f"Failed loading Parameter '{self.name}' from saved params: "
                                 f"dtype incompatible expected {np.dtype(self.dtype).name} vs "
                                 f"saved {np.dtype(value.dtype).name}. Set cast_dtype=True to "
                                 "cast the dtype of saved params.")
        if self._data is None:
            ctx_list = [ctx] if ctx is not None and not isinstance(ctx, (list, tuple)) else \
                (list(ctx) if ctx is not None else
                 (self._deferred[1] if self._deferred is not None else [cpu()]))
            self._deferred = None
            self._init_impl(value.copyto(cpu()), ctx_list)
        else:
            self.set_data(value)

    def var(self):
        """The Symbol variable of this parameter (for hybridized blocks)."""
        if self._var is None:
            self._var = _sym.Variable(self.name, shape=self.shape, dtype=self.dtype,
                                      lr_mult=self.lr_mult, wd_mult=self.wd_mult,
                                      init=self.init, stype='default')
        return self._var


class Constant(Parameter):
    """A parameter that never changes (grad_req 'null'), initialized with `value`."""

    def __init__(self, name, value):
        value = value if isinstance(value, NDArray) else _nd.array(np.asarray(value))
        self.value = value
        super().__init__(name, grad_req='null', shape=value.shape, dtype=value.dtype,
                         init=_init.Constant(_as_numpy(value)))

    def __repr__(self):
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @Parameter.grad_req.setter
    def grad_req(self, req):
        if req != 'null':
            raise ValueError(f"Constant '{self.name}': grad_req must stay 'null'")
        self._grad_req = 'null'


def _in_mode(x):
    """`x` (an array or a list of them) as mx.np.ndarray under npx.set_np(), else as is."""
    if _util.is_np_array():
        from mxcy.numpy_extension._op import as_np
        return as_np(x)
    return x


def _as_numpy(value):
    return value.asnumpy() if isinstance(value, NDArray) else np.asarray(value)


def __getattr__(name):
    """``gluon.parameter.ParameterDict``: MXNet defines it in this module (mxcy in
    parameter_dict.py, which imports this one), and code such as d2l's looks for it here."""
    if name == 'ParameterDict':
        from mxcy.gluon.parameter_dict import ParameterDict
        return ParameterDict
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
