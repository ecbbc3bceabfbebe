"""Regenerates lenet.json, mlp.json and mxnet_expected.json in this folder: run it here
with MXNet 1.9.1 (python make_mxnet_fixtures.py). Not a test; the tests only read its output."""
import json

import mxnet as mx
import numpy as np


def lenet():
    data = mx.sym.Variable('data')
    c1 = mx.sym.Convolution(data=data, kernel=(5, 5), num_filter=20, name='conv1')
    a1 = mx.sym.Activation(data=c1, act_type='tanh', name='tanh1')
    p1 = mx.sym.Pooling(data=a1, pool_type='max', kernel=(2, 2), stride=(2, 2), name='pool1')
    c2 = mx.sym.Convolution(data=p1, kernel=(5, 5), num_filter=50, name='conv2')
    a2 = mx.sym.Activation(data=c2, act_type='tanh', name='tanh2')
    p2 = mx.sym.Pooling(data=a2, pool_type='max', kernel=(2, 2), stride=(2, 2), name='pool2')
    f1 = mx.sym.FullyConnected(data=p2, num_hidden=500, name='fc1')
    a3 = mx.sym.Activation(data=f1, act_type='tanh', name='tanh3')
    f2 = mx.sym.FullyConnected(data=a3, num_hidden=10, name='fc2')
    return mx.sym.SoftmaxOutput(data=f2, name='softmax')


def mlp():
    data = mx.sym.Variable('data')
    fc1 = mx.sym.FullyConnected(data=data, name='fc1', num_hidden=128)
    act1 = mx.sym.Activation(data=fc1, name='relu1', act_type='relu')
    fc2 = mx.sym.FullyConnected(data=act1, name='fc2', num_hidden=64)
    act2 = mx.sym.Activation(data=fc2, name='relu2', act_type='relu')
    fc3 = mx.sym.FullyConnected(data=act2, name='fc3', num_hidden=10)
    return mx.sym.SoftmaxOutput(data=fc3, name='softmax')


def record(sym, name, data_shape):
    sym.save(f'{name}.json')
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(data=data_shape)
    names = sym.list_arguments()
    rng = np.random.RandomState(0)
    args = {}
    for n, s in zip(names, arg_shapes):
        if n == 'softmax_label':
            args[n] = mx.nd.array(np.arange(s[0]) % 10)
        else:
            args[n] = mx.nd.array(rng.uniform(-0.1, 0.1, size=s).astype(np.float32))
    exe = sym.bind(mx.cpu(), args)
    out = exe.forward(is_train=False)[0].asnumpy()
    return {'data_shape': list(data_shape), 'list_arguments': names,
            'list_outputs': sym.list_outputs(),
            'list_auxiliary_states': sym.list_auxiliary_states(),
            'arg_shapes': [list(s) for s in arg_shapes],
            'out_shapes': [list(s) for s in out_shapes],
            'forward_output': out.tolist(),
            'mxnet_version': mx.__version__}


expected = {'lenet': record(lenet(), 'lenet', (2, 1, 28, 28)),
            'mlp': record(mlp(), 'mlp', (3, 784))}
with open('mxnet_expected.json', 'w') as f:
    json.dump(expected, f, indent=1)
print({k: v['list_arguments'] for k, v in expected.items()})
