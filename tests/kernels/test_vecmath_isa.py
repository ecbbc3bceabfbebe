"""mxcy/_vecmath.h compiled once per instruction set, the way its target_clones versions
are (baseline x86-64/SSE2, AVX2 without FMA, AVX-512F), and checked against NumPy.

The extension itself runs only the version this CPU picks at load time; the other clones
ship in the same wheel and run on other machines, so each is built here with
MXCY_NO_CLONES and the matching -m flags and called through ctypes. Skipped without a C
compiler or off x86-64 Linux; an ISA the CPU lacks is skipped.
"""
import ctypes
import pathlib
import platform
import shutil
import subprocess

import numpy as np
import pytest
from scipy.special import expit, ndtr

import mxcy

HEADER_DIR = pathlib.Path(mxcy.__file__).parent
CC = shutil.which('gcc') or shutil.which('cc')
ISAS = {'baseline': ['-march=x86-64'], 'avx2': ['-mavx2'], 'avx512f': ['-mavx512f']}
CPU_FLAG = {'baseline': 'sse2', 'avx2': 'avx2', 'avx512f': 'avx512f'}

WRAPPERS = r'''
#include "_vecmath_elem.h"
#define F32 const float*
#define F64 const double*
void exp_f32(F32 x, float* y, int64_t n) { mxcy_vexp_f32(x, y, n); }
void exp_f64(F64 x, double* y, int64_t n) { mxcy_vexp_f64(x, y, n); }
void sigmoid_f32(F32 x, float* y, int64_t n) { mxcy_vsigmoid_f32(x, y, n); }
void sigmoid_f64(F64 x, double* y, int64_t n) { mxcy_vsigmoid_f64(x, y, n); }
void tanh_f32(F32 x, float* y, int64_t n) { mxcy_vtanh_f32(x, y, n); }
void tanh_f64(F64 x, double* y, int64_t n) { mxcy_vtanh_f64(x, y, n); }
void softmax_f32(F32 x, float* y, int64_t r, int64_t n, double it, int lg, int add)
{ mxcy_softmax_rows_f32(x, y, r, n, it, lg, add); }
void softmax_f64(F64 x, double* y, int64_t r, int64_t n, double it, int lg, int add)
{ mxcy_softmax_rows_f64(x, y, r, n, it, lg, add); }
void gelu_f32(F32 x, float* y, int64_t n) { mxcy_vgelu32_f32(x, y, n); }
void softrelu_f32(F32 x, float* y, int64_t n) { mxcy_vsoftrelu32_f32(x, y, n); }
void sin_f32(F32 x, float* y, int64_t n) { mxcy_vsin_f32(x, y, n); }
void cos_f32(F32 x, float* y, int64_t n) { mxcy_vcos_f32(x, y, n); }
void log_f32(F32 x, float* y, int64_t n) { mxcy_vlog_f32(x, y, n); }
void pow2_f32(F32 x, float* y, int64_t n) { const float e = 2.5f; mxcy_vpow_f32(x, &e, 0, y, n); }
'''

pytestmark = pytest.mark.skipif(
    CC is None or platform.system() != 'Linux' or platform.machine() != 'x86_64',
    reason='needs a C compiler on x86-64 Linux')


def cpu_has(flag):
    text = pathlib.Path('/proc/cpuinfo').read_text()
    return any(flag in line.split() for line in text.splitlines()
               if line.startswith('flags'))


@pytest.fixture(scope='module', params=sorted(ISAS))
def lib(request, tmp_path_factory):
    isa = request.param
    if not cpu_has(CPU_FLAG[isa]):
        pytest.skip(f'this CPU has no {isa}')
    tmp = tmp_path_factory.mktemp(isa)
    src, so = tmp / 'wrap.c', tmp / 'wrap.so'
    src.write_text(WRAPPERS)
    subprocess.run([CC, '-O3', '-fopenmp-simd', '-fno-strict-aliasing', '-fPIC', '-shared',
                    '-DMXCY_NO_CLONES', *ISAS[isa], f'-I{HEADER_DIR}', str(src), '-o',
                    str(so), '-lm'], check=True, capture_output=True)
    return ctypes.CDLL(str(so))


def call(lib, name, x, *extra):
    x = np.ascontiguousarray(x)
    y = np.empty_like(x)
    suffix = 'f32' if x.dtype == np.float32 else 'f64'
    fn = getattr(lib, f'{name}_{suffix}')
    args = [x.ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p)]
    if name == 'softmax':
        rows, length, inv_t, log = extra
        args += [ctypes.c_int64(rows), ctypes.c_int64(length), ctypes.c_double(inv_t),
                 ctypes.c_int(log), ctypes.c_int(0)]
    else:
        args.append(ctypes.c_int64(x.size))
    fn(*args)
    return y


def ulps(got, truth, dtype):
    with np.errstate(over='ignore'):
        rounded = truth.astype(dtype)
    spacing = np.maximum(np.spacing(np.abs(rounded)), np.finfo(dtype).smallest_subnormal)
    return np.abs(got.astype(np.float64) - truth) / spacing.astype(np.float64)


@pytest.mark.parametrize('dtype, lo, hi, max_ulp', [(np.float32, -105, 89.5, 1.5),
                                                    (np.float64, -746, 710.5, 1.5)])
def test_exp_on_each_isa(lib, dtype, lo, hi, max_ulp):
    x = np.concatenate([np.linspace(lo, hi, 100_003),
                        [np.inf, -np.inf, np.nan, 0.0, 1e-30]]).astype(dtype)
    with np.errstate(over='ignore'):
        truth = np.exp(x.astype(np.float64)) if dtype == np.float32 else np.exp(x)
        rounded = truth.astype(dtype)
    got = call(lib, 'exp', x)
    finite = np.isfinite(rounded)
    assert ulps(got[finite], truth[finite], dtype).max() <= max_ulp
    np.testing.assert_array_equal(got[~finite], rounded[~finite])


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('name, ref', [('sigmoid', expit), ('tanh', np.tanh)])
def test_sigmoid_and_tanh_on_each_isa(lib, dtype, name, ref):
    x = np.concatenate([np.linspace(-40, 40, 50_001), np.geomspace(1e-20, 1, 1000),
                        [np.inf, -np.inf, np.nan, -0.0]]).astype(dtype)
    truth = ref(x.astype(np.float64))
    got = call(lib, name, x)
    assert ulps(got[:-4], truth[:-4], dtype).max() <= (0.51 if dtype == np.float32 else 4)
    np.testing.assert_array_equal(got[-4:], truth[-4:].astype(dtype))
    assert np.signbit(got[-1]) == (name == 'tanh')


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('log', [0, 1])
def test_softmax_rows_on_each_isa(lib, dtype, log):
    x = np.random.default_rng(2).standard_normal((5, 263)).astype(dtype) * 4
    got = call(lib, 'softmax', x, 5, 263, 1 / 1.5, log)
    z = (x.astype(np.float64) - x.max(1, keepdims=True)) / 1.5
    lse = np.log(np.exp(z).sum(1, keepdims=True))
    expected = z - lse if log else np.exp(z - lse)
    np.testing.assert_allclose(got, expected, rtol=2e-6 if dtype == np.float32 else 1e-13,
                               atol=1e-7 if dtype == np.float32 else 1e-15)


@pytest.mark.parametrize('name, lo, hi, ref, max_ulp', [
    ('gelu', -20, 20, lambda x: x * ndtr(x), 8), ('softrelu', -120, 120,
                                                  lambda x: np.logaddexp(0, x), 3),
    ('sin', -7e4, 7e4, np.sin, 0.51), ('cos', -7e4, 7e4, np.cos, 0.51),
    ('log', 1e-30, 1e30, np.log, 0.51), ('pow2', 0, 1e15, lambda x: x ** 2.5, 0.51)])
def test_elem_loops_on_each_isa(lib, name, lo, hi, ref, max_ulp):
    # the float32 loops of _vecmath_elem.h; sin/cos/log/pow pass their special inputs
    # (|x| > 65536, inf, NaN, x <= 0) to libm in a second pass
    x = np.concatenate([np.linspace(lo, hi, 100_003), [np.inf, -np.inf, np.nan, 0.0, -0.0,
                                                       1.0, -1.0]]).astype(np.float32)
    with np.errstate(all='ignore'):
        truth = ref(x.astype(np.float64))
        got = call(lib, name, x)
    ok = np.isfinite(truth) & (np.abs(truth) < np.finfo(np.float32).max)
    assert ulps(got[ok], truth[ok], np.float32).max() <= max_ulp
    np.testing.assert_array_equal(np.isnan(got), np.isnan(truth.astype(np.float32)))
