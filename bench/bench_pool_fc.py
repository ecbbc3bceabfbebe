#!/usr/bin/env python3
"""Pooling and batch-1 FullyConnected as single ``mx.nd`` calls (issue 16).

    python bench/bench_pool_fc.py                                   # mxcy
    OMP_NUM_THREADS=2 /work/mxnet_venv/bin/python bench/bench_pool_fc.py --lib mxnet

One JSON line per figure: float32, best of ``--reps`` calls after a warm-up, wall ms and
process CPU ms (all threads). The shapes are the zoo networks' pools (ResNet's 3×3/s2 max,
squeezenet's 3×3/s2 'full' max and 13×13 global average, an Inception-style 3×3/s1 average)
and alexnet's first FullyConnected at batch 1. Run the libraries back to back (or from two
checkouts with PYTHONPATH) and compare within one run: timings on a shared machine drift.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import load  # noqa: E402

POOLS = [
    ('max3x3s2p1_64x112', (64, 112, 112), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                               pool_type='max')),
    ('max3x3s2full_96x111', (96, 111, 111), dict(kernel=(3, 3), stride=(2, 2),
                                                 pool_type='max', pooling_convention='full')),
    ('gavg_1000x13', (1000, 13, 13), dict(global_pool=True, kernel=(13, 13), pool_type='avg')),
    ('avg3x3s1p1_256x28', (256, 28, 28), dict(kernel=(3, 3), stride=(1, 1), pad=(1, 1),
                                              pool_type='avg')),
]


def best(fn, reps):
    fn()
    wall = cpu = float('inf')
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall * 1e3, cpu * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--lib', default='mxcy')
    parser.add_argument('--reps', type=int, default=15)
    args = parser.parse_args()
    mx = load(args.lib)
    rng = np.random.default_rng(0)
    cases = []
    for name, shape, kw in POOLS:
        for batch in (1, 16):
            x = mx.nd.array(rng.random((batch,) + shape, dtype=np.float32))
            cases.append((f'{name}_b{batch}',
                          lambda x=x, kw=kw: mx.nd.Pooling(x, **kw).wait_to_read()))
    x = mx.nd.array(rng.random((1, 9216), dtype=np.float32))
    w = mx.nd.array(rng.random((4096, 9216), dtype=np.float32))
    b = mx.nd.array(rng.random(4096, dtype=np.float32))
    cases.append(('fc_9216x4096_b1', lambda: mx.nd.FullyConnected(
        x, w, b, num_hidden=4096).wait_to_read()))
    for figure, fn in cases:
        wall, cpu = best(fn, args.reps)
        print(json.dumps({'bench': 'pool_fc', 'figure': figure, 'lib': args.lib,
                          'ms': round(wall, 3), 'cpu_ms': round(cpu, 3),
                          'loadavg_1m': os.getloadavg()[0]}), flush=True)


if __name__ == '__main__':
    main()
