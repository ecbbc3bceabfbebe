"""Tracing: calling a model on a symbolic placeholder builds its graph and names its layers.

A model is any callable made of layers (a ``Block``, a ``Sequential``, or a plain Python
class whose ``__call__`` calls layers). ``trace(model)`` calls it on the placeholder
``mx.sym.var('data')``; every layer emits registered operators (``FullyConnected``,
``Convolution`` ...) whose parameters are variables named after the layer.

Naming rule (stable, readable): a layer without a name gets ``<hint><k>_`` (``dense0_``,
``conv1_``) with the smallest ``k`` free in this trace, in the order the layers are first
called, and keeps it for good, so its parameters are ``dense0_weight``, ``dense0_bias``
however many models were built before (no ever-growing global counters, mx#729). A name
is free when no layer of this trace has it and no node of the input graph starts with
it. A layer named earlier (or with ``prefix=``) keeps its name; if a new name collided
with it, the trace runs again with that name reserved. Two different layers with the same
explicit prefix are an error.

A trace is open while the outermost traced call runs (``trace()``, or the outermost
``Block`` called on a Symbol); plain functions and layers called on a Symbol outside any
trace open a short one of their own, whose free names avoid the input graph's names.
"""
import threading

from mxcy.base import MXNetError
from mxcy.nn.parameter import Parameter, ParameterDict
from mxcy.symbol import Symbol
from mxcy.symbol import var as sym_var

_STATE = threading.local()
_MAX_RETRACES = 8


class _Retrace(Exception):
    """A fresh name collided with a layer named earlier: trace again with it reserved."""


class Trace:
    """What one traced call collects: names in use, parameters and their variables."""

    def __init__(self, reserved=(), graph_ids=()):
        self.reserved = set(reserved)        # names in the input graph(s)
        self.graph_ids = set(graph_ids)      # ids of the input graphs' nodes
        self.prefixes = {}                   # layer prefix -> layer
        self.taken = set()                   # prefixes and function node names (+ '_')
        self.newly_named = []
        self.params = ParameterDict()
        self.variables = {}                  # id(Parameter) -> Symbol
        self.calls = {}                      # id(layer) -> times called
        self.resolvers = []                  # deferred-shape hooks (LSTM input size)

    def _free(self, candidate):
        if candidate + '_' in self.taken:
            return False
        return not any(r == candidate or r.startswith(candidate + '_') for r in self.reserved)

    def unique(self, hint):
        k = 0
        while not self._free(f"{hint}{k}"):
            k += 1
        return f"{hint}{k}"

    def name_layer(self, layer):
        prefix = layer._prefix
        if prefix is None:
            prefix = self.unique(layer._hint) + '_'
            layer._prefix = prefix
            self.newly_named.append(layer)
        owner = self.prefixes.get(prefix)
        if owner is None:
            self.prefixes[prefix] = layer
            self.taken.add(prefix)
        elif owner is not layer:
            if owner in self.newly_named or layer in self.newly_named:
                raise _Retrace(prefix)
            raise MXNetError(f"two different layers ({type(owner).__name__} and "
                             f"{type(layer).__name__}) are both named {prefix!r}; give them "
                             "different prefix= values")
        return prefix

    def node_name(self, layer, suffix='fwd'):
        """``dense0_fwd`` for a layer's first call, ``dense0_fwd1`` for its second
        (a layer called twice shares its parameters)."""
        count = self.calls.get((id(layer), suffix), 0)
        self.calls[(id(layer), suffix)] = count + 1
        return f"{layer._prefix}{suffix}" + (str(count) if count else '')

    def function_name(self, hint):
        name = self.unique(hint)
        self.taken.add(name + '_')
        return name

    def variable(self, param):
        found = self.variables.get(id(param))
        if found is not None:
            return found
        self.name_layer(param._owner)        # a Block whose own __call__ skipped naming
        name = param.name
        other = self.params.get(name)
        if other is not None and other is not param:
            raise MXNetError(f"two different parameters are both named {name!r}")
        self.params[name] = param
        last = param._last_variable
        if last is not None and id(last._outputs[0][0]) in self.graph_ids:
            found = last                     # already in the input graph: one node per name
        else:
            found = param._last_variable = param._make_variable()
        self.variables[id(param)] = found
        return found


def current_trace():
    return getattr(_STATE, 'trace', None)


def _graph_nodes(args):
    nodes = []
    for a in args:
        if isinstance(a, Symbol):
            nodes.extend(a._nodes())
        elif isinstance(a, (list, tuple)):
            nodes.extend(_graph_nodes(a))
    return nodes


def run_traced(fn, sources=(), reserved=None):
    """Run ``fn()`` inside the open trace, or in a new one whose free names avoid the
    names in the graphs of `sources` (or `reserved`); returns (result, trace)."""
    outer = current_trace()
    if outer is not None:
        return fn(), outer
    nodes = _graph_nodes(sources)
    reserved = {n.name for n in nodes} if reserved is None else set(reserved)
    for _ in range(_MAX_RETRACES):
        trace = Trace(reserved, map(id, nodes))
        _STATE.trace = trace
        try:
            return fn(), trace
        except _Retrace as collision:
            reserved.add(collision.args[0].rstrip('_'))
            _unname(trace)
        except BaseException:
            _unname(trace)
            raise
        finally:
            _STATE.trace = None
    raise MXNetError("tracing: layer names kept colliding; give the layers explicit "
                     "prefix= values")


def _unname(trace):
    for layer in trace.newly_named:
        layer._prefix = None


def param_variable(param):
    trace = current_trace()
    if trace is None:
        return param._make_variable()
    return trace.variable(param)


def is_symbolic(x):
    if isinstance(x, Symbol):
        return True
    return isinstance(x, (list, tuple)) and any(is_symbolic(v) for v in x)


class Traced:
    """The result of `trace`: the model's graph and its parameters (first-use order)."""

    def __init__(self, symbol, params, resolvers):
        self.symbol = symbol
        self.params = params
        self.resolvers = resolvers

    def arg_params(self):
        return {n: p for n, p in self.params.items() if p.kind == 'arg'}

    def aux_params(self):
        return {n: p for n, p in self.params.items() if p.kind == 'aux'}


def trace(model, data_name='data'):
    """Call `model` on the placeholder ``mx.sym.var(data_name)``; returns a `Traced`.
    The model must return one Symbol (the graph's output)."""
    if not callable(model):
        raise TypeError(f"trace: the model must be callable, got {type(model).__name__}")
    placeholder = sym_var(data_name)
    out, tr = run_traced(lambda: model(placeholder), reserved={data_name})
    if not isinstance(out, Symbol):
        raise TypeError(f"trace: the model must return a Symbol when called on a Symbol, "
                        f"got {type(out).__name__} (layers emit Symbols; a tuple of outputs "
                        "can be joined with mx.sym.Group)")
    args = out.list_inputs()
    dupes = sorted({n for n in args if args.count(n) > 1})
    if dupes:
        raise MXNetError(f"trace: the graph has several different variables named {dupes}; "
                         "give the layers explicit prefix= values")
    free = [n for n in args if n != data_name and n not in tr.params]
    if free:
        raise MXNetError(f"trace: the graph has free variable(s) {free} that are neither "
                         f"the input {data_name!r} nor parameters of its layers")
    params = ParameterDict((n, tr.params[n]) for n in args if n in tr.params)
    return Traced(out, params, tr.resolvers)


def collect_params(model, select=None):
    """The model's parameters by name (traces it to name its layers)."""
    params = trace(model).params
    return params.select(select) if select else params


class Block:
    """Base class of layers and models (Gluon's ``Block``/``HybridBlock``).

    A subclass defines ``forward(self, x, ...)`` in terms of layers, ``mx.sym`` operators
    and the functions of ``mx.nn``; calling it on a Symbol traces it. Its own parameters
    (if any) come from ``self._param(suffix, shape, ...)``.
    """
    _emits_nodes = False         # leaf layers name their operator nodes after themselves

    def __init__(self, prefix=None, params=None):
        if params is not None:
            raise TypeError(f"{type(self).__name__}: params= sharing is not "
                            "supported; call the same layer twice to share weights")
        object.__setattr__(self, '_prefix', prefix)
        object.__setattr__(self, '_own_params', [])
        object.__setattr__(self, '_children', [])

    def __setattr__(self, name, value):
        if isinstance(value, Block) and not hasattr(self, '_children'):
            raise MXNetError(f"{type(self).__name__}: call super().__init__() before "
                             "assigning layers")
        if isinstance(value, Block) and value not in self._children:
            self._children.append(value)
        object.__setattr__(self, name, value)

    @property
    def _hint(self):
        return type(self).__name__.lower()

    @property
    def prefix(self):
        return self._prefix

    @property
    def name(self):
        return None if self._prefix is None else self._prefix.rstrip('_')

    def _param(self, suffix, shape, init=None, kind='arg', grad_req='write',
               dtype='float32'):
        if any(p._suffix == suffix for p in self._own_params):
            raise MXNetError(f"{type(self).__name__}: parameter {suffix!r} defined twice")
        param = Parameter(self, suffix, shape, dtype=dtype, init=init, kind=kind,
                          grad_req=grad_req)
        self._own_params.append(param)
        return param

    @property
    def params(self):
        """This block's own parameters; ``self.params.get('scale', shape=(3,))`` makes
        one (Gluon's way), used in ``forward`` as ``self.scale.var()``."""
        return _OwnParams(self)

    def __call__(self, *args, **kwargs):
        if not is_symbolic(args) and not is_symbolic(tuple(kwargs.values())):
            raise TypeError(
                f"{type(self).__name__}: call it on a Symbol (tracing), e.g. "
                "model(mx.sym.var('data')); to run it on arrays compile it first: "
                "cm = mx.nn.compile(model, input_shape); cm(x)")
        out, _ = run_traced(lambda: self._traced_call(args, kwargs),
                            sources=args + tuple(kwargs.values()))
        return out

    def _traced_call(self, args, kwargs):
        if self._own_params or self._emits_nodes:
            current_trace().name_layer(self)
        return self.forward(*args, **kwargs)

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must define forward(self, x)")

    # ------------------------------------------------------------ parameters (Gluon)
    def collect_params(self, select=None):
        return collect_params(self, select)

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def save_parameters(self, filename):
        """See ``mxcy.nn.parameter``: ``arg:``/``aux:`` keys, as checkpoints."""
        self.collect_params().save(filename)

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        self.collect_params().load(filename, ctx, allow_missing, ignore_extra)

    def cast(self, dtype):
        for param in self.collect_params().values():
            param.cast(dtype)

    def __repr__(self):
        return f"{type(self).__name__}({self._repr_args()})"

    def _repr_args(self):
        return ''


class _OwnParams:
    """``block.params``: get-or-create the block's own parameters by suffix."""

    def __init__(self, block):
        self._block = block

    def get(self, name, shape, init=None, grad_req='write', dtype='float32',
            differentiable=True):
        for param in self._block._own_params:
            if param._suffix == name:
                return param
        return self._block._param(name, shape, init, grad_req=grad_req if differentiable
                                  else 'null', dtype=dtype)

    def values(self):
        return list(self._block._own_params)

    def __iter__(self):
        return iter([p._suffix for p in self._block._own_params])

    def __len__(self):
        return len(self._block._own_params)
