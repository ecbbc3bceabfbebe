"""MXNet 1.x JSON graphs: round trips, hand-written and MXNet-1.9.1-written files (in
data/, made by data/make_mxnet_fixtures.py), old-style fields, and clear errors for
unknown fields, newer versions and malformed graphs."""
import json
import pathlib

import numpy as np
import pytest

import mxcy as mx

DATA = pathlib.Path(__file__).parent / 'data'


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.name.NameManager():
        yield


def mlp():
    """The MLP of data/make_mxnet_fixtures.py, built here."""
    data = mx.sym.Variable('data')
    fc1 = mx.sym.FullyConnected(data=data, name='fc1', num_hidden=128)
    act1 = mx.sym.Activation(data=fc1, name='relu1', act_type='relu')
    fc2 = mx.sym.FullyConnected(data=act1, name='fc2', num_hidden=64)
    act2 = mx.sym.Activation(data=fc2, name='relu2', act_type='relu')
    fc3 = mx.sym.FullyConnected(data=act2, name='fc3', num_hidden=10)
    return mx.sym.SoftmaxOutput(data=fc3, name='softmax')


def seeded_args(sym, arg_shapes):
    """The parameter values make_mxnet_fixtures.py used (same NumPy stream)."""
    rng = np.random.RandomState(0)
    args = {}
    for name, shape in zip(sym.list_arguments(), arg_shapes):
        if name == 'softmax_label':
            args[name] = mx.nd.array(np.arange(shape[0]) % 10)
        else:
            args[name] = mx.nd.array(rng.uniform(-0.1, 0.1, size=shape).astype(np.float32))
    return args


# ---------------------------------------------------------------- round trips
def test_round_trip_keeps_graph_attributes_and_values(tmp_path):
    x = mx.sym.var('x', shape=(2, 3), dtype='float64', lr_mult=2, init='zeros')
    with mx.AttrScope(ctx_group='dev1'):
        y = mx.sym.FullyConnected(x, num_hidden=4, no_bias=True, name='fc')
    net = mx.sym.Group([mx.sym.Activation(y, act_type='tanh') * 2, x + 1])
    text = net.tojson()
    back = mx.sym.load_json(text)
    assert back.tojson() == text
    assert back.list_arguments() == net.list_arguments() == ['x', 'fc_weight']
    assert back.list_outputs() == net.list_outputs()
    assert back.attr_dict() == net.attr_dict()
    assert back.get_internals()['fc_output'].attr('ctx_group') == 'dev1'
    assert back.infer_shape() == net.infer_shape()
    assert back.infer_type() == net.infer_type()
    path = tmp_path / 'net-symbol.json'
    net.save(str(path))
    assert mx.sym.load(str(path)).tojson() == text
    w = np.linspace(-1, 1, 12).reshape(4, 3)
    xv = np.arange(6.).reshape(2, 3)
    outs = [[o.asnumpy() for o in s.eval(x=mx.nd.array(xv, dtype='float64'),
                                         fc_weight=mx.nd.array(w, dtype='float64'))]
            for s in (net, back)]
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_allclose(outs[0][0], np.tanh(xv @ w.T) * 2, rtol=1e-12)
    np.testing.assert_allclose(outs[0][1], xv + 1)


def test_written_json_has_mxnet_1_9_layout():
    ours = json.loads(mlp().tojson())
    theirs = json.loads((DATA / 'mlp.json').read_text())
    assert set(ours) == {'nodes', 'arg_nodes', 'node_row_ptr', 'heads', 'attrs'}
    for key in ('arg_nodes', 'node_row_ptr', 'heads', 'attrs'):
        assert ours[key] == theirs[key], key
    assert ours['attrs'] == {'mxnet_version': ['int', 10901]}
    assert len(ours['nodes']) == len(theirs['nodes'])
    for a, b in zip(ours['nodes'], theirs['nodes']):
        assert (a['op'], a['name'], a['inputs']) == (b['op'], b['name'], b['inputs'])
        if a['op'] != 'null':
            # operator attributes are exactly the given parameters, as strings
            assert a.get('attrs') == b.get('attrs'), a['name']
    # a variable's dtype is MXNet's type flag, which MXNet's loader parses as an int
    node = json.loads(mx.sym.var('v', dtype='float16').tojson())['nodes'][0]
    assert node['attrs'] == {'__dtype__': '2'}


# ---------------------------------------------------------------- files written by MXNet 1.9.1
@pytest.mark.parametrize('name', ['lenet', 'mlp'])
def test_load_mxnet_written_graph(name):
    expected = json.loads((DATA / 'mxnet_expected.json').read_text())[name]
    sym = mx.sym.load(str(DATA / f'{name}.json'))
    assert sym.list_arguments() == expected['list_arguments']
    assert sym.list_outputs() == expected['list_outputs']
    assert sym.list_auxiliary_states() == expected['list_auxiliary_states']
    arg_shapes, out_shapes, _ = sym.infer_shape(data=tuple(expected['data_shape']))
    assert [list(s) for s in arg_shapes] == expected['arg_shapes']
    assert [list(s) for s in out_shapes] == expected['out_shapes']
    # the same parameters give the output MXNet computed
    out = sym.bind(mx.cpu(), seeded_args(sym, arg_shapes)).forward()[0].asnumpy()
    np.testing.assert_allclose(out, np.array(expected['forward_output']), rtol=1e-4,
                               atol=1e-6)
    # and writing it back gives a graph that loads to the same thing
    again = mx.sym.load_json(sym.tojson())
    assert again.list_arguments() == expected['list_arguments']


def test_mxnet_1_9_mlp_json_written_inline():
    # exactly as MXNet 1.9 writes an MLP (spaces after commas, attrs copied onto the
    # parameter variables, the version attribute)
    text = '''{
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "fc1_weight", "attrs": {"num_hidden": "64"}, "inputs": []},
    {"op": "null", "name": "fc1_bias", "attrs": {"num_hidden": "64"}, "inputs": []},
    {"op": "FullyConnected", "name": "fc1", "attrs": {"num_hidden": "64"},
     "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"},
     "inputs": [[3, 0, 0]]},
    {"op": "null", "name": "fc2_weight", "attrs": {"num_hidden": "10"}, "inputs": []},
    {"op": "null", "name": "fc2_bias", "attrs": {"num_hidden": "10"}, "inputs": []},
    {"op": "FullyConnected", "name": "fc2", "attrs": {"num_hidden": "10"},
     "inputs": [[4, 0, 0], [5, 0, 0], [6, 0, 0]]},
    {"op": "null", "name": "softmax_label", "inputs": []},
    {"op": "SoftmaxOutput", "name": "softmax", "inputs": [[7, 0, 0], [8, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 2, 5, 6, 8],
  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  "heads": [[9, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10901]}
}'''
    sym = mx.sym.load_json(text)
    assert sym.list_arguments() == ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight',
                                    'fc2_bias', 'softmax_label']
    arg_shapes, out_shapes, _ = sym.infer_shape(data=(5, 20))
    assert arg_shapes[1] == (64, 20) and out_shapes == [(5, 10)]
    assert sym.get_internals()['fc1_output'].attr('num_hidden') == '64'


def test_old_style_param_and_attr_fields():
    # MXNet 0.x graphs: 'param' for operator parameters, 'attr' for user attributes,
    # backward_source_id, two-element input references and no version
    text = '''{
  "nodes": [
    {"op": "null", "param": {}, "name": "data", "inputs": [], "backward_source_id": -1,
     "attr": {"ctx_group": "stage1", "lr_mult": "0.5"}},
    {"op": "null", "param": {}, "name": "fc_weight", "inputs": [], "backward_source_id": -1},
    {"op": "null", "param": {}, "name": "fc_bias", "inputs": [], "backward_source_id": -1},
    {"op": "FullyConnected", "param": {"no_bias": "False", "num_hidden": "3"},
     "name": "fc", "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1,
     "attr": {"ctx_group": "stage1"}},
    {"op": "Activation", "param": {"act_type": "tanh"}, "name": "act",
     "inputs": [[3, 0]], "backward_source_id": -1}
  ],
  "arg_nodes": [0, 1, 2],
  "heads": [[4, 0]]
}'''
    sym = mx.sym.load_json(text)
    assert sym.list_arguments() == ['data', 'fc_weight', 'fc_bias']
    assert sym.infer_shape(data=(2, 4))[1] == [(2, 3)]
    fc = sym.get_internals()['fc_output']
    assert fc.attr('num_hidden') == '3' and fc.attr('no_bias') == 'False'
    # hidden keys are upgraded to __key__ as MXNet does
    assert fc.list_attr()['__ctx_group__'] == 'stage1'
    data = sym.get_internals()['data']
    assert data.attr('lr_mult') == '0.5' and data.list_attr()['__lr_mult__'] == '0.5'
    x = np.linspace(-1, 1, 8).reshape(2, 4)
    out = sym.eval(data=mx.nd.array(x), fc_weight=mx.nd.ones((3, 4)),
                   fc_bias=mx.nd.zeros((3,)))[0]
    np.testing.assert_allclose(out.asnumpy(), np.tanh(x @ np.ones((4, 3))), rtol=1e-5)


# ---------------------------------------------------------------- errors
def graph(**extra):
    base = {'nodes': [{'op': 'null', 'name': 'x', 'inputs': []},
                      {'op': 'relu', 'name': 'r', 'inputs': [[0, 0, 0]]}],
            'arg_nodes': [0], 'node_row_ptr': [0, 1, 2], 'heads': [[1, 0, 0]],
            'attrs': {'mxnet_version': ['int', 10901]}}
    base.update(extra)
    return base


def test_minimal_graph_loads():
    sym = mx.sym.load_json(json.dumps(graph()))
    assert sym.name == 'r' and sym.list_arguments() == ['x']


@pytest.mark.parametrize('mutate,match', [
    (lambda g: g.update(color='red'), r"unknown top-level field\(s\) \['color'\]"),
    (lambda g: g['nodes'][1].update(shape='box'), r"node 1 \('r'\) has unknown field"),
    (lambda g: g['attrs'].update(mxnet_version=['int', 20000]),
     r'MXNet 2\.0\.0, a newer format'),
    (lambda g: g['attrs'].update(mxnet_version='1.9'), 'malformed mxnet_version'),
    (lambda g: g['nodes'][1].update(op='NoSuchOp'), "operator 'NoSuchOp'"),
    (lambda g: g['nodes'][1].update(inputs=[[5, 0, 0]]), 'bad input reference'),
    (lambda g: g['nodes'][1].update(inputs=[[1, 0, 0]]), 'bad input reference'),
    (lambda g: g['nodes'][1].update(inputs=[]), r"has 0 inputs, the operator takes 1"),
    (lambda g: g.update(heads=[]), 'no heads'),
    (lambda g: g.update(heads=[[7, 0, 0]]), 'bad head reference'),
    (lambda g: g['nodes'][1].update(op='Activation', attrs={'act_type': 'wobble'}),
     r"node 1 \('r'\).*'act_type' must be one of"),
    (lambda g: g['nodes'][1].update(backward_source_id=0), 'backward node'),
    (lambda g: g['nodes'][1].update(control_deps=[0]), 'control_deps'),
    (lambda g: g['nodes'][0].pop('name'), "node 0 needs string 'op' and 'name'"),
    # MXNet 1.9.1 loads a head [1, 5] of a one-output node and lists it as 'r_output'
    (lambda g: g.update(heads=[[1, 5, 0]]),
     r"head 0 \[1, 5, 0\] asks for output 5 of node 1 \('r'\), which has 1 output"),
    (lambda g: g.update(heads=[[0, 1]]), r"output 1 of node 0 \('x'\), which has 1 output"),
    (lambda g: g.update(heads=[[1, -1, 0]]), r"head 0 \[1, -1, 0\] asks for output -1"),
    (lambda g: g.update(heads=[[1, True, 0]]),
     r"head 0 is a bad head reference \[1, true, 0\]"),
    (lambda g: g.update(heads=[[1, 0.0, 0]]), r"bad head reference \[1, 0\.0, 0\]"),
    (lambda g: g.update(heads=[1, 0, 0]), r"bad head reference 1\b"),
    (lambda g: g.update(heads={'a': 1}), "'heads' must be a list"),
    # MXNet 1.9.1 crashes (segmentation fault) on an input index out of range
    (lambda g: g['nodes'][1].update(inputs=[[0, 3, 0]]),
     r"node 1 \('r'\) input 0 \[0, 3, 0\] asks for output 3 of node 0 \('x'\), which "
     r"has 1 output"),
    (lambda g: g['nodes'][1].update(inputs=[[0, -1, 0]]), 'asks for output -1'),
    (lambda g: g['nodes'][1].update(inputs=[[1, 0, 0]]),
     r'input 0 \[1, 0, 0\] is a bad input reference: it refers to node 1; inputs must '
     r'point at an earlier node, 0 to 0'),
    (lambda g: g['nodes'][1].update(inputs=[[0, 'a', 0]]), 'bad input reference'),
    (lambda g: g['nodes'][1].update(inputs=[[False, 0, 0]]), 'bad input reference'),
    (lambda g: g['nodes'][1].update(inputs=7), r"node 1 \('r'\) field 'inputs' must be a "
                                               "list"),
    (lambda g: g['nodes'][1].update(inputs={'0': 0}), "field 'inputs' must be a list"),
    (lambda g: g['nodes'][1].update(attrs={'act_type': ['relu']}),
     r"node 1 \('r'\) attribute 'act_type' must be a string"),
    (lambda g: g.update(attrs=[1]), "'attrs' must be an object"),
    (lambda g: g.update(nodes={'x': 1}), "'nodes' list"),
    (lambda g: g.update(nodes=[]), 'the graph has no nodes'),
], ids=['top-field', 'node-field', 'v2', 'version-type', 'unknown-op', 'forward-ref',
        'self-ref', 'arity', 'no-heads', 'bad-head', 'bad-param', 'backward', 'ctrl-deps',
        'no-name', 'head-output-range', 'head-of-variable', 'head-negative', 'head-bool',
        'head-float', 'head-flat', 'heads-type', 'input-output-range', 'input-negative',
        'input-self', 'input-type', 'input-bool', 'inputs-int', 'inputs-dict',
        'attr-list', 'top-attrs-type', 'nodes-type', 'no-nodes'])
def test_malformed_graphs_give_clear_errors(mutate, match):
    g = graph()
    mutate(g)
    with pytest.raises(mx.MXNetError, match=match) as info:
        mx.sym.load_json(json.dumps(g))
    assert str(info.value).startswith('mx.sym.load_json:')


def test_not_json_and_not_a_graph():
    with pytest.raises(mx.MXNetError, match='not valid JSON'):
        mx.sym.load_json('{"nodes": [')
    with pytest.raises(mx.MXNetError, match="'nodes' list"):
        mx.sym.load_json('[1, 2]')
    with pytest.raises(mx.MXNetError, match='not valid JSON'):
        mx.sym.load_json(None)


@pytest.mark.parametrize('text', [
    '[' * 100000 + ']' * 100000,
    '{"nodes": [' + '{"a": ' * 100000 + '1' + '}' * 100000 + ']}',
], ids=['arrays', 'objects'])
def test_deeply_nested_json_is_refused_clearly(text):
    with pytest.raises(mx.MXNetError, match='nested too deeply') as info:
        mx.sym.load_json(text)
    assert str(info.value).startswith('mx.sym.load_json:')


def test_long_chain_loads_infers_and_round_trips():
    """A deep but valid graph (MXNet 1.9.1 loads a 100000-node chain): nothing recurses
    per node on load, listing, inference or writing."""
    n = 20000
    nodes = [{'op': 'null', 'name': 'x', 'inputs': []}] + [
        {'op': 'relu', 'name': f'r{i}', 'inputs': [[i, 0, 0]]} for i in range(n)]
    g = graph(nodes=nodes, node_row_ptr=list(range(n + 2)), heads=[[n, 0, 0]])
    sym = mx.sym.load_json(json.dumps(g))
    assert sym.list_outputs() == [f'r{n - 1}_output'] and sym.list_arguments() == ['x']
    assert sym.infer_shape(x=(2, 3)) == ([(2, 3)], [(2, 3)], [])
    assert sym.infer_type(x='float16')[1] == [np.float16]
    assert len(sym.get_internals().list_outputs()) == n + 1
    assert json.loads(sym.tojson())['nodes'] == nodes
    assert mx.sym.load_json(sym.tojson()).tojson() == sym.tojson()
