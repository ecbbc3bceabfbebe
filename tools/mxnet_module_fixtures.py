#!/usr/bin/env python3
"""Write what MXNet 1.9.1's ``mx.mod`` gives for data-parallel and sequential modules.

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_module_fixtures.py

tests/mxnet_files/module/module.json gets:

* ``signatures``: the parameters (name, default) of every public method of BaseModule,
  Module, PythonModule, PythonLossModule and SequentialModule (defaults that are objects,
  the logger and initializers, are written as their type name);
* ``slices``: how a batch is split for a few (batch size, work_load_list) pairs;
* ``training``: a small MLP's fixed start weights and data, and the weights after three
  steps on ``[cpu(0), cpu(1)]`` with ``work_load_list=[1, 2]``, for SGD with momentum and
  for Adam, with the per-context output shapes and the accuracy after the steps;
* ``sequential``: the same MLP split in two modules (``take_labels`` on the second) and
  its weights after the same SGD steps.
"""
import inspect
import json
import os

os.environ['MXNET_SUBGRAPH_BACKEND'] = 'NONE'
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'mxnet_files',
                   'module')
CLASSES = ('BaseModule', 'Module', 'PythonModule', 'PythonLossModule', 'SequentialModule')


def _default(value):
    if value is inspect.Parameter.empty:
        return '<required>'
    if isinstance(value, (int, float, str, bool, type(None))):
        return value
    if isinstance(value, tuple):
        return [list(v) if isinstance(v, tuple) else v for v in value]
    return f'<{type(value).__name__}>'


def signatures():
    out = {}
    for cls_name in CLASSES:
        cls = getattr(mx.mod, cls_name)
        methods = {}
        for name in sorted(dir(cls)):
            if name.startswith('_') and name != '__init__':
                continue
            attr = inspect.getattr_static(cls, name)
            if isinstance(attr, property) or not callable(getattr(cls, name)):
                continue
            params = inspect.signature(getattr(cls, name)).parameters.values()
            methods[name] = [[p.name, _default(p.default)] for p in params]
        out[cls_name] = methods
    return out


def mlp(prefix=''):
    data = mx.sym.Variable('data')
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=4, name='fc1'),
                          act_type='relu', name='relu1')
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=3, name='fc2'),
                                name='softmax')


def start_weights(rng):
    return {'fc1_weight': rng.randn(4, 5) * 0.5, 'fc1_bias': rng.randn(4) * 0.1,
            'fc2_weight': rng.randn(3, 4) * 0.5, 'fc2_bias': rng.randn(3) * 0.1}


def batches(x, y):
    return [mx.io.DataBatch([mx.nd.array(x[i:i + 6])], [mx.nd.array(y[i:i + 6])])
            for i in range(0, len(x), 6)]


def train(weights, x, y, optimizer, params):
    mod = mx.mod.Module(mlp(), context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1, 2])
    mod.bind([('data', (6, 5))], [('softmax_label', (6,))])
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in weights.items()})
    mod.init_optimizer(optimizer=optimizer, optimizer_params=params)
    metric = mx.metric.Accuracy()
    for batch in batches(x, y):
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    outs = mod.get_outputs(merge_multi_context=False)
    args, _ = mod.get_params()
    return {'optimizer': optimizer, 'params': params,
            'weights': {k: v.asnumpy().tolist() for k, v in args.items()},
            'output_shapes': [[list(o.shape) for o in per] for per in outs],
            'accuracy': metric.get()[1]}


def sequential(weights, x, y):
    data = mx.sym.Variable('data')
    part1 = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=4, name='fc1'),
                              act_type='relu', name='relu1')
    part2 = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable('data'),
                                                       num_hidden=3, name='fc2'),
                                 name='softmax')
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(part1, label_names=None))
    seq.add(mx.mod.Module(part2), take_labels=True, auto_wiring=True)
    seq.bind([('data', (6, 5))], [('softmax_label', (6,))])
    seq.init_params(arg_params={k: mx.nd.array(v) for k, v in weights.items()})
    seq.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5,
                                                          'momentum': 0.9})
    for batch in batches(x, y):
        seq.forward_backward(batch)
        seq.update()
    args, _ = seq.get_params()
    return {'weights': {k: v.asnumpy().tolist() for k, v in args.items()}}


def main():
    from mxnet.executor_manager import _split_input_slice
    rng = np.random.RandomState(7)
    weights = start_weights(rng)
    x = rng.randn(18, 5)
    y = rng.randint(0, 3, 18).astype(np.float64)
    cases = [[10, [1, 1, 1]], [7, [1, 2]], [5, [1, 1]], [6, [1, 2]], [9, [3, 1, 1]]]
    fixture = {
        'signatures': signatures(),
        'slices': [[b, w, [[s.start, s.stop] for s in _split_input_slice(b, w)]]
                   for b, w in cases],
        'start_weights': {k: v.tolist() for k, v in weights.items()},
        'x': x.tolist(), 'y': y.tolist(),
        'training': [train(weights, x, y, 'sgd', {'learning_rate': 0.5, 'momentum': 0.9}),
                     train(weights, x, y, 'adam', {'learning_rate': 0.05})],
        'sequential': sequential(weights, x, y),
    }
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, 'module.json'), 'w') as f:
        json.dump(fixture, f, indent=None, sort_keys=True)
        f.write('\n')


if __name__ == '__main__':
    main()
