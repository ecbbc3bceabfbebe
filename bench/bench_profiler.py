#!/usr/bin/env python3
"""What the profiler costs: the MLP of bench_train (784-128-64-10, batch 100, SGD with
momentum, Module.fit) with the profiler off and recording every op, in the same run.

    python bench/bench_profiler.py
    OMP_NUM_THREADS=2 /work/peers/mxnet/bin/python bench/bench_profiler.py --lib mxnet

Figures (one JSON line each):
* profiler_mlp_fit: seconds per fit of 10,000 samples, profiler on; ``ratio_on_vs_off``
  is the median over rounds of on/off, each round running both back to back (their order
  alternates), so both see the machine's load of the moment; ``ops_per_fit`` is the number
  of engine ops the trace holds for one fit;
* profiler_dump: seconds for ``dump()`` to write the trace of one fit (not in the above).
"""
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import emit, load, parse, seconds  # noqa: E402
from bench_executor import mlp  # noqa: E402

FIGURES = ('mlp_fit',)
BENCH = 'profiler'
N, BATCH = 10000, 100


def make_fit(mx):
    rng = np.random.default_rng(0)
    x = rng.random((N, 784), dtype=np.float32)
    y = rng.integers(0, 10, N).astype(np.float32)

    def fit():
        it = mx.io.NDArrayIter(x, y, batch_size=BATCH, shuffle=False)
        mod = mx.mod.Module(mlp(mx), context=mx.cpu())
        mod.fit(it, num_epoch=1, optimizer='sgd',
                optimizer_params={'learning_rate': 0.05, 'momentum': 0.9},
                initializer=mx.init.Xavier())
        mx.nd.waitall()
        return mod
    return fit


def main():
    args = parse(__doc__, FIGURES)
    mx = load(args.lib)
    prof = mx.profiler
    fit = make_fit(mx)
    path = os.path.join(tempfile.mkdtemp(), 'trace.json')
    prof.set_config(profile_all=True, filename=path)

    def on():
        prof.set_state('run')
        fit()
        prof.set_state('stop')

    fit()
    on()
    prof.dump()
    offs, ons, dumps = [], [], []
    for r in range(max(3, args.reps)):
        pair = [('off', fit), ('on', on)]
        for name, fn in (pair if r % 2 else pair[::-1]):
            (offs if name == 'off' else ons).append(seconds(fn))
        dumps.append(seconds(prof.dump))      # empties the records for the next round
    ratio = float(np.median([a / b for a, b in zip(ons, offs)]))
    ops = None
    if args.lib == 'mxcy':
        import json
        with open(path) as f:
            ops = sum(1 for e in json.load(f)['traceEvents'] if e.get('cat') == 'operator')
    emit(BENCH, 'profiler_mlp_fit', args.lib, round(min(ons), 4), 's',
         off_s=round(min(offs), 4), ratio_on_vs_off=round(ratio, 4),
         ratio_best_on_vs_best_off=round(min(ons) / min(offs), 4), ops_per_fit=ops,
         samples=N, batch=BATCH, rounds=len(ons))
    emit(BENCH, 'profiler_dump', args.lib, round(min(dumps), 4), 's',
         trace_bytes=os.path.getsize(path))


if __name__ == '__main__':
    main()
