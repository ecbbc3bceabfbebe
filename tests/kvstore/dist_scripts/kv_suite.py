"""Run under ``mpirun -np N`` (or plain ``python``) by tests/kvstore/test_dist.py.

``python kv_suite.py OUT_DIR DIGITS_JSON`` runs every section on every rank (DIGITS_JSON:
the ``prepare_digits()`` paths as JSON, or ``-`` to skip the MNIST section) and writes
``OUT_DIR/rank{r}.npz`` (arrays) and ``OUT_DIR/rank{r}.json`` (scalars, log lines); the
test computes the NumPy references and compares. Values depend on the rank, so a wrong
sum or a missing broadcast shows. Integer-valued floats keep every sum exact.
"""
import hashlib
import json
import logging
import os
import sys

import numpy as np

import mxcy as mx
from mxcy.kvstore import dist_mpi

arrays, facts = {}, {}


def pulled(kv, key, shape, dtype='float32'):
    out = mx.nd.zeros(shape, dtype=dtype)
    kv.pull(key, out=out)
    return out.asnumpy()


def ints(seed, shape, dtype='float32'):
    return np.random.RandomState(seed).randint(-1000, 1000, size=shape).astype(dtype)


def api(kv, rank):
    facts.update(type=kv.type, rank=kv.rank, num_workers=kv.num_workers)
    # init: every rank offers its own value; rank 0's wins
    kv.init('w', mx.nd.full((2, 3), rank + 1))
    arrays['init_w'] = pulled(kv, 'w', (2, 3))
    # push of a list of values per rank: summed locally, then over the ranks
    kv.push('w', [mx.nd.full((2, 3), rank + 1), mx.nd.array(np.arange(6.).reshape(2, 3) * rank)])
    outs = [mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3))]
    kv.pull('w', out=outs)
    arrays['push_list_w'] = np.stack([o.asnumpy() for o in outs])
    # pushpull into the pushed array itself (Module's pattern)
    kv.init('g', mx.nd.zeros((4,)))
    grad = mx.nd.array(ints(100 + rank, (4,)))
    kv.pushpull('g', grad, out=grad)
    arrays['pushpull_g'] = grad.asnumpy()
    # the same (key, value, out) again and again (the store reuses its checks and plan),
    # then an optimizer set on the same store (the plan must not bypass it)
    kv.init('rep', mx.nd.zeros((5,)))
    g, o = mx.nd.zeros((5,)), mx.nd.zeros((5,))
    seen = []
    for step in range(3):
        g[:] = rank + 10.0 * step
        kv.pushpull('rep', g, out=o)
        seen.append(o.asnumpy())
    seen.append(pulled(kv, 'rep', (5,)))
    arrays['repeated_pushpull'] = np.stack(seen)
    kv4 = mx.kv.create('dist_sync')
    kv4.init('q', mx.nd.full((2,), 100.0))
    gq, oq = mx.nd.ones((2,)), mx.nd.zeros((2,))
    kv4.pushpull('q', gq, out=oq)
    kv4.pushpull('q', gq, out=oq)
    kv4.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, rescale_grad=1.0))
    kv4.pushpull('q', gq, out=oq)
    arrays['plan_then_optimizer'] = oq.asnumpy()
    # pushpull whose outs are the other key's values (must not reduce into them early;
    # keys over FUSE_BYTES, reduced one by one), and one with two outs for a key
    n = 20_000
    kv.init(['x', 'y'], [mx.nd.zeros((n,)), mx.nd.zeros((n,))])
    x, y = mx.nd.full((n,), 1.0 + rank), mx.nd.full((n,), 10.0 * (rank + 1))
    kv.pushpull(['x', 'y'], [x, y], out=[y, x])
    arrays['swapped_outs'] = np.stack([y.asnumpy(), x.asnumpy()])
    outs = [mx.nd.zeros((n,)), mx.nd.zeros((n,))]
    kv.pushpull('x', mx.nd.full((n,), 2.0), out=outs)
    arrays['two_outs'] = np.stack([o.asnumpy() for o in outs] + [pulled(kv, 'x', (n,))])
    # many small keys of three dtypes, pushed together (fused by dtype)
    names = [f's{i}' for i in range(300)]
    dtypes = ['float32', 'float64', 'int32']
    shapes = [(i % 7 + 1, 3) for i in range(300)]
    kv.init(names, [mx.nd.zeros(s, dtype=dtypes[i % 3]) for i, s in enumerate(shapes)])
    values = [mx.nd.array(ints(1000 * rank + i, s, dtypes[i % 3]), dtype=dtypes[i % 3])
              for i, s in enumerate(shapes)]
    kv.push(names, values)
    outs = [mx.nd.zeros(s, dtype=dtypes[i % 3]) for i, s in enumerate(shapes)]
    kv.pull(names, out=outs)
    arrays['small'] = np.concatenate([o.asnumpy().astype(np.float64).ravel() for o in outs])
    # one large key (6 MB, odd length: several 4 MB chunks, the last one partial; chunks
    # are 1 GB by default, too large to test here)
    big_n = 1_500_001
    chunk_bytes, dist_mpi.CHUNK_BYTES = dist_mpi.CHUNK_BYTES, 1 << 22
    kv.init('big', mx.nd.zeros((big_n,)))
    kv.push('big', mx.nd.array(ints(7 + rank, (big_n,))))
    arrays['big'] = pulled(kv, 'big', (big_n,))
    # pushpull into a separate out (two ranks: halves summed and swapped), in 1 MB chunks:
    # the odd length leaves the second half one longer and the last chunks partial
    dist_mpi.CHUNK_BYTES = 1 << 20
    big_out = mx.nd.zeros((big_n,))
    kv.pushpull('big', mx.nd.array(ints(8 + rank, (big_n,))), out=big_out)
    arrays['big_pushpull'] = np.stack([big_out.asnumpy(), pulled(kv, 'big', (big_n,))])
    dist_mpi.CHUNK_BYTES = chunk_bytes
    # int keys on a second store; a key repeated in one push is summed
    kv2 = mx.kv.create('dist_sync')
    kv2.init([3, 7], [mx.nd.zeros((5,)), mx.nd.full((2,), 9.0 + rank)])
    arrays['int_init_7'] = pulled(kv2, 7, (2,))
    kv2.push([3, 7, 3], [mx.nd.full((5,), rank), mx.nd.full((2,), 1.0), mx.nd.full((5,), 2.0)])
    arrays['int_3'] = pulled(kv2, 3, (5,))
    arrays['int_7'] = pulled(kv2, 7, (2,))
    # set_optimizer: every rank applies SGD to the reduced gradient
    kv3 = mx.kv.create('dist_device_sync')
    kv3.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, rescale_grad=1.0))
    kv3.init('p', mx.nd.full((3,), 10.0 * (rank + 1)))
    kv3.push('p', mx.nd.array([1.0, 2.0, 3.0]) * (rank + 1))
    arrays['sgd_p'] = pulled(kv3, 'p', (3,))
    facts['dist_device_sync_type'] = kv3.type
    kv.barrier()
    facts['after_barrier'] = True


def mlp(hidden=(16,), classes=4):
    net = mx.sym.Variable('data')
    for i, h in enumerate(hidden):
        net = mx.sym.FullyConnected(net, name=f'fc{i}', num_hidden=h)
        net = mx.sym.Activation(net, name=f'relu{i}', act_type='relu')
    net = mx.sym.FullyConnected(net, name='out', num_hidden=classes)
    return mx.sym.SoftmaxOutput(net, name='softmax')


# Module steps: N ranks at batch b against one process at batch N*b (the test's reference)
MODULE_B, MODULE_STEPS = 4, 2
MODULE_OPT = {'learning_rate': 0.5, 'momentum': 0.9}


def module_data(size, b=MODULE_B, steps=MODULE_STEPS):
    """(data, label) of `steps` global batches of size*b rows."""
    data = np.random.RandomState(5).randn(steps * size * b, 10).astype(np.float32)
    label = (np.arange(steps * size * b) % 4).astype(np.float32)
    return data, label


def module_init(seed, batch):
    """Initial MLP weights drawn from RandomState(seed)."""
    shapes = dict(zip(mlp().list_arguments(), mlp().infer_shape(data=(batch, 10))[0]))
    rng = np.random.RandomState(seed)
    return {n: mx.nd.array(rng.randn(*shapes[n]).astype(np.float32) * 0.3)
            for n in ('fc0_weight', 'fc0_bias', 'out_weight', 'out_bias')}


def module_steps(rank, size, b=MODULE_B, steps=MODULE_STEPS):
    """Rank r trains on rows [s*N*b + r*b, +b) of global batch s; rank-dependent initial
    weights (seed 11 + rank), so only rank 0's (broadcast) may survive."""
    data, label = module_data(size)
    rows = np.concatenate([np.arange(s * size * b + rank * b, s * size * b + (rank + 1) * b)
                           for s in range(steps)])
    it = mx.io.NDArrayIter(data[rows], label[rows], batch_size=b)
    mod = mx.mod.Module(mlp(), context=mx.cpu())
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(arg_params=module_init(11 + rank, b))
    mod.init_optimizer(kvstore='dist_sync', optimizer='sgd', optimizer_params=MODULE_OPT)
    for batch in it:
        mod.forward_backward(batch)
        mod.update()
    final, _ = mod.get_params()
    for name, value in final.items():
        arrays[f'module_{name}'] = value.asnumpy()


def param_hash(params):
    digest = hashlib.sha256()
    for name in sorted(params):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(params[name].asnumpy()).tobytes())
    return digest.hexdigest()


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append([record.levelname, record.getMessage()])


def mnist_fit(rank, size, digits, steps=240, b=32):
    with open(digits) as f:
        files = json.load(f)
    train = mx.io.MNISTIter(image=files['train_image'], label=files['train_label'],
                            batch_size=b, flat=True, shuffle=True, seed=rank, silent=True,
                            num_parts=size, part_index=rank)
    test = mx.io.MNISTIter(image=files['test_image'], label=files['test_label'],
                           batch_size=100, flat=True, shuffle=False, silent=True)
    per_epoch = sum(1 for _ in train)
    train.reset()
    logger = logging.getLogger(f'fit_rank{rank}')
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    records = Records()
    logger.addHandler(records)
    mx.random.seed(rank)                      # different initial weights on every rank
    mod = mx.mod.Module(mlp(hidden=(128, 64), classes=10), context=mx.cpu(), logger=logger)
    mod.fit(train, num_epoch=-(-steps // per_epoch), kvstore='dist_sync',
            optimizer='sgd', optimizer_params={'learning_rate': 0.1, 'momentum': 0.9},
            initializer=mx.init.Xavier())
    params, _ = mod.get_params()
    facts['mnist_hash'] = param_hash(params)
    facts['mnist_steps'] = per_epoch * (-(-steps // per_epoch))
    facts['mnist_accuracy'] = dict(mod.score(test, 'acc'))['accuracy']
    facts['fit_log'] = records.lines


def feedforward_fit(rank, size, n=50, b=8):
    """FeedForward with NumPy X: fit shards the rows itself; column 0 is the row id."""
    X = np.random.RandomState(3).randn(n, 6).astype(np.float32)
    X[:, 0] = np.arange(n)
    y = (np.arange(n) % 4).astype(np.float32)
    seen = []

    def record(param):
        batch = param.locals['data_batch']
        ids = batch.data[0].asnumpy()[:, 0]
        seen.extend(ids[:len(ids) - (batch.pad or 0)].astype(int).tolist())
    mx.random.seed(rank)
    model = mx.model.FeedForward(mlp(), num_epoch=1, numpy_batch_size=b, learning_rate=0.1,
                                 initializer=mx.init.Xavier())
    model.fit(X, y, kvstore='dist_sync', batch_end_callback=record)
    facts['ff_ids'] = sorted(seen)
    facts['ff_hash'] = param_hash(model.arg_params)


def main():
    out_dir, digits = sys.argv[1], sys.argv[2]
    kv = mx.kv.create('dist_sync')
    rank, size = kv.rank, kv.num_workers
    api(kv, rank)
    module_steps(rank, size)
    if digits != '-':
        mnist_fit(rank, size, digits)
    feedforward_fit(rank, size)
    np.savez(os.path.join(out_dir, f'rank{rank}.npz'), **arrays)
    with open(os.path.join(out_dir, f'rank{rank}.json'), 'w') as f:
        json.dump(facts, f)


if __name__ == '__main__':
    main()
