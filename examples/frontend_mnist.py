"""MNIST with a model written as Python layers (``mx.nn``), compiled to one executor.

The same 784-128-64-10 perceptron as ``mnist_mlp.py``, but written the way a Flux or
Gluon user writes it: a plain Python class whose ``__call__`` composes layers. It is
compiled with ``mx.nn.compile`` and trained by hand with SGD: ``cm(x)`` (forward),
``cm.backward(dy)`` with dy the gradient of the cross-entropy with respect to the softmax
output, ``cm.update(lr)``. Then it prints held-out accuracy, saves the parameters,
reloads them into a fresh model, and scores the model again through
``mx.model.FeedForward.from_model`` (the trailing softmax becomes SoftmaxOutput).
"""
import os
import tempfile

from _mnist_common import iterators, parse_args, setup_logging

import mxcy as mx
from mxcy import nn


class MLP:
    def __init__(self):
        self.fc1 = nn.Dense(128, activation='relu')
        self.fc2 = nn.Dense(64, activation='relu')
        self.fc3 = nn.Dense(10)

    def __call__(self, x):
        return nn.softmax(self.fc3(self.fc2(self.fc1(x))))


def cross_entropy_grad(probs, label, classes):
    """d/dp of mean(-log p[label]), computed on the engine (no wait)."""
    onehot = mx.nd.one_hot(label, classes)
    return onehot / mx.nd.maximum(probs, 1e-8) * (-1.0 / probs.shape[0])


def accuracy(cm, data_iter):
    data_iter.reset()
    correct = total = 0
    for batch in data_iter:
        keep = batch.data[0].shape[0] - (batch.pad or 0)
        pred = cm.predict(batch.data[0]).asnumpy()[:keep].argmax(axis=1)
        correct += int((pred == batch.label[0].asnumpy()[:keep]).sum())
        total += keep
    return correct / max(total, 1)


def train(cm, data_iter, args):
    for epoch in range(args.num_epochs):
        data_iter.reset()
        loss = count = 0.0
        for i, batch in enumerate(data_iter):
            if args.max_batches is not None and i >= args.max_batches:
                break
            label = batch.label[0]
            probs = cm(batch.data[0])
            cm.backward(cross_entropy_grad(probs, label, 10))
            cm.update(args.lr)
            picked = mx.nd.pick(probs, label, axis=1)
            loss += float(-mx.nd.log(mx.nd.maximum(picked, 1e-8)).mean().asscalar())
            count += 1
        print(f"epoch {epoch}: train cross-entropy {loss / max(count, 1):.4f}")


def main():
    setup_logging()
    args = parse_args(__doc__, epochs=10, lr=0.5)
    train_iter, test_iter = iterators(args, flat=True)
    mx.random.seed(0)
    model = MLP()
    model_init = mx.init.Xavier()
    nn.initialize(model, model_init)                   # deferred: shapes come at compile
    cm = nn.compile(model, (args.batch_size, 784))
    print(f"parameters: {list(cm.params)}")
    train(cm, train_iter, args)
    acc = accuracy(cm, test_iter)
    print(f"test accuracy: {acc:.4f}")

    prefix = args.model_prefix or os.path.join(tempfile.mkdtemp(), 'frontend_mnist')
    fname = f"{prefix}-{args.num_epochs:04d}.params"
    nn.save_parameters(model, fname)                   # arg:/aux: keys, as checkpoints
    with mx.name.NameManager():                        # MXNet's names: dense0_ ... again
        fresh = MLP()
    nn.load_parameters(fresh, fname)
    again = accuracy(nn.compile(fresh, (args.batch_size, 784)), test_iter)
    ff = mx.model.FeedForward.from_model(fresh)
    test_iter.reset()
    ff_acc = ff.score(test_iter)
    print(f"parameters {fname}: reloaded accuracy {again:.4f}; as FeedForward "
          f"(SoftmaxOutput) {ff_acc:.4f}")
    assert abs(again - acc) < 1e-9 and abs(ff_acc - acc) < 1e-9, (acc, again, ff_acc)


if __name__ == '__main__':
    main()
