"""What the Module tests share: the two-layer softmax MLP they bind and train, two CPU
contexts, and MXNet 1.9.1's recorded Module runs (tests/mxnet_files/module/module.json,
written by tools/mxnet_module_fixtures.py)."""
import json
import os

import mxcy as mx

with open(os.path.join(os.path.dirname(__file__), '..', 'mxnet_files', 'module',
                       'module.json')) as _f:
    GOLD = json.load(_f)

TWO = [mx.cpu(0), mx.cpu(1)]


def mlp(hidden=4, classes=3, act_type='relu', act_name=None):
    """data -> fc1 (`hidden`) -> `act_type` -> fc2 (`classes`) -> SoftmaxOutput 'softmax'."""
    data = mx.sym.Variable('data')
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=hidden, name='fc1'),
                          act_type=act_type, name=act_name)
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=classes, name='fc2'),
                                name='softmax')
