"""Tracing: a model called on ``mx.sym.var('data')`` returns its graph as a Symbol.

A model is any callable that calls gluon blocks: a ``Block``, a ``Chain``, a plain Python
class whose ``__call__`` calls layers, or a function. A HybridBlock called with a Symbol
returns a Symbol; names are gluon's (MXNet's): a layer takes its prefix when it is made
(``dense0_``, from the thread's ``mx.name`` manager; ``with mx.name.NameManager():``
restarts the counters), so its parameters are ``dense0_weight``, ``dense0_bias``.

The parameters of a traced model are those of the blocks reachable from it (Flux's
``params``): attributes of objects, items of lists, tuples and dicts, a function's
closure and the globals it names, a bound method's object, the ``__call__`` of an
object's class. A graph variable that is
neither the input nor such a parameter (a layer made inside the call, say) is an error
that names it.
"""
import types

from mxcy.base import MXNetError
from mxcy._ndarray import NDArray
from mxcy.gluon import Parameter, ParameterDict
from mxcy.gluon.block import Block
from mxcy.gluon.rnn import GRU, LSTM, RNN
from mxcy.symbol import Symbol
from mxcy.symbol import var as sym_var

_LEAVES = (str, bytes, int, float, complex, bool, type, types.ModuleType, Symbol, NDArray,
           Parameter)


def _reachable_blocks(model):
    """Every gluon Block reachable from `model` (see the module docstring)."""
    blocks, seen, stack = [], set(), [model]
    while stack:
        obj = stack.pop()
        if obj is None or isinstance(obj, _LEAVES) or id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, Block):
            blocks.append(obj)
            stack.extend(obj._children.values())
        if isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, types.FunctionType):
            stack.extend(c.cell_contents for c in obj.__closure__ or ()
                         if c.cell_contents is not c)
            stack.extend(obj.__globals__[n] for n in obj.__code__.co_names
                         if n in obj.__globals__)
        elif isinstance(obj, types.MethodType):
            stack.extend((obj.__self__, obj.__func__))
        elif hasattr(obj, '__dict__') and not isinstance(obj, types.BuiltinFunctionType):
            call = getattr(type(obj), '__call__', None)
            if isinstance(call, types.FunctionType):        # a class's closure, globals
                stack.append(call)
            stack.extend(v for k, v in vars(obj).items() if k not in ('_reg_params',
                                                                      '_params', '_scope'))
            if hasattr(obj, 'func') and hasattr(obj, 'args'):      # functools.partial
                stack.extend((obj.func, obj.args))
    return blocks


class Traced:
    """The result of `trace`: the model's graph, its parameters (a gluon ParameterDict,
    in graph order) and, for recurrent layers whose input size is deferred, the Symbol
    each was called on (compile infers its shape)."""

    def __init__(self, symbol, params, rnn_inputs):
        self.symbol = symbol
        self.params = params
        self.rnn_inputs = rnn_inputs

    def aux_names(self):
        return set(self.symbol.list_auxiliary_states())


def trace(model, data_name='data'):
    """Call `model` on the placeholder ``mx.sym.var(data_name)``; returns a `Traced`.
    The model must return one Symbol (the graph's output)."""
    if not callable(model):
        raise TypeError(f"trace: the model must be callable, got {type(model).__name__}")
    blocks = _reachable_blocks(model)
    rnn_inputs, handles = [], []
    for block in blocks:
        if isinstance(block, (RNN, LSTM, GRU)):
            handles.append(block.register_forward_pre_hook(
                lambda b, args: rnn_inputs.append((b, args[0]))))
    try:
        out = model(sym_var(data_name))
    finally:
        for handle in handles:
            handle.detach()
    if not isinstance(out, Symbol):
        raise TypeError(f"trace: the model must return a Symbol when called on a Symbol, "
                        f"got {type(out).__name__} (layers emit Symbols; a tuple of outputs "
                        "can be joined with mx.sym.Group)")
    args = out.list_inputs()
    dupes = sorted({n for n in args if args.count(n) > 1})
    if dupes:
        raise MXNetError(f"trace: the graph has several different variables named {dupes} "
                         "(layers made in different mx.name.NameManager scopes?); give the "
                         "layers distinct prefix= values")
    by_node = {}
    for block in blocks:
        for param in block.params.values():
            by_node[id(param.var()._outputs[0][0])] = param
    params, free = ParameterDict(), []
    for node in out._nodes():
        if node.is_variable and node.name != data_name:
            param = by_node.get(id(node))
            if param is None:
                free.append(node.name)
            else:
                params.update({node.name: param})
    if free:
        raise MXNetError(f"trace: the graph has free variable(s) {free} that are neither "
                         f"the input {data_name!r} nor parameters of the blocks reachable "
                         "from the model (keep its layers in attributes or in the closure "
                         "of the model function)")
    return Traced(out, params, rnn_inputs)


def collect_params(model, select=None):
    """The model's parameters by name, in graph order (a gluon ParameterDict)."""
    params = trace(model).params
    return params.select(select) if select else params
