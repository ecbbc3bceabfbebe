"""Image classification from a RecordIO file, end to end and offline.

1. Draws a small data set of JPEGs in class folders (three classes: horizontal stripes,
   vertical stripes and a bright disc, with random colours and noise);
2. packs them as MXNet users do, with ``python -m mxcy.tools.im2rec`` (list, then
   records resized to 36 pixels on the shorter edge);
3. trains a small convnet with Gluon from ``mx.io.ImageRecordIter`` (random crops and
   mirrors, mean/std normalisation, decoding on worker threads), then
4. goes on training from ``gluon.data.vision.ImageRecordDataset`` + ``transforms`` through
   a ``DataLoader``, and reports the accuracy on a held-out record file.
"""
import argparse
import os
import tempfile

import cv2
import numpy as np

import mxcy as mx
from mxcy import autograd, gluon
from mxcy.gluon import nn
from mxcy.gluon.data.vision import ImageRecordDataset, transforms
from mxcy.tools import im2rec

CLASSES = ('hstripes', 'vstripes', 'disc')


def draw(kind, rng, size=44):
    img = np.full((size, size, 3), rng.randint(0, 90, 3), np.uint8)
    colour = tuple(int(v) for v in rng.randint(140, 256, 3))
    if kind == 'hstripes':
        for y in range(rng.randint(0, 6), size, 8):
            img[y:y + 4] = colour
    elif kind == 'vstripes':
        for x in range(rng.randint(0, 6), size, 8):
            img[:, x:x + 4] = colour
    else:
        centre = tuple(int(v) for v in rng.randint(16, 28, 2))
        cv2.circle(img, centre, int(rng.randint(8, 14)), colour, -1)
    noise = rng.randint(-20, 20, img.shape)
    return np.clip(img.astype(int) + noise, 0, 255).astype(np.uint8)


def make_dataset(root, per_class, seed):
    rng = np.random.RandomState(seed)
    for kind in CLASSES:
        os.makedirs(os.path.join(root, kind), exist_ok=True)
        for i in range(per_class):
            cv2.imwrite(os.path.join(root, kind, f'{i:04d}.jpg'), draw(kind, rng),
                        [cv2.IMWRITE_JPEG_QUALITY, 90])


def pack(workdir, per_class):
    """train.rec / val.rec made by im2rec from freshly drawn images."""
    for split, n, seed in (('train', per_class, 0), ('val', max(per_class // 4, 4), 1)):
        root = os.path.join(workdir, split + '_images')
        make_dataset(root, n, seed)
        prefix = os.path.join(workdir, split)
        im2rec.main(['--list', '--recursive', prefix, root])
        im2rec.main(['--resize', '36', '--quality', '90', '--num-thread', '2', prefix, root])
    return os.path.join(workdir, 'train.rec'), os.path.join(workdir, 'val.rec')


def build_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(8, kernel_size=3, padding=1, activation='relu'),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Conv2D(16, kernel_size=3, padding=1, activation='relu'),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Flatten(),
                nn.Dense(32, activation='relu'),
                nn.Dense(len(CLASSES)))
    return net


def step(net, trainer, loss_fn, data, label):
    with autograd.record():
        loss = loss_fn(net(data), label)
    loss.backward()
    trainer.step(data.shape[0])
    return float(loss.mean().asscalar())


def evaluate(net, val_rec, batch_size):
    it = mx.io.ImageRecordIter(path_imgrec=val_rec, data_shape=(3, 32, 32),
                               batch_size=batch_size, mean_r=128, mean_g=128, mean_b=128,
                               std_r=64, std_g=64, std_b=64, round_batch=False)
    metric = mx.metric.Accuracy()
    for batch in it:
        n = batch_size - batch.pad
        metric.update([batch.label[0][:n]], [net(batch.data[0])[:n]])
    return metric.get()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--per-class', type=int, default=96)
    parser.add_argument('--num-epochs', type=int, default=3)
    parser.add_argument('--batch-size', type=int, default=16)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--max-batches', type=int, default=None,
                        help='stop each epoch after this many batches (smoke tests)')
    parser.add_argument('--workdir', default=None)
    args = parser.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix='mxcy_image_')
    train_rec, val_rec = pack(workdir, args.per_class)

    mx.random.seed(0)
    net = build_net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': args.lr,
                                                          'momentum': 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

    it = mx.io.ImageRecordIter(path_imgrec=train_rec, data_shape=(3, 32, 32),
                               batch_size=args.batch_size, rand_crop=True, rand_mirror=True,
                               shuffle=True, seed=0, mean_r=128, mean_g=128, mean_b=128,
                               std_r=64, std_g=64, std_b=64, preprocess_threads=2)
    for epoch in range(args.num_epochs):
        it.reset()
        losses = []
        for i, batch in enumerate(it):
            if args.max_batches is not None and i >= args.max_batches:
                break
            losses.append(step(net, trainer, loss_fn, batch.data[0], batch.label[0]))
        print(f'ImageRecordIter epoch {epoch}: loss {np.mean(losses):.3f}, '
              f'val accuracy {evaluate(net, val_rec, args.batch_size):.3f}')

    tf = transforms.Compose([transforms.RandomResizedCrop(32, scale=(0.6, 1.0)),
                             transforms.RandomFlipLeftRight(), transforms.ToTensor(),
                             transforms.Normalize(0.5, 0.25)])
    ds = ImageRecordDataset(train_rec).transform_first(tf)
    loader = gluon.data.DataLoader(ds, batch_size=args.batch_size, shuffle=True,
                                   last_batch='discard')
    losses = []
    for i, (data, label) in enumerate(loader):
        if args.max_batches is not None and i >= args.max_batches:
            break
        losses.append(step(net, trainer, loss_fn, data, label))
    print(f'ImageRecordDataset epoch: loss {np.mean(losses):.3f}')
    print(f'val accuracy: {evaluate(net, val_rec, args.batch_size):.3f}')


if __name__ == '__main__':
    main()
