#!/usr/bin/env python3
"""dist_sync over MPI: allreduce overhead and MNIST MLP epoch time. Run on 2 ranks:

    mpirun -np 2 python bench/bench_dist.py             (+ --allow-run-as-root --oversubscribe
                                                          for OpenMPI as root)
    mpirun -np 2 python bench/bench_dist.py --only allreduce_4mb --reps 30

Rank 0 prints one JSON line per figure on stdout (nothing else goes to stdout):

* ``allreduce_4mb``: ``kv.pushpull`` of a 4 MB float32 gradient (1,048,576 values, into
  a separate output, then ``wait_to_read``), ms per call; the floor (``numpy`` key) is
  mpi4py's own blocking ``Comm.Allreduce`` of a NumPy buffer of the same size, timed in
  the same run in alternating rounds. Target ``ratio_vs_numpy`` <= 1.2;
  ``paired_median_ratio`` (the median over rounds of the two calls' ratio) is the
  steadier reading on a busy machine. The line also
  carries the bandwidth (GB/s of gradient reduced per second) and, as a diagnostic,
  ``mpi4py_on_ndarray_memory_ms``: the same Allreduce on two NDArrays' memory (the
  engine's allocator), which separates allocator effects from the store's overhead, and
  ``in_place_ms``: ``kv.pushpull(key, g, out=g)``, Module's pattern (MPI's in-place
  Allreduce), with its ratio to the same floor.
* ``mnist_mlp_epoch``: one epoch (forward, backward, update, metric) of the examples'
  784-128-64-10 MLP on the 4,000 offline MNIST digits, batch 100 per rank: 2 ranks with
  dist_sync (2,000 digits each) against one rank alone with a local store on all 4,000
  (the other rank sleeps meanwhile), the two alternating epoch by epoch so both see the
  same machine load. Best epoch after a warm-up round; report only (on a 2-core machine
  no speed-up is expected: the ranks share the cores).

Timings are time.perf_counter on rank 0, each call started right after a barrier, once
the previous call's background engine work (the store's copy of the sum) has finished.
The allreduce result is checked against NumPy, so a broken store cannot post a number.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import check_close, emit, paired_median_ratio, parse

BENCH = 'dist'
FIGURES = ('allreduce_4mb', 'mnist_mlp_epoch')
GRAD_VALUES = 1 << 20            # 4 MB of float32


def idle_barrier(comm):
    """A barrier that sleeps while it waits, so an idle rank leaves the cores alone."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(0.001)


def timed_rounds(comm, variants, reps, settle=None):
    """{name: [seconds per round]}, the variants alternating, each started after a barrier; the
    order rotates every round (a call's position in the round measurably changes its
    time here). `settle()` runs after each call, untimed: the store's background work
    (it copies each reduced value into the store) must not land in the next variant's
    time, which is always another variant's."""
    times = {name: [] for name in variants}
    names = list(variants)
    for round_ in range(reps + 1):                     # round 0 is the warm-up
        for i in range(len(names)):
            name = names[(round_ + i) % len(names)]
            fn = variants[name]
            comm.Barrier()
            start = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - start
            if settle is not None:
                settle()
            if round_:
                times[name].append(elapsed)
    return times


def allreduce_4mb(mx, kv, comm, reps):
    from mpi4py import MPI
    size, rank = comm.Get_size(), comm.Get_rank()
    base = np.random.RandomState(rank).randint(-100, 100, GRAD_VALUES).astype(np.float32)
    grad, out = mx.nd.array(base), mx.nd.zeros((GRAD_VALUES,))
    kv.init('grad', mx.nd.zeros((GRAD_VALUES,)))
    send, recv = base.copy(), np.empty_like(base)

    def mxcy_pushpull():
        kv.pushpull('grad', grad, out=out)
        out.wait_to_read()

    in_place = mx.nd.zeros((GRAD_VALUES,))     # zeros: repeated in-place sums stay finite

    def mxcy_pushpull_in_place():             # Module's pattern: out is the gradient
        kv.pushpull('grad', in_place, out=in_place)
        in_place.wait_to_read()

    def mpi4py_allreduce():
        comm.Allreduce(send, recv, op=MPI.SUM)

    scratch_in, scratch_out = mx.nd.array(base), mx.nd.zeros((GRAD_VALUES,))
    scratch_in.wait_to_read()
    scratch_out.wait_to_read()

    def mpi4py_on_ndarray_memory():     # diagnostic: the floor on the engine's own buffers
        comm.Allreduce(scratch_in._np_view(), scratch_out._np_view(), op=MPI.SUM)

    times = timed_rounds(comm, {'mxcy': mxcy_pushpull, 'mpi4py': mpi4py_allreduce,
                                'ndmem': mpi4py_on_ndarray_memory,
                                'in_place': mxcy_pushpull_in_place}, max(reps, 20),
                         settle=mx.nd.waitall)
    best = {name: min(ts) for name, ts in times.items()}
    expect = sum(np.random.RandomState(r).randint(-100, 100, GRAD_VALUES).astype(np.float32)
                 for r in range(size))
    check_close('allreduce_4mb (pushpull)', out.asnumpy(), expect, rtol=0, atol=0)
    check_close('allreduce_4mb (mpi4py)', recv, expect, rtol=0, atol=0)
    if rank == 0:
        nbytes = GRAD_VALUES * 4
        emit(BENCH, 'allreduce_4mb', 'mxcy', round(best['mxcy'] * 1e3, 4), 'ms',
             numpy_value=round(best['mpi4py'] * 1e3, 4), floor='mpi4py Comm.Allreduce',
             gbps=round(nbytes / best['mxcy'] / 1e9, 3),
             floor_gbps=round(nbytes / best['mpi4py'] / 1e9, 3), ranks=size,
             mpi4py_on_ndarray_memory_ms=round(best['ndmem'] * 1e3, 4),
             in_place_ms=round(best['in_place'] * 1e3, 4),
             in_place_ratio_vs_numpy=round(best['in_place'] / best['mpi4py'], 4),
             paired_median_ratio=round(paired_median_ratio(times, 'mxcy', 'mpi4py'), 4),
             bytes=nbytes, reps=max(reps, 20), mpi=MPI.Get_library_version().split(',')[0])


def _mlp(mx):
    data = mx.sym.Variable('data')
    fc1 = mx.sym.FullyConnected(data=data, name='fc1', num_hidden=128)
    act1 = mx.sym.Activation(data=fc1, name='relu1', act_type='relu')
    fc2 = mx.sym.FullyConnected(data=act1, name='fc2', num_hidden=64)
    act2 = mx.sym.Activation(data=fc2, name='relu2', act_type='relu')
    fc3 = mx.sym.FullyConnected(data=act2, name='fc3', num_hidden=10)
    return mx.sym.SoftmaxOutput(data=fc3, name='softmax')


class _Trainer:
    """The MLP on the offline digits, trained one epoch at a time through `kvstore`."""

    def __init__(self, mx, kvstore, parts):
        from mxcy.io.digits import prepare_digits
        files = prepare_digits()
        self.mx = mx
        self.train = mx.io.MNISTIter(image=files['train_image'], label=files['train_label'],
                                     batch_size=100, flat=True, shuffle=True, silent=True,
                                     **parts)
        self.mod = mx.mod.Module(_mlp(mx), context=mx.cpu())
        self.mod.bind(self.train.provide_data, self.train.provide_label)
        self.mod.init_params(mx.init.Xavier())
        self.mod.init_optimizer(kvstore=kvstore, optimizer='sgd',
                                optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
        self.metric = mx.metric.create('acc')

    def epoch_seconds(self):
        self.train.reset()
        self.metric.reset()
        self.mx.nd.waitall()
        start = time.perf_counter()
        for batch in self.train:
            self.mod.forward_backward(batch)
            self.mod.update()
            self.mod.update_metric(self.metric, batch.label)
        self.mx.nd.waitall()
        return time.perf_counter() - start


def mnist_mlp_epoch(mx, kv, comm, reps):
    """Rounds of: rank 0 alone one epoch on all the data (the others sleep), then every
    rank one epoch on its shard; best of each after a warm-up round."""
    size, rank = comm.Get_size(), comm.Get_rank()
    rounds = max(3, min(reps, 8))
    alone = _Trainer(mx, 'local', {}) if rank == 0 else None
    together = _Trainer(mx, kv, {'num_parts': size, 'part_index': rank})
    best_alone = best_together = float('inf')
    for round_ in range(rounds + 1):
        if alone is not None:
            seconds = alone.epoch_seconds()
            best_alone = min(best_alone, seconds) if round_ else best_alone
        idle_barrier(comm)
        seconds = together.epoch_seconds()
        best_together = min(best_together, seconds) if round_ else best_together
        idle_barrier(comm)
    if rank == 0:
        emit(BENCH, 'mnist_mlp_epoch', 'mxcy', round(best_together * 1e3, 2), 'ms',
             one_rank_ms=round(best_alone * 1e3, 2),
             ratio_vs_one_rank=round(best_together / best_alone, 3), ranks=size,
             batch_per_rank=100, samples=4000, rounds=rounds,
             train_accuracy_last_epoch=round(together.metric.get()[1], 4),
             note='report only: the ranks share the machine\'s cores')


def main():
    args = parse(__doc__.splitlines()[0], FIGURES)
    if args.lib != 'mxcy':
        raise SystemExit("bench_dist.py measures mxcy's dist_sync only (--lib mxcy)")
    import mxcy as mx
    kv = mx.kv.create('dist_sync')
    comm = kv._comm.comm                 # the store's MPI communicator (COMM_WORLD)
    if comm.Get_size() < 2:
        if comm.Get_rank() == 0:
            for figure in FIGURES:
                emit(BENCH, figure, 'mxcy', None, 'ms',
                     note='run under mpirun -np 2 (a one-rank job has nothing to reduce)')
        return
    for figure in FIGURES:
        if args.only in (None, figure):
            globals()[figure](mx, kv, comm, args.reps)


if __name__ == '__main__':
    main()
