"""One rank of a dist_sync job whose Module runs on two contexts: rank r trains on its own
8-sample batches (seeded by r), then writes its final weights to OUT/rank<r>.npz."""
import sys

import numpy as np

import mxcy as mx


def mlp():
    data = mx.sym.Variable('data')
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=4, name='fc1'),
                          act_type='relu')
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=3, name='fc2'),
                                name='softmax')


def rank_batches(rank, steps=3, batch=8):
    rng = np.random.RandomState(100 + rank)
    return [(rng.randn(batch, 5).astype(np.float32),
             rng.randint(0, 3, batch).astype(np.float32)) for _ in range(steps)]


def start_weights():
    rng = np.random.RandomState(5)
    return {'fc1_weight': rng.randn(4, 5).astype(np.float32) * 0.5,
            'fc1_bias': np.zeros(4, np.float32),
            'fc2_weight': rng.randn(3, 4).astype(np.float32) * 0.5,
            'fc2_bias': np.zeros(3, np.float32)}


OPT = {'learning_rate': 0.3, 'momentum': 0.9}


def main(out_dir):
    kv = mx.kv.create('dist_sync')
    mod = mx.mod.Module(mlp(), context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1, 3])
    mod.bind([('data', (8, 5))], [('softmax_label', (8,))])
    # each rank starts elsewhere: init_optimizer gives every rank rank 0's weights
    weights = {k: mx.nd.array(v + kv.rank) for k, v in start_weights().items()}
    mod.init_params(arg_params=weights)
    mod.init_optimizer(kvstore=kv, optimizer='sgd', optimizer_params=OPT)
    for x, y in rank_batches(kv.rank):
        mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
        mod.update()
    args, _ = mod.get_params()
    np.savez(f'{out_dir}/rank{kv.rank}.npz', **{k: v.asnumpy() for k, v in args.items()})


if __name__ == '__main__':
    main(sys.argv[1])
