"""The initializer base: ``InitDesc``, ``Initializer`` (name-based dispatch), the
registry (``register`` / ``alias`` / ``create``) and the composites ``Load`` and ``Mixed``.
See ``mxcy.initializer`` for the contract."""
import json
import logging
import re
import warnings

import numpy as np

from mxcy import registry
from mxcy._ndarray import NDArray
from mxcy.ndarray import random as _random
from mxcy.ndarray.io import load as _nd_load


class InitDesc(str):
    """The name of a variable to initialize, with its attributes.

    `attrs` are the variable's symbol attributes (``__init__`` among them); `global_init`
    is the initializer to fall back to (set by the first initializer called with it).
    """
    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


# (suffix, method name) in match order, for InitDesc names (MXNet 1.x plus the
# BatchNorm auxiliary states, which MXNet fills through backend-set __init__ attrs).
_SUFFIX_RULES = (
    ('weight', '_init_weight'),
    ('bias', '_init_bias'),
    ('gamma', '_init_gamma'),
    ('beta', '_init_beta'),
    ('moving_mean', '_init_zero'),
    ('moving_var', '_init_one'),
    ('moving_inv_var', '_init_zero'),
    ('moving_avg', '_init_zero'),
    ('min', '_init_zero'),
    ('max', '_init_one'),
    ('weight_quantize', '_init_quantized_weight'),
    ('bias_quantize', '_init_quantized_bias'),
)


class Initializer:
    """The base class of an initializer; subclasses define ``_init_weight(desc, arr)``."""
    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log each initialized array with `print_func(arr)` (default: its RMS value).

        Verbose logging reads the arrays, so it waits for them; leave it off in loops.
        """
        self._verbose = verbose
        if print_func is None:
            def print_func(x):
                values = x.asnumpy().astype(np.float64)
                return str(np.sqrt(np.mean(values ** 2)) if values.size else 0.0)
        self._print_func = print_func
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info('Initialized %s as %s: %s', desc, init, self._print_func(arr))

    def dumps(self):
        """The initializer as a JSON string ``[name, kwargs]``, readable by ``create``."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        """Initialize the NDArray `arr` according to `desc` (see the module docstring)."""
        if not isinstance(arr, NDArray):
            raise TypeError(f"{type(self).__name__}: arr must be an NDArray, got "
                            f"{type(arr).__name__}")
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get('__init__', '')
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, method in _SUFFIX_RULES:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr):
        """MXNet's deprecated ``init(str, arr)`` path, kept with its name rules."""
        warnings.warn("Calling an initializer with init(str, NDArray) is deprecated; use "
                      "init(mx.init.InitDesc(name), NDArray)", DeprecationWarning,
                      stacklevel=3)
        if not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}: name must be a str or an InitDesc, "
                            f"got {type(name).__name__}")
        if name.startswith('upsampling'):
            self._init_bilinear(name, arr)
        elif name.startswith('stn_loc') and name.endswith('weight'):
            self._init_zero(name, arr)
        elif name.startswith('stn_loc') and name.endswith('bias'):
            self._init_loc_bias(name, arr)
        else:
            # the remaining legacy rules are the suffix rules, bias before weight
            for suffix, method in _SUFFIX_RULES:
                if name.endswith(suffix):
                    getattr(self, method)(name, arr)
                    return
            self._init_default(name, arr)

    # ------------------------------------------------------------ per-pattern rules
    def _init_bilinear(self, _, arr):
        arr[:] = bilinear_kernel(arr.shape)

    def _init_loc_bias(self, name, arr):
        if arr.shape != (6,):
            raise ValueError(f"{type(self).__name__}: {name} must have shape (6,) for the "
                             f"identity affine transform, got {arr.shape}")
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    def _init_bias(self, _, arr):
        arr[:] = 0.0

    def _init_quantized_bias(self, _, arr):
        arr[:] = 0

    def _init_gamma(self, _, arr):
        arr[:] = 1.0

    def _init_beta(self, _, arr):
        arr[:] = 0.0

    def _init_weight(self, name, arr):
        raise NotImplementedError(f"{type(self).__name__} must override _init_weight")

    def _init_quantized_weight(self, _, arr):
        def draw(gen, out):
            out[...] = gen.integers(-127, 127, size=out.shape)
        _random.push_random(draw, [], [arr], 'init_quantized_weight')

    def _init_default(self, name, _):
        raise ValueError(
            f"{type(self).__name__}: unknown initialization pattern for {str(name)!r}; "
            "default initialization covers names ending in weight, bias, gamma (1.0), "
            "beta (0.0), moving_mean, moving_var, min and max. Use "
            "mx.sym.Variable(name, init=mx.init.*) to choose one for this variable")

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._kwargs})"


_register = registry.get_register_func(Initializer, 'initializer')
alias = registry.get_alias_func(Initializer, 'initializer')
create = registry.get_create_func(Initializer, 'initializer')


def register(klass):
    """Register an Initializer subclass so ``create`` finds it by its lower-case name."""
    return _register(klass)


def bilinear_kernel(shape):
    """Bilinear upsampling weights for a (..., kh, kw) kernel, as MXNet's Bilinear."""
    if len(shape) != 4:
        raise ValueError(f"Bilinear: the weight must be 4-d (num_filter, channels, kh, kw), "
                         f"got shape {shape}")
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    x = np.arange(shape[3])
    y = np.arange(shape[2])
    plane = np.outer(1 - np.abs(y / f - c), 1 - np.abs(x / f - c)).astype(np.float32)
    return np.broadcast_to(plane, shape).copy()


# ---------------------------------------------------------------- composites
class Load:
    """Initialize variables from saved arrays: a file (``mx.nd.save`` format) or a dict.

    ``arg:`` and ``aux:`` prefixes are dropped from the saved names. A name not found is
    passed to `default_init`; without one it raises ValueError.
    """
    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            param = _nd_load(param)
        if not isinstance(param, dict):
            raise TypeError(f"Load: param must be a file name or a dict of name -> NDArray, "
                            f"got {type(param).__name__}")
        self.param = {}
        for name, arr in param.items():
            if name.startswith('arg:') or name.startswith('aux:'):
                name = name[4:]
            self.param[name] = arr
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            src = self.param[name]
            if tuple(arr.shape) != tuple(np.shape(src)):
                raise ValueError(f"Load: parameter {str(name)!r} cannot be initialized from "
                                 f"the loaded array: target shape {arr.shape}, loaded shape "
                                 f"{tuple(np.shape(src))}")
            arr[:] = src
            if self.verbose:
                logging.info('Initialized %s by loading', name)
            return
        if self.default_init is None:
            raise ValueError(f"Load: cannot initialize {str(name)!r}: it is not among the "
                             f"loaded parameters {sorted(self.param)} and no default_init "
                             "was given")
        self.default_init(name, arr)
        if self.verbose:
            logging.info('Initialized %s by default', name)


class Mixed:
    """Initialize each variable with the first initializer whose regex matches its name."""
    def __init__(self, patterns, initializers):
        if len(patterns) != len(initializers):
            raise ValueError(f"Mixed: got {len(patterns)} patterns but {len(initializers)} "
                             "initializers; they pair up one to one")
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError(f"Mixed: parameter name {str(name)!r} did not match any pattern "
                         f"{[p.pattern for p, _ in self.map]}; add a '.*' pattern at the end "
                         "with a default initializer")
