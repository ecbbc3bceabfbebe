"""Typed operator parameters with MXNet's string coercion and clear errors.

MXNet accepts every parameter either as a Python value or as its string form (symbols
store attributes as strings: ``kernel="(5, 5)"``, ``no_bias="True"``); both are coerced
here to one typed value, and a bad value names the operator, the parameter, what was
expected and what was given.
"""
import ast
import numbers

import numpy as np

from mxcy.base import CODE_DTYPES, MXNetError, dtype_code

REQUIRED = object()


class ParamError(MXNetError, ValueError):
    """A parameter value that does not fit its declaration (an MXNetError, as MXNet raises
    for every parameter error, and a ValueError)."""


class ParamTypeError(ParamError, TypeError):
    """A parameter value of the wrong type (also a TypeError, as Python's convention)."""


def _parse_literal(text):
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text


def _as_int(op, name, value):
    if isinstance(value, str):
        value = _parse_literal(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ParamTypeError(f"{op}: parameter '{name}' expects an integer, got {value!r}")
    return int(value)


def _as_float(op, name, value):
    if isinstance(value, str):
        value = _parse_literal(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParamTypeError(f"{op}: parameter '{name}' expects a number, got {value!r}")
    return float(value)


def _as_bool(op, name, value):
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ('true', '1'):
            return True
        if low in ('false', '0'):
            return False
        raise ParamTypeError(f"{op}: parameter '{name}' expects a boolean, got {value!r}")
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Integral)
                                               and value in (0, 1)):
        return bool(value)
    raise ParamTypeError(f"{op}: parameter '{name}' expects a boolean, got {value!r}")


def _as_shape(op, name, value):
    """A tuple of ints from a tuple/list, an int, or their string form "(5, 5)"."""
    if isinstance(value, str):
        value = _parse_literal(value)
        if value == '' or value is None:
            return ()
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                if v is None:
                    out.append(None)
                    continue
                raise ParamTypeError(f"{op}: parameter '{name}' expects a tuple of integers, "
                                 f"got {value!r}")
            out.append(int(v))
        return tuple(out)
    raise ParamTypeError(f"{op}: parameter '{name}' expects a tuple of integers, got {value!r}")


def _as_str(op, name, value):
    if not isinstance(value, str):
        raise ParamTypeError(f"{op}: parameter '{name}' expects a string, got {value!r}")
    return value


def _as_dtype(op, name, value):
    if isinstance(value, str) and value in ('None', ''):
        return None
    try:
        return np.dtype(CODE_DTYPES[dtype_code(value)]).name
    except TypeError as e:
        raise ParamError(f"{op}: parameter '{name}': {e}") from None


_COERCE = {'int': _as_int, 'float': _as_float, 'bool': _as_bool, 'shape': _as_shape,
           'str': _as_str, 'dtype': _as_dtype}


class Param:
    """One declared parameter: name, kind, default, allowed values."""

    def __init__(self, name, kind, default=REQUIRED, choices=None, optional=False,
                 doc=''):
        if kind not in _COERCE and kind != 'any':
            raise ValueError(f"unknown parameter kind {kind!r}")
        self.name = name
        self.kind = kind
        self.default = default
        self.choices = tuple(choices) if choices else None
        self.optional = optional     # None is a valid value ("not given")
        self.doc = doc

    def coerce(self, op, value):
        if value is None or (self.optional and value in ('None', '')):
            if self.optional:
                return None
            raise ParamTypeError(f"{op}: parameter '{self.name}' expects a value, got None")
        if self.kind == 'any':
            return value
        value = _COERCE[self.kind](op, self.name, value)
        if self.choices is not None and value not in self.choices:
            raise ParamError(f"{op}: parameter '{self.name}' must be one of "
                             f"{list(self.choices)}, got {value!r}")
        return value


class Params:
    """Parsed parameter values, as attributes; `attrs()` gives MXNet's string form."""

    def __init__(self, values):
        self.__dict__.update(values)

    def as_dict(self):
        return dict(self.__dict__)

    def attrs(self):
        return {k: _to_attr(v) for k, v in self.__dict__.items()}

    def __repr__(self):
        return f"Params({self.__dict__})"


def _to_attr(value):
    if isinstance(value, tuple):
        return '(' + ', '.join(str(v) for v in value) + (',)' if len(value) == 1 else ')')
    return str(value)


class ParamSchema:
    """The ordered parameters of one operator."""

    def __init__(self, *params):
        self.params = {p.name: p for p in params}

    def names(self):
        return list(self.params)

    def parse(self, op, kwargs):
        unknown = [k for k in kwargs if k not in self.params]
        if unknown:
            raise ParamTypeError(f"{op}: unexpected parameter(s) {unknown}; this operator "
                                 f"takes {self.names() or 'no parameters'}")
        values = {}
        for name, p in self.params.items():
            if name in kwargs:
                values[name] = p.coerce(op, kwargs[name])
            elif p.default is REQUIRED:
                raise ParamTypeError(f"{op}: required parameter '{name}' is missing")
            else:
                values[name] = p.default
        return Params(values)
