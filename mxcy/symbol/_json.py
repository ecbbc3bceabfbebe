"""MXNet 1.x's JSON graph format, both ways (``tojson`` / ``mx.sym.load_json``).

Written as MXNet 1.9 writes it (``nodes``, ``arg_nodes``, ``node_row_ptr``, ``heads``,
``attrs.mxnet_version``); read from any 1.x writer, including the pre-1.0 ``param`` /
``attr`` node fields. Unknown fields and graphs from MXNet 2 give a clear error: we
refuse to guess rather than mis-read a newer format. Parsing never evaluates code.
"""
import json

from mxcy.base import MXNetError
from mxcy.operator import get_op
from mxcy.operator._spec import _REGISTRY
from mxcy.symbol.symbol import Symbol, _Node, stored_attrs

MXNET_VERSION = 10901
_TOP_KEYS = {'nodes', 'arg_nodes', 'node_row_ptr', 'heads', 'attrs'}
_NODE_KEYS = {'op', 'name', 'inputs', 'attrs', 'attr', 'param', 'control_deps', 'subgraphs',
              'backward_source_id'}     # the last one: MXNet < 0.9 graphs, always -1 there


def to_json(symbol):
    nodes = symbol._nodes()
    index = {id(n): i for i, n in enumerate(nodes)}
    out_nodes, arg_nodes, row_ptr = [], [], [0]
    writes = {}         # variable -> how many operators so far update it (aux states)
    for i, node in enumerate(nodes):
        entry = {'op': 'null' if node.is_variable else node.op.name, 'name': node.name}
        attrs = node.all_attrs()
        if attrs:       # MXNet (nnvm) keeps them in a std::map: written in key order
            entry['attrs'] = dict(sorted(attrs.items()))
        refs = []
        for k, (c, idx) in enumerate(node.inputs):
            version = 0
            if not node.is_variable and k >= node.num_args() and c.is_variable:
                # nnvm counts the updates of a mutable input: 1 at its first updater
                version = writes[id(c)] = writes.get(id(c), 0) + 1
            refs.append([index[id(c)], idx, version])
        entry['inputs'] = refs
        out_nodes.append(entry)
        if node.is_variable:
            arg_nodes.append(i)
        count = 1 if node.is_variable else len(node.op.outputs(node.params))
        row_ptr.append(row_ptr[-1] + count)
    graph = {'nodes': out_nodes, 'arg_nodes': arg_nodes, 'node_row_ptr': row_ptr,
             'heads': [[index[id(n)], idx, 0] for n, idx in symbol._outputs],
             'attrs': {'mxnet_version': ['int', MXNET_VERSION]}}
    return _write(graph, 0)


def _write(value, indent):
    """JSON laid out as MXNet's writer (dmlc::JSONWriter) lays it out, so that tojson()
    gives MXNet's bytes: lists of numbers and one-entry objects on one line, other
    objects and the list of nodes one entry a line, entries separated by ', '."""
    pad = ' ' * indent
    if isinstance(value, dict):
        items = [f"{json.dumps(k)}: {_write(v, indent + 2)}" for k, v in value.items()]
        if len(items) == 1:
            return '{' + items[0] + '}'
        return '{\n' + ', \n'.join(pad + '  ' + i for i in items) + '\n' + pad + '}'
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            return ('[\n' + ', \n'.join(pad + '  ' + _write(v, indent + 2) for v in value) +
                    '\n' + pad + ']')
        return '[' + ', '.join(_write(v, indent) for v in value) + ']'
    return json.dumps(value)


def _fail(msg):
    raise MXNetError(f"mx.sym.load_json: {msg}")


def _show(value):
    """A short JSON rendering of a malformed value, for an error message."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + '...'


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _num_outputs(node):
    return 1 if node.is_variable else len(node.op.outputs(node.params))


def _entry(nodes, ref, where, kind):
    """The ``(node, output index)`` a reference ``[node, index(, version)]`` names: an
    input of the next node (`kind` 'input') or a graph output ('head')."""
    if not (isinstance(ref, list) and len(ref) in (2, 3) and all(_is_int(r) for r in ref)):
        _fail(f"{where} is a bad {kind} reference {_show(ref)}: expected [node index, "
              "output index, version], all integers")
    if not 0 <= ref[0] < len(nodes):
        scope = ('the graph has nodes 0 to' if kind == 'head' else
                 'inputs must point at an earlier node, 0 to')
        _fail(f"{where} {_show(ref)} is a bad {kind} reference: it refers to node {ref[0]}; "
              f"{scope} {len(nodes) - 1}")
    node = nodes[ref[0]]
    count = _num_outputs(node)
    if not 0 <= ref[1] < count:
        _fail(f"{where} {_show(ref)} asks for output {ref[1]} of node {ref[0]} "
              f"({node.name!r}), which has {count} output{'s' if count != 1 else ''}")
    return node, ref[1]


def load_json(json_str):
    try:
        graph = json.loads(json_str)
    except RecursionError:
        _fail("the JSON is nested too deeply to be a graph (a graph's JSON nests a few "
              "levels: nodes, their inputs and attributes)")
    except (TypeError, ValueError) as e:
        _fail(f"not valid JSON: {e}")
    if not isinstance(graph, dict) or not isinstance(graph.get('nodes'), list):
        _fail("expected an object with a 'nodes' list")
    unknown = set(graph) - _TOP_KEYS
    if unknown:
        _fail(f"unknown top-level field(s) {sorted(unknown)}; this reader knows "
              f"{sorted(_TOP_KEYS)}")
    if not graph['nodes']:
        _fail("the graph has no nodes")
    if not isinstance(graph.get('attrs', {}), dict):
        _fail(f"the graph's 'attrs' must be an object, got {_show(graph['attrs'])}")
    version = graph.get('attrs', {}).get('mxnet_version', ['int', MXNET_VERSION])
    if not (isinstance(version, list) and len(version) == 2 and _is_int(version[1])):
        _fail(f"malformed mxnet_version {version!r}")
    if version[1] >= 20000:
        _fail(f"the graph was written by MXNet {version[1] // 10000}.{version[1] // 100 % 100}"
              f".{version[1] % 100}, a newer format than MXNet 1.x's; it cannot be read here")
    nodes = []
    for i, entry in enumerate(graph['nodes']):
        if not isinstance(entry, dict):
            _fail(f"node {i} is not an object")
        extra = set(entry) - _NODE_KEYS
        if extra:
            _fail(f"node {i} ({entry.get('name')!r}) has unknown field(s) {sorted(extra)}")
        if entry.get('subgraphs') or entry.get('control_deps'):
            _fail(f"node {i} uses subgraphs/control_deps, which MXNet 1.x graphs for this "
                  "reader cannot contain")
        if entry.get('backward_source_id', -1) != -1:
            _fail(f"node {i} ({entry.get('name')!r}) is a backward node "
                  f"(backward_source_id={entry['backward_source_id']!r}); only forward graphs "
                  "can be loaded")
        name, op_name = entry.get('name'), entry.get('op')
        if not isinstance(name, str) or not isinstance(op_name, str):
            _fail(f"node {i} needs string 'op' and 'name'")
        attrs = {}
        for key in ('param', 'attr', 'attrs'):
            value = entry.get(key) or {}
            if not isinstance(value, dict):
                _fail(f"node {i} field {key!r} must be an object")
            for k, v in value.items():
                if isinstance(v, (list, dict)) or v is None:
                    _fail(f"node {i} ({name!r}) attribute {k!r} must be a string, got "
                          f"{_show(v)}")
                attrs[k] = str(v)
        refs = entry.get('inputs', [])
        if not isinstance(refs, list):
            _fail(f"node {i} ({name!r}) field 'inputs' must be a list of [node, output, "
                  f"version] references, got {_show(refs)}")
        inputs = [_entry(nodes, ref, f"node {i} ({name!r}) input {j}", 'input')
                  for j, ref in enumerate(refs)]
        if op_name == 'null':
            nodes.append(_Node(None, name, attrs=stored_attrs(attrs)))
            continue
        if op_name not in _REGISTRY:
            _fail(f"node {i} ({name!r}) uses operator {op_name!r}, which mxcy does not have")
        spec = get_op(op_name)
        param_names = set(spec.params.names())
        if getattr(spec.params, 'open_kwargs', False):
            # Custom: every attribute that is not a user/dunder attribute is a parameter
            param_names = {k for k in attrs if not (k.startswith('__') and k.endswith('__'))}
        params = {k: v for k, v in attrs.items() if k in param_names}
        # old graphs wrote ctx_group/lr_mult... plainly; MXNet upgrades them to __key__
        user = stored_attrs({k: v for k, v in attrs.items() if k not in param_names})
        try:
            p = spec.params.parse(op_name, params)
        except (TypeError, ValueError) as e:
            _fail(f"node {i} ({name!r}): {e}")
        expected = len(spec.arguments(p)) + len(spec.aux_states(p))
        if len(inputs) != expected:
            _fail(f"node {i} ({name!r}, {op_name}) has {len(inputs)} inputs, the operator "
                  f"takes {expected}")
        nodes.append(_Node(spec, name, p, user, inputs, given=params))
    refs = graph.get('heads', [])
    if not isinstance(refs, list):
        _fail(f"'heads' must be a list of [node, output, version] references, got "
              f"{_show(refs)}")
    heads = [_entry(nodes, ref, f"head {k}", 'head') for k, ref in enumerate(refs)]
    if not heads:
        _fail("the graph has no heads (outputs)")
    return Symbol(heads)


def load(fname):
    with open(fname, encoding='utf-8') as f:
        return load_json(f.read())
