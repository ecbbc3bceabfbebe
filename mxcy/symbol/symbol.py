"""Symbol: a graph of registered operators, composed lazily, inferred, bound later.

A graph is made of `_Node`s: a variable (``op is None``) or an operator with parsed
parameters, user attributes and inputs ``(node, output_index)`` in the order
``arguments + aux_states`` of its declaration. A Symbol is a list of such outputs.
Variables are arguments unless some operator takes them in an auxiliary-state slot.
"""
import numbers

import numpy as np

from mxcy.base import MXNetError

_VAR_ATTRS = ('__shape__', '__dtype__', '__init__', '__lr_mult__', '__wd_mult__',
              '__storage_type__')
_STYPE_IDS = {'default': 0, 'row_sparse': 1, 'csr': 2}     # MXNet's storage type ids
# attributes MXNet stores as ``__key__`` and lists under both names (its "hidden keys";
# profiler_scope is not one of them: MXNet 1.9.1 stores it as given)
HIDDEN_KEYS = ('ctx_group', 'lr_mult', 'wd_mult', 'force_mirroring', 'mirror_stage')


def stored_attrs(attrs):
    """User attributes as MXNet stores them: ``lr_mult`` becomes ``__lr_mult__``."""
    return {(f"__{k}__" if k in HIDDEN_KEYS else k): v for k, v in (attrs or {}).items()}


def check_attr_values(attrs, where):
    """MXNet keeps attributes as strings and refuses other values."""
    for key, value in (attrs or {}).items():
        if not isinstance(value, str):
            raise ValueError(f"{where}: attribute {key!r} must be a string (MXNet stores "
                             f"attributes as strings), got {type(value).__name__} {value!r}")
    return attrs


def is_dunder(key):
    return key.startswith('__') and key.endswith('__') and len(key) > 4


def _listed(attrs):
    """Attributes as MXNet lists them: a hidden ``__lr_mult__`` also as ``lr_mult``."""
    out = dict(attrs)
    for key in HIDDEN_KEYS:
        if f"__{key}__" in attrs:
            out[key] = attrs[f"__{key}__"]
    return out


class _Node:
    __slots__ = ('op', 'name', 'params', 'attrs', 'inputs', 'given')

    def __init__(self, op, name, params=None, attrs=None, inputs=(), given=None):
        self.op = op
        self.name = name
        self.params = params
        self.attrs = dict(attrs or {})
        self.inputs = list(inputs)
        # the parameters set explicitly: MXNet keeps (and shows, and saves) only those
        self.given = frozenset(given if given is not None else
                               (params.as_dict() if params is not None else ()))

    @property
    def is_variable(self):
        return self.op is None

    def output_names(self, visible_only=True):
        if self.op is None:
            return [self.name]
        names = self.op.outputs(self.params)
        if visible_only:
            names = names[:self.op.num_visible_outputs(self.params)]
        return [f"{self.name}_{n}" for n in names]

    def num_args(self):
        return len(self.op.arguments(self.params))

    def all_attrs(self):
        """User attributes plus the explicitly given operator parameters in MXNet's
        string form (defaults are not listed, as in MXNet's ``list_attr``/JSON)."""
        out = {}
        if self.op is not None:
            out = {k: v for k, v in self.params.attrs().items() if k in self.given}
        out.update(self.attrs)
        return out


def topo_order(heads):
    """Nodes reachable from `heads` in DFS post-order (inputs before users, first-visit
    order): the order MXNet lists arguments in."""
    order, seen = [], set()
    for head, _ in heads:
        if id(head) in seen:
            continue
        stack = [(head, 0)]
        seen.add(id(head))
        while stack:
            node, i = stack.pop()
            if i < len(node.inputs):
                stack.append((node, i + 1))
                child = node.inputs[i][0]
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                order.append(node)
    return order


def aux_variable_ids(nodes):
    out = set()
    for node in nodes:
        if node.op is not None:
            for child, _ in node.inputs[node.num_args():]:
                out.add(id(child))
    return out


class Symbol:
    """A symbolic value: one or more outputs of a graph."""

    __array_priority__ = 1000.0

    def __init__(self, outputs):
        self._outputs = list(outputs)

    # ------------------------------------------------------------ structure
    @property
    def name(self):
        if len(self._outputs) != 1:
            return None
        return self._outputs[0][0].name

    def _nodes(self):
        return topo_order(self._outputs)

    def list_arguments(self):
        nodes = self._nodes()
        aux = aux_variable_ids(nodes)
        return [n.name for n in nodes if n.is_variable and id(n) not in aux]

    def list_auxiliary_states(self):
        nodes = self._nodes()
        aux = aux_variable_ids(nodes)
        return [n.name for n in nodes if n.is_variable and id(n) in aux]

    def list_inputs(self):
        return [n.name for n in self._nodes() if n.is_variable]

    def list_outputs(self):
        out = []
        for node, idx in self._outputs:
            out.append(node.name if node.is_variable else node.output_names(False)[idx])
        return out

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([o]) for o in self._outputs)

    def __getitem__(self, index):
        if isinstance(index, str):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise ValueError(f"Symbol has no output named {index!r}; outputs: {names}")
            if len(matches) > 1:
                raise ValueError(f"Symbol has several outputs named {index!r}")
            index = matches[0]
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if not isinstance(index, numbers.Integral):
            raise TypeError(f"Symbol index must be an int or an output name, got {index!r}")
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"Symbol output index {index} out of range "
                             f"({len(self._outputs)} outputs)")
        return Symbol([self._outputs[index]])

    def get_internals(self):
        """Every visible output of every node, in topological order, as a Group."""
        outs = []
        for node in self._nodes():
            count = 1 if node.is_variable else node.op.num_visible_outputs(node.params)
            outs.extend((node, i) for i in range(count))
        return Symbol(outs)

    def get_children(self):
        """The inputs of this symbol's head nodes, as a Group (None when there are none,
        e.g. for a variable)."""
        inputs = [entry for node, _ in self._outputs for entry in node.inputs]
        return Symbol(inputs) if inputs else None

    def _single_head(self, what):
        if len(self._outputs) != 1:
            raise MXNetError(f"{what} needs a single-output symbol, this one has "
                             f"{len(self._outputs)} outputs")
        return self._outputs[0][0]

    # ------------------------------------------------------------ attributes
    def attr(self, key):
        node = self._single_head('attr')
        attrs = node.all_attrs()
        return attrs.get(f"__{key}__" if key in HIDDEN_KEYS else key)

    def list_attr(self, recursive=False):
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been "
                                     "deprecated. Please use attr_dict instead.")
        return _listed(self._single_head('list_attr').all_attrs())

    def attr_dict(self):
        return {n.name: _listed(n.all_attrs()) for n in self._nodes() if n.all_attrs()}

    def _set_attr(self, **kwargs):
        node = self._single_head('_set_attr')
        check_attr_values(kwargs, '_set_attr')
        attrs = stored_attrs(kwargs)
        if node.op is not None and node.op.params.names():
            # MXNet reads an operator's plain keys as its parameters, fixed at creation
            plain = [k for k in attrs if not is_dunder(k)]
            if plain:
                raise MXNetError(f"_set_attr: {plain} on operator node {node.name!r} "
                                 f"({node.op.name}) are neither parameters to change after "
                                 f"creation nor attributes: an operator's attributes look "
                                 f"like '__key__' or are one of {list(HIDDEN_KEYS)}")
        node.attrs.update(attrs)

    # ------------------------------------------------------------ composition
    def __copy__(self):
        return self._copy_with({})

    def __deepcopy__(self, memo):
        return self._copy_with({})

    def copy(self):
        return self._copy_with({})

    def _copy_with(self, replace):
        """A copy of the graph where variables named in `replace` become those outputs."""
        mapping = {}
        for node in self._nodes():
            if node.is_variable and node.name in replace:
                continue
            inputs = []
            for child, idx in node.inputs:
                if child.is_variable and child.name in replace:
                    inputs.append(replace[child.name])
                else:
                    inputs.append((mapping[id(child)], idx))
            mapping[id(node)] = _Node(node.op, node.name, node.params, node.attrs, inputs,
                                      node.given)
        outs = []
        for node, idx in self._outputs:
            if node.is_variable and node.name in replace:
                outs.append(replace[node.name])
            else:
                outs.append((mapping[id(node)], idx))
        return Symbol(outs)

    def __call__(self, *args, **kwargs):
        """Compose: replace free variables (positionally in list_arguments order, or by
        name) by other symbols, returning a new symbol."""
        kwargs.pop('name', None)
        replace = {}
        arg_names = self.list_arguments()
        if args and kwargs:
            raise TypeError("compose takes positional or keyword symbols, not both")
        if len(args) > len(arg_names):
            raise TypeError(f"compose: {len(args)} symbols for {len(arg_names)} arguments "
                            f"{arg_names}")
        for name, value in list(zip(arg_names, args)) + list(kwargs.items()):
            if not isinstance(value, Symbol) or len(value._outputs) != 1:
                raise TypeError(f"compose: argument {name!r} must be a single-output Symbol, "
                                f"got {type(value).__name__}")
            if name not in arg_names:
                raise ValueError(f"compose: this symbol has no free variable {name!r}; "
                                 f"its arguments are {arg_names}")
            replace[name] = value._outputs[0]
        return self._copy_with(replace)

    # ------------------------------------------------------------ inference
    def infer_shape(self, *args, **kwargs):
        """(arg_shapes, out_shapes, aux_shapes) from the shapes given by name; when they
        do not decide every shape, MXNet's warning naming the undecided arguments and
        (None, None, None)."""
        from mxcy.symbol._infer import infer_shape
        return infer_shape(self, args, kwargs, partial=False, strict=False)

    def infer_shape_partial(self, *args, **kwargs):
        """What is known: ``()`` for an unknown shape, 0 for an unknown dimension."""
        from mxcy.symbol._infer import infer_shape
        return infer_shape(self, args, kwargs, partial=True)

    def infer_type(self, *args, **kwargs):
        """(arg_types, out_types, aux_types); undecided: a warning and (None, None, None)."""
        from mxcy.symbol._infer import infer_type
        return infer_type(self, args, kwargs, strict=False)

    def infer_type_partial(self, *args, **kwargs):
        """What is known, None for an unknown dtype."""
        from mxcy.symbol._infer import infer_type
        return infer_type(self, args, kwargs, partial=True)

    def _infer_shape_strict(self, **kwargs):
        """infer_shape for bind/Module: an MXNetError naming what is undecided."""
        from mxcy.symbol._infer import infer_shape
        return infer_shape(self, (), kwargs, partial=False)

    def _infer_type_strict(self, **kwargs):
        from mxcy.symbol._infer import infer_type
        return infer_type(self, (), kwargs)

    # ------------------------------------------------------------ serialisation
    def tojson(self, remove_amp_cast=True):
        """The graph as MXNet's JSON (mxcy inserts no amp_cast nodes to remove)."""
        from mxcy.symbol._json import to_json
        return to_json(self)

    def save(self, fname, remove_amp_cast=True):
        with open(fname, 'w', encoding='utf-8') as f:
            f.write(self.tojson(remove_amp_cast))

    def __getstate__(self):
        return {'json': self.tojson()}

    def __setstate__(self, state):
        from mxcy.symbol._json import load_json
        self._outputs = load_json(state['json'])._outputs

    def debug_str(self):
        """The graph in MXNet's (nnvm's) text format: outputs, then each variable and each
        operator with its inputs and attributes, in topological order."""
        if len(self._outputs) == 1 and self._outputs[0][0].is_variable:
            return f"Variable:{self._outputs[0][0].name}\n"
        lines = ["Symbol Outputs:"]
        lines.extend(f"\toutput[{i}]={node.name}({idx})"
                     for i, (node, idx) in enumerate(self._outputs))
        for node in self._nodes():
            if node.is_variable:
                lines.append(f"Variable:{node.name}")
                continue
            lines.append('-' * 20)
            lines.append(f"Op:{node.op.name}, Name={node.name}")
            lines.append("Inputs:")
            for i, (child, idx) in enumerate(node.inputs):
                suffix = ' version=0' if child.is_variable else ''
                lines.append(f"\targ[{i}]={child.name}({idx}){suffix}")
            attrs = node.all_attrs()
            if attrs:
                lines.append("Attrs:")
                lines.extend(f"\t{k}={attrs[k]}" for k in sorted(attrs))
        return '\n'.join(lines) + '\n'

    def __repr__(self):
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        return f"<Symbol group [{', '.join(node.name for node, _ in self._outputs)}]>"

    __str__ = __repr__

    # ------------------------------------------------------------ binding
    def simple_bind(self, ctx, grad_req='write', type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        from mxcy.executor import simple_bind
        return simple_bind(self, ctx, grad_req, type_dict, shared_exec=shared_exec, **kwargs)

    def bind(self, ctx, args, args_grad=None, grad_req='write', aux_states=None,
             group2ctx=None, shared_exec=None):
        from mxcy.executor import Executor
        return Executor(self, ctx, args, args_grad, grad_req, aux_states)

    def eval(self, ctx=None, **kwargs):
        from mxcy.context import current_context
        exe = self.bind(ctx or current_context(), kwargs)
        return exe.forward()

    # ------------------------------------------------------------ arithmetic
    def _binary(self, other, op, scalar_op, rscalar_op=None, reverse=False):
        from mxcy.symbol._gen import make_op_symbol
        from mxcy.util import is_np_array
        if is_np_array():               # npx.set_np(): NumPy semantics, as mx.sym.np
            from mxcy.symbol import numpy as np_sym
            return np_sym.dunder(self, other, op, reverse)
        if isinstance(other, Symbol):
            args = (other, self) if reverse else (self, other)
            return make_op_symbol(op, args, {})
        if isinstance(other, numbers.Number) and not isinstance(other, bool):
            name = rscalar_op if reverse and rscalar_op else scalar_op
            return make_op_symbol(name, (self,), {'scalar': float(other)})
        if isinstance(other, np.generic):
            return self._binary(other.item(), op, scalar_op, rscalar_op, reverse)
        return NotImplemented

    def __add__(self, other):
        return self._binary(other, '_Plus', '_PlusScalar')

    def __radd__(self, other):
        return self._binary(other, '_Plus', '_PlusScalar', reverse=True)

    def __sub__(self, other):
        return self._binary(other, '_Minus', '_MinusScalar')

    def __rsub__(self, other):
        return self._binary(other, '_Minus', '_MinusScalar', '_RMinusScalar', reverse=True)

    def __mul__(self, other):
        return self._binary(other, '_Mul', '_MulScalar')

    def __rmul__(self, other):
        return self._binary(other, '_Mul', '_MulScalar', reverse=True)

    def __truediv__(self, other):
        return self._binary(other, '_Div', '_DivScalar')

    def __rtruediv__(self, other):
        return self._binary(other, '_Div', '_DivScalar', '_RDivScalar', reverse=True)

    def __mod__(self, other):
        return self._binary(other, '_Mod', '_ModScalar')

    def __rmod__(self, other):
        return self._binary(other, '_Mod', '_ModScalar', '_RModScalar', reverse=True)

    def __pow__(self, other):
        return self._binary(other, '_Power', '_PowerScalar')

    def __rpow__(self, other):
        return self._binary(other, '_Power', '_PowerScalar', '_rpower_scalar', reverse=True)

    def __neg__(self):
        return self._binary(-1.0, '_Mul', '_MulScalar')

    def __eq__(self, other):
        return self._binary(other, '_equal', '_equal_scalar')

    def __ne__(self, other):
        return self._binary(other, '_not_equal', '_not_equal_scalar')

    def __gt__(self, other):
        return self._binary(other, '_greater', '_greater_scalar')

    def __ge__(self, other):
        return self._binary(other, '_greater_equal', '_greater_equal_scalar')

    def __lt__(self, other):
        return self._binary(other, '_lesser', '_lesser_scalar')

    def __le__(self, other):
        return self._binary(other, '_lesser_equal', '_lesser_equal_scalar')

    def __hash__(self):
        return id(self)

    def __bool__(self):
        raise TypeError("a Symbol has no truth value; compare NDArrays after "
                                  "binding and running it")

    def __getattr__(self, name):
        """``sym.exp()`` etc.: registered operators taking this symbol first."""
        if name.startswith('_'):
            raise AttributeError(name)
        from mxcy.symbol._gen import method_op
        fn = method_op(name)
        if fn is None:
            raise AttributeError(f"'Symbol' object has no attribute {name!r}")
        return _fluent(fn, self)

    # ------------------------------------------------ MXNet's fluent methods with own names
    def expand_dims(self, axis, inplace=False):
        return self.__getattr__('expand_dims')(axis=axis)

    def flatten(self, inplace=False):
        return self.__getattr__('flatten')()

    def squeeze(self, axis=None, inplace=False):
        return self.__getattr__('squeeze')(axis=axis)

    def diag(self, k=0, **kwargs):
        return self.__getattr__('diag')(k=k, **kwargs)

    def astype(self, *args, **kwargs):
        return self.__getattr__('Cast')(*args, **kwargs)

    def split_v2(self, *args, **kwargs):
        from mxcy.symbol.functions import split_v2
        return split_v2(self, *args, **kwargs)

    def as_nd_ndarray(self):
        return self

    def as_np_ndarray(self):
        return self

    def get_backend_symbol(self, backend):
        raise MXNetError(f"get_backend_symbol: backend {backend!r} is not available; mxcy "
                         "has no graph-partitioning backends (MKLDNN, TensorRT)")

    def optimize_for(self, backend, args=None, aux=None, ctx=None, shape_dict=None,
                     type_dict=None, stype_dict=None, skip_infer=False, **kwargs):
        raise MXNetError(f"optimize_for: backend {backend!r} is not available; mxcy has no "
                         "graph-partitioning backends (MKLDNN, TensorRT)")

    def gradient(self, wrt):
        raise NotImplementedForSymbol('gradient', 'bind the symbol and call backward, or '
                                      'use mx.autograd')

    def as_in_context(self):
        raise NotImplementedForSymbol('as_in_context', 'a symbol is placed when bound')

    def asnumpy(self):
        raise NotImplementedForSymbol('asnumpy')

    def asscalar(self):
        raise NotImplementedForSymbol('asscalar')

    def wait_to_read(self):
        raise NotImplementedForSymbol('wait_to_read')

    def backward(self):
        raise NotImplementedForSymbol('backward', 'bind it and call executor.backward')

    def detach(self):
        raise NotImplementedForSymbol('detach', 'use mx.sym.BlockGrad')


class NotImplementedForSymbol(MXNetError, NotImplementedError):
    """An NDArray-only method called on a Symbol (MXNet's error of the same name)."""

    def __init__(self, function, hint=''):
        super().__init__(f"Function {function} is not implemented for Symbol and only "
                         f"available in NDArray" + (f"; {hint}" if hint else ''))


def _fluent(fn, sym):
    """``sym.<op>`` bound to `sym`, with the op's signature minus its first input."""
    import inspect

    def method(*args, **kwargs):
        return fn(sym, *args, **kwargs)
    try:
        sig = inspect.signature(fn)
        method.__signature__ = sig.replace(parameters=list(sig.parameters.values())[1:])
    except (TypeError, ValueError):
        pass
    method.__name__ = getattr(fn, '__name__', 'method')
    return method


def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None,
             init=None, stype=None, **kwargs):
    """A free variable (an argument to bind), with optional shape/dtype/init hints."""
    from mxcy.attribute import current as current_attr
    if not isinstance(name, str):
        raise TypeError(f"Variable: name must be a string, got {type(name).__name__}")
    attrs = stored_attrs(current_attr().get(check_attr_values(attr, 'Variable')))
    if shape is not None:
        from mxcy.base import as_shape
        checked = as_shape(shape, 'Variable shape')
        # stored as MXNet stores it: str() of what was given ('[2, 3]' for a list)
        attrs['__shape__'] = str(list(checked) if isinstance(shape, list) else checked)
    if lr_mult is not None:
        attrs['__lr_mult__'] = str(lr_mult)
    if wd_mult is not None:
        attrs['__wd_mult__'] = str(wd_mult)
    if dtype is not None:
        from mxcy.base import dtype_code
        attrs['__dtype__'] = str(dtype_code(dtype, 'Variable dtype'))   # MXNet's type flag
    if init is not None:
        attrs['__init__'] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        if stype not in _STYPE_IDS:
            raise ValueError(f"Variable: stype must be one of {list(_STYPE_IDS)}, got {stype!r}")
        attrs['__storage_type__'] = str(_STYPE_IDS[stype])
    for key, value in kwargs.items():
        if is_dunder(key):
            attrs[key] = str(value)
        else:
            raise ValueError(f"Variable: attribute name {key!r} is not supported; further "
                             f"attributes must look like '__{key}__'")
    return Symbol([(_Node(None, name, attrs=attrs), 0)])


var = Variable


def Group(symbols, create_fn=None):
    """One symbol whose outputs are all the outputs of `symbols`, in order (create_fn,
    MXNet's hook for a Symbol subclass, builds the result when given)."""
    outs = []
    for s in symbols:
        if not isinstance(s, Symbol):
            raise TypeError(f"Group: expected Symbols, got {type(s).__name__}")
        outs.extend(s._outputs)
    if not outs:
        raise ValueError("Group: needs at least one symbol")
    return create_fn(outs) if create_fn is not None else Symbol(outs)
