"""Randomized workload replay: many client threads against a sequential NumPy replay.

8 Python threads push 128,000 random ops in all (16,000 each) over 64 output arrays
(8 per thread) and 8 shared read-only arrays, through the native kernels (binary with
and without broadcasting scalars, in-place add, copy, fill, copies between views of one
chunk) plus a few Python ops. A thread writes only its own arrays and reads its own
arrays or the shared constants, so each thread's values are fully determined by its own
op sequence: the replay runs each sequence through NumPy and every value must match
exactly (int32 arithmetic, kept small with a modulo after each arithmetic op). Threads
also take snapshots with ``asnumpy()`` mid-stream, checked against the replay at the
same point. A short GIL switch interval makes the client threads interleave finely.
Configurations: ThreadedEngine with 1, 2 and 8 workers, the same with
bulking, and NaiveEngine. Fixed seed.
"""
import sys
import threading

import numpy as np
import pytest

import mxcy as mx
from mxcy import _ndarray, _ops

NTHREADS = 8
OWN = 8                     # output arrays per thread
NCONST = 8                  # shared read-only arrays
OPS_PER_THREAD = 16_000
SIZE = 8
MOD = 1009
SEED = 20240611
JOIN_TIMEOUT = 120

B = _ops.BINARY_OPS
ARITH = [B['add'], B['subtract'], B['multiply'], B['maximum'], B['minimum']]
SCALAR_OPS = [B['add'], B['multiply'], B['maximum'], B['modulo'], B['rsubtract']]
NP_BINARY = {B['add']: np.add, B['subtract']: np.subtract, B['multiply']: np.multiply,
             B['maximum']: np.maximum, B['minimum']: np.minimum, B['modulo']: np.mod,
             B['rsubtract']: lambda x, s: s - x}

# op kinds
BIN, SCALAR, IADD, COPY, FILL, HALVES, PYOP, SNAP = range(8)


def make_ops(rng):
    """One thread's op list: (kind, z, x, y, code, scalar); z < OWN is written."""
    ops = []
    kinds = rng.choice([BIN, SCALAR, IADD, COPY, FILL, HALVES, PYOP, SNAP],
                       size=OPS_PER_THREAD, p=[.30, .20, .15, .12, .05, .12, .01, .05])
    readable = OWN + NCONST
    while len(ops) < OPS_PER_THREAD:
        kind = int(kinds[len(ops)])
        z = int(rng.integers(OWN))
        x = int(rng.integers(readable))
        y = int(rng.integers(readable))
        code = int(rng.choice(SCALAR_OPS if kind == SCALAR else ARITH))
        scalar = int(rng.integers(1, 50))
        ops.append((kind, z, x, y, code, scalar))
        if kind in (BIN, SCALAR, IADD):
            ops.append((SCALAR, z, z, z, B['modulo'], MOD))   # keep values small
    return ops[:OPS_PER_THREAD]


def py_op(x, out):
    out[...] = (x * 7 + 3) % MOD


def replay(ops, values):
    """Run one thread's ops through NumPy; return its snapshots."""
    snaps = []
    for kind, z, x, y, code, scalar in ops:
        if kind == BIN:
            values[z][...] = NP_BINARY[code](values[x], values[y])
        elif kind == SCALAR:
            values[z][...] = NP_BINARY[code](values[x], np.int32(scalar))
        elif kind == IADD:
            values[z] += values[x]
        elif kind == COPY:
            values[z][...] = values[x]
        elif kind == FILL:
            values[z][...] = scalar
        elif kind == HALVES:
            values[z][:SIZE // 2] = values[x][SIZE // 2:].copy()
        elif kind == PYOP:
            py_op(values[x], values[z])
        else:
            snaps.append(values[z].copy())
    return snaps


def run(ops, arrays):
    """Push one thread's ops to the engine; return its snapshots."""
    snaps = []
    binary = _ndarray.binary
    half = SIZE // 2
    for kind, z, x, y, code, scalar in ops:
        if kind == BIN:
            binary(arrays[x], arrays[y], code, out=arrays[z])
        elif kind == SCALAR:
            binary(arrays[x], scalar, code, out=arrays[z])
        elif kind == IADD:
            arrays[z] += arrays[x]
        elif kind == COPY:
            arrays[z][:] = arrays[x]
        elif kind == FILL:
            arrays[z][:] = scalar
        elif kind == HALVES:
            arrays[z][0:half] = arrays[x][half:SIZE]
        elif kind == PYOP:
            mx.nd.push_numpy(py_op, [arrays[x]], [arrays[z]], 'py_op')
        else:
            snaps.append(arrays[z].asnumpy())
    return snaps


@pytest.fixture
def fine_interleaving():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


@pytest.fixture(scope='module')
def workload():
    """The ops, initial values and the replay's final values and snapshots (shared by
    every configuration)."""
    rng = np.random.default_rng(SEED)
    consts = [rng.integers(0, MOD, SIZE).astype(np.int32) for _ in range(NCONST)]
    inits, ops, finals, snaps = [], [], [], []
    for _ in range(NTHREADS):
        init = [rng.integers(0, MOD, SIZE).astype(np.int32) for _ in range(OWN)]
        thread_ops = make_ops(rng)
        values = [v.copy() for v in init] + [c.copy() for c in consts]
        snaps.append(replay(thread_ops, values))
        finals.append(values[:OWN])
        inits.append(init)
        ops.append(thread_ops)
    assert sum(len(o) for o in ops) >= 100_000
    return {'consts': consts, 'inits': inits, 'ops': ops, 'finals': finals, 'snaps': snaps}


CONFIGS = [('ThreadedEngine', 1, 0), ('ThreadedEngine', 2, 0), ('ThreadedEngine', 8, 0),
           ('ThreadedEngine', 2, 16), ('NaiveEngine', 2, 0)]


@pytest.mark.parametrize('engine_type,workers,bulk', CONFIGS,
                         ids=['threaded-1', 'threaded-2', 'threaded-8', 'threaded-2-bulk16',
                              'naive'])
def test_random_workload_matches_sequential_replay(workload, fine_interleaving, engine_type,
                                                   workers, bulk):
    mx.engine.set_engine_type(engine_type)
    mx.engine.set_num_workers(workers)
    consts = [mx.nd.array(c, dtype='int32') for c in workload['consts']]
    arrays = [[mx.nd.array(v, dtype='int32') for v in init] + consts
              for init in workload['inits']]
    start = threading.Barrier(NTHREADS)
    got_snaps = [None] * NTHREADS
    errors = []

    def client(tid):
        try:
            start.wait(JOIN_TIMEOUT)
            with mx.engine.bulk(bulk):
                got_snaps[tid] = run(workload['ops'][tid], arrays[tid])
        except BaseException as exc:    # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(t,)) for t in range(NTHREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in threads), 'client threads hung'
    assert errors == []
    mx.nd.waitall()
    for tid in range(NTHREADS):
        for i in range(OWN):
            np.testing.assert_array_equal(arrays[tid][i].asnumpy(), workload['finals'][tid][i],
                                          err_msg=f'thread {tid}, array {i}')
        assert len(got_snaps[tid]) == len(workload['snaps'][tid])
        for k, (got, want) in enumerate(zip(got_snaps[tid], workload['snaps'][tid])):
            np.testing.assert_array_equal(got, want, err_msg=f'thread {tid}, snapshot {k}')
    for c, want in zip(consts, workload['consts']):
        np.testing.assert_array_equal(c.asnumpy(), want)
