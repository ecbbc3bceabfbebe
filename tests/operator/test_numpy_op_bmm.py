"""mxcy/operator/_numpy_op.bmm: NumPy's matmul (values, broadcasting, dtypes) with NumPy's
BLAS held to mx.engine.blas_threads() threads during the call and restored after."""
import numpy as np
import pytest

from mxcy.engine import blas_threads
from mxcy.operator import _numpy_op
from mxcy.operator._numpy_op import bmm


@pytest.mark.parametrize('sa,sb', [((4, 3, 5), (4, 5, 2)), ((3, 5), (2, 5, 4)),
                                   ((2, 1, 3, 4), (5, 4, 2)), ((0, 3, 4), (0, 4, 2))])
@pytest.mark.parametrize('dtype', ['float32', 'float64', 'int64'])
def test_bmm_is_matmul(sa, sb, dtype):
    rng = np.random.RandomState(0)
    a, b = (rng.uniform(-3, 3, s).astype(dtype) for s in (sa, sb))
    got = bmm(a, b)
    want = np.matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_bmm_caps_numpy_blas_threads_during_the_call(monkeypatch):
    class Lib:
        def __init__(self):
            self.num_threads, self.seen = 8, []

        def set_num_threads(self, n):
            self.seen.append(n)
            self.num_threads = n
    lib = Lib()
    monkeypatch.setattr(_numpy_op, '_numpy_blas', lambda: [lib])
    during = []
    real = np.matmul
    monkeypatch.setattr(_numpy_op.np, 'matmul',
                        lambda a, b: during.append(lib.num_threads) or real(a, b))
    bmm(np.ones((2, 2, 2)), np.ones((2, 2, 2)))
    assert during == [blas_threads()] and lib.num_threads == 8
    assert lib.seen == [blas_threads(), 8]
