"""Shape and type inference over a symbol graph: forwards and backwards to a fixpoint.

Each operator's `infer_shape` sees the shapes known so far for its inputs (None if
unknown) and returns them completed plus its output shapes; this pass repeats over the
graph until nothing changes. Conflicts are reported with the user's node name, the
operator, the argument, both shapes, and the inputs that were given.
"""
from mxcy.base import MXNetError
from mxcy.operator._spec import ShapeError
from mxcy.symbol.symbol import aux_variable_ids


def _check_shape(name, shape):
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"infer_shape: the shape of {name!r} must be a tuple of ints, got "
                        f"{type(shape).__name__} {shape!r}")
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, int) and not hasattr(d, '__index__'):
            raise TypeError(f"infer_shape: the shape of {name!r} must contain ints, got "
                            f"{shape!r}")
        if d < 0:
            raise ValueError(f"infer_shape: the shape of {name!r} has a negative size: "
                             f"{shape!r}")
    return tuple(int(d) for d in shape)


def _known(shape):
    return shape is not None and 0 not in shape


def _variables_by_name(symbol):
    """{name: [variable nodes]}: two Variable('x') objects are two inputs named 'x', and a
    shape or dtype given for 'x' applies to both (as in MXNet)."""
    out = {}
    for node in symbol._nodes():
        if node.is_variable:
            out.setdefault(node.name, []).append(node)
    return out


def _run(symbol, known, infer_node, describe):
    """Propagate `known` ({(node id, index): value}) through the graph to a fixpoint."""
    nodes = symbol._nodes()
    for _ in range(len(nodes) + 2):
        changed = False
        for node in nodes:
            if node.is_variable:
                continue
            ins = [known.get((id(c), i)) for c, i in node.inputs]
            try:
                new_ins, outs = infer_node(node, ins)
            except ShapeError as e:
                raise MXNetError(describe(node, ins, e)) from None
            except (ValueError, TypeError) as e:
                raise MXNetError(describe(node, ins, e)) from None
            for (c, i), value in zip(node.inputs, new_ins):
                if value is not None and known.get((id(c), i)) is None:
                    known[(id(c), i)] = value
                    changed = True
            for i, value in enumerate(outs):
                if value is not None and known.get((id(node), i)) is None:
                    known[(id(node), i)] = value
                    changed = True
        if not changed:
            break
    return nodes


def _describe(kind, given):
    def describe(node, ins, err):
        labels = []
        for (child, idx), value in zip(node.inputs, ins):
            label = child.name if child.is_variable else child.output_names(False)[idx]
            labels.append(f"{label}={value if value is not None else '?'}")
        return (f"{kind} inference failed at node '{node.name}' (operator {node.op.name}): "
                f"{err}. Input {kind}s of that node: {', '.join(labels)}. "
                f"Given: {given or 'nothing'}")
    return describe


def infer_shape(symbol, args, kwargs, partial):
    if args:
        raise TypeError("infer_shape takes shapes by argument name, e.g. "
                        "infer_shape(data=(10, 64)); positional shapes are ambiguous "
                        f"(got {args!r})")
    variables = _variables_by_name(symbol)
    known = {}
    for name, shape in kwargs.items():
        if name not in variables:
            raise ValueError(f"infer_shape: {name!r} is not an input of this symbol; inputs "
                             f"are {list(variables)}")
        shape = _check_shape(name, shape)
        for node in variables[name]:        # every variable of that name (as MXNet does)
            known[(id(node), 0)] = shape
    for node in (n for same in variables.values() for n in same):
        if (id(node), 0) not in known and '__shape__' in node.attrs:
            import ast
            shape = tuple(ast.literal_eval(node.attrs['__shape__']))
            if _known(shape):
                known[(id(node), 0)] = shape

    def infer_node(node, ins):
        nargs = node.num_args()
        new_ins, outs, aux = node.op.infer_shape(node.params, ins[:nargs])
        merged = list(new_ins[:nargs]) + list(aux)
        return merged, outs
    nodes = _run(symbol, known, infer_node, _describe('shape', kwargs))
    aux_ids = aux_variable_ids(nodes)
    arg_nodes = [n for n in nodes if n.is_variable and id(n) not in aux_ids]
    aux_nodes = [n for n in nodes if n.is_variable and id(n) in aux_ids]
    arg_shapes = [known.get((id(n), 0)) for n in arg_nodes]
    aux_shapes = [known.get((id(n), 0)) for n in aux_nodes]
    out_shapes = [known.get((id(n), i)) for n, i in symbol._outputs]
    if not partial:
        # a 0 in a shape means "unknown dimension" in MXNet 1.x, so it is not an answer
        missing = [n.name for n, s in zip(arg_nodes + aux_nodes, arg_shapes + aux_shapes)
                   if not _known(s)]
        missing += [name for name, s in zip(symbol.list_outputs(), out_shapes)
                    if not _known(s)]
        if missing:
            raise MXNetError(f"infer_shape: could not infer the shapes of {missing} from the "
                             f"given shapes {kwargs or '(none)'}; give more input shapes, or "
                             "use infer_shape_partial")
        return arg_shapes, out_shapes, aux_shapes
    fill = lambda lst: [() if s is None else s for s in lst]  # noqa: E731  (MXNet: () = unknown)
    return fill(arg_shapes), fill(out_shapes), fill(aux_shapes)


def _var_dtype(node):
    """The dtype name of a variable's ``__dtype__`` attribute: MXNet's type flag ("0")
    or, from older mxcy graphs, a dtype name."""
    import numpy as np
    from mxcy.base import CODE_DTYPES
    text = node.attrs['__dtype__']
    if text.strip().isdigit():
        if int(text) not in CODE_DTYPES:
            raise MXNetError(f"infer_type: variable {node.name!r} has unsupported dtype flag "
                             f"__dtype__={text!r}; known flags: {sorted(CODE_DTYPES)}")
        return np.dtype(CODE_DTYPES[int(text)]).name
    return np.dtype(text).name


def infer_type(symbol, args, kwargs, partial=False):
    """(arg_types, out_types, aux_types) as NumPy types. Incomplete: an MXNetError naming
    the unknowns, or (partial) None in their place."""
    import numpy as np
    if args:
        raise TypeError("infer_type takes dtypes by argument name, e.g. "
                        "infer_type(data='float32')")
    variables = _variables_by_name(symbol)
    known = {}
    for name, dtype in kwargs.items():
        if name not in variables:
            raise ValueError(f"infer_type: {name!r} is not an input of this symbol; inputs "
                             f"are {list(variables)}")
        for node in variables[name]:
            known[(id(node), 0)] = np.dtype(dtype).name
    for node in (n for same in variables.values() for n in same):
        if (id(node), 0) not in known and '__dtype__' in node.attrs:
            known[(id(node), 0)] = _var_dtype(node)

    def infer_node(node, ins):
        new_ins, outs, aux = node.op.infer_type(node.params, ins[:node.num_args()])
        return list(new_ins[:node.num_args()]) + list(aux), outs
    nodes = _run(symbol, known, infer_node, _describe('type', kwargs))
    aux_ids = aux_variable_ids(nodes)
    as_type = lambda t: None if t is None else np.dtype(t).type  # noqa: E731
    arg_nodes = [n for n in nodes if n.is_variable and id(n) not in aux_ids]
    aux_nodes = [n for n in nodes if n.is_variable and id(n) in aux_ids]
    args_t = [as_type(known.get((id(n), 0))) for n in arg_nodes]
    aux_t = [as_type(known.get((id(n), 0))) for n in aux_nodes]
    out_t = [as_type(known.get((id(n), i))) for n, i in symbol._outputs]
    if not partial:
        missing = [n.name for n, t in zip(arg_nodes + aux_nodes, args_t + aux_t) if t is None]
        missing += [name for name, t in zip(symbol.list_outputs(), out_t) if t is None]
        if missing:
            raise MXNetError(f"infer_type: could not infer the dtypes of {missing} from the "
                             f"given dtypes {kwargs or '(none)'}; give more input dtypes, or "
                             "use infer_type_partial")
    return args_t, out_t, aux_t
