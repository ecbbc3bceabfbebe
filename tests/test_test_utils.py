"""mx.test_utils helpers with MXNet 1.9.1's names: tolerances, comparisons, random data,
distribution checks, environment helpers, executor-level checks and local MNIST."""
import gzip
import os
import struct

import numpy as np
import pytest

import mxcy as mx
from mxcy import test_utils as tu


def test_tolerances_and_comparisons():
    assert tu.default_rtols()[np.dtype(np.float32)] == 1e-4
    assert tu.default_numeric_eps()[np.dtype(np.float64)] == 2.0 ** -14
    assert tu.get_rtol(None, np.float16) == 1e-2 and tu.get_atol(0.5) == 0.5
    assert tu.get_tols(np.ones(2, np.float16), np.ones(2), None, None) == (1e-2, 1e-1)
    a = np.array([1.0, np.nan, 3.0])
    tu.assert_almost_equal_ignore_nan(a, np.array([1.0, 2.0, 3.0]))
    tu.assert_almost_equal_with_err(np.arange(10.0), np.r_[np.arange(9.0), 100], etol=0.2)
    with pytest.raises(AssertionError, match="10.0000% of the elements differ"):
        tu.assert_almost_equal_with_err(np.arange(10.0), np.r_[np.arange(9.0), 100])
    tu.assert_exception(lambda x: 1 / x, ZeroDivisionError, 0)
    with pytest.raises(AssertionError, match="did not raise"):
        tu.assert_exception(lambda: None, ValueError)
    assert not tu.almost_equal(np.ones((2, 1)), np.ones((2, 2)), use_broadcast=False)
    np.testing.assert_allclose(tu.collapse_sum_like(np.ones((2, 3, 4)), (3, 1)), 8 * np.ones((3, 1)))
    assert tu.np_reduce(np.ones((2, 3, 4)), (0, 2), True, np.sum).shape == (1, 3, 1)


def test_arrays_symbols_and_matrices():
    x = mx.nd.ones((2, 3))
    assert tu.same_array(x, x[:]) and not tu.same_array(x, x.copy())
    a, b = mx.sym.var('a') + 1, mx.sym.var('b') + 1
    assert tu.same_symbol_structure(a, b) and not tu.same_symbol_structure(a, a * 2)
    assert tu.create_2d_tensor(2, 3).asnumpy().tolist() == [[0, 0, 0], [1, 1, 1]]
    assert tu.get_identity_mat_batch(3).shape == (2, 3, 3)
    m = tu.new_sym_matrix_with_real_eigvals_nd((2, 3, 3))
    np.testing.assert_allclose(m, np.swapaxes(m, 1, 2), atol=1e-10)
    q = tu.new_orthonormal_matrix_2d(4)
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-10)
    assert tu.random_arrays((2, 3)).dtype == np.float32 and len(tu.random_arrays((1,), (2,))) == 2
    assert tu.rand_ndarray((2, 2), distribution='normal').shape == (2, 2)
    assert 0 in {tu.rand_shape_nd(3, 1, allow_zero_size=True)[0] for _ in range(50)}


def test_distribution_checks():
    np.random.seed(0)
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: q, 5)
    assert buckets[0] == (0.0, 0.2) and probs == [0.2] * 5
    ps = tu.verify_generator(lambda n: np.random.uniform(size=n), buckets, probs, nsamples=20000)
    assert len(ps) == 5
    with pytest.raises(AssertionError, match="chi-square"):
        tu.verify_generator(lambda n: np.random.uniform(size=n) ** 2, buckets, probs,
                            nsamples=20000)
    assert tu.mean_check(lambda n: np.random.normal(1, 2, n), 1, 2, 100000)
    assert tu.var_check(lambda n: np.random.normal(1, 2, n), 2, 100000)


def test_environment_retry_and_gpu_answers(capfd):
    with tu.environment('MXCY_TEST_VAR', '7'):
        assert os.environ['MXCY_TEST_VAR'] == '7'
    assert 'MXCY_TEST_VAR' not in os.environ
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) == 3
    flaky()
    assert tu.list_gpus() == [] and tu.is_op_runnable() and not tu.has_tvm_ops()
    with tu.discard_stderr():
        os.write(2, b'hidden')
    assert 'hidden' not in capfd.readouterr().err


def test_executor_helpers():
    x = mx.sym.var('x')
    y = mx.sym.sum(x * x)
    exe = y.simple_bind(mx.cpu(), x=(3,))
    loc = {'x': np.array([1.0, 2.0, 3.0])}
    g = tu.numeric_grad(exe, loc, eps=1e-3, dtype=np.float64)
    np.testing.assert_allclose(g['x'], [2, 4, 6], rtol=1e-3)
    gt = tu.check_consistency(mx.sym.FullyConnected(x, num_hidden=4, name='fc'),
                              [{'ctx': mx.cpu(), 'x': (2, 3), 'type_dict': {'x': np.float64}},
                               {'ctx': mx.cpu(), 'x': (2, 3), 'type_dict': {'x': np.float32}}])
    assert gt['fc_output'].shape == (2, 4)
    assert tu.check_speed(y, x=(3,), N=2) > 0
    opt1, opt2 = mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.SGD(learning_rate=0.1)
    tu.compare_optimizer(opt1, opt2, (3, 2), np.float32)


def test_hybridize_consistency_and_dummy_iter():
    tu.check_gluon_hybridize_consistency(lambda: mx.gluon.nn.Dense(3),
                                         [mx.nd.ones((2, 4))])
    it = mx.io.NDArrayIter(np.arange(12.0).reshape(6, 2), batch_size=2)
    dummy = tu.DummyIter(it)
    assert dummy.next() is dummy.next()


def _write_idx(path, arr):
    with gzip.open(path, 'wb') as f:
        f.write(struct.pack('>HBB', 0, 8, arr.ndim) + struct.pack('>' + 'I' * arr.ndim,
                                                                 *arr.shape))
        f.write(arr.astype(np.uint8).tobytes())


def test_get_mnist_reads_local_idx(tmp_path, monkeypatch):
    data = tmp_path / 'data'
    data.mkdir()
    for name, arr in (('train-images-idx3-ubyte', np.zeros((3, 28, 28))),
                      ('train-labels-idx1-ubyte', np.arange(3)),
                      ('t10k-images-idx3-ubyte', np.full((2, 28, 28), 255)),
                      ('t10k-labels-idx1-ubyte', np.arange(2))):
        _write_idx(str(data / (name + '.gz')), arr)
    monkeypatch.setenv('MXNET_HOME', str(tmp_path))
    mnist = tu.get_mnist()
    assert mnist['train_data'].shape == (3, 1, 28, 28) and mnist['test_data'].max() == 1.0
    assert mnist['train_label'].tolist() == [0, 1, 2]
    with pytest.raises(mx.base.MXNetError, match="never unpickles"):
        tu.get_mnist_pkl()
