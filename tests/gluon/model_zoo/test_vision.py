"""gluon.model_zoo.vision against MXNet 1.9.1's model zoo.

mxnet_files/ was written by MXNet 1.9.1 (tools/mxnet_model_zoo_names.py, whose docstring
says what each file holds): every model's parameter keys, names, shapes and grad_req;
the signatures; graphs of hybridized models; outputs for weights drawn by
`seeded_array` (so big models need no committed weights); small networks saved by MXNet
with their outputs and float64 gradients.
"""
import functools
import gzip
import importlib
import inspect
import json
import os

import numpy as np
import pytest

import mxcy as mx
from mxcy import operator as _op
from mxcy.gluon import SymbolBlock
from mxcy.gluon.model_zoo import vision

FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'mxnet_files')


@functools.lru_cache(maxsize=None)
def _record():
    with gzip.open(os.path.join(FILES, 'zoo.json.gz'), 'rt') as f:
        return json.load(f)


def _cases(section):
    return sorted(_record()[section])


def seeded_array(seed, name, shape):
    """The generator's value for parameter `name` (or an input)."""
    rng = np.random.RandomState(seed)
    shape = tuple(shape)
    if name.endswith('weight'):
        bound = np.sqrt(3.0 / int(np.prod(shape[1:])))
        return rng.uniform(-bound, bound, shape).astype(np.float32)
    if name.endswith(('gamma', 'running_var')):
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    return rng.uniform(-0.2, 0.2, shape).astype(np.float32)


def fresh(build):
    """`build()` with fresh name counters, as the generator built MXNet's models."""
    with mx.name.NameManager():
        return build()


def param_table(net):
    by_id = {id(p): key for key, p in net._collect_params_with_prefix().items()}
    return [[by_id[id(p)], p.name, list(p.shape), p.grad_req]
            for p in net.collect_params().values()]


def assert_close(actual, expected, rtol):
    """Within `rtol` of the largest magnitude of `expected`."""
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    scale = float(np.abs(expected).max())
    err = float(np.abs(actual - expected).max())
    assert err <= rtol * scale, f"max error {err:.3g} > {rtol} x {scale:.3g}"


# ---------------------------------------------------------------- structure
@pytest.mark.parametrize('name', _cases('models'))
def test_parameters_are_mxnets(name):
    """save_parameters keys, names, shapes and grad_req, in MXNet's order: its files load."""
    expected = _record()['models'][name]
    net = fresh(lambda: vision.get_model(name))
    net.infer_shape(mx.nd.zeros(tuple(expected['input'])))
    assert param_table(net) == expected['params']


def test_get_model_knows_mxnets_names():
    assert sorted(vision._MODELS) == _cases('models')
    net = fresh(lambda: vision.get_model('ResNet18_V1', classes=7))
    assert isinstance(net, vision.ResNetV1) and net.output._units == 7
    with pytest.raises(ValueError, match=r"resnet19_v1 is not supported.*\n\talexnet"):
        vision.get_model('resnet19_v1')


@pytest.mark.parametrize('qualname', _cases('signatures'))
def test_signature_is_mxnets(qualname):
    module, name = qualname.split('.')
    mod = importlib.import_module(f'mxcy.gluon.model_zoo.vision.{module}')
    assert name in mod.__all__
    params = [[p.name, p.kind.name,
               None if p.default is p.empty or p.name == 'root' else repr(p.default)]
              for p in inspect.signature(getattr(mod, name)).parameters.values()]
    assert params == _record()['signatures'][qualname]


def test_bad_arguments_raise_clearly():
    with pytest.raises(ValueError, match='SqueezeNet version 1.2'):
        vision.SqueezeNet('1.2')
    with pytest.raises(ValueError, match='Invalid number of layers: 20'):
        vision.get_resnet(1, 20)
    with pytest.raises(ValueError, match='Invalid resnet version: 3'):
        vision.get_resnet(3, 18)
    with pytest.raises(ValueError, match='one more entry'):
        vision.ResNetV1(vision.BasicBlockV1, [2, 2], [64, 64])
    with pytest.raises(ValueError, match='Invalid number of layers: 12'):
        vision.get_vgg(12)
    with pytest.raises(ValueError, match='Invalid number of layers: 100'):
        importlib.import_module('mxcy.gluon.model_zoo.vision.densenet').get_densenet(100)


# ---------------------------------------------------------------- outputs
@pytest.mark.parametrize('case', _cases('seeded'))
def test_output_is_mxnets_for_the_same_weights(case):
    spec = _record()['seeded'][case]
    seed, side = spec['seed'], spec['side']
    net = fresh(lambda: vision.get_model(spec['model'], **spec['kwargs']))
    x = mx.nd.array(seeded_array(seed, 'data', (1, 3, side, side)))
    net.infer_shape(x)
    net.initialize(mx.init.Zero())
    for i, p in enumerate(net.collect_params().values()):
        p.set_data(mx.nd.array(seeded_array(seed + 1 + i, p.name, p.shape)))
    expected = np.load(os.path.join(FILES, 'seeded.npz'))[case]
    assert_close(net(x).asnumpy(), expected, 2e-5)


def _file_net(case):
    spec = _record()['files'][case]
    args = [getattr(vision, a) if isinstance(a, str) else a for a in spec['args']]
    net = fresh(lambda: getattr(vision, spec['class'])(*args, **spec['kwargs']))
    side = spec['side']
    return net, seeded_array(7, 'data', (4, 3, side, side))


@pytest.mark.parametrize('hybridize', [False, True], ids=['imperative', 'hybridized'])
@pytest.mark.parametrize('case', _cases('files'))
def test_mxnet_saved_weights_load_and_train_alike(case, hybridize):
    """A file MXNet's save_parameters wrote loads; prediction agrees in float32; in
    float64 (where MXNet's own float32 gradients of MobileNet stray by percents) the
    training-mode output and gradients agree to rounding."""
    net, x = _file_net(case)
    net.load_parameters(os.path.join(FILES, case + '.params'))
    net.hybridize(hybridize)
    ref = np.load(os.path.join(FILES, 'files.npz'))
    assert_close(net(mx.nd.array(x)).asnumpy(), ref[f'{case}/y_pred'], 2e-5)
    net.cast('float64')
    x64 = mx.nd.array(x, dtype='float64')
    with mx.autograd.record():
        y = net(x64)
    y.backward(mx.nd.array(seeded_array(11, 'head', y.shape), dtype='float64'))
    assert_close(y.asnumpy(), ref[f'{case}/y_train'], 1e-9)
    params = [p for p in net.collect_params().values() if p.grad_req != 'null']
    assert_close(params[0].grad().asnumpy(), ref[f'{case}/grad_first'], 1e-9)
    assert_close(params[-1].grad().asnumpy(), ref[f'{case}/grad_last'], 1e-9)


def test_hybridized_output_equals_imperative():
    net = fresh(lambda: vision.mobilenet_v2_0_25(classes=10))
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(seeded_array(3, 'data', (2, 3, 64, 64)))
    y = net(x).asnumpy()
    net.hybridize()
    assert_close(net(x).asnumpy(), y, 1e-6)


def test_cast_after_a_hybridized_call_traces_the_new_dtype():
    """Regression (core, Parameter.cast): the parameters' Symbol variables kept the old
    __dtype__, so the retraced float64 graph asked for float32 BatchNorm statistics."""
    net = fresh(lambda: vision.mobilenet_v2_0_25(classes=10))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = seeded_array(3, 'data', (2, 3, 32, 32))
    y = net(mx.nd.array(x)).asnumpy()
    net.cast('float64')
    y64 = net(mx.nd.array(x, dtype='float64'))
    assert y64.dtype == np.float64
    assert_close(y64.asnumpy(), y.astype(np.float64), 1e-5)


# ---------------------------------------------------------------- graphs and export
def _traced_graph(name):
    net = fresh(lambda: vision.get_model(name))
    net.initialize(mx.init.Zero())
    side = 299 if name == 'inceptionv3' else 224
    net.hybridize()
    net(mx.nd.zeros((1, 3, side, side)))
    return json.loads(net._cached_graph[1].tojson())


def _canonical(op):
    return op if op == 'null' else _op.get_op(op).name


def _attr_value(text):
    """An attribute as a number where it reads as one (MXNet keeps the text the user
    passed: clip's a_max=6 is '6' in MXNet's file, '6.0' in mxcy's)."""
    try:
        return float(text)
    except ValueError:
        return text


def _node(op, name, inputs, attrs):
    return [_canonical(op), name, inputs, {k: _attr_value(v) for k, v in attrs.items()}]


@pytest.mark.parametrize('name', _cases('graphs'))
def test_hybridized_graph_is_mxnets(name):
    """Same nodes (names, inputs, attributes, order), argument nodes and heads; each op is
    MXNet's or an alias of it (MXNet loads either)."""
    graph, expected = _traced_graph(name), _record()['graphs'][name]
    nodes = [_node(n['op'], n['name'], [i[:2] for i in n['inputs']], n.get('attrs', {}))
             for n in graph['nodes']]
    assert nodes == [_node(*n) for n in expected['nodes']]
    assert graph['arg_nodes'] == expected['arg_nodes']
    assert [h[:2] for h in graph['heads']] == expected['heads']


@pytest.mark.parametrize('name', _cases('models'))
def test_repr_is_mxnets(name):
    assert repr(fresh(lambda: vision.get_model(name))) == _record()['models'][name]['repr']


def test_exported_op_names_are_mxnets_canonical_names():
    ops = [n['op'] for n in _traced_graph('resnet18_v1')['nodes']]
    assert ops == [node[0] for node in _record()['graphs']['resnet18_v1']['nodes']]


def test_export_loads_back_with_symbolblock_imports(tmp_path):
    case = 'resnet_v1_bottleneck'
    net, x = _file_net(case)
    net.load_parameters(os.path.join(FILES, case + '.params'))
    net.hybridize()
    x = mx.nd.array(x)
    y = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / 'zoo'), epoch=3)
    assert params_file.endswith('zoo-0003.params')
    saved = mx.nd.load(params_file)
    expected = {('aux:' if n.endswith(('running_mean', 'running_var')) else 'arg:') + n
                for n in net.collect_params()}
    assert set(saved) == expected
    back = SymbolBlock.imports(sym_file, ['data'], params_file)
    assert_close(back(x).asnumpy(), y, 1e-6)
    assert_close(y, np.load(os.path.join(FILES, 'files.npz'))[f'{case}/y_pred'], 2e-5)
