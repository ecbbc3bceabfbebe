"""dist_sync with two contexts per rank: ``mpirun -np 2`` ranks at batch 8 on
``[cpu(0), cpu(1)]`` equal one process on one context at batch 16 (both ranks' batches)."""
import importlib.util
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import mxcy as mx

pytest.importorskip('mpi4py')

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'dist_scripts',
                      'module_two_ctx.py')


def _mpirun():
    local = os.path.join(os.path.dirname(sys.executable), 'mpirun')
    return local if os.path.exists(local) else shutil.which('mpirun')


def _script():
    spec = importlib.util.spec_from_file_location('module_two_ctx', SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(_mpirun() is None, reason='mpirun is not installed')
def test_two_ranks_two_contexts_equal_one_process(tmp_path):
    flags = ['--oversubscribe']
    if hasattr(os, 'geteuid') and os.geteuid() == 0:
        flags.insert(0, '--allow-run-as-root')
    env = {k: v for k, v in os.environ.items()
           if '_MCA_' in k or not k.startswith(('OMPI_', 'PMIX_', 'PMI_', 'PRTE_'))}
    env['MXCY_KV_TIMEOUT'] = '60'
    proc = subprocess.run([_mpirun(), *flags, '-np', '2', sys.executable, SCRIPT,
                           str(tmp_path)], capture_output=True, text=True, timeout=150,
                          env=env, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    ranks = [dict(np.load(tmp_path / f'rank{r}.npz')) for r in range(2)]
    job = _script()
    mod = mx.mod.Module(job.mlp())
    mod.bind([('data', (16, 5))], [('softmax_label', (16,))])
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in job.start_weights().items()})
    mod.init_optimizer(kvstore='local', optimizer='sgd', optimizer_params=job.OPT)
    for (x0, y0), (x1, y1) in zip(job.rank_batches(0), job.rank_batches(1)):
        mod.forward_backward(mx.io.DataBatch([mx.nd.array(np.concatenate([x0, x1]))],
                                             [mx.nd.array(np.concatenate([y0, y1]))]))
        mod.update()
    ref = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    for name, value in ref.items():
        np.testing.assert_array_equal(ranks[1][name], ranks[0][name])
        np.testing.assert_allclose(ranks[0][name], value, rtol=1e-5, atol=1e-6, err_msg=name)
        assert np.abs(value - job.start_weights()[name]).max() > 1e-3
