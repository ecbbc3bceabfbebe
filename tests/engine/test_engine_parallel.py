"""Big kernels shared part by part with idle workers (mxcy/_engine_parallel.pxi), and the
engine's integrity checks.

* Many short shared kernels (a fused LSTM's per-step GEMMs, two parts each) with more
  workers than cores: a worker that saw a kernel joinable, then found its parts already
  claimed, once popped the empty ready heap — an op ran twice, the next one pushed was
  lost, and the process hung or crashed. The run must end cleanly with finite values.
* MXCY_ENGINE_DEBUG=1 (op and variable records never reused, so a stale reference is
  caught) and MXCY_MEMORY_POOL=0 (exact-size blocks, for memory checkers) change nothing
  in the results.

Each scenario runs in a fresh interpreter with a timeout: the integrity checks abort the
process, and a hang must fail the test rather than stall the suite.
"""
import os
import subprocess
import sys
import textwrap

TIMEOUT = 120

RNN_LOOP = """
    import time
    import numpy as np
    import mxcy as mx

    mx.engine.set_num_workers(4)          # more workers than cores: preemption widens races
    mx.engine.set_kernel_split(True)
    T, N, I, H, L = 16, 32, 64, 128, 2
    rnn = mx.sym.RNN(data=mx.sym.Variable('data'), parameters=mx.sym.Variable('params'),
                     state=mx.sym.Variable('state'), state_cell=mx.sym.Variable('cell'),
                     state_size=H, num_layers=L, mode='lstm', name='rnn')
    loss = mx.sym.MakeLoss(mx.sym.sum(rnn * rnn))
    nparam = 4 * H * (I + H + 2) + (L - 1) * 4 * H * (H + H + 2)
    ex = loss.simple_bind(mx.cpu(), data=(T, N, I), params=(nparam,), state=(L, N, H),
                          cell=(L, N, H))
    rng = np.random.default_rng(0)
    for a in ex.arg_dict.values():
        a[:] = rng.standard_normal(a.shape).astype(np.float32) * 0.1
    start, steps = time.time(), 0
    while steps < 40 or time.time() - start < SECONDS:
        ex.forward(is_train=True)
        ex.backward()
        ex.arg_dict['params'][:] -= 1e-4 * ex.grad_dict['params']
        steps += 1
        if steps % 10 == 0:
            mx.nd.waitall()
    assert np.isfinite(ex.outputs[0].asnumpy()).all()
    assert np.isfinite(ex.grad_dict['params'].asnumpy()).all()
    assert mx.engine.stats()['shared_kernels'] > 0
    print('steps', steps)
"""


def run_python(tmp_path, code, env=None):
    script = tmp_path / 'scenario.py'
    script.write_text(textwrap.dedent(code))
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, '-X', 'faulthandler', str(script)], env=full_env,
                          check=False, capture_output=True, text=True, timeout=TIMEOUT,
                          cwd=tmp_path)


def assert_clean(proc):
    assert proc.returncode == 0, f'exit code {proc.returncode}\n{proc.stderr[-3000:]}'
    assert 'internal error' not in proc.stderr, proc.stderr[-3000:]
    assert proc.stdout.startswith('steps'), proc.stdout


def test_many_short_shared_kernels_on_oversubscribed_workers(tmp_path):
    assert_clean(run_python(tmp_path, 'SECONDS = 5\n' + textwrap.dedent(RNN_LOOP)))


def test_debug_records_and_exact_blocks_change_no_result(tmp_path):
    code = 'SECONDS = 1\n' + textwrap.dedent(RNN_LOOP) + textwrap.dedent("""
        stats = mx.engine.pool_stats()
        assert stats['cached'] == {} and stats['hits'] == 0, stats
    """)
    assert_clean(run_python(tmp_path, code,
                            env={'MXCY_ENGINE_DEBUG': '1', 'MXCY_MEMORY_POOL': '0'}))
