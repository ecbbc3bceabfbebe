"""The engine contract, run against every engine type (a dask-style contract mixin).

Each test takes the ``engine_type`` fixture, so it runs under both ThreadedEngine and
NaiveEngine; where the two differ on purpose (push returns before the op has run vs. after
it ran; priorities) the test says what each must do. Tests that freeze an op on an event
run under ThreadedEngine only: a frozen op would block NaiveEngine's pushing thread.
"""
import random
import subprocess
import sys
import threading
import textwrap
import time

import numpy as np
import pytest

import mxcy as mx
from mxcy import _ndarray, _ops

ADD = _ops.BINARY_OPS['add']
MUL = _ops.BINARY_OPS['multiply']
JOIN_TIMEOUT = 60
SUBPROCESS_TIMEOUT = 120


def is_threaded(engine_type):
    return engine_type == 'ThreadedEngine'


# ---------------------------------------------------------------- push is asynchronous
def test_push_returns_before_a_blocked_op_has_run(engine_type, gates):
    v = mx.engine.new_var()
    if not is_threaded(engine_type):
        ran = []
        mx.engine.push(lambda: ran.append(1), writes=[v])
        assert ran == [1]           # NaiveEngine runs the op inside push
        return
    gate = gates.push('blocked', writes=[v])
    assert gate.wait_started()
    assert not gate.finished.is_set() and not gate.timed_out
    behind = gates.push('behind', reads=[v])    # queued behind the frozen op: push returns
    assert mx.engine.var_state(v)['queue'] == [('r', 'behind')]
    assert not behind.started.is_set()
    gates.release_all()
    mx.engine.wait_all()
    assert gate.finished.is_set() and behind.finished.is_set()


def test_c_kernel_push_returns_before_it_runs(engine_type, gates):
    x = mx.nd.ones((64,))
    if not is_threaded(engine_type):
        y = x + 1
        assert mx.engine.var_state(y)['version'] == 1
        return
    gate = gates.push('hold_x', writes=[x])
    assert gate.wait_started()
    y = x + 1                       # queued behind the frozen writer of x
    assert mx.engine.var_state(x)['queue'] == [('r', 'binary')]
    assert mx.engine.var_state(y)['version'] == 0
    gate.release()
    np.testing.assert_array_equal(y.asnumpy(), np.full(64, 2, np.float32))


# ---------------------------------------------------------------- ordering
def test_raw_war_waw_order_is_recorded(engine_type, gates):
    v = mx.engine.new_var()
    log = []
    hold = None
    if is_threaded(engine_type):
        hold = gates.push('hold', writes=[v])     # everything below queues behind it
        assert hold.wait_started()
    plan = [('w1', 'w'), ('r1', 'r'), ('r2', 'r'), ('w2', 'w'), ('w3', 'w'), ('r3', 'r')]
    for name, kind in plan:
        deps = {'reads': [v]} if kind == 'r' else {'writes': [v]}
        mx.engine.push(lambda name=name: log.append(name), name=name, **deps)
    if hold is not None:
        hold.release()
    mx.engine.wait_all()
    assert log[0] == 'w1'                          # RAW: reads after the write
    assert sorted(log[1:3]) == ['r1', 'r2']        # the two reads in either order
    assert log[3:] == ['w2', 'w3', 'r3']           # WAR, WAW, RAW


def test_random_dependencies_follow_push_order(engine_type, gates):
    """600 random ops on 6 vars: every read sees the last write pushed before it (RAW),
    every write sees its predecessor's value (WAW) and no later write (WAR)."""
    rng = random.Random(1234)
    nvars = 6
    evars = [mx.engine.new_var() for _ in range(nvars)]
    cells = [None] * nvars          # id of the op that last wrote each var
    seen = {}
    expected = {}
    last_writer = [None] * nvars
    if is_threaded(engine_type):
        mx.engine.set_num_workers(4)
        hold = gates.push('hold_all', writes=evars)
        assert hold.wait_started()
    for op_id in range(600):
        reads = rng.sample(range(nvars), rng.randint(0, 3))
        writes = rng.sample(range(nvars), rng.randint(0, 2))
        order = sorted(set(reads) | set(writes))
        expected[op_id] = [last_writer[i] for i in order]
        for i in writes:
            last_writer[i] = op_id

        def op(op_id=op_id, order=order, writes=writes):
            seen[op_id] = [cells[i] for i in order]
            for i in writes:
                cells[i] = op_id
        mx.engine.push(op, reads=[evars[i] for i in reads], writes=[evars[i] for i in writes],
                       priority=rng.randint(-2, 2))
    gates.release_all()
    mx.engine.wait_all()
    assert seen == expected
    assert cells == last_writer


def test_wait_var_waits_only_for_that_vars_writers(engine_type, gates):
    a, b = mx.nd.zeros((4,)), mx.nd.zeros((4,))
    a += 1
    if not is_threaded(engine_type):
        mx.engine.push(lambda: None, writes=[b])
        np.testing.assert_array_equal(a.asnumpy(), np.ones(4, np.float32))
        return
    mx.engine.set_num_workers(3)
    hold_b = gates.push('hold_b', writes=[b])
    reader_a = gates.push('reader_a', reads=[a])    # a pending read is not waited for
    assert hold_b.wait_started() and reader_a.wait_started()
    mx.engine.wait(a)
    np.testing.assert_array_equal(a._np_view(), np.ones(4, np.float32))
    assert not hold_b.finished.is_set() and not hold_b.timed_out
    assert not reader_a.finished.is_set() and not reader_a.timed_out
    hold_b.release()
    b.wait_to_read()
    assert hold_b.finished.is_set()
    reader_a.release()


def test_wait_all_waits_for_everything(engine_type):
    done = []
    evars = [mx.engine.new_var() for _ in range(4)]

    def slow(i):
        threading.Event().wait(0.002)   # a little real work, GIL released
        done.append(i)
    for i in range(40):
        mx.engine.push(lambda i=i: slow(i), writes=[evars[i % 4]])
    arrays = [mx.nd.ones((100,)) * i for i in range(10)]
    mx.engine.wait_all()
    assert sorted(done) == list(range(40))
    assert all(mx.engine.var_state(a)['queue'] == [] for a in arrays)
    assert mx.engine.stats()['pending'] == 0


def wait_until_calling(thread, line, timeout=10):
    """Bounded poll until `thread` executes source line `line` (a call into C that
    blocks), plus a short margin for it to reach the blocking wait."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        frame = sys._current_frames().get(thread.ident)
        if frame is not None and frame.f_lineno == line:
            time.sleep(0.1)
            return True
        time.sleep(0.001)
    return False


def test_wait_all_waits_only_for_ops_pushed_before_it(threaded, gates):
    mx.engine.set_num_workers(3)
    before = gates.push('before', writes=[mx.engine.new_var()])
    assert before.wait_started()
    returned = threading.Event()

    def waiter():
        mx.engine.wait_all()
        returned.set()
    call_line = waiter.__code__.co_firstlineno + 1     # the wait_all line
    thread = threading.Thread(target=waiter)
    thread.start()
    assert wait_until_calling(thread, call_line)
    after = gates.push('after', writes=[mx.engine.new_var()])  # pushed during wait_all
    assert after.wait_started()
    before.release()
    assert before.wait_finished()
    returned_in_time = returned.wait(3)
    after.release()
    thread.join(JOIN_TIMEOUT)
    assert returned_in_time, 'wait_all also waited for an op pushed after it was called'


# ---------------------------------------------------------------- priorities
def test_priorities_order_ready_ops(engine_type, gates):
    mx.engine.set_num_workers(1)
    log = []
    priorities = [0, 5, -1, 5, 10, 0, -3, 10]
    hold = None
    if is_threaded(engine_type):
        hold = gates.push('hold_worker', writes=[mx.engine.new_var()])
        assert hold.wait_started()      # the only worker is busy: the rest are all ready
    for i, p in enumerate(priorities):
        mx.engine.push(lambda i=i: log.append(i), writes=[mx.engine.new_var()], priority=p)
    if hold is not None:
        hold.release()
    mx.engine.wait_all()
    if is_threaded(engine_type):
        expected = sorted(range(len(priorities)), key=lambda i: (-priorities[i], i))
    else:
        expected = list(range(len(priorities)))     # NaiveEngine runs each op at push
    assert log == expected


def test_priority_never_breaks_a_dependency(engine_type, gates):
    mx.engine.set_num_workers(1)
    v = mx.engine.new_var()
    log = []
    hold = None
    if is_threaded(engine_type):
        hold = gates.push('hold_worker', writes=[mx.engine.new_var()])
        assert hold.wait_started()
    mx.engine.push(lambda: log.append('low_write'), writes=[v], priority=-10)
    mx.engine.push(lambda: log.append('high_read'), reads=[v], priority=100)
    mx.engine.push(lambda: log.append('free'), writes=[mx.engine.new_var()], priority=50)
    if hold is not None:
        hold.release()
    mx.engine.wait_all()
    assert log.index('low_write') < log.index('high_read')


# ---------------------------------------------------------------- engine type
def test_set_engine_type(engine_type):
    assert mx.engine.engine_type() == engine_type
    assert mx.engine.stats()['engine_type'] == engine_type
    mx.engine.set_engine_type('ThreadedEnginePerDevice')     # MXNet's name is accepted
    assert mx.engine.engine_type() == 'ThreadedEngine'
    with pytest.raises(ValueError, match='NaiveEngine'):
        mx.engine.set_engine_type('TurboEngine')
    assert mx.engine.engine_type() == 'ThreadedEngine'


def test_switching_engine_type_waits_for_pending_ops(engine_type):
    v = mx.engine.new_var()
    done = []

    def slow():
        threading.Event().wait(0.05)
        done.append(1)
    mx.engine.push(slow, writes=[v])
    other = 'NaiveEngine' if is_threaded(engine_type) else 'ThreadedEngine'
    mx.engine.set_engine_type(other)
    assert done == [1]
    x = mx.nd.ones((3,)) * 4
    np.testing.assert_array_equal(x.asnumpy(), np.full(3, 4, np.float32))


# ---------------------------------------------------------------- workers
def test_set_num_workers(engine_type, gates):
    mx.engine.set_num_workers(3)
    assert mx.engine.num_workers() == 3
    for bad in (0, -1, 257):
        with pytest.raises(ValueError, match='worker'):
            mx.engine.set_num_workers(bad)
    assert mx.engine.num_workers() == 3
    if not is_threaded(engine_type):
        return
    # three frozen ops run at once: the pool really has three threads
    frozen = [gates.push(f'g{i}', writes=[mx.engine.new_var()]) for i in range(3)]
    assert all(g.wait_started() for g in frozen)
    assert mx.engine.stats()['workers'] == 3
    gates.release_all()
    mx.engine.wait_all()
    mx.engine.set_num_workers(1)
    gate = gates.push('one', writes=[mx.engine.new_var()])
    assert gate.wait_started()
    assert mx.engine.stats()['workers'] == 1
    gate.release()


def test_c_kernel_runs_beside_a_busy_worker(engine_type, gates):
    """Two independent GEMMs give right answers; under ThreadedEngine with 2 workers a
    GEMM completes while the other worker is frozen inside an op, so workers run C kernels
    side by side. (That two GEMMs overlap in time is measured by bench/bench_engine.py,
    figure gemm_parallel: there is no non-timing way to observe a kernel's start.)"""
    mx.engine.set_num_workers(2)
    rng = np.random.default_rng(0)
    n = 1024
    a_np = [rng.standard_normal((n, n), dtype=np.float32) for _ in range(2)]
    b_np = [rng.standard_normal((n, n), dtype=np.float32) for _ in range(2)]
    a = [mx.nd.array(x) for x in a_np]
    b = [mx.nd.array(x) for x in b_np]
    c = [mx.nd.empty((n, n)) for _ in range(2)]
    gate = None
    if is_threaded(engine_type):
        gate = gates.push('busy', writes=[mx.engine.new_var()])
        assert gate.wait_started()
    _ndarray.gemm(a[0], b[0], c[0], n, n, n)
    c[0].wait_to_read()
    if gate is not None:
        assert not gate.finished.is_set() and not gate.timed_out
        gate.release()
    _ndarray.gemm(a[1], b[1], c[1], n, n, n)
    for i in range(2):
        np.testing.assert_allclose(c[i].asnumpy(), a_np[i] @ b_np[i], rtol=1e-4, atol=1e-3)


# ---------------------------------------------------------------- many client threads
def test_push_from_many_threads(engine_type):
    """16 client threads, each with its own arrays, all reading shared arrays and all
    accumulating into one shared array; every value equals a sequential computation."""
    nthreads, steps = 16, 300
    shared = [mx.nd.array(np.arange(16) * (k + 1), dtype='int32') for k in range(3)]
    shared_np = [s.asnumpy() for s in shared]
    counter = mx.nd.zeros((16,), dtype='int32')
    inc = mx.nd.array(np.arange(16), dtype='int32')
    errors = []
    results = {}

    def client(tid):
        try:
            rng = random.Random(tid)
            x = mx.nd.full((16,), tid, dtype='int32')
            y = mx.nd.zeros((16,), dtype='int32')
            x_np = np.full(16, tid, np.int32)
            y_np = np.zeros(16, np.int32)
            for step in range(steps):
                k = rng.randrange(3)
                x += shared[k]
                x_np += shared_np[k]
                _ndarray.binary(x, 3, MUL, out=y)
                _ndarray.binary(y, shared[(k + 1) % 3], ADD, out=y)
                y_np = x_np * 3 + shared_np[(k + 1) % 3]
                counter.__iadd__(inc)       # one op reading and writing the shared array
                if step % 50 == 0:
                    np.testing.assert_array_equal(y.asnumpy(), y_np)
            results[tid] = (x.asnumpy(), x_np, y.asnumpy(), y_np)
        except BaseException as exc:    # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(t,)) for t in range(nthreads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in threads), 'client threads hung'
    assert errors == []
    for tid in range(nthreads):
        x, x_np, y, y_np = results[tid]
        np.testing.assert_array_equal(x, x_np)
        np.testing.assert_array_equal(y, y_np)
    np.testing.assert_array_equal(counter.asnumpy(), np.arange(16) * nthreads * steps)


# ---------------------------------------------------------------- memory
def test_rebinding_loop_reuses_pooled_memory(engine_type):
    x = mx.nd.zeros((1000,))        # 4000 bytes: the 4096-byte bucket
    mx.engine.wait_all()
    before = mx.engine.pool_stats()
    n = 2000
    for _ in range(n):
        x = x + 1
    np.testing.assert_array_equal(x.asnumpy(), np.full(1000, n, np.float32))
    after = mx.engine.pool_stats()
    misses = after['misses'] - before['misses']
    hits = after['hits'] - before['hits']
    assert hits + misses >= n
    assert misses <= 64, f'{misses} fresh allocations for {n} temporaries: memory not reused'
    assert after['cached'].get(4096, 0) <= 64


def test_push_from_inside_an_op_runs_after_it(engine_type):
    v, w = mx.engine.new_var(), mx.engine.new_var()
    log = []

    def outer():
        mx.engine.push(lambda: log.append('inner'), reads=[v], writes=[w], name='inner')
        log.append('outer')
    mx.engine.push(outer, writes=[v], name='outer')
    mx.engine.wait_all()        # counts the inner op: it is pushed before outer completes
    assert log == ['outer', 'inner']


# ---------------------------------------------------------------- backpressure
def test_backpressure_bounds_pending_ops(engine_type):
    limit = 64
    old = mx.engine.set_max_pending(limit)
    assert mx.engine.max_pending() == limit
    try:
        n = 100_000
        v = mx.engine.new_var()
        count = [0]
        peak = [0]
        stats = mx.engine.stats

        def op():
            count[0] += 1
            if count[0] % 8 == 0:
                peak[0] = max(peak[0], stats()['pending'])
        for _ in range(n):
            mx.engine.push(op, writes=[v])
        mx.engine.wait_all()
        assert count[0] == n
        assert peak[0] <= limit
        if is_threaded(engine_type):
            assert peak[0] > limit // 2     # the queue did fill: the limit was exercised
    finally:
        mx.engine.set_max_pending(old)
    assert mx.engine.max_pending() == old
    with pytest.raises(ValueError, match='max_pending'):
        mx.engine.set_max_pending(0)


def test_backpressure_bounds_memory_of_a_rebinding_loop(engine_type):
    old = mx.engine.set_max_pending(32)
    try:
        x = mx.nd.zeros((300,))         # 1200 bytes: the 2048-byte bucket
        mx.engine.wait_all()
        before = mx.engine.pool_stats()['misses']
        n = 20_000
        for _ in range(n):
            y = mx.nd.empty((300,))
            mx.nd.push_numpy(lambda src, out: np.add(src, 1, out=out), [x], [y], 'inc')
            x = y
        np.testing.assert_array_equal(x.asnumpy(), np.full(300, n, np.float32))
        misses = mx.engine.pool_stats()['misses'] - before
        assert misses <= 2_000, f'{misses} live buffers: the pending queue was not bounded'
    finally:
        mx.engine.set_max_pending(old)


def test_resizing_the_pool_while_another_thread_pushes(tmp_path):
    """set_num_workers racing with pushes from another thread: every op still runs and
    waitall returns. It hung two ways: an op left in the ready heap after the old workers
    left (nothing restarted them), and the join never ending while a thread kept the
    heap from emptying. Ops of 32K elements go to the workers (smaller ones may run
    inline on the pushing thread). In a subprocess, so a hang fails instead of stalling."""
    script = tmp_path / 'resize.py'
    script.write_text(textwrap.dedent('''
        import faulthandler
        import threading
        import numpy as np
        import mxcy as mx
        faulthandler.dump_traceback_later(%d, exit=True)
        for trial in range(20):
            a = mx.nd.zeros((1 << 15,))
            stop = threading.Event()
            counts = []
            def pusher():
                n = 0
                while not stop.is_set() or n < 200:
                    a[:] += 1
                    n += 1
                counts.append(n)
            t = threading.Thread(target=pusher)
            t.start()
            for n in (1, 3, 2, 8, 1, 2):
                mx.engine.set_num_workers(n)
            stop.set()
            t.join(60)
            assert not t.is_alive(), 'pusher stuck'
            mx.nd.waitall()
            assert mx.engine.stats()['pending'] == 0
            np.testing.assert_array_equal(a.asnumpy(), np.full(a.shape, counts[0]))
        print('ok')
    ''' % (SUBPROCESS_TIMEOUT - 10)))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=SUBPROCESS_TIMEOUT)
    assert proc.returncode == 0 and 'ok' in proc.stdout, proc.stderr[-2000:]
