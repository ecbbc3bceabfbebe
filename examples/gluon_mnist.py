"""MNIST with Gluon: the imperative loop most MXNet 1.x code is written in, in mxcy.

Reads the digits through ``gluon.data.vision.MNIST`` and a ``DataLoader``, trains a
784-128-64-10 MLP with ``autograd.record()`` and a ``Trainer``, hybridizes it, exports
it, then loads the exported files back twice — as a ``SymbolBlock`` and through
``mx.mod.Module`` — and checks that all three predict the same.
"""
import argparse
import os
import shutil
import tempfile
from collections import namedtuple

import numpy as np

import mxcy as mx
from mxcy import autograd, gluon
from mxcy.gluon import nn


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--data-dir', default=None,
                        help='folder with the MNIST IDX files (default: the offline digits '
                             'subset that a PyPI package ships)')
    parser.add_argument('--num-epochs', type=int, default=5)
    parser.add_argument('--batch-size', type=int, default=100)
    parser.add_argument('--lr', type=float, default=0.1)
    parser.add_argument('--num-workers', type=int, default=0)
    parser.add_argument('--max-batches', type=int, default=None,
                        help='stop each epoch after this many batches (smoke tests)')
    parser.add_argument('--model-prefix', default=None)
    return parser.parse_args()


def mnist_root(data_dir):
    """A folder with MNIST's four standard file names (the digits subset by default)."""
    if data_dir:
        return data_dir
    from mxcy.io.digits import prepare_digits
    files = prepare_digits()
    root = os.path.join(tempfile.gettempdir(), 'mxcy_gluon_mnist')
    os.makedirs(root, exist_ok=True)
    names = {'train_image': 'train-images-idx3-ubyte', 'train_label': 'train-labels-idx1-ubyte',
             'test_image': 't10k-images-idx3-ubyte', 'test_label': 't10k-labels-idx1-ubyte'}
    for key, name in names.items():
        src = files[key]
        dst = os.path.join(root, name + ('.gz' if src.endswith('.gz') else ''))
        if not os.path.exists(dst):
            shutil.copyfile(src, dst)
    return root


def transform(image, label):
    return image.astype('float32').reshape((-1,)) / 255, label.astype('float32')


def build_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(128, activation='relu'), nn.Dense(64, activation='relu'),
                nn.Dense(10))
    return net


def accuracy(net, loader):
    correct = total = 0
    for data, label in loader:
        pred = net(data).argmax(axis=1)
        correct += (pred == label).sum().asscalar()
        total += data.shape[0]
    return correct / max(total, 1)


def main():
    args = parse_args()
    root = mnist_root(args.data_dir)
    train = gluon.data.vision.MNIST(root=root, train=True).transform(transform)
    test = gluon.data.vision.MNIST(root=root, train=False).transform(transform)
    train_loader = gluon.data.DataLoader(train, args.batch_size, shuffle=True,
                                         num_workers=args.num_workers)
    test_loader = gluon.data.DataLoader(test, args.batch_size, num_workers=args.num_workers)
    mx.random.seed(0)
    net = build_net()
    net.initialize(mx.init.Xavier())
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd',
                            {'learning_rate': args.lr, 'momentum': 0.9})
    for epoch in range(args.num_epochs):
        total = 0.0
        for i, (data, label) in enumerate(train_loader):
            if args.max_batches is not None and i >= args.max_batches:
                break
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(data.shape[0])
            total += loss.mean().asscalar()
        if epoch == 0:
            net.hybridize()         # the rest runs the traced graph through executors
        print(f"epoch {epoch}: train loss {total / (i + 1):.4f}, "
              f"test accuracy {accuracy(net, test_loader):.4f}")
    prefix = args.model_prefix or os.path.join(tempfile.mkdtemp(), 'gluon_mnist')
    sym_file, params_file = net.export(prefix)
    data, _ = next(iter(test_loader))
    expected = net(data).asnumpy()
    imported = gluon.SymbolBlock.imports(sym_file, ['data'], params_file)
    via_block = imported(data).asnumpy()
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, 0)
    mod = mx.mod.Module(sym, data_names=['data'], label_names=None)
    mod.bind(data_shapes=[('data', data.shape)], for_training=False)
    mod.set_params(arg_params, aux_params)
    mod.forward(namedtuple('Batch', ['data', 'label'])([data], None), is_train=False)
    via_module = mod.get_outputs()[0].asnumpy()
    np.testing.assert_allclose(via_block, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(via_module, expected, rtol=1e-5, atol=1e-5)
    print(f"exported {sym_file}: SymbolBlock.imports and Module predict the same "
          f"({expected.shape[0]} images)")


if __name__ == '__main__':
    main()
