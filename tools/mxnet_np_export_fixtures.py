#!/usr/bin/env python3
"""Record a hybridized Gluon net exported by MXNet 1.9.1 in NumPy mode.

Run in the MXNet peer venv (never in CI; the files it writes are committed):

    /work/mxnet_venv/bin/python tools/mxnet_np_export_fixtures.py

Under ``npx.set_np()`` a small convnet with an ``F.npx`` head is initialized from a fixed
seed, hybridized, run on a fixed input and exported; it writes
``tests/gluon/mxnet_files/np_net-symbol.json``, ``np_net-0000.params`` (MXNet's NumPy-shape
layout) and ``np_net_io.npz`` (the input ``x`` and MXNet's output ``y``).
"""
import os

import mxnet as mx
import numpy as onp
from mxnet import gluon, np, npx
from mxnet.gluon import nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'gluon',
                   'mxnet_files')


class Head(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.npx.reshape(F.npx.log_softmax(x), (-2, -1))


def main():
    npx.set_np()
    mx.random.seed(0)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, kernel_size=3, padding=1, activation='relu'), nn.MaxPool2D(2),
            nn.BatchNorm(), nn.Dense(10), Head())
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = onp.random.RandomState(0).uniform(-1, 1, (2, 1, 6, 6)).astype('float32')
    y = net(np.array(x))
    net.export(os.path.join(OUT, 'np_net'))
    onp.savez(os.path.join(OUT, 'np_net_io.npz'), x=x, y=y.asnumpy())
    print('wrote np_net-symbol.json, np_net-0000.params, np_net_io.npz')


if __name__ == '__main__':
    main()
