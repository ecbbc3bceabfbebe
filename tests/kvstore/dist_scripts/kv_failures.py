"""Failure modes of dist_sync, run under ``mpirun`` by tests/kvstore/test_dist.py.

``python kv_failures.py MODE``:

* ``mismatch``: ranks init / push different keys or shapes. Every rank must get an
  MXNetError naming the keys (printed as ``CAUGHT <message>``), the store must stay usable
  (a correct push afterwards prints ``SUM <value>``), and the job exits 0.
* ``early_exit``: the last rank exits right after init; the others push and must fail
  with the timeout error (uncaught), which aborts the whole job.
* ``no_store``: the last rank never creates a store; the others' ``kv.create`` must fail
  with the timeout error.
* ``fewer_batches``: Module training where rank 0 has one batch more than the others;
  rank 0 must fail with the timeout error and the job must end.
"""
import sys

import numpy as np

import mxcy as mx
from mxcy.base import MXNetError


def caught(fn):
    try:
        fn()
    except MXNetError as err:
        print('CAUGHT', str(err).replace('\n', ' '), flush=True)
    else:
        print('NO ERROR', flush=True)


def mismatch(kv, rank):
    print('CALLER_POSTS_AGREEMENTS', kv._comm.agree_comm is not None, flush=True)
    kv.init(['a', 'b'], [mx.nd.zeros((3,)), mx.nd.zeros((4,))])

    def push_different_key():
        key, shape = ('a', (3,)) if rank == 0 else ('b', (4,))
        out = mx.nd.zeros(shape)
        kv.pushpull(key, mx.nd.ones(shape), out=out)
        out.asnumpy()
    caught(push_different_key)

    def init_different_shape():
        kv.init('c', mx.nd.zeros((2, 3) if rank == 0 else (3, 2)))
        kv.barrier()
    caught(init_different_shape)
    out = mx.nd.zeros((3,))
    kv.pushpull('a', mx.nd.full((3,), rank + 1), out=out)
    print('SUM', out.asnumpy()[0], flush=True)


def early_exit(kv, rank):
    kv.init('w', mx.nd.zeros((8,)))
    kv.barrier()
    if rank == kv.num_workers - 1:
        print('EXITING', rank, flush=True)
        sys.exit(0)
    out = mx.nd.zeros((8,))
    kv.pushpull('w', mx.nd.ones((8,)), out=out)
    out.asnumpy()                     # raises the timeout error; uncaught: the job aborts
    print('NOT REACHED', flush=True)


def fewer_batches(kv, rank):
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, name='fc', num_hidden=3)
    net = mx.sym.SoftmaxOutput(net, name='softmax')
    n = 8 * (3 if rank == 0 else 2)       # rank 0: 3 batches, the others: 2
    it = mx.io.NDArrayIter(np.ones((n, 5), np.float32), np.zeros(n, np.float32),
                           batch_size=8)
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(it, num_epoch=1, kvstore=kv, optimizer='sgd')
    print('FIT DONE', rank, flush=True)


def no_store():
    """The last rank exits without creating a store: the others' kv.create times out."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    if comm.Get_rank() == comm.Get_size() - 1:
        print('EXITING', flush=True)
        sys.exit(0)
    mx.kv.create('dist_sync')
    print('NOT REACHED', flush=True)


def main():
    if sys.argv[1] == 'no_store':
        return no_store()
    kv = mx.kv.create('dist_sync')
    {'mismatch': mismatch, 'early_exit': early_exit,
     'fewer_batches': fewer_batches}[sys.argv[1]](kv, kv.rank)


if __name__ == '__main__':
    main()
