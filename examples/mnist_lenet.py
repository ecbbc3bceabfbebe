"""MNIST with LeNet (conv 20@5x5, pool, conv 50@5x5, pool, fc 500, fc 10), in mxcy.

The MXNet.jl MNIST tutorial's convolutional network, trained through ``Module.fit`` on
IDX data read by ``MNISTIter``; prints held-out accuracy, saves and reloads a checkpoint
and checks the reloaded model scores the same.
"""
import os
import tempfile

import mxcy as mx
from _mnist_common import iterators, parse_args, setup_logging


def lenet():
    data = mx.sym.Variable('data')
    conv1 = mx.sym.Convolution(data=data, kernel=(5, 5), num_filter=20, name='conv1')
    tanh1 = mx.sym.Activation(data=conv1, act_type='tanh')
    pool1 = mx.sym.Pooling(data=tanh1, pool_type='max', kernel=(2, 2), stride=(2, 2))
    conv2 = mx.sym.Convolution(data=pool1, kernel=(5, 5), num_filter=50, name='conv2')
    tanh2 = mx.sym.Activation(data=conv2, act_type='tanh')
    pool2 = mx.sym.Pooling(data=tanh2, pool_type='max', kernel=(2, 2), stride=(2, 2))
    flat = mx.sym.Flatten(data=pool2)
    fc1 = mx.sym.FullyConnected(data=flat, num_hidden=500, name='fc1')
    tanh3 = mx.sym.Activation(data=fc1, act_type='tanh')
    fc2 = mx.sym.FullyConnected(data=tanh3, num_hidden=10, name='fc2')
    return mx.sym.SoftmaxOutput(data=fc2, name='softmax')


def main():
    setup_logging()
    args = parse_args(__doc__, epochs=8, lr=0.05)
    train, test = iterators(args, flat=False)
    mod = mx.mod.Module(lenet(), context=mx.cpu())
    mod.fit(train, eval_data=test, num_epoch=args.num_epochs, optimizer='sgd',
            optimizer_params={'learning_rate': args.lr, 'momentum': 0.9, 'wd': 1e-4},
            initializer=mx.init.Xavier(), kvstore=args.kv_store,
            batch_end_callback=mx.callback.Speedometer(args.batch_size, 20),
            epoch_size=args.max_batches)
    accuracy = dict(mod.score(test, 'acc'))['accuracy']
    print(f"test accuracy: {accuracy:.4f}")
    prefix = args.model_prefix or os.path.join(tempfile.mkdtemp(), 'mnist_lenet')
    mod.save_checkpoint(prefix, args.num_epochs)
    loaded = mx.mod.Module.load(prefix, args.num_epochs)
    loaded.bind(test.provide_data, test.provide_label, for_training=False)
    again = dict(loaded.score(test, 'acc'))['accuracy']
    print(f"checkpoint {prefix}: reloaded accuracy {again:.4f}")
    assert abs(again - accuracy) < 1e-9, (again, accuracy)


if __name__ == '__main__':
    main()
