"""``gluon.ParameterDict``: the parameters of a Block under one name prefix.

Files are MXNet's NDArray format (``mx.nd.save``): a dict of name -> array, so a dict
saved by MXNet 1.x loads here and ours load in MXNet.
"""
import re
from collections import OrderedDict

import numpy as np

from mxcy import initializer as _init

from mxcy.gluon.parameter import Constant, Parameter
from mxcy.ndarray import io as _io


class ParameterDict:
    """Parameters by full name; `get` creates or returns the one named prefix + name."""

    def __init__(self, prefix='', shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        body = '\n'.join(f'  {p!r}' for p in self._params.values())
        return f"{self._prefix} (\n{body}\n)"

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name, **kwargs):
        """The Parameter prefix + name, created with `kwargs` when new; an existing one
        must agree with them (unknown shape dimensions are filled in)."""
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            param = self._params[name] = Parameter(name, **kwargs)
            return param
        for key, value in kwargs.items():
            if key == 'shape' and value is not None:
                _merge_shape(param, value if isinstance(value, (tuple, list)) else (value,))
                continue
            existing = getattr(param, key, None)
            if value is None or existing is None or existing == value:
                continue
            if key == 'dtype' and np.dtype(existing) == np.dtype(value):
                continue
            if key == 'init' and str(existing) == str(value):
                continue
            raise AssertionError(f"Cannot retrieve Parameter '{name}' because desired "
                                 f"attribute does not match with stored for attribute "
                                 f"'{key}': desired '{value}' vs stored '{existing}'.")
        return param

    def get_constant(self, name, value=None):
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{name}'. Please specify value if you "
                               "want to create a new constant.")
            param = self._params[name] = Constant(name, value)
        elif value is not None and not isinstance(param, Constant):
            raise AssertionError(f"Parameter '{name}' already exists but it is not a "
                                 "constant.")
        return param

    def update(self, other):
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise ValueError(f"Cannot update self with other because they have "
                                 f"different Parameters with the same name '{k}'")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=_init.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize every parameter (init is the default for those without their own)."""
        if verbose and hasattr(init, 'set_verbosity'):
            init.set_verbosity(verbose=verbose)
        for p in self._params.values():
            p.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        for p in self._params.values():
            p.zero_grad()

    def reset_ctx(self, ctx):
        for p in self._params.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        seen = []
        for p in self._params.values():
            for c in p.list_ctx():
                if c not in seen:
                    seen.append(c)
        return seen

    def setattr(self, name, value):
        """Set attribute `name` (grad_req, lr_mult, ...) of every parameter."""
        for p in self._params.values():
            setattr(p, name, value)

    def select(self, pattern):
        """The parameters whose name matches the regular expression `pattern`."""
        out = ParameterDict(self._prefix)
        regex = re.compile(pattern)
        for name, p in self._params.items():
            if regex.match(name):
                out._params[name] = p
        return out

    # ------------------------------------------------------------ files
    def save(self, filename, strip_prefix=''):
        arrays = {}
        for param in self._params.values():
            weight = param._reduce()
            if not param.name.startswith(strip_prefix):
                raise ValueError(f"Prefix '{strip_prefix}' is to be striped before saving, "
                                 f"but Parameter's name '{param.name}' does not start with "
                                 f"'{strip_prefix}'.")
            arrays[param.name[len(strip_prefix):]] = weight
        _io.save(filename, arrays)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix='', cast_dtype=False, dtype_source='current'):
        loaded = _io.load(filename)
        if not isinstance(loaded, dict):
            raise ValueError(f"ParameterDict.load: {filename!r} holds a list of arrays, "
                             "not named parameters")
        self.load_dict(loaded, ctx, allow_missing, ignore_extra, restore_prefix, filename,
                       cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix='', filename=None, cast_dtype=False, dtype_source='current'):
        """Load {name: NDArray} (names as save writes them, 'arg:'/'aux:' prefixes
        dropped), each name prefixed with `restore_prefix`."""
        param_dict = {restore_prefix + (k.split(':', 1)[-1] if k.startswith(('arg:', 'aux:'))
                                        else k): v for k, v in param_dict.items()}
        where = f"file '{filename}'" if filename else 'the given dict'
        if not allow_missing:
            for name in self._params:
                if name not in param_dict:
                    raise AssertionError(f"Parameter '{name}' is missing in {where}, which "
                                         f"contains parameters: {_brief(param_dict)}. Set "
                                         "allow_missing=True to ignore missing parameters.")
        for name, value in param_dict.items():
            if name not in self._params:
                if ignore_extra:
                    continue
                raise AssertionError(f"Parameter '{name}' loaded from {where} is not present "
                                     f"in ParameterDict, which contains parameters "
                                     f"{_brief(self._params)}. Set ignore_extra=True to "
                                     "ignore.")
            self._params[name]._load_init(value, ctx, cast_dtype, dtype_source)


def _merge_shape(param, shape):
    """Unknown dimensions (0, -1) on either side take the other's; known ones must agree."""
    shape = tuple(shape)
    old = param.shape
    if old is None or len(old) != len(shape):
        param.shape = shape
        return
    merged = []
    for new, have in zip(shape, old):
        if new > 0 and have > 0 and new != have:
            raise ValueError(f"Cannot retrieve Parameter '{param.name}' because desired "
                             f"shape {shape} is incompatible with stored shape {old}")
        merged.append(have if new <= 0 else new)
    param._shape = tuple(merged)


def _brief(names):
    names = list(names)
    return ', '.join(names[:10]) + (', ...' if len(names) > 10 else '')
