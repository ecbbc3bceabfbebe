#!/usr/bin/env python3
"""Training speed (issue "Training"): one epoch of the MLP through Module.fit, LeNet
images/s, char-LSTM sequences/s.

    python bench/bench_train.py
    /work/peers/mxnet/bin/python bench/bench_train.py --lib mxnet
    /work/peers/torch/bin/python bench/peer_torch_train.py      # the PyTorch loops

Figures: mlp_epoch_s (784-128-64-10, batch 100, SGD momentum, 60,000 synthetic samples,
NDArrayIter, Module.fit; floor: NumPy doing the same forward/backward/update per batch);
lenet_images_per_s (batch 100, 20 batches through Module); char_lstm_seq_per_s (2-layer
LSTM, hidden 256, embed 256, vocab 65, seq 32, batch 32, fused RNN op, Module);
gluon_char_lstm_seq_per_s (the same network as a hybridized Gluon block with rnn.LSTM).
"""
import logging
import time

import numpy as np

from _common import emit, load, parse
from bench_executor import mlp, numpy_mlp
from bench_ops import lenet

FIGURES = ('mlp', 'lenet', 'char_lstm', 'gluon_lstm')
BENCH = 'train'


def fig_mlp(mx, lib, reps):
    n, batch = 60000, 100
    rng = np.random.default_rng(0)
    x = rng.random((n, 784), dtype=np.float32)
    y = rng.integers(0, 10, n).astype(np.float32)
    best = float('inf')
    for _ in range(max(1, reps // 2)):
        it = mx.io.NDArrayIter(x, y, batch_size=batch, shuffle=False)
        mod = mx.mod.Module(mlp(mx), context=mx.cpu())
        t = time.perf_counter()
        mod.fit(it, num_epoch=1, optimizer='sgd',
                optimizer_params={'learning_rate': 0.05, 'momentum': 0.9},
                initializer=mx.init.Xavier())
        mx.nd.waitall()
        best = min(best, time.perf_counter() - t)
    acc = dict(mod.score(mx.io.NDArrayIter(x[:2000], y[:2000], batch_size=batch), 'acc'))
    # floor: the same arithmetic in NumPy, batch by batch, with momentum SGD
    params = [rng.uniform(-0.05, 0.05, s).astype(np.float32)
              for s in [(128, 784), (128,), (64, 128), (64,), (10, 64), (10,)]]
    moms = [np.zeros_like(p) for p in params]
    t = time.perf_counter()
    for i in range(0, n, batch):
        _, grads = numpy_mlp(params, x[i:i + batch], y[i:i + batch].astype(np.int64))
        for p, m, g in zip(params, moms, grads):
            m *= 0.9
            m -= 0.05 / batch * g
            p += m
    floor = time.perf_counter() - t
    emit(BENCH, 'mlp_epoch_s', lib, round(best, 4), 's', round(floor, 4), samples=n,
         batch=batch, train_accuracy_check=round(list(acc.values())[0], 3),
         mxnet_module_here=0.88, torch_loop_here=0.55)


def fig_lenet(mx, lib, reps):
    batch, nbatch = 100, 20
    rng = np.random.default_rng(0)
    x = rng.random((batch * nbatch, 1, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, batch * nbatch).astype(np.float32)
    mod = mx.mod.Module(lenet(mx), context=mx.cpu())
    it = mx.io.NDArrayIter(x, y, batch_size=batch)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.01})
    best = float('inf')
    for _ in range(reps):
        it.reset()
        t = time.perf_counter()
        for b in it:
            mod.forward_backward(b)
            mod.update()
        mx.nd.waitall()
        best = min(best, time.perf_counter() - t)
    emit(BENCH, 'lenet_images_per_s', lib, round(batch * nbatch / best, 1), 'images/s',
         better='higher', batch=batch, mxnet_here=2600, torch_here=3500)


def char_lstm(mx, seq, vocab, hidden, embed, layers):
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('softmax_label')
    emb = mx.sym.Embedding(data, input_dim=vocab, output_dim=embed, name='embed')
    tnc = mx.sym.transpose(emb, axes=(1, 0, 2))
    params = mx.sym.Variable('lstm_parameters', init=mx.init.Uniform(0.1))
    zero = mx.init.Zero()
    out = mx.sym.RNN(tnc, parameters=params, state_size=hidden, num_layers=layers,
                     mode='lstm', name='lstm',
                     state=mx.sym.Variable('lstm_state', init=zero),
                     state_cell=mx.sym.Variable('lstm_state_cell', init=zero))
    out = mx.sym.Reshape(mx.sym.transpose(out, axes=(1, 0, 2)), shape=(-1, hidden))
    fc = mx.sym.FullyConnected(out, num_hidden=vocab, name='pred')
    return mx.sym.SoftmaxOutput(fc, mx.sym.Reshape(label, shape=(-1,)), name='softmax')


def fig_char_lstm(mx, lib, reps):
    seq, batch, vocab, hidden, layers = 32, 32, 65, 256, 2
    nbatch = 8
    rng = np.random.default_rng(0)
    x = rng.integers(0, vocab, (batch * nbatch, seq)).astype(np.float32)
    y = np.roll(x, -1, axis=1)
    mod = mx.mod.Module(char_lstm(mx, seq, vocab, hidden, 256, layers), context=mx.cpu())
    it = mx.io.NDArrayIter(x, y, batch_size=batch)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='adam', optimizer_params={'learning_rate': 0.002})
    best, cpu = float('inf'), float('inf')
    for _ in range(max(1, reps // 2)):
        it.reset()
        t, c = time.perf_counter(), time.process_time()
        for b in it:
            mod.forward_backward(b)
            mod.update()
        mx.nd.waitall()
        best = min(best, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    # cpu_ms_per_batch: CPU time of all threads per batch, steadier than wall time when
    # the host is shared (it does not count the time the others take)
    emit(BENCH, 'char_lstm_seq_per_s', lib, round(batch * nbatch / best, 1), 'sequences/s',
         better='higher', seq=seq, batch=batch, hidden=hidden, layers=layers,
         cpu_ms_per_batch=round(cpu / nbatch * 1e3, 1), mxnet_fused_here=350)


def fig_gluon_lstm(mx, lib, reps):
    """The char-LSTM as a hybridized Gluon network (rnn.LSTM runs the same fused op),
    trained with autograd, SoftmaxCrossEntropyLoss and a Trainer (Adam)."""
    seq, batch, vocab, hidden, layers, nbatch = 32, 32, 65, 256, 2, 8
    gluon = mx.gluon
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Embedding(vocab, hidden))
        net.add(gluon.rnn.LSTM(hidden, num_layers=layers, layout='NTC'))
        net.add(gluon.nn.Dense(vocab, flatten=False))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': 0.002})
    rng = np.random.default_rng(0)
    x = rng.integers(0, vocab, (batch * nbatch, seq)).astype(np.float32)
    y = np.roll(x, -1, axis=1)
    batches = [(mx.nd.array(x[i:i + batch]), mx.nd.array(y[i:i + batch]))
               for i in range(0, batch * nbatch, batch)]
    best, cpu = float('inf'), float('inf')
    for _ in range(max(1, reps // 2) + 1):          # the first round traces the graph
        t, c = time.perf_counter(), time.process_time()
        for xb, yb in batches:
            with mx.autograd.record():
                loss = loss_fn(net(xb), yb)
            loss.backward()
            trainer.step(batch)
        mx.nd.waitall()
        best = min(best, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    emit(BENCH, 'gluon_char_lstm_seq_per_s', lib, round(batch * nbatch / best, 1),
         'sequences/s', better='higher', seq=seq, batch=batch, hidden=hidden, layers=layers,
         cpu_ms_per_batch=round(cpu / nbatch * 1e3, 1))


def main():
    logging.disable(logging.INFO)
    args = parse(__doc__, FIGURES)
    mx = load(args.lib)
    for name in FIGURES:
        if args.only in (None, name):
            globals()[f'fig_{name}'](mx, args.lib, args.reps)


if __name__ == '__main__':
    main()
