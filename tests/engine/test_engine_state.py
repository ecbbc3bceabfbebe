"""The per-variable state machine, observed through ``mx.engine.var_state``.

Rules pinned down (ThreadedEngine, 4 workers, ops frozen on events):
* a read is granted at once unless a write is queued ahead of it;
* consecutive reads run together;
* a write waits for every earlier read and write;
* the reads queued behind a write are all released when it completes;
* a variable both read and written by one op is one write; duplicates count once;
* the version grows by one per completed write, never for a read.
"""
import time

import pytest

import mxcy as mx


@pytest.fixture(autouse=True)
def four_workers(threaded):
    mx.engine.set_num_workers(4)


def wait_for_state(v, **expected):
    """Poll var_state(v) until it shows `expected` (an op's Python body returns a moment
    before the engine releases its variables); bounded, returns the last state."""
    deadline = time.monotonic() + 10
    while True:
        state = mx.engine.var_state(v)
        if all(state[k] == want for k, want in expected.items()):
            return state
        if time.monotonic() > deadline:
            return state
        time.sleep(0.001)


def idle_state(version=0):
    return {'running_reads': 0, 'write_running': False, 'version': version,
            'has_error': False, 'queue': []}


def test_new_var_is_idle():
    assert mx.engine.var_state(mx.engine.new_var()) == idle_state()


def test_read_is_granted_at_once(gates):
    v = mx.engine.new_var()
    r1 = gates.push('r1', reads=[v])
    assert r1.wait_started()
    state = mx.engine.var_state(v)
    assert state['running_reads'] == 1 and not state['write_running']
    assert state['queue'] == []
    r1.release()
    assert r1.wait_finished()
    mx.engine.wait_all()
    assert mx.engine.var_state(v) == idle_state()


def test_consecutive_reads_run_together(gates):
    v = mx.engine.new_var()
    readers = [gates.push(f'r{i}', reads=[v]) for i in range(3)]
    # every reader has started while none was released: all three run at the same time
    assert all(r.wait_started() for r in readers)
    assert not any(r.finished.is_set() for r in readers)
    assert mx.engine.var_state(v)['running_reads'] == 3
    gates.release_all()
    mx.engine.wait_all()
    assert mx.engine.var_state(v) == idle_state()


def test_write_waits_for_earlier_reads(gates):
    v = mx.engine.new_var()
    r1 = gates.push('r1', reads=[v])
    r2 = gates.push('r2', reads=[v])
    assert r1.wait_started() and r2.wait_started()
    w = gates.push('w', writes=[v])
    assert mx.engine.var_state(v)['queue'] == [('w', 'w')]
    r1.release()
    state = wait_for_state(v, running_reads=1)
    assert state['running_reads'] == 1 and state['queue'] == [('w', 'w')]
    assert not w.started.is_set()
    r2.release()
    assert w.wait_started()
    state = mx.engine.var_state(v)
    assert state['write_running'] and state['running_reads'] == 0 and state['queue'] == []
    assert state['version'] == 0       # the write has not completed yet
    w.release()
    mx.engine.wait_all()
    assert mx.engine.var_state(v) == idle_state(version=1)


def test_write_waits_for_earlier_write(gates):
    v = mx.engine.new_var()
    w1 = gates.push('w1', writes=[v])
    assert w1.wait_started()
    w2 = gates.push('w2', writes=[v])
    assert mx.engine.var_state(v)['queue'] == [('w', 'w2')]
    w1.release()
    assert w2.wait_started()
    assert mx.engine.var_state(v)['version'] == 1
    assert mx.engine.var_state(v)['queue'] == []
    w2.release()
    mx.engine.wait_all()
    assert mx.engine.var_state(v)['version'] == 2


def test_reads_behind_a_write_are_released_together(gates):
    v = mx.engine.new_var()
    w = gates.push('w', writes=[v])
    assert w.wait_started()
    readers = [gates.push(f'r{i}', reads=[v]) for i in range(3)]
    state = mx.engine.var_state(v)
    assert state['queue'] == [('r', 'r0'), ('r', 'r1'), ('r', 'r2')]
    assert state['running_reads'] == 0 and state['write_running']
    w.release()
    assert all(r.wait_started() for r in readers)
    assert not any(r.finished.is_set() for r in readers)
    state = mx.engine.var_state(v)
    assert state['running_reads'] == 3 and state['queue'] == [] and state['version'] == 1


def test_read_queues_behind_a_queued_write(gates):
    """A read is not granted while a write is queued ahead, even though reads are running."""
    v = mx.engine.new_var()
    r1 = gates.push('r1', reads=[v])
    assert r1.wait_started()
    w = gates.push('w', writes=[v])
    r2 = gates.push('r2', reads=[v])
    r3 = gates.push('r3', reads=[v])
    w2 = gates.push('w2', writes=[v])
    assert mx.engine.var_state(v)['queue'] == [('w', 'w'), ('r', 'r2'), ('r', 'r3'),
                                                ('w', 'w2')]
    assert mx.engine.var_state(v)['running_reads'] == 1
    r1.release()
    assert w.wait_started()
    assert not r2.started.is_set() and not r3.started.is_set()
    w.release()
    # the run of reads is released, the write behind it stays queued
    assert r2.wait_started() and r3.wait_started()
    assert mx.engine.var_state(v)['queue'] == [('w', 'w2')]
    r2.release()
    r3.release()
    assert w2.wait_started()
    w2.release()
    mx.engine.wait_all()
    assert mx.engine.var_state(v) == idle_state(version=2)


def test_op_waits_for_all_its_variables(gates):
    a, b = mx.engine.new_var(), mx.engine.new_var()
    hold_a = gates.push('hold_a', writes=[a])
    assert hold_a.wait_started()
    op = gates.push('op', reads=[a], writes=[b])
    assert mx.engine.var_state(a)['queue'] == [('r', 'op')]
    assert not op.started.is_set()
    hold_a.release()
    assert op.wait_started()
    assert mx.engine.var_state(a)['running_reads'] == 1
    assert mx.engine.var_state(b)['write_running']
    op.release()
    mx.engine.wait_all()
    assert mx.engine.var_state(a) == idle_state(version=1)
    assert mx.engine.var_state(b) == idle_state(version=1)


def test_read_and_write_of_one_var_is_one_write(gates):
    v = mx.engine.new_var()
    r0 = gates.push('r0', reads=[v])
    assert r0.wait_started()
    rw = gates.push('rw', reads=[v], writes=[v])
    assert mx.engine.var_state(v)['queue'] == [('w', 'rw')]
    r0.release()
    assert rw.wait_started()
    state = mx.engine.var_state(v)
    assert state['write_running'] and state['running_reads'] == 0
    later = gates.push('later', reads=[v])
    assert mx.engine.var_state(v)['queue'] == [('r', 'later')]
    rw.release()
    assert later.wait_started()
    later.release()
    mx.engine.wait_all()
    assert mx.engine.var_state(v) == idle_state(version=1)


def test_duplicate_reads_count_once(gates):
    v = mx.engine.new_var()
    r = gates.push('r', reads=[v, v, v])
    assert r.wait_started()
    assert mx.engine.var_state(v)['running_reads'] == 1
    r.release()
    mx.engine.wait_all()
    assert mx.engine.var_state(v) == idle_state()


def test_duplicate_writes_count_once(gates):
    v = mx.engine.new_var()
    r0 = gates.push('r0', reads=[v])
    assert r0.wait_started()
    w = gates.push('w', reads=[v, v], writes=[v, v])
    assert mx.engine.var_state(v)['queue'] == [('w', 'w')]
    r0.release()
    assert w.wait_started()
    w.release()
    mx.engine.wait_all()
    assert mx.engine.var_state(v) == idle_state(version=1)


def test_ndarray_and_its_views_share_one_variable(gates):
    x = mx.nd.zeros((4, 3))
    row = x[1]
    block = x[1:3].reshape((6,))
    assert row._chunk is x._chunk and block._chunk is x._chunk
    w = gates.push('w', writes=[row])
    assert w.wait_started()
    gates.push('r', reads=[block])
    assert mx.engine.var_state(x)['queue'] == [('r', 'r')]
    gates.release_all()
    mx.engine.wait_all()


def test_version_counts_completed_writes_only():
    v = mx.engine.new_var()
    for _ in range(5):
        mx.engine.push(lambda: None, writes=[v])
    for _ in range(7):
        mx.engine.push(lambda: None, reads=[v])
        mx.engine.push_noop(reads=[v])
    mx.engine.push_noop(writes=[v])
    mx.engine.wait(v)
    mx.engine.wait_all()
    assert mx.engine.var_state(v) == idle_state(version=6)


def test_version_property_matches_state():
    x = mx.nd.zeros((3,))       # the fill is one write
    x += 1
    x += 1
    x.wait_to_read()
    assert x._chunk.version == 3
    assert mx.engine.var_state(x)['version'] == 3


def test_wait_does_not_count_as_a_write(gates):
    v = mx.engine.new_var()
    w = gates.push('w', writes=[v])
    assert w.wait_started()
    w.release()
    mx.engine.wait(v)
    mx.engine.wait(v)
    assert mx.engine.var_state(v) == idle_state(version=1)


def test_failed_write_marks_the_var():
    v = mx.engine.new_var()

    def fail():
        raise KeyError('state')
    mx.engine.push(fail, writes=[v])
    mx.engine.push(lambda: None, reads=[v])     # let it complete without consuming it
    with pytest.raises(KeyError):
        mx.engine.wait_all()
    state = mx.engine.var_state(v)
    assert state['has_error'] and state['version'] == 1
    with pytest.raises(KeyError):
        mx.engine.wait(v)
    assert not mx.engine.var_state(v)['has_error']
