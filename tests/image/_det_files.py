"""Paths and golden outputs written by MXNet 1.9.1 (tools/mxnet_image_det_fixtures.py)."""
import os

import numpy as np

FILES = os.path.join(os.path.dirname(__file__), '..', 'mxnet_files', 'image_det')
EXPECTED = np.load(os.path.join(FILES, 'expected.npz'))
REC = os.path.join(FILES, 'det.rec')
IDX = os.path.join(FILES, 'det.idx')


def assert_close(got, name, tol=0.0):
    exp = EXPECTED[name]
    got = np.asarray(got)
    assert got.shape == exp.shape, (name, got.shape, exp.shape)
    np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64), atol=tol,
                               rtol=0, err_msg=name)


def batches(it):
    out = [(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad) for b in it]
    return np.stack([o[0] for o in out]), np.stack([o[1] for o in out]), [o[2] for o in out]
