"""*Dive into Deep Learning*'s own ``d2l.mxnet`` helpers on mxcy through the ``mxnet``
alias: ``load_data_fashion_mnist`` from local Fashion-MNIST files, the book's LeNet trained
by ``train_ch6`` (``Accumulator``, ``Timer``, ``evaluate_accuracy_gpu``, ``accuracy``), and
the object-oriented chapters' ``d2l.Trainer`` fitting ``LinearRegression`` and
``SoftmaxRegression``, in NumPy mode, in a child interpreter that sees only the alias.

d2l 1.0.3 pins an old NumPy, so CI installs it with ``--no-deps`` plus the modules its
``mxnet.py`` imports (requests, IPython, matplotlib-inline; pandas and matplotlib come with
the test extras). Where d2l is not installed the test is skipped, saying so.
"""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import mxcy
from mxcy.alias.__main__ import main
from mxcy.io.mnist import write_idx

REPO = pathlib.Path(mxcy.__file__).resolve().parent.parent
D2L_MODULES = ('d2l', 'pandas', 'requests', 'IPython', 'matplotlib', 'matplotlib_inline')
_MISSING = [m for m in D2L_MODULES if importlib.util.find_spec(m) is None]

pytestmark = pytest.mark.skipif(
    bool(_MISSING), reason=f"d2l's MXNet helpers need {', '.join(_MISSING)} (not installed; "
    "pip install --no-deps d2l==1.0.3 && pip install requests ipython matplotlib-inline)")

CHILD = r'''
import json
import mxnet as mx
from mxnet import autograd, gluon, np, npx
from mxnet.gluon import nn
from d2l import mxnet as d2l
npx.set_np()

out = {}
timer = d2l.Timer()
acc = d2l.Accumulator(2)
acc.add(1, 2.5)
acc.add(np.array(2.0), 0.5)
out['accumulator'] = [acc[0], acc[1]]
timer.stop()
out['timer'] = [len(timer.times), timer.sum() >= 0]
out['accuracy'] = d2l.accuracy(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]),
                               np.array([1, 0, 0]))

train_iter, test_iter = d2l.load_data_fashion_mnist(batch_size=32)
X, y = next(iter(train_iter))
out['batch'] = [type(X).__module__ + '.' + type(X).__name__, list(X.shape), str(X.dtype),
                list(y.shape)]

net = nn.Sequential()     # LeNet as in the book's section 7.6 (ReLU and max-pooling)
net.add(nn.Conv2D(channels=6, kernel_size=5, padding=2, activation='relu'),
        nn.MaxPool2D(pool_size=2, strides=2),
        nn.Conv2D(channels=16, kernel_size=5, activation='relu'),
        nn.MaxPool2D(pool_size=2, strides=2),
        nn.Dense(120, activation='relu'),
        nn.Dense(84, activation='relu'),
        nn.Dense(10))
d2l.train_ch6(net, train_iter, test_iter, num_epochs=4, lr=0.3, device=d2l.try_gpu())
out['test_acc'] = d2l.evaluate_accuracy_gpu(net, test_iter)
out['out_type'] = type(net(X)).__name__

# the book's object-oriented chapters: d2l.Trainer fitting its LinearRegression (3.5) on
# SyntheticRegressionData and SoftmaxRegression (4.5) on its FashionMNIST DataModule
data = d2l.SyntheticRegressionData(w=np.array([2, -3.4]), b=4.2)
model = d2l.LinearRegression(lr=0.03)
d2l.Trainer(max_epochs=3).fit(model, data)
w, b = model.get_w_b()
out['linreg_err'] = [float(abs(data.w - w.reshape(data.w.shape)).max()), float(abs(data.b - b))]
fashion = d2l.FashionMNIST(batch_size=32)
model = d2l.SoftmaxRegression(num_outputs=10, lr=0.1)
d2l.Trainer(max_epochs=2).fit(model, fashion)
X, y = next(iter(fashion.val_dataloader()))
out['softmax_acc'] = float(model.accuracy(model(X), y))
print(json.dumps(out))
'''


def _fashion_files(root, n_train=320, n_test=160):
    """Tiny Fashion-MNIST-format files: class k is a bright bar at row band k, plus noise."""
    rng = np.random.RandomState(0)
    for split, n in (('train', n_train), ('t10k', n_test)):
        labels = np.arange(n, dtype=np.uint8) % 10
        rng.shuffle(labels)
        images = rng.randint(0, 60, (n, 28, 28)).astype(np.uint8)
        for i, k in enumerate(labels):
            images[i, 2 + 2 * k: 4 + 2 * k, 4:24] = 250
        write_idx(str(root / f'{split}-images-idx3-ubyte'), images)
        write_idx(str(root / f'{split}-labels-idx1-ubyte'), labels)


def test_d2l_trains_the_books_lenet_on_mxcy(tmp_path):
    site = tmp_path / 'site'
    assert main(['install', '--target', str(site)]) == 0
    home = tmp_path / 'mxnet_home'
    data = home / 'datasets' / 'fashion-mnist'
    data.mkdir(parents=True)
    _fashion_files(data)
    env = dict(os.environ, MXNET_HOME=str(home), MPLBACKEND='Agg')
    env['PYTHONPATH'] = os.pathsep.join(
        [str(site), str(REPO)] + [p for p in sys.path if p])
    script = tmp_path / 'child.py'
    script.write_text(CHILD)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out['accumulator'] == [3.0, 3.0]
    assert out['timer'] == [1, True]
    assert out['accuracy'] == 2.0
    assert out['batch'] == ['mxcy.numpy.ndarray', [32, 1, 28, 28], 'float32', [32]]
    assert out['out_type'] == 'ndarray'
    assert 'examples/sec' in proc.stdout and 'test acc' in proc.stdout
    assert out['test_acc'] > 0.5, out       # chance is 0.1
    assert out['linreg_err'][0] < 0.5 and out['linreg_err'][1] < 0.5, out
    assert out['softmax_acc'] > 0.5, out
