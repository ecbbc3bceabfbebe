"""``mx.viz``: a layer table (`print_summary`) and a Graphviz drawing (`plot_network`).

Both follow MXNet 1.x's output: the same table layout and columns, the same node labels,
colours and edge labels, computed from the symbol's graph. Two deliberate differences:
`print_summary` counts parameters from the inferred shapes of each layer's
weight/bias/gamma/beta inputs (MXNet miscounted a FullyConnected layer fed by a 4-d
input), and every graph input variable gets a row, not only the first one.
`plot_network` needs the ``graphviz`` package (``pip install mxcy[viz]``); rendering the
returned ``graphviz.Digraph`` to a file needs Graphviz's ``dot`` program.
"""
import copy
import warnings

from mxcy.symbol.symbol import Symbol, aux_variable_ids

# argument slots holding learned parameters (counted in Param #, hidden when drawing)
_PARAM_SLOTS = ('weight', 'bias', 'gamma', 'beta', 'parameters')
_LABEL_SLOTS = ('label',)
_WEIGHT_SUFFIXES = ('_weight', '_bias', '_beta', '_gamma', '_moving_var', '_moving_mean',
                    '_running_var', '_running_mean')
# MXNet's colour map for plot_network
_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69",
           "#fccde5")


def _str2tuple(text):
    """"(5, 5)" -> ['5', '5'] (MXNet's helper, for labels)."""
    return [t.strip() for t in text.strip('()[] ').split(',') if t.strip()]


def _check_symbol(symbol, what):
    if not isinstance(symbol, Symbol):
        raise TypeError(f"{what}: symbol must be a Symbol, got {type(symbol).__name__}")


def _entry_values(symbol, values, infer, what):
    """{(node id, output index): value} for every visible output of every node, from
    ``infer`` ('shape' or 'type') on the internals with the given input values."""
    internals = symbol.get_internals()
    if infer == 'shape':
        if values is None:
            _, outs, _ = internals.infer_shape_partial()
            outs = [s if s else None for s in outs]
        else:
            if not isinstance(values, dict):
                raise TypeError(f"{what}: shape must be a dict of input name -> shape, got "
                                f"{type(values).__name__}")
            _, outs, _ = internals._infer_shape_strict(**values)
    else:
        if not isinstance(values, dict):
            raise TypeError(f"{what}: dtype must be a dict of input name -> dtype, got "
                            f"{type(values).__name__}")
        _, outs, _ = internals._infer_type_strict(**values)
    return {(id(node), idx): value for (node, idx), value in zip(internals._outputs, outs)}


def _slot_roles(nodes):
    """For each variable (by id): 'param', 'label', 'aux' or 'input', from the slots of
    the operators that consume it (the first non-input role wins)."""
    roles = {}
    aux = aux_variable_ids(nodes)
    for node in nodes:
        if node.is_variable:
            roles.setdefault(id(node), 'aux' if id(node) in aux else 'input')
            continue
        names = node.op.arguments(node.params)
        for slot, (child, _) in zip(names, node.inputs):
            if child.is_variable:
                if slot in _PARAM_SLOTS:
                    roles[id(child)] = 'param'
                elif slot in _LABEL_SLOTS and roles.get(id(child)) != 'param':
                    roles[id(child)] = 'label'
    return roles


def _size(shape):
    out = 1
    for d in shape:
        out *= int(d)
    return out


def print_summary(symbol, shape=None, line_length=120,
                  positions=[.44, .64, .74, 1.]):  # noqa: B006  (MXNet's signature; read only)
    """Print a table of the layers: name (type), output shape (batch axis dropped),
    number of parameters, previous layers; then the total number of parameters.

    shape : dict of input name -> shape, optional. Without it the Output Shape column is
        empty and only parameters whose shapes can be inferred alone are counted.
    positions : column ends, as fractions of `line_length` (or absolute when > 1).
    """
    _check_symbol(symbol, 'print_summary')
    shapes = _entry_values(symbol, shape, 'shape', 'print_summary')
    show_shape = shape is not None
    nodes = symbol._nodes()
    roles = _slot_roles(nodes)
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    def print_row(fields):
        line = ''
        for i, field in enumerate(fields):
            line += str(field)
            line = line[:positions[i]]
            line += ' ' * (positions[i] - len(line))
        print(line)

    def shown(node, idx=0):
        value = shapes.get((id(node), idx))
        return 'x'.join(str(d) for d in value[1:]) if show_shape and value else ''

    print('_' * line_length)
    print_row(['Layer (type)', 'Output Shape', 'Param #', 'Previous Layer'])
    print('=' * line_length)
    rows = [n for n in nodes if not n.is_variable or roles[id(n)] == 'input']
    total = 0
    for i, node in enumerate(rows):
        params, previous = 0, []
        if not node.is_variable:
            slots = node.op.arguments(node.params)
            for slot, (child, idx) in zip(slots, node.inputs):
                if child.is_variable and slot in _PARAM_SLOTS:
                    value = shapes.get((id(child), 0))
                    params += _size(value) if value else 0
                elif not child.is_variable or roles[id(child)] == 'input':
                    previous.append(child.name)
        op = 'null' if node.is_variable else node.op.name
        print_row([f"{node.name}({op})", shown(node), params,
                   previous[0] if previous else ''])
        for name in previous[1:]:
            print_row(['', '', '', name])
        total += params
        print(('=' if i == len(rows) - 1 else '_') * line_length)
    print(f"Total params: {total}")
    print('_' * line_length)


def _node_label(node, attrs):
    """(label, fill colour) of an operator node, as MXNet draws it."""
    op = node.op.name
    if op in ('Convolution', 'Deconvolution'):
        stride = 'x'.join(_str2tuple(attrs['stride'])) if 'stride' in attrs else '1'
        kernel = 'x'.join(_str2tuple(attrs.get('kernel', '()')))
        return f"{op}\n{kernel}/{stride}, {attrs.get('num_filter', '')}", _COLORS[1]
    if op == 'FullyConnected':
        return f"FullyConnected\n{attrs.get('num_hidden', '')}", _COLORS[1]
    if op == 'BatchNorm':
        return node.name, _COLORS[3]
    if op in ('Activation', 'LeakyReLU'):
        default = 'Leaky' if op == 'LeakyReLU' else ''
        return f"{op}\n{attrs.get('act_type', default)}", _COLORS[2]
    if op == 'Pooling':
        kernel = 'x'.join(_str2tuple(attrs['kernel'])) if 'kernel' in attrs else '[]'
        stride = 'x'.join(_str2tuple(attrs['stride'])) if 'stride' in attrs else '1'
        return f"Pooling\n{attrs.get('pool_type', 'max')}, {kernel}/{stride}", _COLORS[4]
    if op in ('Concat', 'Flatten', 'Reshape'):
        return node.name, _COLORS[5]
    if op == 'Softmax':
        return node.name, _COLORS[6]
    if op == 'Custom' and 'op_type' in attrs:
        return attrs['op_type'], _COLORS[7]
    return node.name, _COLORS[7]


def plot_network(symbol, title='plot', save_format='pdf', shape=None, dtype=None,
                 node_attrs={}, hide_weights=True):  # noqa: B006  (MXNet's; read only)
    """A ``graphviz.Digraph`` of the network: one node per operator and per input
    variable, edges from each operator back to its inputs, labelled with the input's
    shape (batch axis dropped) when `shape` is given and its dtype when `dtype` is.

    Weight-like variables (``*_weight``, ``*_bias``, ...) are left out; with
    ``hide_weights=False`` their edges stay, pointing at unlabelled ovals.
    Call ``.render()`` / ``.view()`` on the result to draw it in `save_format`.
    """
    try:
        from graphviz import Digraph
    except ImportError:
        raise ImportError("plot_network needs the graphviz Python package: "
                          "pip install graphviz (or mxcy[viz])") from None
    _check_symbol(symbol, 'plot_network')
    shapes = _entry_values(symbol, shape, 'shape', 'plot_network') if shape is not None \
        else None
    types = _entry_values(symbol, dtype, 'type', 'plot_network') if dtype is not None \
        else None
    nodes = symbol._nodes()
    names = [n.name for n in nodes]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        warnings.warn("There are multiple variables with the same name in your graph, this "
                      "may result in cyclic graph. Repeated names: " + ','.join(repeated),
                      RuntimeWarning, stacklevel=2)
    node_attr = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
                 "style": "filled"}
    node_attr.update(node_attrs)
    dot = Digraph(name=title, format=save_format)
    hidden = set()
    for node in nodes:
        attr = copy.deepcopy(node_attr)
        if node.is_variable:
            if node.name.endswith(_WEIGHT_SUFFIXES):
                if hide_weights:
                    hidden.add(id(node))
                continue
            attr["shape"] = "oval"
            label, attr["fillcolor"] = node.name, _COLORS[0]
        else:
            label, attr["fillcolor"] = _node_label(node, node.all_attrs())
        dot.node(name=node.name, label=label, **attr)
    for node in nodes:
        if node.is_variable:
            continue
        for child, idx in node.inputs:
            if id(child) in hidden:
                continue
            attr = {"dir": "back", "arrowtail": "open", "label": ""}
            if shapes is not None:
                value = shapes.get((id(child), idx)) or ()
                attr["label"] = 'x'.join(str(d) for d in value[1:])
            if types is not None and types.get((id(child), idx)) is not None:
                attr["label"] += f"({types[(id(child), idx)].__name__})"
            dot.edge(tail_name=node.name, head_name=child.name, **attr)
    return dot
