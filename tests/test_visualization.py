"""mx.viz: print_summary's table (MXNet's layout, correct parameter counts) and
plot_network's graphviz.Digraph (MXNet's labels, colours and edge labels); rendered to a
file when Graphviz's dot program is installed."""
import pathlib
import shutil

import pytest

import mxcy as mx

graphviz = pytest.importorskip('graphviz')
DATA = pathlib.Path(__file__).parent / 'symbol' / 'data'


def lenet():
    return mx.sym.load(str(DATA / 'lenet.json'))


def mlp():
    return mx.sym.load(str(DATA / 'mlp.json'))


def table_rows(text):
    """The data rows of a summary: (layer, output shape, params, previous) per line."""
    rows = []
    for line in text.splitlines():
        if not line.strip('_=') or line.startswith(('Layer (type)', 'Total')):
            continue
        rows.append((line[:52].strip(), line[52:76].strip(), line[76:88].strip(),
                     line[88:].strip()))
    return rows


def test_print_summary_mlp_matches_mxnet(capsys):
    mx.viz.print_summary(mlp(), shape={'data': (1, 784)})
    out = capsys.readouterr().out
    lines = out.splitlines()
    # MXNet 1.9.1's table for this network, line for line
    assert lines[0] == '_' * 120
    assert lines[1] == ('Layer (type)'.ljust(52) + 'Output Shape'.ljust(24) +
                        'Param #'.ljust(12) + 'Previous Layer'.ljust(32))
    assert lines[2] == '=' * 120
    assert lines[3] == 'data(null)'.ljust(52) + '784'.ljust(24) + '0'.ljust(12) + ' ' * 32
    assert lines[5] == ('fc1(FullyConnected)'.ljust(52) + '128'.ljust(24) +
                        '100480'.ljust(12) + 'data'.ljust(32))
    assert table_rows(out) == [
        ('data(null)', '784', '0', ''), ('fc1(FullyConnected)', '128', '100480', 'data'),
        ('relu1(Activation)', '128', '0', 'fc1'), ('fc2(FullyConnected)', '64', '8256', 'relu1'),
        ('relu2(Activation)', '64', '0', 'fc2'), ('fc3(FullyConnected)', '10', '650', 'relu2'),
        ('softmax(SoftmaxOutput)', '10', '0', 'fc3')]
    assert lines[-3] == '=' * 120
    assert lines[-2] == 'Total params: 109386'
    assert lines[-1] == '_' * 120
    assert all(len(line) == 120 for line in lines if not line.startswith('Total'))


def test_print_summary_lenet_counts_parameters_from_shapes(capsys):
    mx.viz.print_summary(lenet(), shape={'data': (1, 1, 28, 28)})
    out = capsys.readouterr().out
    rows = table_rows(out)
    assert rows[0] == ('data(null)', '1x28x28', '0', '')
    assert rows[1] == ('conv1(Convolution)', '20x24x24', '520', 'data')
    assert rows[3] == ('pool1(Pooling)', '20x12x12', '0', 'tanh1')
    assert rows[4] == ('conv2(Convolution)', '50x8x8', '25050', 'pool1')
    # fc1 sees the 50x4x4 pool output flattened: 800 * 500 + 500 (MXNet printed 25500)
    assert rows[7] == ('fc1(FullyConnected)', '500', '400500', 'pool2')
    total = 520 + 25050 + 400500 + 5010
    assert f'Total params: {total}' in out


def test_print_summary_without_shapes_and_with_branches(capsys):
    mx.viz.print_summary(mlp())
    rows = table_rows(capsys.readouterr().out)
    assert [r[0] for r in rows][:2] == ['data(null)', 'fc1(FullyConnected)']
    assert all(r[1] == '' for r in rows)
    # two inputs joined: every previous layer is listed, one per line
    with mx.name.NameManager():
        a, b = mx.sym.var('a'), mx.sym.var('b')
        fa = mx.sym.FullyConnected(a, num_hidden=4, no_bias=True, name='fa')
        joined = fa + b
    mx.viz.print_summary(joined, shape={'a': (2, 3), 'b': (2, 4)},
                         line_length=80, positions=[30, 50, 60, 80])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == '_' * 80
    body = [line for line in lines if line.strip('_=')]
    assert body[1].startswith('a(null)') and body[2].startswith('fa(FullyConnected)')
    assert body[3].startswith('b(null)')
    assert body[2][50:60].strip() == '12'            # no bias: 4 * 3
    plus = body.index(next(line for line in body if line.startswith('_plus0')))
    assert body[plus][60:].strip() == 'fa'
    assert body[plus + 1].strip() == 'b'
    with pytest.raises(TypeError, match='must be a Symbol'):
        mx.viz.print_summary('net')
    with pytest.raises(mx.MXNetError, match='could not infer'):
        mx.viz.print_summary(joined, shape={'b': (2, 4)})


def test_plot_network_graph_like_mxnet():
    dot = mx.viz.plot_network(lenet(), shape={'data': (1, 1, 28, 28)})
    assert isinstance(dot, graphviz.Digraph)
    assert dot.name == 'plot' and dot.format == 'pdf'
    src = dot.source
    # nodes: inputs as ovals, layers as boxes with MXNet's labels and colours
    assert 'data [label=data fillcolor="#8dd3c7"' in src and 'shape=oval' in src
    assert 'conv1 [label="Convolution\n5x5/1, 20" fillcolor="#fb8072"' in src
    assert 'tanh1 [label="Activation\ntanh" fillcolor="#ffffb3"' in src
    assert 'pool1 [label="Pooling\nmax, 2x2/2x2" fillcolor="#80b1d3"' in src
    assert 'fc1 [label="FullyConnected\n500" fillcolor="#fb8072"' in src
    assert 'softmax [label=softmax fillcolor="#fccde5"' in src
    # weights hidden; edges point back to the inputs, labelled with their shapes
    assert 'conv1_weight' not in src
    assert 'conv1 -> data [label="1x28x28" arrowtail=open dir=back]' in src
    assert 'fc1 -> pool2 [label="50x4x4" arrowtail=open dir=back]' in src
    assert 'softmax -> softmax_label [label="" arrowtail=open dir=back]' in src
    assert src.count('->') == 11


def test_plot_network_options():
    net = mlp()
    plain = mx.viz.plot_network(net, title='mlp', save_format='png')
    assert plain.name == 'mlp' and plain.format == 'png'
    assert 'fc1 -> data [label="" arrowtail=open dir=back]' in plain.source
    shown = mx.viz.plot_network(net, hide_weights=False, node_attrs={'fixedsize': 'false'})
    # weights are not drawn as nodes, but their edges stay (MXNet draws empty ovals)
    assert 'fc1 -> fc1_weight' in shown.source and 'fixedsize=false' in shown.source
    typed = mx.viz.plot_network(net, shape={'data': (2, 784)}, dtype={'data': 'float32'})
    assert 'fc1 -> data [label="784(float32)"' in typed.source
    with pytest.raises(TypeError, match='must be a Symbol'):
        mx.viz.plot_network(None)
    with mx.name.NameManager():
        x = mx.sym.var('x')
        twins = mx.sym.FullyConnected(x, num_hidden=2, name='x')
    with pytest.warns(RuntimeWarning, match='Repeated names: x'):
        mx.viz.plot_network(twins)


def test_plot_network_renders_with_dot(tmp_path):
    dot = mx.viz.plot_network(lenet(), shape={'data': (1, 1, 28, 28)}, save_format='svg')
    if shutil.which('dot') is None:
        pytest.skip("Graphviz's dot program is not installed (apt-get install graphviz)")
    path = pathlib.Path(dot.render(filename='lenet', directory=str(tmp_path)))
    assert path.suffix == '.svg' and path.exists()
    svg = path.read_text()
    assert svg.lstrip().startswith('<?xml') and '<svg' in svg
    for name in ('conv1', 'pool2', 'softmax_label'):
        assert f'<title>{name}</title>' in svg
