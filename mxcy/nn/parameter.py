"""Parameters of the layer front end (Gluon's ``Parameter`` / ``ParameterDict``, CPU only).

Contract:

* A ``Parameter`` belongs to one layer and is named ``<layer prefix><suffix>``
  (``dense0_weight``); the prefix is fixed the first time the model is traced (see
  ``mxcy.nn.tracing``), so a parameter has no name before that.
* Its shape may hold 0 for a size not known yet (``Dense(10)`` has weight ``(10, 0)``);
  ``mx.nn.compile`` fills it from the input shape (deferred initialization).
* ``initialize(init)`` fills the array now when the shape is known, else remembers the
  initializer until the shape is. The parameter's own ``init`` (``bias_initializer=
  'zeros'``) wins over the one given to ``initialize``, as in Gluon.
* ``data()`` is THE array: a compiled model binds it directly, so an update by the
  executor is visible here and ``set_data`` (which writes in place) is visible there.
* ``kind`` is ``'arg'`` (a learned argument) or ``'aux'`` (an auxiliary state such as
  BatchNorm's running mean); it decides the ``arg:``/``aux:`` prefix in saved files.

File format (``save`` / ``load``): an MXNet NDArray file, a dict keyed ``arg:<name>`` /
``aux:<name>`` -- exactly what ``mx.model.save_checkpoint`` writes, so
``mx.model.load_params`` reads these files and ``load`` reads checkpoints. ``load``
also accepts plain keys (Gluon's ``save_parameters`` format).
"""
import re
from collections import OrderedDict

import numpy as np

from mxcy import ndarray as nd
from mxcy.base import MXNetError
from mxcy.context import cpu
from mxcy.initializer import InitDesc, Uniform
from mxcy.initializer import create as create_init

_KINDS = ('arg', 'aux')
_GRAD_REQS = ('write', 'add', 'null')


def _init_object(init):
    return None if init is None else create_init(init)


class Parameter:
    """One learned array (or auxiliary state) of a layer."""

    def __init__(self, owner, suffix, shape, dtype='float32', init=None, grad_req='write',
                 kind='arg', lr_mult=1.0, wd_mult=1.0):
        if kind not in _KINDS:
            raise ValueError(f"Parameter: kind must be one of {_KINDS}, got {kind!r}")
        self._owner = owner
        self._suffix = suffix
        self._shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype).type
        self.init = _init_object(init)
        self.grad_req = 'null' if kind == 'aux' else grad_req
        self.kind = kind
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self._data = None
        self._grad = None
        self._deferred_init = None      # the default initializer while the shape is unknown
        self._last_variable = None      # the Symbol made by the last trace using it

    # ------------------------------------------------------------ identity
    @property
    def name(self):
        prefix = self._owner._prefix
        if prefix is None:
            raise MXNetError(f"Parameter '{self._suffix}' of a {type(self._owner).__name__} "
                             "has no name yet: names are given when the model is first "
                             "traced (mx.nn.compile, collect_params, or calling it on a "
                             "Symbol), or pass prefix= to the layer")
        return prefix + self._suffix

    def __repr__(self):
        try:
            name = self.name
        except MXNetError:
            name = f"<unnamed {self._suffix}>"
        return f"Parameter {name} (shape={self._shape}, dtype={np.dtype(self.dtype).name})"

    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in _GRAD_REQS:
            raise ValueError(f"Parameter: grad_req must be one of {_GRAD_REQS}, got {req!r}")
        self._grad_req = req

    # ------------------------------------------------------------ shape
    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        """Fill unknown (0) sizes; a known size may not change."""
        new_shape = tuple(int(d) for d in new_shape)
        old = self._shape
        if len(old) != len(new_shape) or any(o and o != n for o, n in zip(old, new_shape)):
            raise MXNetError(f"Parameter {self.name!r}: shape {new_shape} is incompatible "
                             f"with its known shape {old} (0 = not known yet)")
        self._shape = new_shape

    @property
    def shape_known(self):
        return all(d > 0 for d in self._shape)

    # ------------------------------------------------------------ values
    def initialize(self, init=None, ctx=None, default_init=None, force_reinit=False):
        """Fill the array (now, or once the shape is known). `init` overrides both the
        parameter's own initializer and `default_init` (Gluon's rule)."""
        if self._data is not None and not force_reinit:
            return
        default = _init_object(init) or _init_object(default_init) or Uniform()
        if not self.shape_known:
            self._deferred_init = (_init_object(init), default, ctx)
            return
        self._fill(_init_object(init), default, ctx)

    def _fill(self, override, default, ctx):
        if self._data is None or self._data.shape != self._shape:
            self._data = nd.zeros(self._shape, ctx=ctx or cpu(), dtype=self.dtype)
        own = override or self.init
        attrs = {'__init__': own.dumps()} if own is not None else {}
        default(InitDesc(self.name, attrs=attrs, global_init=default), self._data)
        self._deferred_init = None

    def _finish_deferred_init(self, ctx):
        """Called once the shape is known: run the remembered initializer, or the
        default one when the parameter was never initialized (a compiled model starts
        from values, as Flux layers do)."""
        if self._data is not None:
            return
        override, default, init_ctx = self._deferred_init or (None, Uniform(), None)
        self._fill(override, default, init_ctx or ctx)

    @property
    def initialized(self):
        return self._data is not None

    def data(self, ctx=None):
        if self._data is None:
            state = "its shape is not known yet (compile the model)" if not self.shape_known \
                else "call initialize() first"
            raise MXNetError(f"Parameter {self.name!r} has no value: {state}")
        return self._data

    def list_data(self):
        return [self.data()]

    def grad(self, ctx=None):
        if self._grad is None:
            raise MXNetError(f"Parameter {self.name!r} has no gradient array: it gets one "
                             "when a model using it is compiled (and grad_req is not 'null')")
        return self._grad

    def list_grad(self):
        return [self.grad()]

    def zero_grad(self):
        if self._grad is not None:
            self._grad[:] = 0

    def set_data(self, data):
        """Write `data` into the parameter (in place, so executors bound to it see it)."""
        shape = tuple(data.shape)
        if not self.shape_known:
            self.shape = shape
        if shape != self._shape:
            raise MXNetError(f"Parameter {self.name!r}: set_data got shape {shape}, the "
                             f"parameter has {self._shape}")
        if self._data is None:
            self._data = nd.zeros(self._shape, ctx=cpu(), dtype=self.dtype)
            self._deferred_init = None
        if isinstance(data, nd.NDArray):
            if np.dtype(data.dtype) != np.dtype(self.dtype):
                data = data.astype(self.dtype)
            data.copyto(self._data)
        else:
            self._data[:] = np.asarray(data, dtype=self.dtype)

    def _ensure_grad(self, ctx):
        if self.grad_req == 'null':
            return None
        if self._grad is None or self._grad.shape != self._shape:
            self._grad = nd.zeros(self._shape, ctx=ctx, dtype=self.dtype)
        return self._grad

    def cast(self, dtype):
        self.dtype = np.dtype(dtype).type
        if self._data is not None:
            self._data = self._data.astype(self.dtype)
        self._grad = None

    # ------------------------------------------------------------ symbol
    def var(self):
        """The variable standing for this parameter in a traced graph (one per trace)."""
        from mxcy.nn.tracing import param_variable
        return param_variable(self)

    def _make_variable(self):
        from mxcy import symbol as sym
        kwargs = {}
        if self.shape_known:
            kwargs['shape'] = self._shape
        if self.init is not None:
            kwargs['init'] = self.init
        if self.lr_mult != 1.0:
            kwargs['lr_mult'] = self.lr_mult
        if self.wd_mult != 1.0:
            kwargs['wd_mult'] = self.wd_mult
        return sym.var(self.name, dtype=self.dtype, **kwargs)


class ParameterDict(OrderedDict):
    """Parameters by full name, in the order the model first uses them."""

    def __repr__(self):
        body = '\n'.join(f"  {p!r}" for p in self.values())
        return f"ParameterDict(\n{body}\n)"

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialize every parameter (Gluon: `init` is the default for parameters
        without their own initializer)."""
        for param in self.values():
            param.initialize(None, ctx, default_init=init, force_reinit=force_reinit)

    def zero_grad(self):
        for param in self.values():
            param.zero_grad()

    def setattr(self, name, value):
        for param in self.values():
            setattr(param, name, value)

    def select(self, pattern):
        regex = re.compile(pattern)
        return ParameterDict((k, v) for k, v in self.items() if regex.match(k))

    def save(self, fname, strip_prefix=''):
        """Write an NDArray file keyed ``arg:<name>`` / ``aux:<name>`` (the checkpoint
        format of ``mx.model.save_checkpoint``)."""
        missing = [name for name, p in self.items() if not p.initialized]
        if missing:
            raise MXNetError(f"save_parameters: parameter(s) {missing} have no value yet "
                             "(initialize or compile the model first)")
        out = {}
        for name, param in self.items():
            if strip_prefix and not name.startswith(strip_prefix):
                raise ValueError(f"save: parameter {name!r} does not start with "
                                 f"strip_prefix {strip_prefix!r}")
            out[f"{param.kind}:{name[len(strip_prefix):]}"] = param.data()
        nd.save(fname, out)

    def load(self, fname, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix=''):
        """Read a file written by `save`, by ``mx.model.save_checkpoint`` (``arg:`` /
        ``aux:`` keys) or by Gluon (plain keys); values are written in place."""
        loaded = nd.load(fname)
        if not isinstance(loaded, dict):
            raise MXNetError(f"load_parameters: {fname} holds a list of arrays, not a dict "
                             "of named parameters")
        values = {}
        for key, value in loaded.items():
            kind, sep, name = key.partition(':')
            if sep and kind in _KINDS:
                key = name
            values[restore_prefix + key] = (kind if sep else None, value)
        if not allow_missing:
            missing = [n for n in self if n not in values]
            if missing:
                raise MXNetError(f"load_parameters: {fname} has no value for {missing} "
                                 "(pass allow_missing=True to keep their current values)")
        if not ignore_extra:
            extra = [n for n in values if n not in self]
            if extra:
                raise MXNetError(f"load_parameters: {fname} holds {extra}, which the model "
                                 f"does not have (its parameters: {list(self)}); pass "
                                 "ignore_extra=True to skip them")
        for name, (kind, value) in values.items():
            param = self.get(name)
            if param is None:
                continue
            if kind is not None and kind != param.kind:
                raise MXNetError(f"load_parameters: {fname} stores {name!r} as '{kind}:', "
                                 f"the model has it as '{param.kind}:'")
            param.set_data(value)
