"""Shape and type inference over a symbol graph: forwards and backwards to a fixpoint.

Each operator's `infer_shape` sees the shapes known so far for its inputs (None if
unknown) and returns them completed plus its output shapes; where an output is known
(from a consumer), its `infer_shape_backward` completes the inputs from it. This pass
repeats over the graph until nothing changes. Conflicts are reported with the user's node
name, the operator, the argument, both shapes, and the inputs that were given.

MXNet 1.x's conventions, which Symbol's public methods keep: a shape may be partly known
(0 = unknown dimension), and two views of one shape merge dimension by dimension
(`merge_shapes`, MXNet's shape_assign); the partial forms give ``()`` for an unknown
shape and None for an unknown dtype; the complete forms, when the given values do not
decide everything, warn naming the undecided arguments (MXNet's text) and return
(None, None, None). Internal callers (bind, Module, viz) use the `strict` forms, which
raise an MXNetError naming what is undecided instead.
"""
from mxcy.base import MXNetError
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


def merge_shapes(old, new):
    """MXNet 1.x's shape_assign: two views of one shape, where None is an unknown shape
    and 0 an unknown dimension, merged; None when they conflict."""
    if old is None or new is None:
        return new if old is None else old
    if len(old) != len(new):
        return None
    merged = []
    for a, b in zip(old, new):
        if a and b and a != b:
            return None
        merged.append(a or b)
    return tuple(merged)


def _merge_types(old, new):
    if old is None or new is None:
        return new if old is None else old
    return old if old == new else None


def _run(symbol, known, infer_node, describe, merge):
    """Propagate `known` ({(node id, index): value}) through the graph to a fixpoint.
    `infer_node(node, ins, outs)` returns the node's (inputs, outputs), completed; each
    value is merged into what is known, and a conflict is reported at that node."""
    nodes = symbol._nodes()
    for _ in range(2 * len(nodes) + 2):
        changed = False
        for node in nodes:
            if node.is_variable:
                continue
            ins = [known.get((id(c), i)) for c, i in node.inputs]
            outs = [known.get((id(node), i)) for i in range(len(node.op.outputs(node.params)))]
            try:
                new_ins, new_outs = infer_node(node, ins, outs)
            except (ValueError, TypeError) as e:     # ShapeError, DTypeError among them
                raise MXNetError(describe(node, ins, e)) from None
            keys = [(id(c), i) for c, i in node.inputs] + \
                [(id(node), i) for i in range(len(new_outs))]
            for j, (key, value) in enumerate(zip(keys, list(new_ins) + list(new_outs))):
                old = known.get(key)
                if value is None or value == old:
                    continue
                merged = merge(old, value)
                if merged is None:
                    slots = node.op.arguments(node.params) + node.op.aux_states(node.params)
                    where = (f"argument '{slots[j]}'" if j < len(node.inputs) else
                             f"output '{node.output_names(False)[j - len(node.inputs)]}'")
                    raise MXNetError(describe(node, ins, f"{node.op.name}: {where} is known "
                                                         f"as {old}, inferred {value}"))
                if merged != old:
                    known[key] = merged
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


def _undecided(kind, names, values, is_known):
    """MXNet's warning when the complete form cannot decide every argument: at most ten
    ``name: value`` lines, then ``...``."""
    unknowns = []
    for name, value in zip(names, values):
        if not is_known(value):
            if len(unknowns) >= 10:
                unknowns.append('...')
                break
            unknowns.append(f"{name}: {value}")
    head = ("Cannot decide shape for the following arguments (0s in shape means unknown "
            "dimensions). " if kind == 'shape' else
            "Cannot decide type for the following arguments. ")
    return head + "Consider providing them as input:\n\t" + "\n\t".join(unknowns)


def _incomplete(kind, symbol, given, arg_values, strict, is_known):
    """The complete form found unknowns: MXNet warns and returns (None, None, None);
    internal callers (bind, Module) want an error that names the undecided arguments."""
    names = symbol.list_arguments()
    if strict:
        undecided = [f"{n}={v}" for n, v in zip(names, arg_values) if not is_known(v)]
        what = 'shapes (0 = unknown dimension)' if kind == 'shape' else 'dtypes'
        raise MXNetError(f"infer_{kind}: could not infer the {what} of "
                         f"{', '.join(undecided)} from the given {kind}s {given or '(none)'}; "
                         "give them too")
    import warnings
    warnings.warn(_undecided(kind, names, arg_values, is_known), stacklevel=4)
    return None, None, None


def _no_positional(kind, args):
    if args:
        example = "data=(10, 64)" if kind == 'shape' else "data='float32'"
        raise TypeError(f"infer_{kind} takes {kind}s by argument name, e.g. "
                        f"infer_{kind}({example}); positional {kind}s are not supported "
                        f"(got {args!r})")


def infer_shape(symbol, args, kwargs, partial, strict=True):
    """(arg_shapes, out_shapes, aux_shapes). Incomplete: partial gives ``()`` for an
    unknown shape and 0 for an unknown dimension (MXNet 1.x's convention); the complete
    form gives MXNet's warning and (None, None, None), or with `strict` an MXNetError."""
    _no_positional('shape', args)
    variables = _variables_by_name(symbol)
    known = {}
    for name, shape in kwargs.items():
        if name not in variables:
            raise ValueError(f"infer_shape: {name!r} is not an input of this symbol; inputs "
                             f"are {list(variables)}")
        shape = _check_shape(name, shape)
        for node in variables[name]:        # every variable of that name (as MXNet does)
            known[(id(node), 0)] = shape or None      # () is "unknown" in MXNet 1.x
    for node in (n for same in variables.values() for n in same):
        if (id(node), 0) not in known and '__shape__' in node.attrs:
            import ast
            shape = tuple(ast.literal_eval(node.attrs['__shape__']))
            known[(id(node), 0)] = merge_shapes(known.get((id(node), 0)), shape or None)

    def infer_node(node, ins, outs):
        nargs = node.num_args()
        new_ins, new_outs, aux = node.op.infer_shape(node.params, ins[:nargs])
        merged = list(new_ins[:nargs]) + list(aux)
        merged = [merge_shapes(a, b) or a for a, b in zip(merged, ins)]
        if any(o is not None for o in outs):
            merged = node.op.infer_shape_backward(node.params, merged,
                                                  [merge_shapes(a, b) or a for a, b in
                                                   zip(new_outs, outs)])
        return merged, new_outs
    nodes = _run(symbol, known, infer_node, _describe('shape', kwargs), merge_shapes)
    aux_ids = aux_variable_ids(nodes)
    arg_nodes = [n for n in nodes if n.is_variable and id(n) not in aux_ids]
    aux_nodes = [n for n in nodes if n.is_variable and id(n) in aux_ids]
    arg_shapes = [known.get((id(n), 0)) for n in arg_nodes]
    aux_shapes = [known.get((id(n), 0)) for n in aux_nodes]
    out_shapes = [known.get((id(n), i)) for n, i in symbol._outputs]
    fill = lambda lst: [() if s is None else s for s in lst]  # noqa: E731  (MXNet: () = unknown)
    if not partial and not all(map(_known, arg_shapes + out_shapes + aux_shapes)):
        return _incomplete('shape', symbol, kwargs, fill(arg_shapes), strict,
                           lambda s: s != () and _known(s))
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


def infer_type(symbol, args, kwargs, partial=False, strict=True):
    """(arg_types, out_types, aux_types) as NumPy types. Incomplete: partial gives None in
    place of the unknowns; the complete form gives MXNet's warning and (None, None, None),
    or with `strict` an MXNetError."""
    import numpy as np
    _no_positional('type', args)
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

    def infer_node(node, ins, outs):
        nargs = node.num_args()
        new_ins, new_outs, aux = node.op.infer_type(node.params, ins[:nargs])
        merged = [a if a is not None else b
                  for a, b in zip(list(new_ins[:nargs]) + list(aux), ins)]
        if any(o is not None for o in outs):
            merged = node.op.infer_type_backward(node.params, merged,
                                                 [a if a is not None else b
                                                  for a, b in zip(new_outs, outs)])
        return merged, new_outs
    nodes = _run(symbol, known, infer_node, _describe('type', kwargs), _merge_types)
    aux_ids = aux_variable_ids(nodes)
    as_type = lambda t: None if t is None else np.dtype(t).type  # noqa: E731
    arg_nodes = [n for n in nodes if n.is_variable and id(n) not in aux_ids]
    aux_nodes = [n for n in nodes if n.is_variable and id(n) in aux_ids]
    args_t = [as_type(known.get((id(n), 0))) for n in arg_nodes]
    aux_t = [as_type(known.get((id(n), 0))) for n in aux_nodes]
    out_t = [as_type(known.get((id(n), i))) for n, i in symbol._outputs]
    if not partial and any(t is None for t in args_t + out_t + aux_t):
        return _incomplete('type', symbol, kwargs, args_t, strict, lambda t: t is not None)
    return args_t, out_t, aux_t
