"""Process life cycle: interpreter exit, fork, multiprocessing, environment variables.

Every scenario runs in a fresh interpreter with a timeout, so a hang fails the test
instead of stalling the suite:
* exit with pending ops (a slow Python op, ops queued behind it, failed ops never
  waited on, a daemon thread still pushing) returns 0 and runs what was pending;
* ``os.fork()`` after engine use, with an op in flight: the child sees the finished
  value, computes (elementwise, GEMM, Python ops) and exits 0; the parent goes on;
* multiprocessing 'fork', 'spawn' and 'forkserver' children compute with mx.nd and
  return a value; a ``Pool(2).map`` (DataLoader-like) works;
* MXCY_ENGINE_TYPE, MXCY_CPU_WORKER_NTHREADS, MXCY_ENGINE_MAX_PENDING (and MXNet's
  names) are honoured, a bad value fails at import naming the variable, and
  workers x BLAS threads never exceed the cores this process may use.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

TIMEOUT = 60
ENGINE_ENV = ('MXCY_ENGINE_TYPE', 'MXNET_ENGINE_TYPE', 'MXCY_CPU_WORKER_NTHREADS',
              'MXNET_CPU_WORKER_NTHREADS', 'MXCY_ENGINE_MAX_PENDING')


def run_python(tmp_path, code, env=None, args=()):
    """Run `code` as a script file (spawn children re-import it) with a clean engine env."""
    script = tmp_path / 'scenario.py'
    script.write_text(textwrap.dedent(code))
    full_env = {k: v for k, v in os.environ.items() if k not in ENGINE_ENV}
    full_env.update(env or {})
    return subprocess.run([sys.executable, str(script), *args], env=full_env, check=False,
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)


def assert_clean(proc):
    assert proc.returncode == 0, f'exit code {proc.returncode}\n{proc.stderr}'
    for word in ('Fatal Python error', 'Segmentation fault', 'Traceback'):
        assert word not in proc.stderr, proc.stderr


# ---------------------------------------------------------------- exit
EXIT_WITH_PENDING = '''
    import threading
    import numpy as np
    import mxcy as mx

    a = mx.nd.zeros((4,))

    def slow(out):
        threading.Event().wait(0.3)
        out[...] = 1
        print('slow op ran', flush=True)
    mx.nd.push_numpy(slow, [], [a], 'slow')
    b = a + 1                                   # queued behind the slow op
    for _ in range(200):
        b += 1
    mx.nd.push_numpy(lambda x, out: print('last op saw', x[0], flush=True), [b],
                     [mx.nd.empty((1,))], 'last')
    c = mx.nd.zeros((2,))
    mx.nd.push_numpy(lambda out: 1 / 0, [], [c], 'failed_never_waited')
    d = mx.nd.array([1, 2], dtype='int32') / mx.nd.zeros((2,), dtype='int32')
    e = d + 1
    print('exiting', flush=True)
'''


@pytest.mark.parametrize('engine', ['ThreadedEngine', 'NaiveEngine'])
def test_exit_with_pending_and_failed_ops(tmp_path, engine):
    proc = run_python(tmp_path, EXIT_WITH_PENDING, {'MXCY_ENGINE_TYPE': engine})
    assert_clean(proc)
    lines = proc.stdout.split('\n')
    assert 'slow op ran' in lines and 'last op saw 202.0' in lines
    if engine == 'ThreadedEngine':
        assert lines.index('exiting') < lines.index('slow op ran')


def test_exit_while_a_daemon_thread_pushes(tmp_path):
    # the pusher pauses between pushes: a pusher that never pauses can keep the exit
    # waiting for tens of seconds (engine bug, see test_wait_all_waits_only_for_ops_pushed_
    # before_it in test_engine_contract.py)
    code = '''
        import threading
        import mxcy as mx

        started = threading.Event()
        pause = threading.Event()

        def pusher():
            x = mx.nd.zeros((16,))
            while True:
                x += 1
                mx.engine.push(lambda: None, writes=[x])
                started.set()
                pause.wait(0.001)
        threading.Thread(target=pusher, daemon=True).start()
        assert started.wait(30)
        print('exiting', flush=True)
    '''
    proc = run_python(tmp_path, code)
    assert proc.returncode == 0, proc.stderr
    assert 'Fatal Python error' not in proc.stderr and 'Segmentation' not in proc.stderr


def test_sys_exit_from_worker_op_is_an_error_not_an_exit(tmp_path):
    code = '''
        import sys
        import mxcy as mx

        v = mx.engine.new_var()
        mx.engine.push(lambda: sys.exit(3), writes=[v], name='exits')
        try:
            mx.engine.wait(v)
        except SystemExit as exc:
            print('caught', exc.code, exc.mxcy_op_name, flush=True)
        print((mx.nd.ones((2,)) * 2).asnumpy().tolist(), flush=True)
    '''
    proc = run_python(tmp_path, code)
    assert proc.returncode == 0, proc.stderr
    assert 'caught 3 exits' in proc.stdout and '[2.0, 2.0]' in proc.stdout


# ---------------------------------------------------------------- fork
FORK = '''
    import os
    import threading
    import traceback
    import numpy as np
    import mxcy as mx
    from mxcy import _ndarray

    x = mx.nd.ones((100,)) * 3
    x.wait_to_read()
    g = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096
    ga = mx.nd.array(g)
    c = mx.nd.empty((64, 64))
    _ndarray.gemm(ga, ga, c, 64, 64, 64)        # BLAS used in the parent before the fork
    y = mx.nd.zeros((10,))

    def slow(out):
        threading.Event().wait(0.3)
        out[...] = 42
    mx.nd.push_numpy(slow, [], [y], 'slow')     # in flight when fork is called

    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            assert (y.asnumpy() == 42).all(), y.asnumpy()     # the fork waited for it
            z = (x + 1) * 2
            assert (z.asnumpy() == 8).all()
            w = mx.nd.empty((100,))
            mx.nd.push_numpy(lambda s, o: np.add(s, 1, out=o), [x], [w], 'child_op')
            assert (w.asnumpy() == 4).all()
            c2 = mx.nd.empty((64, 64))
            _ndarray.gemm(ga, ga, c2, 64, 64, 64)
            np.testing.assert_allclose(c2.asnumpy(), g @ g, rtol=1e-5)
            mx.nd.waitall()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    else:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        np.testing.assert_allclose(c.asnumpy(), g @ g, rtol=1e-5)
        assert ((x * 5).asnumpy() == 15).all()
        assert (y.asnumpy() == 42).all()
        print('OK')
'''


@pytest.mark.parametrize('workers', ['1', '2'])
def test_fork_after_engine_use(tmp_path, workers):
    proc = run_python(tmp_path, FORK, {'MXCY_CPU_WORKER_NTHREADS': workers})
    assert_clean(proc)
    assert proc.stdout.strip() == 'OK'


MULTIPROCESSING = '''
    import multiprocessing as mp
    import sys
    import numpy as np
    import mxcy as mx

    def work(k):
        a = mx.nd.arange(10) * k
        b = a + mx.nd.ones((10,))
        b += 1
        return float(b.asnumpy().sum())

    def expected(k):
        return float((np.arange(10) * k + 2).sum())

    if __name__ == '__main__':
        method = sys.argv[1]
        parent = mx.nd.ones((50,)) * 2          # the parent has used the engine
        pending = parent + 1                    # and may have ops in flight
        ctx = mp.get_context(method)
        with ctx.Pool(1) as pool:
            assert pool.apply_async(work, (3,)).get(timeout=50) == expected(3)
        if method == 'fork':                    # DataLoader-like: a pool of 2 mapping
            with ctx.Pool(2) as pool:
                got = pool.map(work, range(8))
            assert got == [expected(k) for k in range(8)], got
        assert (pending.asnumpy() == 3).all()
        assert work(5) == expected(5)
        print('OK')
'''


@pytest.mark.parametrize('method', ['fork', 'spawn', 'forkserver'])
def test_multiprocessing_start_methods(tmp_path, method):
    proc = run_python(tmp_path, MULTIPROCESSING, args=[method])
    assert_clean(proc)
    assert proc.stdout.strip() == 'OK'


# ---------------------------------------------------------------- environment
REPORT = '''
    import json
    import os
    import mxcy as mx

    (mx.nd.ones((4,)) + 1).wait_to_read()
    mx.engine.push(lambda: None, writes=[mx.engine.new_var()])
    mx.nd.waitall()
    report = {'engine_type': mx.engine.engine_type(), 'num_workers': mx.engine.num_workers(),
              'max_pending': mx.engine.max_pending(), 'blas': mx.engine.blas_threads(),
              'cores': len(os.sched_getaffinity(0)), 'stats': mx.engine.stats()}
    try:
        from threadpoolctl import threadpool_info
        report['scipy_blas'] = [i['num_threads'] for i in threadpool_info()
                                if '/scipy.libs/' in i['filepath'] and i['user_api'] == 'blas']
    except ImportError:
        report['scipy_blas'] = None
    print(json.dumps(report))
'''


def engine_report(tmp_path, env):
    proc = run_python(tmp_path, REPORT, env)
    assert_clean(proc)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_env_engine_type_workers_and_max_pending(tmp_path):
    rep = engine_report(tmp_path, {'MXCY_ENGINE_TYPE': 'NaiveEngine',
                                   'MXCY_CPU_WORKER_NTHREADS': '3',
                                   'MXCY_ENGINE_MAX_PENDING': '100'})
    assert rep['engine_type'] == 'NaiveEngine' and rep['stats']['engine_type'] == 'NaiveEngine'
    assert rep['num_workers'] == 3 and rep['max_pending'] == 100
    rep = engine_report(tmp_path, {'MXCY_ENGINE_TYPE': 'ThreadedEngine',
                                   'MXCY_CPU_WORKER_NTHREADS': '3'})
    assert rep['engine_type'] == 'ThreadedEngine'
    assert rep['num_workers'] == 3 and rep['stats']['workers'] == 3


def test_mxnet_env_names_are_honoured(tmp_path):
    rep = engine_report(tmp_path, {'MXNET_ENGINE_TYPE': 'NaiveEngine',
                                   'MXNET_CPU_WORKER_NTHREADS': '1'})
    assert rep['engine_type'] == 'NaiveEngine' and rep['num_workers'] == 1


def test_default_threads_do_not_oversubscribe(tmp_path):
    cores = len(os.sched_getaffinity(0))
    for env in ({}, {'MXCY_CPU_WORKER_NTHREADS': '1'}):
        rep = engine_report(tmp_path, env)
        assert rep['cores'] == cores
        assert rep['num_workers'] == int(env.get('MXCY_CPU_WORKER_NTHREADS', cores))
        assert rep['blas'] * rep['num_workers'] <= cores
        assert rep['blas'] == max(1, cores // rep['num_workers'])
        if rep['scipy_blas']:                   # the BLAS our GEMMs call is really capped
            assert rep['scipy_blas'] == [rep['blas']]
    assert rep['blas'] == cores                  # one worker may use every core for BLAS


def test_runtime_setter_rebalances_blas(tmp_path):
    code = '''
        import os
        import mxcy as mx
        from threadpoolctl import threadpool_info
        cores = len(os.sched_getaffinity(0))
        for n in (1, 2, cores, 2 * cores):
            mx.engine.set_num_workers(n)
            assert mx.engine.num_workers() == n
            assert mx.engine.blas_threads() == max(1, cores // n)
            assert mx.engine.blas_threads() * min(n, cores) <= cores
            scipy_blas = [i['num_threads'] for i in threadpool_info()
                          if '/scipy.libs/' in i['filepath'] and i['user_api'] == 'blas']
            assert scipy_blas in ([], [mx.engine.blas_threads()]), (n, scipy_blas)
        print('OK')
    '''
    proc = run_python(tmp_path, code)
    assert_clean(proc)


def test_default_workers_follow_cpu_affinity(tmp_path):
    code = '''
        import os
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        import mxcy as mx
        assert mx.engine.num_workers() == 1, mx.engine.num_workers()
        assert mx.engine.blas_threads() == 1
        print('OK')
    '''
    assert_clean(run_python(tmp_path, code))


@pytest.mark.parametrize('name,value', [
    ('MXCY_ENGINE_TYPE', 'TurboEngine'),
    ('MXCY_CPU_WORKER_NTHREADS', '0'),
    ('MXCY_CPU_WORKER_NTHREADS', '100000'),
    ('MXCY_CPU_WORKER_NTHREADS', 'four'),
    ('MXCY_ENGINE_MAX_PENDING', 'lots'),
    ('MXCY_ENGINE_MAX_PENDING', '0'),
    ('MXCY_ENGINE_DEBUG', 'yes'),
    ('MXCY_MEMORY_POOL', 'off'),
])
def test_bad_env_value_fails_at_import_naming_the_variable(tmp_path, name, value):
    proc = run_python(tmp_path, 'import mxcy\n', {name: value})
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith('ValueError') and name in last and value in last, proc.stderr
