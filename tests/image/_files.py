"""Paths and golden outputs written by MXNet 1.9.1 (tools/mxnet_image_fixtures.py)."""
import os
import shutil

import numpy as np

FILES = os.path.join(os.path.dirname(__file__), '..', 'mxnet_files', 'image')
EXPECTED = np.load(os.path.join(FILES, 'expected.npz'))
IMAGES = [str(f) for f in EXPECTED['files']]
REC = os.path.join(FILES, 'images.rec')
IDX = os.path.join(FILES, 'images.idx')


def path(name):
    return os.path.join(FILES, name)


def read(name):
    with open(path(name), 'rb') as f:
        return f.read()


def copy_rec(tmp_path, stem='images'):
    """Copies of a fixture .rec/.idx (tests may damage them)."""
    for ext in ('.rec', '.idx'):
        shutil.copy(path(stem + ext), tmp_path / (stem + ext))
    return str(tmp_path / (stem + '.rec')), str(tmp_path / (stem + '.idx'))


def assert_close(got, name, tol=0):
    exp = EXPECTED[name]
    got = np.asarray(got)
    assert got.shape == exp.shape, (name, got.shape, exp.shape)
    np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64), atol=tol,
                               rtol=0, err_msg=name)
