#!/usr/bin/env python3
"""Per-op cost of ``mx.np`` arithmetic on small arrays, against NumPy and ``mx.nd``.

    python bench/bench_np.py                        # mxcy
    /work/mxnet_venv/bin/python bench/bench_np.py --lib mxnet

Figures (100 float32 values, microseconds per op, lower is better):

| figure | what one op is |
|---|---|
| ``add`` | ``c = a + b`` |
| ``mul_scalar`` | ``c = a * 2`` |
| ``exp`` | ``c = np.exp(a)`` |
| ``add_asnumpy`` | ``(a + b).asnumpy()`` (an op the user reads at once) |

A loop of ``N`` ops then ``wait_to_read()`` on the last result gives the per-op cost as a
script pays it (the engine runs ops while Python issues the next); ``add_asnumpy`` syncs
every op. NumPy does the same arithmetic on NumPy arrays (the floor); ``mx.nd`` the same on
NDArrays, in the same run. Each figure also gives the process CPU time per op
(``cpu_us``: all threads, so engine workers count; ``cpu_numpy``, ``cpu_nd``, ``cpu_ratio``),
a steadier measure than wall time on a shared machine (best of the same rounds).
"""
import time

import numpy as np

from _common import best_interleaved, emit, load, parse

FIGURES = ('add', 'mul_scalar', 'exp', 'add_asnumpy')
BENCH = 'np'
N = 2000


def run(mx, lib, reps, only):
    if hasattr(mx, 'npx'):
        mx.npx.set_np()
    mnp = mx.np
    rng = np.random.default_rng(0)
    a_np = rng.uniform(0.1, 1, 100).astype(np.float32)
    b_np = rng.uniform(0.1, 1, 100).astype(np.float32)
    a, b = mnp.array(a_np), mnp.array(b_np)
    a_nd, b_nd = a.as_nd_ndarray(), b.as_nd_ndarray()
    ops = {
        'add': (lambda x, y: x + y, lambda x, y: x + y, lambda x, y: x + y),
        'mul_scalar': (lambda x, y: x * 2, lambda x, y: x * 2, lambda x, y: x * 2),
        'exp': (lambda x, y: mnp.exp(x), lambda x, y: mx.nd.exp(x), lambda x, y: np.exp(x)),
    }
    for fig in FIGURES:
        if only and fig != only:
            continue
        if fig == 'add_asnumpy':
            variants = {
                'mx_np': lambda: [(a + b).asnumpy() for _ in range(N)],
                'mx_nd': lambda: [(a_nd + b_nd).asnumpy() for _ in range(N)],
                'np': lambda: [(a_np + b_np).copy() for _ in range(N)],
            }
        else:
            f_np, f_nd, f_numpy = ops[fig]

            def loop(f, x, y):
                def go():
                    c = None
                    for _ in range(N):
                        c = f(x, y)
                    if hasattr(c, 'wait_to_read'):
                        c.wait_to_read()
                return go
            variants = {'mx_np': loop(f_np, a, b), 'mx_nd': loop(f_nd, a_nd, b_nd),
                        'np': loop(f_numpy, a_np, b_np)}
        t = best_interleaved(variants, reps)
        us = {k: round(v / N * 1e6, 3) for k, v in t.items()}
        cpu = {k: round(v / N * 1e6, 3) for k, v in best_cpu(variants, reps).items()}
        emit(BENCH, f'{fig}_us_per_op', lib, us['mx_np'], 'us', us['np'], better='lower',
             nd_value=us['mx_nd'], ratio_vs_nd=round(us['mx_np'] / us['mx_nd'], 4),
             cpu_us=cpu['mx_np'], cpu_numpy=cpu['np'], cpu_nd=cpu['mx_nd'],
             cpu_ratio=round(cpu['mx_np'] / cpu['np'], 4), size=100, ops=N)


def best_cpu(variants, reps):
    """{name: least process CPU seconds of one call}, the variants taking turns."""
    best = {k: float('inf') for k in variants}
    for _ in range(reps):
        for k, fn in variants.items():
            t = time.process_time()
            fn()
            best[k] = min(best[k], time.process_time() - t)
    return best


def main():
    args = parse(__doc__.splitlines()[0], FIGURES)
    mx = load(args.lib)
    run(mx, args.lib, args.reps, args.only)


if __name__ == '__main__':
    main()
