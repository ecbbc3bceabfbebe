#!/usr/bin/env python3
"""Files MXNet 1.9.1's ``Block.save`` writes, for tests/gluon/test_block_files.py.

Run in the MXNet peer venv (never in CI; its output is committed):

    /work/mxnet_venv/bin/python tools/mxnet_block_save_fixtures.py

Writes tests/gluon/mxnet_files/block_save{,_hybrid}-model.{json,params} for a nested
HybridSequential with fixed weights, and block_save.json with the model's output on a
fixed input (the same for both files).
"""
import json
import os

import numpy as np
import mxnet as mx

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'gluon',
                   'mxnet_files')


def model():
    net = mx.gluon.nn.HybridSequential(prefix='model_')
    with net.name_scope():
        inner = mx.gluon.nn.HybridSequential()
        with inner.name_scope():
            inner.add(mx.gluon.nn.Dense(3, in_units=4), mx.gluon.nn.Activation('relu'))
        net.add(inner, mx.gluon.nn.Dense(2, in_units=3))
    net.initialize()
    rng = np.random.RandomState(0)
    for p in net.collect_params().values():
        p.set_data(mx.nd.array(rng.uniform(-1, 1, p.shape)))
    return net


def main():
    x = mx.nd.array(np.arange(8).reshape(2, 4) / 8.0)
    net = model()
    net.save(os.path.join(OUT, 'block_save'))
    hybrid = model()
    hybrid.hybridize()
    out = hybrid(x)
    hybrid.save(os.path.join(OUT, 'block_save_hybrid'))
    with open(os.path.join(OUT, 'block_save.json'), 'w') as f:
        json.dump({'input': x.asnumpy().tolist(), 'output': out.asnumpy().tolist()}, f)


if __name__ == '__main__':
    main()
