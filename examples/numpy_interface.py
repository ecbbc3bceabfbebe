"""MXNet's NumPy interface in mxcy, written the way *Dive into Deep Learning* writes it.

``from mxcy import np, npx; npx.set_np()`` (``from mxnet import ...`` with the alias), then:

1. linear regression from scratch: synthetic data, a minibatch iterator, parameters with
   ``attach_grad``, ``autograd.record()`` and a hand-written SGD step, all on ``mx.np``;
2. a LeNet-style convnet with Gluon in NumPy mode on the offline MNIST digits: blocks take
   and return ``mx.np.ndarray``, trained with the book's ``Accumulator``/``Timer`` loop
   (``train_ch6``), hybridized.
"""
import argparse
import random
import time

from mxcy import autograd, gluon, init, np, npx
from mxcy.gluon import nn

npx.set_np()


# ---------------------------------------------------------------- 1. linear regression
def synthetic_data(w, b, num_examples):
    """y = Xw + b + noise."""
    X = np.random.normal(0, 1, (num_examples, len(w)))
    y = np.dot(X, w) + b
    y += np.random.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = np.array(indices[i: min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]


def linreg(X, w, b):
    return np.dot(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    for param in params:
        param[:] = param - lr * param.grad / batch_size


def linear_regression(num_epochs, lr=0.03, batch_size=10):
    true_w, true_b = np.array([2, -3.4]), 4.2
    features, labels = synthetic_data(true_w, true_b, 1000)
    w = np.random.normal(0, 0.01, (2, 1))
    b = np.zeros(1)
    w.attach_grad()
    b.attach_grad()
    for epoch in range(num_epochs):
        for X, y in data_iter(batch_size, features, labels):
            with autograd.record():
                loss = squared_loss(linreg(X, w, b), y)
            loss.backward()
            sgd([w, b], lr, batch_size)
        train_l = squared_loss(linreg(features, w, b), labels)
        print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')
    print(f'error in estimating w: {true_w - w.reshape(true_w.shape)}')
    print(f'error in estimating b: {true_b - b}')
    return w, b


# ---------------------------------------------------------------- 2. a convnet with Gluon
class Accumulator:
    """Sums over `n` variables."""

    def __init__(self, n):
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def __getitem__(self, idx):
        return self.data[idx]


class Timer:
    """Records running times."""

    def __init__(self):
        self.times = []
        self.tik = time.time()

    def start(self):
        self.tik = time.time()

    def stop(self):
        self.times.append(time.time() - self.tik)
        return self.times[-1]

    def sum(self):
        return sum(self.times)


def accuracy(y_hat, y):
    """The number of correct predictions."""
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.astype(y.dtype) == y
    return float(cmp.astype(y.dtype).sum())


def evaluate_accuracy(net, data_iter, max_batches=None):
    metric = Accumulator(2)
    for i, (X, y) in enumerate(data_iter):
        if max_batches is not None and i >= max_batches:
            break
        metric.add(accuracy(net(X), y), y.size)
    return metric[0] / metric[1]


def lenet():
    """LeNet-5 with ReLU and max-pooling (the book's "modern" variant)."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(channels=6, kernel_size=5, padding=2, activation='relu'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Conv2D(channels=16, kernel_size=5, activation='relu'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Dense(120, activation='relu'),
            nn.Dense(84, activation='relu'),
            nn.Dense(10))
    return net


def load_digits(batch_size, data_dir=None):
    from gluon_mnist import mnist_root      # the digits as MNIST files (beside this script)
    dataset = gluon.data.vision
    trans = dataset.transforms.ToTensor()
    root = mnist_root(data_dir)
    train = dataset.MNIST(root=root, train=True).transform_first(trans)
    test = dataset.MNIST(root=root, train=False).transform_first(trans)
    return (gluon.data.DataLoader(train, batch_size, shuffle=True),
            gluon.data.DataLoader(test, batch_size, shuffle=False))


def train_ch6(net, train_iter, test_iter, num_epochs, lr, max_batches=None):
    net.initialize(force_reinit=True, init=init.Xavier())
    net.hybridize()
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': lr})
    timer = Timer()
    for epoch in range(num_epochs):
        metric = Accumulator(3)       # sum of losses, correct predictions, examples
        for i, (X, y) in enumerate(train_iter):
            if max_batches is not None and i >= max_batches:
                break
            timer.start()
            with autograd.record():
                y_hat = net(X)
                loss_value = loss(y_hat, y)
            loss_value.backward()
            trainer.step(X.shape[0])
            metric.add(loss_value.sum(), accuracy(y_hat, y), X.shape[0])
            timer.stop()
        train_l, train_acc = metric[0] / metric[2], metric[1] / metric[2]
        test_acc = evaluate_accuracy(net, test_iter, max_batches)
        print(f'epoch {epoch + 1}: loss {train_l:.3f}, train acc {train_acc:.3f}, '
              f'test acc {test_acc:.3f}')
    print(f'{metric[2] * num_epochs / timer.sum():.1f} examples/sec')
    print(f'test accuracy: {test_acc:.4f}')
    return test_acc


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--data-dir', default=None,
                        help='folder with the MNIST IDX files (default: the offline digits)')
    parser.add_argument('--linreg-epochs', type=int, default=3)
    parser.add_argument('--num-epochs', type=int, default=5)
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--lr', type=float, default=0.1)
    parser.add_argument('--max-batches', type=int, default=None,
                        help='stop each epoch after this many batches (smoke tests)')
    args = parser.parse_args()
    random.seed(0)
    npx.random.seed(0)
    linear_regression(args.linreg_epochs)
    train_iter, test_iter = load_digits(args.batch_size, args.data_dir)
    train_ch6(lenet(), train_iter, test_iter, args.num_epochs, args.lr, args.max_batches)


if __name__ == '__main__':
    main()
