"""Generate ``mx.nd.<Op>`` functions from the operator registry (MXNet's _init_op_module).

Every registered name (``sum``, ``dot``, ``Concat``, ``FullyConnected`` ...) becomes one
function of ``mx.nd``, built here from the op's `OpSpec`; nothing else implements it.

Calling convention (MXNet 1.x generated functions):
* the leading positional NDArrays are the op's array arguments in declaration order
  (``data``, ``lhs``/``rhs``, ...), others may be given by name (``dot(lhs=a, rhs=b)``);
* the remaining positional values fill the parameters in schema order, so
  ``mx.nd.sum(a, 1)`` is ``mx.nd.sum(a, axis=1)``; the rest are keywords, typed values or
  MXNet's strings (``axis="(0, 1)"``);
* variadic ops (``num_args``: Concat, stack) take ``*data`` or one list/tuple of arrays;
  ``num_args`` is counted, and checked when given;
* ``out=`` (an NDArray, or a list for several visible outputs) receives the result and
  is returned; ``name=`` is accepted and ignored, as imperatively in MXNet.

Everything is validated (types, parameters, shapes and dtypes, ``out=``) before one op
is pushed, so bad input raises at the call; errors name the function as it was called
(``split``, not ``SliceChannel``), the argument, what was expected and what was given.

Per-call cost: parsed parameters are cached per op (keyed by the call's parameter
values), shape/dtype inference per parameter set (keyed by the input shapes and dtypes),
so a repeated call costs a few dict look-ups on top of the op's own forward.
"""
import numpy as np

from mxcy import autograd as _autograd
from mxcy._ndarray import NDArray, new_empty
from mxcy.base import DTYPE_CODES
from mxcy.context import Context, current_context
from mxcy.operator._params import REQUIRED
from mxcy.operator._spec import default_arguments, drop_none_inputs, op_signature

_AG_STATE = _autograd._STATE     # this thread's recording / training mode
_CACHE_LIMIT = 256      # entries per cache; a full cache is cleared (bounded memory)
_FUNCTIONS = {}         # op name -> generated function
_NO_ARRAYS = {}         # (read only) no arrays given by name


class _Plan:
    """What a call needs that depends only on the op and its parsed parameters."""
    __slots__ = ('inference', 'n_args', 'n_visible', 'names', 'p', 'req')

    def __init__(self, spec, p):
        args = spec.arguments(p)
        self.p = p
        self.names = tuple(args) + tuple(spec.aux_states(p))
        self.n_args = len(args)
        self.n_visible = spec.num_visible_outputs(p)
        self.req = ('write',) * len(spec.outputs(p))
        self.inference = {}     # input shapes + dtypes -> ((shape, dtype code, type), ...)


class _Op:
    """The generated function's state: the spec, its plans and the name it is called by."""

    def __init__(self, op_name, display=None):
        from mxcy.operator import get_op
        spec = get_op(op_name)
        self.name = display or op_name
        self.spec = spec
        self.variadic = spec.variadic
        self.positional = tuple(n for n in spec.params.names() if n != spec.variadic)
        self.pure = getattr(spec, 'pure_inference', True)
        self.forward = spec.forward
        self.plans = {}
        self.default = None         # the plan of a call without parameters (built lazily)
        self.fixed_args = default_arguments(spec)

    # ------------------------------------------------------------ the call
    def call(self, args, kwargs, out):
        try:
            plan = self.default
            if plan is not None and not kwargs and len(args) == len(plan.names):
                # hot path: arrays only, all positional (exp(a), dot(a, b))
                for a in args:
                    if not isinstance(a, NDArray):
                        break
                else:
                    return self._run(plan, list(args), out)
            if not self.variadic and (any(a is None for a in args) or
                                      any(v is None for v in kwargs.values())):
                args, kwargs = drop_none_inputs(self.fixed_args, self.positional, args,
                                                kwargs)
            return self._call(args, kwargs, out)
        except Exception as e:
            # spec code names the canonical op; the user called an alias (split, flip)
            canonical = self.spec.name
            if canonical != self.name and e.args and isinstance(e.args[0], str) and \
                    e.args[0].startswith(canonical + ':'):
                e.args = (self.name + e.args[0][len(canonical):],) + e.args[1:]
            raise

    def _call(self, args, kwargs, out):
        plan = self.default
        if self.variadic:
            arrays, extra = self._variadic_arrays(args, kwargs), ()
        else:
            arrays, extra = args, ()
            for i, a in enumerate(args):
                if not isinstance(a, NDArray):
                    arrays, extra = args[:i], args[i:]
                    break
        if kwargs or extra or self.variadic:
            named = _NO_ARRAYS
            for v in kwargs.values():
                if isinstance(v, NDArray):
                    named = {k: v for k, v in kwargs.items() if isinstance(v, NDArray)}
                    break
            plan = self._plan_for(arrays, extra, named, kwargs)
            if not named and len(arrays) == len(plan.names):
                ins = list(arrays)
            else:
                ins = self._assemble(plan, arrays, extra, named)
        else:
            if plan is None:
                plan = self._parse_plan({}, arrays, ())
                if self.pure:
                    self.default = plan
            ins = self._assemble(plan, arrays, extra, {})
        return self._run(plan, ins, out)

    def _run(self, plan, ins, out):
        """Infer (cached), allocate or check the outputs, push the op's forward."""
        n = len(ins)
        if n == 1:
            x = ins[0]
            key = (x.shape, x.dtype)
        elif n == 2:
            x, y = ins
            key = (x.shape, x.dtype, y.shape, y.dtype)
        else:
            key = tuple([x.shape for x in ins] + [x.dtype for x in ins])
        results = plan.inference.get(key)
        if results is None:
            results = self._infer(plan, ins)
            if self.pure:
                if len(plan.inference) >= _CACHE_LIMIT:
                    plan.inference.clear()
                plan.inference[key] = results
        if n:
            ctx = ins[0].context
        else:
            ctx = getattr(plan.p, 'ctx', None)
            if not isinstance(ctx, Context):
                ctx = current_context()
        like = ins[0] if n else None        # results take the first input's class (mx.np)
        if out is not None:
            outs = self._given_outs(plan, results, out, ctx, like)
        elif len(results) == 1:
            shape, code, _ = results[0]
            outs = [new_empty(shape, code, ctx, like)]
        else:
            outs = [new_empty(shape, code, ctx, like) for shape, code, _ in results]
        if _AG_STATE.recording:
            _autograd.run_op(self.spec, plan.p, plan.req, plan.n_args, ins, outs,
                             out is not None)
        elif n == plan.n_args:
            self.forward(plan.p, _AG_STATE.training, list(plan.req), ins, outs, [])
        else:
            k = plan.n_args
            self.forward(plan.p, _AG_STATE.training, list(plan.req), ins[:k], outs, ins[k:])
        if out is not None:
            return out
        if plan.n_visible == 1:
            return outs[0]
        return outs[:plan.n_visible]

    # ------------------------------------------------------------ inputs and parameters
    def _variadic_arrays(self, args, kwargs):
        arrays = args
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            arrays = tuple(args[0])
        for i, a in enumerate(arrays):
            if not isinstance(a, NDArray):
                raise TypeError(f"{self.name}: data[{i}] must be an NDArray, got "
                                f"{type(a).__name__}")
        n = len(arrays) + sum(isinstance(v, NDArray) for v in kwargs.values())
        if n == 0:
            raise ValueError(f"{self.name}: needs at least one array, got none")
        given = kwargs.get(self.variadic)
        if given is not None and given != n and str(given) != str(n):
            raise ValueError(f"{self.name}: {self.variadic}={given} but {n} arrays given")
        return arrays

    def _plan_for(self, arrays, extra, named, kwargs):
        params = {k: v for k, v in kwargs.items() if k not in named} if named else kwargs
        if extra or self.variadic:
            params = dict(params)
        if extra:
            if len(extra) > len(self.positional):
                self._raise_not_array(arrays, extra, named)
                raise TypeError(f"{self.name}: takes the parameters {list(self.positional)} "
                                f"after the array arguments, got {len(extra)} positional "
                                f"values {list(extra)}")
            for key, value in zip(self.positional, extra):
                if key in params:
                    raise TypeError(f"{self.name}: parameter '{key}' given twice "
                                    f"(positionally and by keyword)")
                params[key] = value
        if self.variadic:
            params[self.variadic] = len(arrays) + len(named)
        if not self.pure:
            return self._parse_plan(params, arrays, extra)
        key = _cache_key(params)
        try:
            plan = self.plans.get(key)
        except TypeError:           # an unhashable value (a list): parse every time
            return self._parse_plan(params, arrays, extra)
        if plan is None:
            plan = self._parse_plan(params, arrays, extra)
            if len(self.plans) >= _CACHE_LIMIT:
                self.plans.clear()
            self.plans[key] = plan
        return plan

    def _parse_plan(self, params, arrays, extra):
        try:
            p = self.spec.params.parse(self.name, params)
        except (TypeError, ValueError):
            self._raise_not_array(arrays, extra, {}, params)
            raise
        return _Plan(self.spec, p)

    def _raise_not_array(self, arrays, extra, named, params=()):
        """A value in an array argument's place that is not an NDArray: say so."""
        for key in params:
            if key in self.fixed_args and not isinstance(params[key], NDArray):
                raise TypeError(f"{self.name}: {key} must be an NDArray, got "
                                f"{type(params[key]).__name__}")
        missing = [n for n in self.fixed_args[len(arrays):] if n not in named]
        if extra and missing:
            raise TypeError(f"{self.name}: {missing[0]} must be an NDArray, got "
                            f"{type(extra[0]).__name__}")

    def _assemble(self, plan, arrays, extra, named):
        """The inputs in declaration order (arguments, then auxiliary states)."""
        names = plan.names
        if len(arrays) > len(names):
            raise TypeError(f"{self.name}: takes {len(names)} array argument(s) "
                            f"{list(names)}, got {len(arrays)}")
        inputs = list(arrays) + [None] * (len(names) - len(arrays))
        for key, value in named.items():
            if key not in names:
                raise TypeError(f"{self.name}: unexpected array argument '{key}'; it takes "
                                f"{list(names)}")
            idx = names.index(key)
            if inputs[idx] is not None:
                raise TypeError(f"{self.name}: argument '{key}' given twice")
            inputs[idx] = value
        missing = [n for n, x in zip(names, inputs) if x is None]
        if missing:
            if extra:
                raise TypeError(f"{self.name}: {missing[0]} must be an NDArray, got "
                                f"{type(extra[0]).__name__}")
            raise TypeError(f"{self.name}: missing array argument(s) {missing}; it takes "
                            f"{list(names)}")
        return inputs

    # ------------------------------------------------------------ inference and outputs
    def _infer(self, plan, ins):
        """((shape, dtype code, dtype), ...) per output, from the registry's inference."""
        spec, p, n = self.spec, plan.p, plan.n_args
        args = ins[:n]
        in_shapes, out_shapes, aux_shapes = spec.infer_shape(p, [x.shape for x in args])
        for name, want, x in zip(plan.names, list(in_shapes) + list(aux_shapes), ins):
            if want is not None and tuple(want) != x.shape:
                raise spec.shape_error(name, tuple(want), x.shape)
        _, out_types, _ = spec.infer_type(p, [np.dtype(x.dtype).name for x in args])
        results = []
        for shape, dtype in zip(out_shapes, out_types):
            if shape is None or any(d is None for d in shape):
                raise spec.shape_error('output', 'a known shape', shape,
                                       'could not infer the output shape from the inputs')
            dt = np.dtype(dtype)
            results.append((tuple(int(d) for d in shape), DTYPE_CODES[dt], dt.type))
        return tuple(results)

    def _given_outs(self, plan, results, out, ctx, like=None):
        """`out` checked against the results; hidden outputs get fresh arrays."""
        given = [out] if isinstance(out, NDArray) else out
        if not isinstance(given, (list, tuple)):
            raise TypeError(f"{self.name}: out must be an NDArray, got {type(out).__name__}")
        if len(given) != plan.n_visible:
            got = 'one NDArray' if isinstance(out, NDArray) else f'{len(out)}'
            raise TypeError(f"{self.name}: out must be {plan.n_visible} NDArray(s) for this "
                            f"call, got {got}")
        outs = []
        for o, (shape, code, dtype) in zip(given, results):
            if not isinstance(o, NDArray):
                raise TypeError(f"{self.name}: out must be an NDArray, got "
                                f"{type(o).__name__}")
            if o.shape != shape or o.dtype != dtype:
                raise ValueError(f"{self.name}: out has shape {o.shape} and dtype "
                                 f"{np.dtype(o.dtype)}, the result has shape {shape} and "
                                 f"dtype {np.dtype(dtype)}")
            outs.append(o)
        outs += [new_empty(shape, code, ctx, like) for shape, code, _ in results[len(given):]]
        return outs


def _cache_key(params):
    """The key of parsed-parameter caching (it may be unhashable: then there is none).

    Types are part of the key: ``1``, ``1.0`` and ``True`` are equal in Python but parse
    differently (an int parameter rejects True), and so are the elements of tuples.
    """
    key = []
    for k, v in params.items():
        t = type(v)
        key.append((k, v, t) if t is not tuple else (k, v, t, tuple(map(type, v))))
    return tuple(key)


def _describe(spec):
    params = []
    for name, p in spec.params.params.items():
        if p.default is REQUIRED:
            params.append(f"{name} ({p.kind}, required)")
        else:
            params.append(f"{name} ({p.kind}, default {p.default!r})")
    return ', '.join(params) or 'none'


def make_function(op_name, display=None):
    """The ``mx.nd`` function of one registered operator (or alias); errors and the
    function's name say `display` (a public name of an underscore op) when given."""
    op = _Op(op_name, display)

    def fn(*args, out=None, name=None, **kwargs):
        return op.call(args, kwargs, out)
    fn.__name__ = fn.__qualname__ = display or op_name
    fn.__signature__ = op_signature(op.spec, ('out', 'name'))
    fn.__doc__ = ((op.spec.__class__.__doc__ or op_name).strip() +
                  f"\n\nArrays: {', '.join(op.fixed_args) or 'see the operator'}; "
                  f"parameters: {_describe(op.spec)}; out=None, name=None.")
    return fn


def caller(op_name, display):
    """``call(args, kwargs, out)`` running `op_name`, its errors naming `display` (for
    MXNet's ufunc-style dispatchers: ``mx.nd.add`` runs broadcast_add or _plus_scalar)."""
    return _Op(op_name, display).call


def function(op_name):
    """The generated function of `op_name`, made once (``mx.nd.<op_name>``)."""
    fn = _FUNCTIONS.get(op_name)
    if fn is None:
        fn = _FUNCTIONS[op_name] = make_function(op_name)
    return fn


def module_attr(module, name):
    """Module ``__getattr__`` of the hand-written mx.nd modules: a registered name imported
    from them (``from mxcy.ndarray.reduce import sum``) is the generated function."""
    from mxcy.operator import list_ops
    if name in list_ops():
        return function(name)
    raise AttributeError(f"module {module!r} has no attribute {name!r}")


# Registered names whose mx.nd function is MXNet's hand-written wrapper, not the op:
# mx.nd.zeros(shape, ctx, dtype) / ones allocate directly (MXNet's ndarray/utils.py).
HAND_WRITTEN = frozenset({'zeros', 'ones', 'reset_arrays'})


def install(namespace):
    """Set ``mx.nd.<Op>`` for every registered operator (overriding what was there)."""
    import mxcy.operator  # noqa: F401  (registers the built-in operators)
    from mxcy.operator import list_ops
    for op_name in list_ops():
        if op_name in HAND_WRITTEN and op_name in namespace:
            continue
        namespace[op_name] = function(op_name)
