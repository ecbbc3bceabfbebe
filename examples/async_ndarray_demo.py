"""Asynchronous NDArrays on the dependency engine: what `import mxcy as mx` gives today.

Shows that ops return at once and run on worker threads, that independent work overlaps,
that reads wait only for their writers, and that an error inside an async op comes back
as an ordinary Python exception at the next wait while the engine keeps working.
"""
import argparse
import time

import numpy as np

import mxcy as mx


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--size', type=int, default=1024, help='matrix side for the GEMMs')
    args = parser.parse_args()
    n = args.size
    rng = np.random.default_rng(0)
    a, b, c, d = (mx.nd.array(rng.standard_normal((n, n))) for _ in range(4))
    mx.nd.waitall()

    start = time.perf_counter()
    x = mx.nd.dot(a, b)          # pushed, returns at once
    y = mx.nd.dot(c, d)          # independent: may run on the other worker meanwhile
    pushed = time.perf_counter() - start
    z = x + y                    # waits inside the engine for x and y, not here
    total = z.sum().asscalar()   # the first real wait
    elapsed = time.perf_counter() - start
    expected = float((a.asnumpy() @ b.asnumpy() + c.asnumpy() @ d.asnumpy()).sum())
    print(f"pushed two {n}x{n} GEMMs in {pushed * 1e3:.2f} ms; result after "
          f"{elapsed * 1e3:.1f} ms on {mx.engine.num_workers()} workers "
          f"({mx.engine.engine_type()})")
    print(f"sum = {total:.3f} (NumPy: {expected:.3f})")

    counter = mx.nd.zeros((16,))
    start = time.perf_counter()
    for _ in range(20000):
        counter += 1
    counter.wait_to_read()
    per_op = (time.perf_counter() - start) / 20000 * 1e6
    print(f"20,000 async `counter += 1` ops: {per_op:.2f} us per op, "
          f"counter[0] = {counter[0].asscalar():.0f}")

    bad = mx.nd.array([1, 2, 3], dtype='int32') / mx.nd.zeros((3,), dtype='int32')
    downstream = bad * 2         # skipped by the engine: it reads a failed result
    try:
        downstream.asnumpy()
    except ZeroDivisionError as err:
        print(f"error surfaced at the wait: ZeroDivisionError: {err}")
    ok = (mx.nd.ones((2, 2)) * 3).asnumpy()
    print(f"the engine carries on: {ok.tolist()}")


if __name__ == '__main__':
    main()
