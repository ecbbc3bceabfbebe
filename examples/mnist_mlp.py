"""MNIST with a multi-layer perceptron: the MXNet.jl MNIST tutorial, in mxcy.

Trains 784-128-64-10 with SGD through ``mx.mod.Module.fit`` on data read by
``MNISTIter`` from IDX files, prints held-out accuracy, saves a checkpoint, loads it
back and checks that the loaded model predicts with the same accuracy.
"""
import os
import tempfile

import numpy as np

import mxcy as mx
from _mnist_common import iterators, parse_args, setup_logging


def mlp():
    data = mx.sym.Variable('data')
    fc1 = mx.sym.FullyConnected(data=data, name='fc1', num_hidden=128)
    act1 = mx.sym.Activation(data=fc1, name='relu1', act_type='relu')
    fc2 = mx.sym.FullyConnected(data=act1, name='fc2', num_hidden=64)
    act2 = mx.sym.Activation(data=fc2, name='relu2', act_type='relu')
    fc3 = mx.sym.FullyConnected(data=act2, name='fc3', num_hidden=10)
    return mx.sym.SoftmaxOutput(data=fc3, name='softmax')


def main():
    setup_logging()
    args = parse_args(__doc__, epochs=10, lr=0.1)
    train, test = iterators(args, flat=True)
    mod = mx.mod.Module(mlp(), context=mx.cpu())
    mod.fit(train, eval_data=test, num_epoch=args.num_epochs, optimizer='sgd',
            optimizer_params={'learning_rate': args.lr, 'momentum': 0.9},
            initializer=mx.init.Xavier(), kvstore=args.kv_store,
            batch_end_callback=mx.callback.Speedometer(args.batch_size, 50),
            epoch_size=args.max_batches)
    accuracy = dict(mod.score(test, 'acc'))['accuracy']
    print(f"test accuracy: {accuracy:.4f}")
    prefix = args.model_prefix or os.path.join(tempfile.mkdtemp(), 'mnist_mlp')
    mod.save_checkpoint(prefix, args.num_epochs)
    loaded = mx.mod.Module.load(prefix, args.num_epochs)
    loaded.bind(test.provide_data, test.provide_label, for_training=False)
    again = dict(loaded.score(test, 'acc'))['accuracy']
    probs = loaded.predict(test).asnumpy()
    agree = np.mean(probs.argmax(1) == mod.predict(test).asnumpy().argmax(1))
    print(f"checkpoint {prefix}: reloaded accuracy {again:.4f}; predictions "
          f"{probs.shape}, argmax agrees on {agree:.4f}")
    assert abs(again - accuracy) < 1e-9, (again, accuracy)


if __name__ == '__main__':
    main()
