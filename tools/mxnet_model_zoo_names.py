#!/usr/bin/env python3
"""Record, with MXNet 1.9.1 itself, what mxcy's model zoo must reproduce.

Run in the MXNet peer venv (never in CI; the files it writes are committed):

    /work/mxnet_venv/bin/python tools/mxnet_model_zoo_names.py

It writes tests/gluon/model_zoo/mxnet_files/:

- ``zoo.json.gz`` (gzipped JSON):
  - ``models``: for every name of ``vision.get_model``, built in a fresh
    ``mx.name.NameManager()`` and shape-inferred at its input size, each parameter's
    ``save_parameters`` key, full name, shape and grad_req, in ``collect_params`` order,
    and the repr of the model as built;
  - ``graphs``: for a few models, the hybridized graph's nodes (op, name, inputs,
    attributes), argument nodes and heads, as ``export`` writes them;
  - ``seeded``: forward cases whose weights and input come from ``seeded_array`` (NumPy's
    RandomState, stable across NumPy versions), so large models are checked against
    MXNet's outputs without committing their weights;
  - ``signatures``: the parameters of every public class and function of each family;
  - ``files``: small networks initialized by MXNet (seed 0) and saved with
    ``save_parameters`` into ``<case>.params``.
- ``seeded.npz``: MXNet's prediction-mode output of each seeded case.
- ``files.npz``: per file case (input ``seeded_array(7, 'data', (4, 3, side, side))``),
  the prediction-mode output, then, computed in float64, the training-mode output and
  the gradients of the first and last trainable parameters after
  ``backward(seeded_array(11, 'head', output shape))``.
"""
import gzip
import io
import importlib
import inspect
import json
import os

# MXNet's MKL-DNN backward of a concatenation fails on the small DenseNet ("could not
# construct a sub-memory"); its reference CPU kernels do not
os.environ['MXNET_MKLDNN_ENABLED'] = '0'
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from mxnet.gluon.model_zoo import vision  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'gluon',
                   'model_zoo', 'mxnet_files')

FAMILIES = ['alexnet', 'densenet', 'inception', 'mobilenet', 'resnet', 'squeezenet', 'vgg']
GRAPH_MODELS = ['resnet18_v1', 'resnet50_v2', 'mobilenetv2_0.25', 'squeezenet1.1',
                'densenet121', 'inceptionv3']

# case -> (model name, constructor kwargs, input side)
SEEDED = {
    'resnet18_v1': ('resnet18_v1', {}, 64),
    'resnet50_v2': ('resnet50_v2', {}, 64),
    'mobilenet1.0': ('mobilenet1.0', {}, 64),
    'mobilenetv2_1.0': ('mobilenetv2_1.0', {}, 64),
    'squeezenet1.0': ('squeezenet1.0', {}, 224),
    'squeezenet1.1': ('squeezenet1.1', {}, 224),
    'densenet121': ('densenet121', {}, 224),
    'inceptionv3': ('inceptionv3', {}, 299),
    'alexnet_10': ('alexnet', {'classes': 10}, 64),
    'vgg11_bn_10': ('vgg11_bn', {'classes': 10}, 32),
}

# case -> (class name in vision, positional args, kwargs, input side); the input is a
# batch of 4, large enough that each training-mode BatchNorm averages 64 values or more
# (over 2 or 8 values its backward amplifies rounding differences to percents)
FILES = {
    'resnet_v1_basic': ('ResNetV1', ('BasicBlockV1', [2, 2, 2, 2], [4, 4, 8, 16, 32]),
                        {'classes': 10}, 128),
    'resnet_v1_bottleneck': ('ResNetV1', ('BottleneckV1', [1, 2, 1, 1], [8, 16, 24, 32, 48]),
                             {'classes': 10}, 128),
    'resnet_v2_bottleneck': ('ResNetV2', ('BottleneckV2', [1, 2, 1, 1], [8, 16, 24, 32, 48]),
                             {'classes': 10, 'thumbnail': True}, 32),
    'densenet_small': ('DenseNet', (8, 4, [2, 3, 2, 2]), {'classes': 10}, 224),
    'mobilenet0.25_10': ('get_mobilenet', (0.25,), {'classes': 10}, 128),
}


def input_side(name):
    return 299 if name == 'inceptionv3' else 224


def seeded_array(seed, name, shape):
    """A deterministic value for the parameter `name` (mxcy's tests compute the same)."""
    rng = np.random.RandomState(seed)
    shape = tuple(shape)
    if name.endswith('weight'):
        fan_in = int(np.prod(shape[1:]))
        bound = np.sqrt(3.0 / fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)
    if name.endswith(('gamma', 'running_var')):
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    return rng.uniform(-0.2, 0.2, shape).astype(np.float32)   # beta, bias, running_mean


def fresh(build):
    with mx.name.NameManager():
        return build()


def param_table(net):
    by_id = {id(p): key for key, p in net._collect_params_with_prefix().items()}
    return [[by_id[id(p)], p.name, list(p.shape), p.grad_req]
            for p in net.collect_params().values()]


def graph_summary(net, side):
    net.hybridize()
    net(mx.nd.zeros((1, 3, side, side)))
    graph = json.loads(net._cached_graph[1].tojson())
    return {'nodes': [[n['op'], n['name'], [i[:2] for i in n['inputs']], n.get('attrs', {})]
                      for n in graph['nodes']],
            'arg_nodes': graph['arg_nodes'], 'heads': [h[:2] for h in graph['heads']]}


def seeded_case(name, kwargs, side, seed):
    net = fresh(lambda: vision.get_model(name, **kwargs))
    x = mx.nd.array(seeded_array(seed, 'data', (1, 3, side, side)))
    net.initialize(mx.init.Zero())
    net.infer_shape(x)
    for i, p in enumerate(net.collect_params().values()):
        p.set_data(mx.nd.array(seeded_array(seed + 1 + i, p.name, p.shape)))
    return net(x).asnumpy()


def file_case(case, cls, args, kwargs, side):
    mx.random.seed(0)
    args = tuple(getattr(vision, a) if isinstance(a, str) else a for a in args)
    net = fresh(lambda: getattr(vision, cls)(*args, **kwargs))
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(seeded_array(7, 'data', (4, 3, side, side)))
    with mx.autograd.record():          # a training pass moves the running statistics
        net(x)
    net.save_parameters(os.path.join(OUT, case + '.params'))
    y_pred = net(x)
    # the training-mode reference in float64: MXNet's own float32 gradients of
    # mobilenet0.25 stray by percents from its float64 ones (and from finite differences)
    net.cast('float64')
    params = [p for p in net.collect_params().values() if p.grad_req != 'null']
    with mx.autograd.record():
        y_train = net(x.astype('float64'))
    y_train.backward(mx.nd.array(seeded_array(11, 'head', y_train.shape), dtype='float64'))
    return {'y_pred': y_pred.asnumpy(), 'y_train': y_train.asnumpy(),
            'grad_first': params[0].grad().asnumpy(), 'grad_last': params[-1].grad().asnumpy()}


def signatures():
    """Each public class and function of the vision modules: its parameters (name, kind,
    default; the default of `root` is left out, as it holds the home folder)."""
    out = {}
    for module in FAMILIES:
        mod = importlib.import_module(f'mxnet.gluon.model_zoo.vision.{module}')
        for name in mod.__all__:
            sig = inspect.signature(getattr(mod, name))
            out[f'{module}.{name}'] = [
                [p.name, p.kind.name,
                 None if p.default is p.empty or p.name == 'root' else repr(p.default)]
                for p in sig.parameters.values()]
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    record = {'models': {}, 'graphs': {}, 'seeded': {}, 'files': {},
              'signatures': signatures()}
    for name in sorted(_model_names()):
        net = fresh(lambda: vision.get_model(name))
        side = input_side(name)
        net.initialize()
        net.infer_shape(mx.nd.zeros((1, 3, side, side)))
        record['models'][name] = {'input': [1, 3, side, side], 'params': param_table(net),
                                  'repr': repr(fresh(lambda: vision.get_model(name)))}
    for name in GRAPH_MODELS:
        net = fresh(lambda: vision.get_model(name))
        net.initialize()
        record['graphs'][name] = graph_summary(net, input_side(name))
    outputs = {}
    for seed, (case, (name, kwargs, side)) in enumerate(sorted(SEEDED.items())):
        seed = 1000 * (seed + 1)
        record['seeded'][case] = {'model': name, 'kwargs': kwargs, 'side': side, 'seed': seed}
        outputs[case] = seeded_case(name, kwargs, side, seed)
    np.savez_compressed(os.path.join(OUT, 'seeded.npz'), **outputs)
    arrays = {}
    for case, (cls, args, kwargs, side) in sorted(FILES.items()):
        record['files'][case] = {'class': cls, 'args': list(args), 'kwargs': kwargs,
                                 'side': side}
        for key, value in file_case(case, cls, args, kwargs, side).items():
            arrays[f'{case}/{key}'] = value
    np.savez_compressed(os.path.join(OUT, 'files.npz'), **arrays)
    # mtime=0: the same content gives the same bytes, so a rerun changes nothing in git
    with gzip.GzipFile(os.path.join(OUT, 'zoo.json.gz'), 'wb', mtime=0) as raw, \
            io.TextIOWrapper(raw, encoding='utf-8') as f:
        json.dump(record, f, separators=(',', ':'))
    print('wrote', sorted(os.listdir(OUT)))


def _model_names():
    """The names get_model accepts (MXNet keeps them in a dict local to get_model)."""
    try:
        vision.get_model('?')
    except ValueError as exc:
        return [line.strip() for line in str(exc).split('\n')[1:]]
    raise AssertionError('get_model accepted an unknown name')


if __name__ == '__main__':
    main()
