#!/usr/bin/env python3
"""Write what MXNet 1.9.1's ``mx.monitor.Monitor`` reports for a small fixed network.

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_monitor_fixtures.py

tests/mxnet_files/monitor/mlp.json gets the network's parameters and batch, and the
``toc()`` result (step, name, text) of a Module with a Monitor installed, for one
training step (forward + backward) with the default statistic and for one prediction
step with ``pattern='fc.*', sort=True`` and a two-value statistic. MXNet's MKLDNN subgraph
pass is turned off (it renames fused inference nodes), and the gradient MXNet reports for
the label (``softmax_backward_output1``, never written: uninitialised memory) is left out,
so a rerun reproduces the committed file.
"""
import json
import os

os.environ['MXNET_SUBGRAPH_BACKEND'] = 'NONE'
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'mxnet_files',
                   'monitor')


def network():
    data = mx.sym.Variable('data')
    fc1 = mx.sym.FullyConnected(data, num_hidden=4, name='fc1')
    bn = mx.sym.BatchNorm(fc1, fix_gamma=False, name='bn')
    act = mx.sym.Activation(bn, act_type='relu', name='relu1')
    fc2 = mx.sym.FullyConnected(act, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(fc2, name='softmax')


def two_stats(x):
    return [mx.nd.sum(x), mx.nd.max(x) * 2]


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(0)
    net = network()
    shapes = dict(zip(net.list_arguments(), net.infer_shape(data=(3, 5))[0]))
    params = {k: rng.uniform(-1, 1, s).astype(np.float32).round(3) for k, s in shapes.items()
              if k not in ('data', 'softmax_label')}
    x = rng.uniform(-1, 1, (3, 5)).astype(np.float32).round(3)
    y = np.array([0, 2, 1], dtype=np.float32)
    mod = mx.mod.Module(net)
    mod.bind(data_shapes=[('data', x.shape)], label_shapes=[('softmax_label', y.shape)])
    mod.set_params({k: mx.nd.array(v) for k, v in params.items()},
                   {'bn_moving_mean': mx.nd.zeros(4), 'bn_moving_var': mx.nd.ones(4)})
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    mon = mx.monitor.Monitor(1)
    mod.install_monitor(mon)
    mon.tic()
    mod.forward(batch, is_train=True)
    mod.backward()
    train = [r for r in mon.toc() if r[1] != 'softmax_backward_output1']
    mod2 = mx.mod.Module(net)
    mod2.bind(data_shapes=[('data', x.shape)], label_shapes=[('softmax_label', y.shape)],
              for_training=False)
    mod2.set_params({k: mx.nd.array(v) for k, v in params.items()},
                    {'bn_moving_mean': mx.nd.zeros(4), 'bn_moving_var': mx.nd.ones(4)})
    mon2 = mx.monitor.Monitor(2, stat_func=two_stats, pattern='fc.*', sort=True)
    mod2.install_monitor(mon2)
    predict = []
    for _ in range(3):
        mon2.tic()
        mod2.forward(batch, is_train=False)
        predict.append(mon2.toc())
    out = {'params': {k: v.tolist() for k, v in params.items()}, 'x': x.tolist(),
           'y': y.tolist(), 'train': train, 'predict': predict}
    with open(os.path.join(OUT, 'mlp.json'), 'w') as f:
        json.dump(out, f, indent=1)
    print('wrote', sorted(os.listdir(OUT)))


if __name__ == '__main__':
    main()
