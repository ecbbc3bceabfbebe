#!/usr/bin/env python3
"""Write the Gluon files that mxcy's tests read, with MXNet 1.9.1 itself.

Run in the MXNet peer venv (never in CI):

    /work/peers/mxnet/bin/python tools/mxnet_gluon_fixtures.py

tests/gluon/mxnet_files/ gets: a small HybridSequential (Dense-relu, BatchNorm, Dense)
exported by MXNet (net-symbol.json, net-0000.params), the same network's
save_parameters file (net.params), an input (x.npy) and MXNet's output for it in
prediction mode (y.npy). mxcy must load them and give the same output.
"""
import os

import mxnet as mx
import numpy as np
from mxnet.gluon import nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'gluon',
                   'mxnet_files')


def main():
    os.makedirs(OUT, exist_ok=True)
    mx.random.seed(0)
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation='relu', in_units=5), nn.BatchNorm(in_channels=8),
            nn.Dense(3, in_units=8))
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).rand(4, 5))
    with mx.autograd.record():      # one training pass: the running statistics move
        net(x)
    net.hybridize()
    y = net(x)
    net.export(os.path.join(OUT, 'net'))
    net.save_parameters(os.path.join(OUT, 'net.params'))
    np.save(os.path.join(OUT, 'x.npy'), x.asnumpy())
    np.save(os.path.join(OUT, 'y.npy'), y.asnumpy())
    print('wrote', sorted(os.listdir(OUT)))


if __name__ == '__main__':
    main()
