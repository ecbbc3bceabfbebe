"""OpSpec: the one declaration of an operator (STYLE.md practice 1).

An operator is a subclass of `OpSpec` registered with `register_op`. It declares its
parameters, the names of its arguments/outputs/auxiliary states (which may depend on the
parameters: no bias when ``no_bias=True``), bidirectional shape inference, type
inference, forward, backward and what backward reads. ``mx.nd.<Op>`` (and later
``mx.sym.<Op>``) are generated from this record; nobody writes a second wrapper.

Conventions:
* shapes are tuples; an unknown shape is ``None``; ``infer_shape`` returns complete lists
  (known entries filled in, unknown left ``None``) and raises `ShapeError` on a conflict;
* forward/backward receive NDArrays and push engine ops; they never wait;
* ``req`` is one of 'write', 'inplace' (both overwrite), 'add' (accumulate) or 'null'
  (skip) per output of forward, per input gradient of backward.
"""
from mxcy.base import MXNetError
from mxcy.operator._params import ParamSchema


class ShapeError(MXNetError, ValueError):
    """Shape inference found a conflict: the message names op, argument and shapes."""


class DTypeError(MXNetError, TypeError):
    """Type inference found a conflict: the message names op, argument and dtypes."""


class OpSpec:
    name = None
    aliases = ()
    params = ParamSchema()
    # which values backward reads: a subset of {'out_grads', 'inputs', 'outputs'}
    backward_needs = ('out_grads', 'inputs', 'outputs')
    # None: arguments() is fixed; else the parameter that gives the number of inputs
    variadic = None
    # names and inference depend only on (params, input shapes/dtypes), so callers may
    # cache them (mx.nd does); False for ops that run user code (Custom)
    pure_inference = True

    # ------------------------------------------------------------ names
    def arguments(self, p):
        return ['data']

    def outputs(self, p):
        return ['output']

    def aux_states(self, p):
        return []

    def num_visible_outputs(self, p):
        return len(self.outputs(p))

    # ------------------------------------------------------------ inference
    def infer_shape(self, p, in_shapes):
        """Default: one input, output of the same shape (elementwise)."""
        shape = in_shapes[0]
        return list(in_shapes), [shape] * len(self.outputs(p)), [None] * len(self.aux_states(p))

    def infer_type(self, p, in_types):
        """Default: every argument, output and aux state shares the first known dtype."""
        known = next((t for t in in_types if t is not None), None)
        for i, t in enumerate(in_types):
            if t is not None and t != known:
                raise DTypeError(f"{self.name}: argument '{self.arguments(p)[i]}' has dtype "
                                 f"{t}, expected {known} (all inputs must share one dtype)")
        return ([known] * len(in_types), [known] * len(self.outputs(p)),
                [known] * len(self.aux_states(p)))

    def infer_shape_backward(self, p, in_shapes, out_shapes):
        """Backward inference: `in_shapes` (arguments + aux states) completed from the
        known `out_shapes`. An op whose shape inference is the default elementwise one
        (MXNet's ElemwiseShape) takes an unknown input's shape from its output; other ops
        infer nothing backwards unless they override this."""
        if type(self).infer_shape is not OpSpec.infer_shape or out_shapes[0] is None:
            return in_shapes
        return [out_shapes[0] if s is None else s for s in in_shapes]

    def infer_type_backward(self, p, in_types, out_types):
        """Backward type inference: with the default (all-one-dtype) rule, unknown inputs
        take the output's dtype (MXNet's ElemwiseType)."""
        if type(self).infer_type is not OpSpec.infer_type or out_types[0] is None:
            return in_types
        return [out_types[0] if t is None else t for t in in_types]

    # ------------------------------------------------------------ compute
    def forward(self, p, is_train, req, ins, outs, aux):
        raise MXNetError(f"{self.name}: forward is not declared")

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        raise MXNetError(f"{self.name}: this operator has no gradient")

    has_backward = True

    # The gradient as recorded mx.nd calls, for autograd.grad(create_graph=True): None
    # where backward is a fused kernel only, else a method grad_graph(p, out_grads, ins,
    # outs) returning one NDArray (None: zero) per argument. It states the same
    # derivative as backward, in differentiable operators, so it can be differentiated.
    grad_graph = None

    # ------------------------------------------------------------ helpers for subclasses
    def shape_error(self, arg, expected, given, detail=''):
        msg = (f"{self.name}: shape mismatch for argument '{arg}': expected {expected}, "
               f"given {given}")
        return ShapeError(msg + (f" ({detail})" if detail else ''))


def unify_shape(op, arg, known, given):
    """Merge two views of one shape (None = unknown shape, 0 = unknown dimension, as in
    MXNet 1.x's shape_assign); raise ShapeError on a conflict."""
    if known is None:
        return None if given is None else tuple(given)
    if given is None or tuple(known) == tuple(given):
        return tuple(known)
    if len(known) == len(given) and all(not a or not b or a == b
                                        for a, b in zip(known, given)):
        return tuple(a or b for a, b in zip(known, given))
    raise op.shape_error(arg, tuple(known), tuple(given))


_REGISTRY = {}


def register_op(spec_cls):
    """Class decorator: register one operator under its name and aliases."""
    spec = spec_cls()
    if not spec.name:
        raise ValueError(f"{spec_cls.__name__} declares no name")
    for name in (spec.name,) + tuple(spec.aliases):
        if name in _REGISTRY:
            raise ValueError(f"operator {name!r} registered twice")
        _REGISTRY[name] = spec
    return spec_cls


def get_op(name):
    try:
        return _REGISTRY[name]
    except KeyError:
        raise MXNetError(f"unknown operator {name!r}") from None


def list_ops():
    return sorted(_REGISTRY)


def default_arguments(spec):
    """The op's input names under its default parameters (MXNet's generated signature:
    FullyConnected(data, weight, bias, ...)), or () when a parameter is required."""
    from mxcy.operator._params import REQUIRED, Params
    try:
        values = {n: (None if p.default is REQUIRED else p.default)
                  for n, p in spec.params.params.items()}
        if spec.variadic:
            values[spec.variadic] = 1
        return tuple(spec.arguments(Params(values))) + tuple(spec.aux_states(Params(values)))
    except Exception:  # noqa: BLE001  (arguments() needs a required parameter's value)
        return ()


def drop_none_inputs(slots, positional_params, args, kwargs):
    """MXNet's generated functions skip an input given as None (`FullyConnected(x, w,
    None, no_bias=True)`, `bias=None`); a parameter given as None stays (it means None,
    e.g. sort's axis=None). Returns (args, kwargs) without the None inputs; inputs are
    then passed by name, so none shifts into another's place."""
    kwargs = {k: v for k, v in kwargs.items() if v is not None or k not in slots}
    n = 0
    while n < len(args) and n < len(slots) and (args[n] is None or
                                               type(args[n]).__name__ in ('NDArray',
                                                                          'Symbol')):
        n += 1
    if not any(a is None for a in args[:n]):
        return args, kwargs
    named = {slots[i]: a for i, a in enumerate(args[:n]) if a is not None}
    if len(args) - n > len(positional_params):
        raise TypeError(f"takes at most {len(positional_params)} parameters after the "
                        f"inputs, got {len(args) - n}")
    for key, value in zip(positional_params, args[n:]):
        if key in kwargs:
            raise TypeError(f"parameter '{key}' given twice (positionally and by keyword)")
        kwargs[key] = value
    for key in named:
        if key in kwargs:
            raise TypeError(f"input '{key}' given twice (positionally and by keyword)")
    return (), {**named, **kwargs}


_DUMMY = {'int': 1, 'float': 1.0, 'bool': False, 'shape': (1,), 'str': '', 'dtype': 'float32'}


def _slots(spec, values):
    from mxcy.operator._params import Params
    try:
        p = Params(values)
        return list(spec.arguments(p)) + list(spec.aux_states(p))
    except Exception:  # noqa: BLE001  (a parameter combination the op rejects)
        return None


def input_names(spec):
    """Every input slot the op can take (arguments, then aux states), as MXNet's generated
    signature lists them: the slots under the default parameters, with those that other
    values of a boolean or choice parameter add (LeakyReLU's gamma for 'prelu', RNN's
    state_cell for 'lstm', sequence_length when use_sequence_length) inserted after their
    predecessor; a required parameter takes a stand-in value."""
    from mxcy.operator._params import REQUIRED
    base = {}
    for n, p in spec.params.params.items():
        if p.default is REQUIRED:
            base[n] = p.choices[0] if p.choices else _DUMMY.get(p.kind)
        else:
            base[n] = p.default
    if spec.variadic:
        base[spec.variadic] = 1
    names = _slots(spec, base)
    if names is None:
        return ()
    for n, p in spec.params.params.items():
        values = ((not base[n],) if p.kind == 'bool' and base[n] is not None
                  else p.choices or ())
        for v in values:
            variant = _slots(spec, {**base, n: v})
            for i, slot in enumerate(variant or ()):
                if slot in names:
                    continue
                at = names.index(variant[i - 1]) + 1 if i and variant[i - 1] in names else 0
                while at < len(names) and names[at] not in variant:
                    at += 1
                names.insert(at, slot)
    return tuple(names)


def op_signature(spec, tail):
    """``inspect.Signature`` of a generated function, as MXNet 1.9.1 writes them:
    ``FullyConnected(data=None, weight=None, bias=None, num_hidden=..., ..., out=None,
    name=None, **kwargs)``; variadic ops ``Concat(*data, ..., **kwargs)``. `tail` names the
    trailing keywords (``('out', 'name')`` for mx.nd, ``('name', 'attr', 'out')`` for
    mx.sym). The functions themselves take ``*args``; this only documents them."""
    import inspect
    P = inspect.Parameter
    if spec.variadic:
        params = [P('data', P.VAR_POSITIONAL)]
        params += [P(n, P.KEYWORD_ONLY, default=None) for n in spec.params.names()
                   if n != spec.variadic]
        params += [P(n, P.KEYWORD_ONLY, default=None) for n in tail]
    else:
        names = list(input_names(spec))
        names += [n for n in spec.params.names() if n not in names]
        names += [n for n in tail if n not in names]
        params = [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in names]
    return inspect.Signature(params + [P('kwargs', P.VAR_KEYWORD)])
