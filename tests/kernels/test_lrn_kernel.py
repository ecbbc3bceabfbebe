"""mxcy/_lrn.pyx: LRN's forward and its scale against a NumPy reference of the formula,
float32/float64, odd shapes, every nsize up to beyond C, in place; bad input raises."""
import numpy as np
import pytest

from mxcy._lrn import lrn_forward, lrn_scale


def reference_scale(x, nsize, alpha, knorm):
    x = x.astype(np.float64)
    c, half = x.shape[1], nsize // 2
    s = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - half), min(c - 1, ch + half)
        s[:, ch] = (x[:, lo:hi + 1] ** 2).sum(axis=1)
    return knorm + alpha / nsize * s


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('shape', [(2, 7, 3, 5), (1, 3, 17), (3, 1, 2, 2), (2, 5)])
@pytest.mark.parametrize('nsize', [1, 3, 5, 9])
@pytest.mark.parametrize('beta', [0.75, 0.5, 0.3])
def test_forward_matches_the_formula(dtype, shape, nsize, beta):
    x = np.random.default_rng(4).standard_normal(shape).astype(dtype) * 3
    s = reference_scale(x, nsize, 0.1, 2.0)
    want = x * s ** -beta
    tol = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(lrn_scale(x, nsize, 0.1, 2.0), s, rtol=tol)
    out = np.empty_like(x)
    assert lrn_forward(x, out, nsize, 0.1, beta, 2.0) is out
    np.testing.assert_allclose(out, want, rtol=tol)
    lrn_forward(x, x, nsize, 0.1, beta, 2.0)            # in place
    np.testing.assert_allclose(x, want, rtol=tol)


def test_empty_and_bad_input():
    x = np.zeros((0, 3, 4), np.float32)
    assert lrn_forward(x, np.empty_like(x), 3, 1e-4, 0.75, 2.0).shape == (0, 3, 4)
    with pytest.raises(ValueError, match='LRN: a C-contiguous float32/float64 array'):
        lrn_forward(np.zeros((2, 3), np.float16), np.zeros((2, 3), np.float16), 3, 1, 1, 1)
    with pytest.raises(ValueError, match='LRN: out must be'):
        lrn_forward(np.zeros((2, 3)), np.zeros((2, 4)), 3, 1, 1, 1)
    with pytest.raises(ValueError, match='LRN: nsize must be at least 1'):
        lrn_scale(np.zeros((2, 3)), 0, 1, 1)
