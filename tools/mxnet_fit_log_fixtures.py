#!/usr/bin/env python3
"""Write the lines MXNet 1.9.1's ``Module.fit`` logs for a small fixed training run.

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_fit_log_fixtures.py

tests/mxnet_files/metric/fit_log.json gets the data, the initial weights and, for
``Speedometer(auto_reset=True)`` and ``auto_reset=False``, every logged line (the speed
and the time cost replaced by ``X``, as they are clock readings) and ``score``'s result.
The run has no randomness: fixed data, fixed initial weights, no shuffle, plain SGD.
``metrics`` holds, per built-in metric, three fixed batches and the local and global
values after two updates, ``reset_local`` and one more update.
"""
import io
import json
import logging
import os
import re

os.environ['MXNET_SUBGRAPH_BACKEND'] = 'NONE'
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'mxnet_files',
                   'metric')


def network():
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def run(x, y, weight, auto_reset):
    stream = io.StringIO()
    root = logging.getLogger()
    root.handlers = [logging.StreamHandler(stream)]
    root.setLevel(logging.INFO)
    mod = mx.mod.Module(network(), context=mx.cpu())
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=4, shuffle=False), num_epoch=2,
            eval_metric=['acc', 'ce'],
            arg_params={'fc_weight': mx.nd.array(weight), 'fc_bias': mx.nd.zeros(2)},
            optimizer='sgd', optimizer_params={'learning_rate': 0.5},
            batch_end_callback=mx.callback.Speedometer(4, 3, auto_reset=auto_reset))
    score = mod.score(mx.io.NDArrayIter(x, y, batch_size=4), ['acc', 'ce'])
    text = re.sub(r'Speed: [0-9.inf]+', 'Speed: X', stream.getvalue())
    text = re.sub(r'Time cost=[0-9.]+', 'Time cost=X', text)
    return {'lines': text.splitlines(), 'score': [[n, float(v)] for n, v in score]}


METRICS = {   # name -> (create kwargs, kind of batch)
    'acc': ({}, 'multi'), 'top_k_accuracy': ({'top_k': 2}, 'multi'), 'ce': ({}, 'multi'),
    'nll_loss': ({}, 'multi'), 'perplexity': ({'ignore_label': None}, 'multi'),
    'pcc': ({}, 'multi'), 'f1': ({}, 'binary'), 'mcc': ({}, 'binary'),
    'f1_micro': ({'average': 'micro'}, 'binary'), 'mae': ({}, 'regression'),
    'mse': ({}, 'regression'), 'rmse': ({}, 'regression'), 'pearsonr': ({}, 'regression'),
    'loss': ({}, 'regression')}


def metric_batches(rng, kind):
    batches = []
    for _ in range(3):
        if kind == 'regression':
            label, pred = rng.rand(5), rng.rand(5)
        else:
            classes = 3 if kind == 'multi' else 2
            pred = rng.rand(5, classes)
            pred /= pred.sum(axis=1, keepdims=True)
            label = rng.randint(0, classes, 5).astype('float64')
        batches.append((label.tolist(), pred.tolist()))
    return batches


def local_global(rng):
    out = {}
    for name, (kwargs, kind) in METRICS.items():
        batches = metric_batches(rng, kind)
        metric = mx.metric.create(name.replace('f1_micro', 'f1'), **kwargs)
        for i, (label, pred) in enumerate(batches):
            if i == 2:
                metric.reset_local()
            metric.update([mx.nd.array(label)], [mx.nd.array(pred)])
        out[name] = {'kwargs': kwargs, 'batches': batches, 'local': metric.get()[1],
                     'global': metric.get_global()[1]}
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(0)
    x = rng.randn(40, 6).astype('float32')
    y = (x[:, 0] + x[:, 1] > 0).astype('float32')
    weight = (rng.randn(2, 6) * 0.1).astype('float32')
    fixture = {'x': x.tolist(), 'y': y.tolist(), 'weight': weight.tolist(),
               'auto_reset': run(x, y, weight, True), 'no_auto_reset': run(x, y, weight, False),
               'metrics': local_global(np.random.RandomState(1))}
    with open(os.path.join(OUT, 'fit_log.json'), 'w') as f:
        json.dump(fixture, f, indent=1)
        f.write('\n')
    print('wrote', sorted(os.listdir(OUT)))


if __name__ == '__main__':
    main()
