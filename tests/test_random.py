"""mx.random / mx.nd.random: reproducibility, seed ordering, distributions, arguments."""
import threading
import time

import numpy as np
import pytest

import mxcy as mx

ENGINE_CONFIGS = [('NaiveEngine', 1), ('ThreadedEngine', 1), ('ThreadedEngine', 2)]


@pytest.fixture(autouse=True)
def restore_engine():
    saved = (mx.engine.engine_type(), mx.engine.num_workers())
    yield
    try:
        mx.nd.waitall()
    except Exception:
        pass
    if mx.engine.engine_type() != saved[0]:
        mx.engine.set_engine_type(saved[0])
    if mx.engine.num_workers() != saved[1]:
        mx.engine.set_num_workers(saved[1])


def use_engine(engine_type, workers):
    mx.engine.set_engine_type(engine_type)
    mx.engine.set_num_workers(workers)


def slow_write(arr, value, delay=0.05):
    """A Python op that writes `arr` late, so ops pushed after it could overtake it."""
    def run():
        time.sleep(delay)
        arr._np_view()[...] = value
    mx.engine.push(run, (), [arr], name='slow_write')


def workload():
    """A mix of samplers, some waiting on slow inputs, pushed without waits."""
    mx.random.seed(42)
    data = mx.nd.zeros((50, 3))
    slow_write(data, np.arange(150, dtype=np.float32).reshape(50, 3))
    shuffled = mx.nd.random.shuffle(data)           # must draw before the ops below
    lows = mx.nd.zeros((4,))
    slow_write(lows, np.array([0, 10, 20, 30], np.float32))
    per_row = mx.nd.random.uniform(lows, lows + 1, shape=5)
    outs = [shuffled, per_row]
    for i in range(20):
        outs.append(mx.nd.random.uniform(-1, 1, shape=(7, i + 1)))
        outs.append(mx.nd.random.normal(2, 3, shape=(5,), dtype='float64'))
        outs.append(mx.nd.random.randint(0, 100, shape=(6,)))
        outs.append(mx.nd.random.uniform(shape=(3,)) * 2 + 1)   # ordinary ops in between
    outs.append(mx.nd.random.exponential(2.0, shape=(9,)))
    outs.append(mx.nd.random.gamma(2.0, 0.5, shape=(9,)))
    outs.append(mx.nd.random.poisson(4.0, shape=(9,)))
    return [o.asnumpy() for o in outs]


def test_same_seed_same_values_on_every_engine():
    results = []
    for engine_type, workers in ENGINE_CONFIGS:
        use_engine(engine_type, workers)
        results.append(workload())
    reference = results[0]
    assert len(reference) == 85
    for config, result in zip(ENGINE_CONFIGS[1:], results[1:]):
        for i, (a, b) in enumerate(zip(reference, result)):
            assert a.dtype == b.dtype and np.array_equal(a, b), (config, i)
    # and the values are real samples: the shuffle is a permutation, not the identity
    shuffled = reference[0]
    assert sorted(shuffled[:, 0].tolist()) == list(range(0, 150, 3))
    assert shuffled[:, 0].tolist() != list(range(0, 150, 3))
    per_row = reference[1]
    assert per_row.shape == (4, 5)
    for i, base in enumerate([0, 10, 20, 30]):
        assert np.all((per_row[i] >= base) & (per_row[i] <= base + 1))


def test_repeated_runs_are_identical_and_seeds_differ():
    a, b = workload(), workload()
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    mx.random.seed(43)
    other = mx.nd.random.uniform(-1, 1, shape=(7, 1)).asnumpy()
    mx.random.seed(42)
    mx.nd.random.shuffle(mx.nd.zeros((50, 3)))
    mx.nd.random.uniform(mx.nd.zeros((4,)), mx.nd.ones((4,)), shape=5)
    same = mx.nd.random.uniform(-1, 1, shape=(7, 1)).asnumpy()
    assert np.array_equal(same, a[2]) and not np.array_equal(other, a[2])


@pytest.mark.parametrize('engine_type,workers', ENGINE_CONFIGS)
def test_seed_is_ordered_with_pending_samplers(engine_type, workers):
    use_engine(engine_type, workers)
    mx.random.seed(1)
    expected = mx.nd.random.uniform(shape=(1000,)).asnumpy()
    mx.random.seed(7)
    expected_before = mx.nd.random.shuffle(mx.nd.arange(100)).asnumpy()
    mx.random.seed(7)
    data = mx.nd.zeros((100,))
    slow_write(data, np.arange(100, dtype=np.float32))
    before = mx.nd.random.shuffle(data)    # still waiting for its input ...
    mx.random.seed(1)                      # ... so the seed must wait for it
    after = mx.nd.random.uniform(shape=(1000,))
    assert np.array_equal(after.asnumpy(), expected)
    assert np.array_equal(before.asnumpy(), expected_before)
    assert sorted(expected_before.tolist()) == list(range(100))


def test_seed_then_sample_equals_sample_seed_sample():
    mx.nd.random.normal(shape=(10,))
    mx.random.seed(1)
    b = mx.nd.random.normal(shape=(10,)).asnumpy()
    mx.random.seed(1)
    c = mx.nd.random.normal(shape=(10,)).asnumpy()
    assert np.array_equal(b, c)


def test_seed_arguments():
    mx.random.seed(5, ctx=mx.cpu())
    x = mx.random.uniform(shape=4).asnumpy()
    mx.random.seed(5, ctx='all')
    assert np.array_equal(x, mx.random.uniform(shape=4).asnumpy())
    mx.random.seed(-1)                        # modulo 2**64, like a C++ uint64 cast
    y = mx.random.uniform(shape=4).asnumpy()
    mx.random.seed(2 ** 64 - 1)
    assert np.array_equal(y, mx.random.uniform(shape=4).asnumpy())
    with pytest.raises(ValueError, match='seed_state must be an int'):
        mx.random.seed('a')
    with pytest.raises(ValueError, match='seed_state must be an int'):
        mx.random.seed(1.5)
    with pytest.raises(ValueError, match="ctx must be 'all' or a Context"):
        mx.random.seed(1, ctx='cpu')
    with pytest.raises(mx.MXNetError, match='no GPU support'):
        mx.random.seed(1, ctx=mx.gpu(0))


def test_samples_from_several_python_threads_are_all_drawn_once():
    """Pushes from many threads serialise on the generator: no sample is drawn twice."""
    mx.random.seed(3)
    results = [None] * 8

    def worker(i):
        results[i] = [mx.nd.random.uniform(shape=(50,)) for _ in range(10)]
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    values = np.concatenate([a.asnumpy() for r in results for a in r])
    mx.random.seed(3)
    serial = mx.nd.random.uniform(shape=(4000,)).asnumpy()
    assert values.shape == (4000,)
    assert np.array_equal(np.sort(values), np.sort(serial))


# ---------------------------------------------------------------- distributions
N = 100_000


def sample_stats(arr):
    v = arr.asnumpy().astype(np.float64)
    return v, v.mean(), v.std()


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_uniform_distribution(dtype):
    mx.random.seed(0)
    a = mx.nd.random.uniform(-2, 6, shape=(N,), dtype=dtype)
    assert a.dtype == np.dtype(dtype) and a.shape == (N,)
    v, mean, std = sample_stats(a)
    assert v.min() >= -2 and v.max() <= 6
    assert abs(mean - 2) < 0.05 and abs(std - 8 / np.sqrt(12)) < 0.05
    hist = np.histogram(v, bins=8, range=(-2, 6))[0]
    assert hist.min() > N / 8 * 0.95


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_normal_distribution(dtype):
    mx.random.seed(0)
    a = mx.nd.random.normal(1.5, 2.0, shape=(100, 1000), dtype=dtype)
    assert a.dtype == np.dtype(dtype) and a.shape == (100, 1000)
    v, mean, std = sample_stats(a)
    assert abs(mean - 1.5) < 0.03 and abs(std - 2.0) < 0.03
    assert abs(np.mean(np.abs(v - 1.5) < 2.0) - 0.6827) < 0.01


def test_other_distributions():
    mx.random.seed(0)
    _, mean, _ = sample_stats(mx.nd.random.exponential(2.0, shape=N))
    assert abs(mean - 2.0) < 0.05
    v, mean, std = sample_stats(mx.nd.random.gamma(3.0, 0.5, shape=N))
    assert abs(mean - 1.5) < 0.03 and abs(std ** 2 - 0.75) < 0.03 and v.min() > 0
    p = mx.nd.random.poisson(4.0, shape=N)
    v, mean, std = sample_stats(p)
    assert p.dtype == np.float32 and np.all(v == np.round(v))
    assert abs(mean - 4) < 0.05 and abs(std ** 2 - 4) < 0.1
    v, mean, std = sample_stats(mx.nd.random.negative_binomial(3, 0.4, shape=N))
    assert abs(mean - 4.5) < 0.1 and abs(std ** 2 - 3 * 0.6 / 0.16) < 0.5
    v, mean, std = sample_stats(mx.nd.random.generalized_negative_binomial(2.0, 0.5, shape=N))
    assert abs(mean - 2.0) < 0.05 and abs(std ** 2 - (2 + 0.5 * 4)) < 0.2
    v, mean, std = sample_stats(mx.nd.random.generalized_negative_binomial(3.0, 0.0, shape=N))
    assert abs(mean - 3.0) < 0.05 and abs(std ** 2 - 3.0) < 0.1     # alpha 0: Poisson


def test_randint_range_and_dtype():
    mx.random.seed(0)
    a = mx.nd.random.randint(-3, 4, shape=(10_000,))
    assert a.dtype == np.int32 and a.shape == (10_000,)
    v = a.asnumpy()
    assert set(v.tolist()) == set(range(-3, 4))
    counts = np.bincount(v + 3)
    assert counts.min() > 10_000 / 7 * 0.85
    b = mx.nd.random.randint(0, 2 ** 40, shape=(1000,), dtype='int64').asnumpy()
    assert b.dtype == np.int64 and b.min() >= 0 and b.max() < 2 ** 40 and b.max() > 2 ** 38
    one = mx.nd.random.randint(5, 6, shape=4).asnumpy()
    assert one.tolist() == [5, 5, 5, 5]
    out = mx.nd.zeros((3, 2), dtype='int64')
    assert mx.nd.random.randint(0, 2, out=out) is out
    assert out.asnumpy().max() <= 1


def test_shuffle_is_a_row_permutation():
    mx.random.seed(0)
    data = mx.nd.array(np.arange(40).reshape(10, 4))
    before = data.asnumpy()
    out = mx.nd.random.shuffle(data)
    got = out.asnumpy()
    assert out is not data and out.shape == (10, 4) and out.dtype == np.float32
    assert np.array_equal(data.asnumpy(), before)              # input unchanged
    assert sorted(map(tuple, got)) == sorted(map(tuple, before))
    assert np.array_equal(got[:, 1:] - got[:, :1], before[:, 1:] - before[:, :1])  # rows kept
    assert not np.array_equal(got, before)
    ints = mx.nd.array(np.arange(1000), dtype='int64')
    perm = mx.random.shuffle(ints).asnumpy()
    assert perm.dtype == np.int64 and sorted(perm.tolist()) == list(range(1000))
    mx.nd.random.shuffle(ints, out=ints)                       # in place
    assert sorted(ints.asnumpy().tolist()) == list(range(1000))
    assert mx.nd.random.shuffle(mx.nd.zeros((0, 2))).shape == (0, 2)


# ---------------------------------------------------------------- shapes, dtypes, out
def test_shapes_and_defaults():
    assert mx.nd.random.uniform().shape == (1,)
    assert mx.nd.random.uniform().dtype == np.float32
    assert mx.nd.random.normal(shape=3).shape == (3,)
    assert mx.nd.random.uniform(shape=[2, 3]).shape == (2, 3)
    assert mx.nd.random.uniform(0, 1, (2, 0)).shape == (2, 0)
    assert mx.nd.random.randint(0, 3).shape == (1,)
    assert mx.nd.random.randn(2, 3).shape == (2, 3)
    assert mx.nd.random.randn(4, dtype='float64').dtype == np.float64
    assert mx.nd.random.uniform(1, 1, shape=3).asnumpy().tolist() == [1, 1, 1]
    x = mx.nd.zeros((3, 4), dtype='float64')
    assert mx.nd.random.uniform_like(x).shape == (3, 4)
    assert mx.nd.random.normal_like(x, 5, 0.1).dtype == np.float64


def test_out_argument():
    out = mx.nd.zeros((2, 2), dtype='float64')
    r = mx.nd.random.uniform(2, 3, out=out)
    v = out.asnumpy()
    assert r is out and np.all((v >= 2) & (v <= 3))
    assert mx.nd.random.normal(shape=(2, 2), out=out) is out
    with pytest.raises(ValueError, match=r'out has shape \(2, 2\).*\(3, 3\)'):
        mx.nd.random.uniform(shape=(3, 3), out=out)
    with pytest.raises(TypeError, match='out has dtype float64 but dtype=float32'):
        mx.nd.random.uniform(dtype='float32', out=out)
    with pytest.raises(TypeError, match='out must have dtype'):
        mx.nd.random.uniform(out=mx.nd.zeros((2,), dtype='int32'))
    with pytest.raises(TypeError, match='out must be an NDArray'):
        mx.nd.random.uniform(out=np.zeros(2))


def test_ndarray_parameters():
    mx.random.seed(0)
    loc = mx.nd.array([[0.0, 100.0], [-50.0, 7.0]])
    scale = mx.nd.array([[1.0, 0.1], [2.0, 0.5]])
    a = mx.nd.random.normal(loc, scale, shape=4000)
    assert a.shape == (2, 2, 4000)
    v = a.asnumpy()
    assert np.allclose(v.mean(axis=-1), loc.asnumpy(), atol=0.1)
    assert np.allclose(v.std(axis=-1), scale.asnumpy(), rtol=0.05)
    b = mx.nd.random.uniform(mx.nd.array([0.0, 5.0]), mx.nd.array([1.0, 6.0]))
    assert b.shape == (2,)
    bv = b.asnumpy()
    assert 0 <= bv[0] <= 1 and 5 <= bv[1] <= 6
    out = mx.nd.zeros((2, 3))
    assert mx.nd.sample_uniform(mx.nd.zeros(2), mx.nd.ones(2), shape=3, out=out) is out
    g = mx.nd.sample_gamma(mx.nd.array([1.0, 9.0]), mx.nd.array([1.0, 1.0]), shape=20000)
    assert np.allclose(g.asnumpy().mean(axis=1), [1, 9], rtol=0.05)
    lo = mx.nd.array([0, 10], dtype='float64')      # out may be a parameter (in place)
    assert mx.nd.random.uniform(lo, lo + 1, out=lo) is lo
    lv = lo.asnumpy()
    assert 0 <= lv[0] <= 1 and 10 <= lv[1] <= 11 and lv[0] not in (0, 1)
    with pytest.raises(TypeError, match='all numbers or all NDArrays'):
        mx.nd.random.uniform(mx.nd.zeros(2), 1)
    with pytest.raises(ValueError, match=r'one shape.*low \(2,\) and high \(3,\)'):
        mx.nd.random.uniform(mx.nd.zeros(2), mx.nd.ones(3))
    with pytest.raises(TypeError, match='sample_uniform: low must be an NDArray, got int'):
        mx.nd.sample_uniform(0, 1)


def test_invalid_ndarray_parameters_fail_at_the_wait():
    bad = mx.nd.random.uniform(mx.nd.array([0.0, 2.0]), mx.nd.array([1.0, 1.0]), shape=2)
    with pytest.raises(ValueError, match='uniform: low must be less than or equal'):
        bad.asnumpy()
    ok = mx.nd.random.uniform(shape=2)                         # the engine goes on
    assert ok.asnumpy().shape == (2,)


@pytest.mark.parametrize('call,exc,pattern', [
    (lambda: mx.nd.random.uniform(2, 1), ValueError,
     'uniform: low must be less than or equal to high, got low=2, high=1'),
    (lambda: mx.nd.random.uniform(0, float('inf')), ValueError, 'high must be finite'),
    (lambda: mx.nd.random.normal(0, 0), ValueError, 'scale must be positive, got scale=0'),
    (lambda: mx.nd.random.normal(0, -1), ValueError, 'scale must be positive'),
    (lambda: mx.nd.random.exponential(-1), ValueError, 'scale must be positive'),
    (lambda: mx.nd.random.gamma(0, 1), ValueError, 'alpha must be positive'),
    (lambda: mx.nd.random.poisson(-1), ValueError, 'lam must be non-negative'),
    (lambda: mx.nd.random.negative_binomial(2, 1.5), ValueError, r'p must be in \(0, 1\]'),
    (lambda: mx.nd.random.randint(5, 5), ValueError,
     'randint: low must be less than high, got low=5, high=5'),
    (lambda: mx.nd.random.randint(0.5, 3), TypeError, 'randint: low must be an integer'),
    (lambda: mx.nd.random.randint(0, 2 ** 40), ValueError, "does not fit in int32"),
    (lambda: mx.nd.random.randint(0, 5, dtype='float32'), TypeError,
     'randint: dtype must be one of int32, int64, got float32'),
    (lambda: mx.nd.random.uniform(dtype='int32'), TypeError,
     'uniform: dtype must be one of float16, float32, float64, got int32'),
    (lambda: mx.nd.random.uniform(dtype='complex64'), TypeError, 'unsupported dtype'),
    (lambda: mx.nd.random.uniform(shape=2.5), TypeError, 'uniform: shape must be an int'),
    (lambda: mx.nd.random.uniform(shape=(2, -1)), ValueError, 'negative sizes'),
    (lambda: mx.nd.random.uniform(shape=()), ValueError, 'at least one dimension'),
    (lambda: mx.nd.random.uniform('a', 1), TypeError, 'all numbers or all NDArrays'),
    (lambda: mx.nd.random.uniform(shape=2, foo=1), TypeError, r"unexpected keyword.*'foo'"),
    (lambda: mx.nd.random.uniform(shape=2, ctx=mx.gpu(0)), mx.MXNetError, 'no GPU support'),
    (lambda: mx.nd.random.shuffle(np.zeros(3)), TypeError, 'shuffle: data must be an NDArray'),
    (lambda: mx.nd.random.shuffle(mx.nd.zeros(3), out=mx.nd.zeros(4)), ValueError,
     'shuffle: out has shape'),
    (lambda: mx.nd.random_exponential(lam=0), ValueError, 'lam must be positive'),
])
def test_argument_errors_raise_at_the_call(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_namespaces_and_aliases():
    assert mx.random.uniform is mx.nd.random.uniform
    assert mx.random.normal is mx.nd.random.normal
    assert mx.random.randint is mx.nd.random.randint
    assert mx.random.shuffle is mx.nd.random.shuffle
    mx.random.seed(9)
    a = mx.nd.random_uniform(0, 1, shape=(5,)).asnumpy()
    mx.random.seed(9)
    assert np.array_equal(a, mx.random.uniform(0, 1, shape=(5,)).asnumpy())
    mx.random.seed(9)
    b = mx.nd.random_normal(1, 2, shape=(5,)).asnumpy()
    mx.random.seed(9)
    assert np.array_equal(b, mx.nd.random.normal(1, 2, shape=5).asnumpy())
    assert mx.nd.random_randint(0, 3, shape=2).dtype == np.int32
    e = mx.nd.random_exponential(lam=4.0, shape=20000).asnumpy()
    assert abs(e.mean() - 0.25) < 0.01


def test_push_random_for_other_ops():
    """push_random serves ops such as Dropout: ordered with the samplers, seeded."""
    from mxcy.ndarray.random import push_random

    def masked(x):
        out = mx.nd.zeros(x.shape)
        push_random(lambda gen, src, dst: np.multiply(src, gen.random(src.shape) < 0.5,
                                                      out=dst, casting='unsafe'),
                    [x], [out], 'dropout_like')
        return out
    x = mx.nd.ones((1000,))
    mx.random.seed(11)
    m1, u1 = masked(x).asnumpy(), mx.nd.random.uniform(shape=3).asnumpy()
    mx.random.seed(11)
    m2, u2 = masked(x).asnumpy(), mx.nd.random.uniform(shape=3).asnumpy()
    assert np.array_equal(m1, m2) and np.array_equal(u1, u2)
    assert set(np.unique(m1).tolist()) == {0.0, 1.0} and 400 < m1.sum() < 600
