"""The rest of ``mx.test_utils`` (MXNet 1.9.1's names and signatures), written from the
documented behaviour: tolerances per dtype, comparisons, random data, distribution checks,
optimizer and context consistency, environment helpers and local dataset readers.
`mxcy.test_utils` re-exports everything here; mxcy runs on the CPU only, so the GPU
helpers answer for a machine without GPUs.
"""
import contextlib
import functools
import os
import platform
import random as _random

import numpy as np


_FLOATS = {np.dtype(np.float16): (1e-2, 1e-1, 2.0 ** -6), np.dtype(np.float32):
           (1e-4, 1e-3, 2.0 ** -9), np.dtype(np.float64): (1e-5, 1e-20, 2.0 ** -14)}
_EXACT = [np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64,
                                np.uint64)]


def _np(x):
    return x.asnumpy() if hasattr(x, 'asnumpy') else np.asarray(x)


# ---------------------------------------------------------------- tolerances
def default_rtols():
    """rtol per dtype for comparisons (0 for exact types)."""
    return {**{k: v[0] for k, v in _FLOATS.items()}, **{t: 0 for t in _EXACT}}


def default_atols():
    """atol per dtype for comparisons (0 for exact types)."""
    return {**{k: v[1] for k, v in _FLOATS.items()}, **{t: 0 for t in _EXACT}}


def default_numeric_eps():
    """Finite-difference step per floating dtype."""
    return {k: v[2] for k, v in _FLOATS.items()}


def default_dtype():
    return np.float32


def effective_dtype(dat):
    """The dtype whose precision the values of `dat` have (theirs: the CPU has no TF32)."""
    return np.dtype(getattr(dat, 'dtype', np.asarray(dat).dtype))


def get_tolerance(dat, tol, default_tol):
    """`tol`, or `default_tol` (a dict by dtype) for dat's effective dtype."""
    if tol is not None:
        return tol
    return default_tol.get(effective_dtype(dat), default_tol.get(np.dtype(np.float32)))


def get_rtol(rtol=None, dtype=np.dtype(np.float32)):
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_atol(atol=None, dtype=np.dtype(np.float32)):
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_etol(etol=None):
    """The fraction of elements allowed to miss the tolerances (default 0)."""
    return 0 if etol is None else etol


def get_tols(x, y, rtol, atol):
    """(rtol, atol) for comparing x and y: the looser default of the two dtypes."""
    if rtol is None:
        rtol = max(get_tolerance(x, None, default_rtols()), get_tolerance(y, None,
                                                                          default_rtols()))
    if atol is None:
        atol = max(get_tolerance(x, None, default_atols()), get_tolerance(y, None,
                                                                          default_atols()))
    return rtol, atol


# ---------------------------------------------------------------- comparisons
def locationError(a, b, index, names, maxError=False):
    """A one-line description of the mismatch at `index`."""
    what = 'Maximum error' if maxError else 'Error'
    return (f"{what} at position {tuple(index)}: {names[0]}={a[tuple(index)]!r}, "
            f"{names[1]}={b[tuple(index)]!r}")


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=('a', 'b')):
    """assert_almost_equal where a NaN in either array counts as equal."""
    from mxcy.test_utils import assert_almost_equal
    a, b = np.copy(_np(a)), np.copy(_np(b))
    nan = np.isnan(a) | np.isnan(b)
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=('a', 'b'),
                                 equal_nan=False, mismatches=(10, 10)):
    """Like assert_almost_equal, but a fraction `etol` of the elements may differ."""
    a, b = _np(a), _np(b)
    rtol, atol = get_tols(a, b, rtol, atol)
    bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    frac = bad.mean() if bad.size else 0.0
    if frac > get_etol(etol):
        idx = np.argwhere(bad)[:mismatches[0]]
        raise AssertionError(f"{frac:.4%} of the elements differ (etol={get_etol(etol)}, "
                             f"rtol={rtol}, atol={atol}); first: " +
                             '; '.join(locationError(a, b, i, names) for i in idx))


def assert_exception(f, exception_type, *args, **kwargs):
    """f(*args, **kwargs) raises exception_type."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise "
                         f"{exception_type.__name__}")


def checkShapes(a, b):
    assert a.shape == b.shape, f"shapes differ: {a.shape} vs {b.shape}"


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """Compare (nested) tuples of arrays elementwise; None matches None."""
    from mxcy.test_utils import assert_almost_equal
    if t1 is None or t2 is None:
        return
    if isinstance(t1, (tuple, list)):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def same_array(array1, array2):
    """Whether the two NDArrays share memory (checked by writing through array1)."""
    if array1.shape != array2.shape:
        return False
    array1 += 1
    same = np.array_equal(array1.asnumpy(), array2.asnumpy())
    array1 -= 1
    return same


def same_symbol_structure(sym1, sym2):
    """Whether two symbols have the same operators wired the same way (names ignored)."""
    import json
    n1, n2 = (json.loads(s.tojson())['nodes'] for s in (sym1, sym2))
    if len(n1) != len(n2):
        return False
    return all(a['op'] == b['op'] and [i[:2] for i in a['inputs']] ==
               [i[:2] for i in b['inputs']] for a, b in zip(n1, n2))


def collapse_sum_like(a, shape):
    """`a` summed over the axes where it was broadcast from `shape`."""
    a = np.asarray(a)
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and a.shape[lead + i] != 1)
    return a.sum(axis=axes).reshape(shape)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """numpy_reduce_func applied over each axis of `axis` (None: all) in turn."""
    if axis is None:
        axis = tuple(range(dat.ndim))
    elif isinstance(axis, int):
        axis = (axis,)
    out = dat
    for a in sorted((a % dat.ndim for a in axis), reverse=True):
        out = numpy_reduce_func(out, axis=a)
    if keepdims:
        out = out.reshape(tuple(1 if i in [a % dat.ndim for a in axis] else d
                                for i, d in enumerate(dat.shape)))
    return out


# ---------------------------------------------------------------- random data
def random_arrays(*shapes):
    """Standard-normal float32 arrays of the shapes (one array for one shape)."""
    arrays = [np.array(np.random.randn(), dtype=np.float32) if len(s) == 0 else
              np.random.randn(*s).astype(np.float32) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, **kwargs):
    """Uniform arrays (low=0, high=1, dtype=float32 by keyword)."""
    low, high = kwargs.pop('low', 0.0), kwargs.pop('high', 1.0)
    dtype = kwargs.pop('dtype', np.float32)
    if kwargs:
        raise TypeError(f"random_uniform_arrays: unexpected arguments {sorted(kwargs)}")
    arrays = [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_sample(population, k):
    """k distinct elements of population, in random order."""
    return _random.sample(list(population), k)


def rand_coord_2d(x_low, x_high, y_low, y_high):
    return np.random.randint(x_low, x_high), np.random.randint(y_low, y_high)


def create_vector(size, dtype=np.int64):
    from mxcy import nd
    return nd.array(np.arange(size), dtype=dtype)


def create_2d_tensor(rows, columns, dtype=np.int64):
    """(rows, columns) whose row i holds i."""
    from mxcy import nd
    return nd.array(np.repeat(np.arange(rows)[:, None], columns, axis=1), dtype=dtype)


def get_identity_mat(size):
    from mxcy import nd
    return nd.array(np.eye(size))


def get_identity_mat_batch(size):
    """A batch of two identity matrices (2, size, size)."""
    from mxcy import nd
    return nd.array(np.stack([np.eye(size)] * 2))


def new_orthonormal_matrix_2d(n):
    q, _ = np.linalg.qr(np.random.uniform(-10, 10, (n, n)))
    return q


def new_matrix_with_real_eigvals_2d(n):
    """Q diag(l) Q^-1 with real eigenvalues l and a random invertible Q."""
    q = new_orthonormal_matrix_2d(n)
    return q @ np.diag(np.random.uniform(-10, 10, n)) @ np.linalg.inv(q)


def new_matrix_with_real_eigvals_nd(shape):
    n = int(np.prod(shape[:-2]))
    return np.stack([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]
                    ).reshape(shape)


def new_sym_matrix_with_real_eigvals_2d(n):
    q = new_orthonormal_matrix_2d(n)
    return q @ np.diag(np.random.uniform(-10, 10, n)) @ q.T


def new_sym_matrix_with_real_eigvals_nd(shape):
    n = int(np.prod(shape[:-2]))
    return np.stack([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]
                    ).reshape(shape)


def assign_each(the_input, function):
    """function applied to each element of a NumPy array (None: a copy)."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function)(the_input).astype(np.asarray(the_input).dtype)


def assign_each2(input1, input2, function):
    if function is None:
        return np.array(input1)
    return np.vectorize(function)(input1, input2).astype(np.asarray(input1).dtype)


# ---------------------------------------------------------------- distributions
def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """nbuckets equally likely (low, high) buckets from a distribution's ppf."""
    edges = [ppf(i / nbuckets) for i in range(nbuckets + 1)]
    return list(zip(edges[:-1], edges[1:])), [1.0 / nbuckets] * nbuckets


def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the sample mean is within 3 standard errors of mu."""
    samples = np.asarray(generator(nsamples), dtype=np.float64)
    return abs(samples.mean() - mu) < 3 * sigma / np.sqrt(nsamples)


def var_check(generator, sigma, nsamples=1000000):
    """Whether the sample variance is within 3 standard errors of sigma**2 (normal)."""
    samples = np.asarray(generator(nsamples), dtype=np.float64)
    return abs(samples.var() - sigma ** 2) < 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of nsamples draws against bucket probabilities.

    `buckets` are (low, high) ranges (continuous) or values (discrete). Returns
    (p-value, observed counts, expected counts). NOTE: the expected counts are scaled to
    the observed total (samples outside every bucket are left out of both), which
    scipy.stats.chisquare requires; MXNet's helper did not, and fails on current SciPy.
    """
    from scipy import stats
    samples = np.asarray(generator(nsamples)).ravel()
    if isinstance(buckets[0], (tuple, list)):
        obs = np.array([np.sum((samples >= lo) & (samples < hi)) for lo, hi in buckets])
    else:
        obs = np.array([np.sum(samples == v) for v in buckets])
    probs = np.asarray(probs, dtype=np.float64)
    expected = probs / probs.sum() * obs.sum()
    _, p = stats.chisquare(obs, expected)
    return p, obs, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5,
                     success_rate=0.2, alpha=0.05):
    """Run chi_square_check nrepeat times; at least success_rate of them must pass at
    level alpha. Returns the p-values."""
    ps = [chi_square_check(generator, buckets, probs, nsamples)[0] for _ in range(nrepeat)]
    passed = sum(p > alpha for p in ps)
    if passed < success_rate * nrepeat:
        raise AssertionError(f"verify_generator: only {passed} of {nrepeat} chi-square "
                             f"tests passed at alpha={alpha} (p-values {ps})")
    return ps


# ---------------------------------------------------------------- environment
@contextlib.contextmanager
def discard_stderr():
    """Silence file descriptor 2 (native code's messages too) inside the block."""
    fd = os.dup(2)
    try:
        with open(os.devnull, 'w') as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(fd, 2)
        os.close(fd)


@contextlib.contextmanager
def environment(*args):
    """Set environment variables inside the block: ``environment('K', 'v')`` or
    ``environment({'K': 'v', 'L': None})`` (None unsets); restored afterwards."""
    if len(args) == 2:
        changes = {args[0]: args[1]}
    elif len(args) == 1 and isinstance(args[0], dict):
        changes = dict(args[0])
    else:
        raise ValueError("environment: pass (name, value) or one dict")
    saved = {k: os.environ.get(k) for k in changes}
    try:
        for k, v in changes.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, str(v))
        yield
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def retry(n):
    """Decorator: rerun a test up to n times while it fails with an AssertionError."""
    if n < 1:
        raise ValueError(f"retry: n must be >= 1, got {n}")

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if i == n - 1:
                        raise
        return wrapper
    return decorate


def list_gpus():
    """GPU ids: none (mxcy runs on the CPU)."""
    return []


def has_tvm_ops():
    return False


def is_aarch64_run():
    return platform.machine() == 'aarch64'


def is_cd_run():
    return os.environ.get('CD_JOB') == '1'


def is_op_runnable():
    """Whether the current context can run the operator tests (the CPU always can)."""
    return True


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith('_') and callable(_v) and
           getattr(_v, '__module__', None) == __name__]
