"""mxcy/_npkernels.pyx: float32 <-> float16 by F16C bit for bit as NumPy's astype (every
float16, random float32 bit patterns: NaN, inf, subnormals, overflow), the uniform
density's row select against np.where; both say False, doing nothing, for what they do
not take (the callers then use NumPy: also checked here)."""
import numpy as np
import pytest

from mxcy import _npkernels
from mxcy._npkernels import HAS_F16C, cast_half, uniform_pdf_select

needs_f16c = pytest.mark.skipif(not HAS_F16C, reason='this CPU has no F16C')


@needs_f16c
def test_half_to_float_every_value():
    h = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    out = np.empty(h.shape, np.float32)
    assert cast_half(h, out)
    want = h.astype(np.float32)
    same = (out.view(np.uint32) == want.view(np.uint32)) | (np.isnan(out) & np.isnan(want))
    assert same.all()


@needs_f16c
@pytest.mark.parametrize('n', [0, 1, 7, 8, 9, 1000, 4099])
def test_float_to_half_matches_numpy_bits(n):
    bits = np.random.default_rng(n).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32).copy()
    x[:min(n, 6)] = [np.inf, -np.inf, 65520.0, 65519.0, 2.0 ** -25, -0.0][:min(n, 6)]
    out = np.empty(n, np.float16)
    assert cast_half(x, out)
    with np.errstate(all='ignore'):
        want = x.astype(np.float16)
    same = (out.view(np.uint16) == want.view(np.uint16)) | (np.isnan(out) & np.isnan(want))
    assert same.all()


def test_cast_half_declines_what_it_does_not_take():
    x = np.ones(10, np.float32)
    assert not cast_half(x, np.empty(10, np.float64))               # not a half cast
    assert not cast_half(x[::2], np.empty(5, np.float16))           # strided
    assert not cast_half(x, np.empty(9, np.float16))                # shapes differ
    buf = np.zeros(20, np.float32)
    assert not cast_half(buf[:10], buf[:5].view(np.float16))        # overlapping
    if not HAS_F16C:
        assert not cast_half(x, np.empty(10, np.float16))
    assert _npkernels.HAS_F16C in (True, False)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('outside', [0.0, -np.inf])
def test_uniform_select_rows(dtype, outside):
    rng = np.random.default_rng(3)
    for rows, inner in ((1, 1), (3, 37), (64, 257), (5, 0)):
        x = rng.uniform(-2, 3, (rows, inner)).astype(dtype)
        if x.size:
            x.flat[::11] = np.nan
        lo = rng.uniform(-1, 1, (rows, 1)).astype(dtype)
        hi = (lo + rng.uniform(-0.5, 2, (rows, 1))).astype(dtype)
        x[:, :1] = lo                                   # on the lower bound: inside
        inside = rng.uniform(0, 3, (rows, 1)).astype(dtype)
        out = np.full(x.shape, 7, dtype)
        assert uniform_pdf_select(x, lo, hi, inside, outside, out)
        want = np.where((x >= lo) & (x <= hi), inside, dtype(outside))
        np.testing.assert_array_equal(out, want)


def test_uniform_select_declines_what_it_does_not_take():
    x = np.zeros((2, 3), np.float32)
    lo, hi, v = (np.zeros((2, 1), np.float32) for _ in range(3))
    out = np.empty_like(x)
    assert not uniform_pdf_select(x.astype(np.float16), lo, hi, v, 0.0, out)
    assert not uniform_pdf_select(x, lo.astype(np.float64), hi, v, 0.0, out)
    assert not uniform_pdf_select(x, lo, hi, v, 0.0, out[:, :2])
    assert not uniform_pdf_select(x, lo, hi, v, 0.0, x)                 # in place
    assert not uniform_pdf_select(np.zeros((2, 3, 2), np.float32).transpose(0, 2, 1), lo,
                                  hi, v, 0.0, np.empty((2, 2, 3), np.float32))
