"""Bulking: small C kernels pushed by one thread grouped into one engine op.

Pinned down: ``set_bulk_size(n)`` and ``bulk(n)`` return/restore the previous size, per
thread; results are identical with bulking on and off; a wait, a Python op or leaving
the scope flushes the group so values are visible and ordered; ``stats()['pushed']``
counts fewer engine ops; an error inside a group is raised at the next wait and carried
only by what the failed kernel (and the kernels reading its result) write, as without
bulking; NaiveEngine ignores bulking and gives the same values.
"""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import mxcy as mx
from mxcy import _ndarray, _ops

B = _ops.BINARY_OPS
JOIN_TIMEOUT = 60


def test_set_bulk_size_returns_the_previous_size():
    assert mx.engine.set_bulk_size(0) == mx.engine.bulk_size()
    assert mx.engine.set_bulk_size(8) == 0
    assert mx.engine.bulk_size() == 8
    assert mx.engine.set_bulk_size(32) == 8
    with mx.engine.bulk(4):
        assert mx.engine.bulk_size() == 4
        with mx.engine.bulk(0):
            assert mx.engine.bulk_size() == 0
        assert mx.engine.bulk_size() == 4
    assert mx.engine.set_bulk_size(0) == 32
    with pytest.raises(ValueError, match='bulk size'):
        mx.engine.set_bulk_size(-1)
    assert mx.engine.bulk_size() == 0


def test_bulk_scope_restores_the_size_after_an_exception():
    mx.engine.set_bulk_size(0)
    with pytest.raises(KeyError), mx.engine.bulk(16):
        raise KeyError('inside')
    assert mx.engine.bulk_size() == 0


def test_bulk_size_is_per_thread():
    seen = []
    with mx.engine.bulk(16):
        t = threading.Thread(target=lambda: seen.append(mx.engine.bulk_size()))
        t.start()
        t.join(JOIN_TIMEOUT)
        assert mx.engine.bulk_size() == 16
    assert seen == [0]


def small_op_sequence():
    """200 small in-place ops on four float32 arrays; returns them (not waited on)."""
    rng = np.random.default_rng(5)
    arrays = [mx.nd.array(rng.standard_normal(32)) for _ in range(4)]
    codes = [B['add'], B['subtract'], B['multiply'], B['maximum'], B['minimum']]
    for _ in range(200):
        i, j, k = rng.integers(4, size=3)
        _ndarray.binary(arrays[i], arrays[j], int(rng.choice(codes)), out=arrays[k])
        _ndarray.binary(arrays[k], 0.5, B['multiply'], out=arrays[k])
        arrays[int(i)][:] = arrays[int(i)] + 0.25 if rng.random() < 0.1 else arrays[int(i)]
    return arrays


def test_results_identical_with_and_without_bulking(engine_type):
    expected = [a.asnumpy() for a in small_op_sequence()]
    for size in (2, 7, 64):
        with mx.engine.bulk(size):
            got = [a.asnumpy() for a in small_op_sequence()]
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)


def test_wait_inside_the_scope_flushes():
    a = mx.nd.zeros((8,))
    with mx.engine.bulk(1000):
        for _ in range(3):
            a += 1
        np.testing.assert_array_equal(a.asnumpy(), np.full(8, 3, np.float32))
        b = mx.nd.empty((8,))
        _ndarray.binary(a, 2, B['multiply'], out=b)
        b.wait_to_read()
        np.testing.assert_array_equal(b._np_view(), np.full(8, 6, np.float32))
        a += 1
        mx.nd.waitall()
        np.testing.assert_array_equal(a._np_view(), np.full(8, 4, np.float32))


def test_python_op_flushes_and_keeps_order():
    a = mx.nd.zeros((4,))
    seen = []
    with mx.engine.bulk(1000):
        a += 1
        a += 1
        mx.engine.push(lambda: seen.append(float(a._np_view()[0])), reads=[a])
        a += 1
    np.testing.assert_array_equal(a.asnumpy(), np.full(4, 3, np.float32))
    assert seen == [2.0]


def test_leaving_the_scope_flushes(threaded):
    a = mx.nd.zeros((4,))
    a.wait_to_read()
    with mx.engine.bulk(1000):
        for _ in range(5):
            a += 1
        assert mx.engine.var_state(a)['version'] == 1     # only the fill ran so far
    mx.engine.wait_all()
    assert mx.engine.var_state(a)['version'] == 2         # the group: one write
    np.testing.assert_array_equal(a.asnumpy(), np.full(4, 5, np.float32))


def pushed_for(n_ops, size):
    a = mx.nd.zeros((16,))
    one = mx.nd.ones((16,))
    mx.engine.wait_all()
    before = mx.engine.stats()['pushed']
    with mx.engine.bulk(size):
        for _ in range(n_ops):
            a += one
    a.wait_to_read()
    np.testing.assert_array_equal(a.asnumpy(), np.full(16, n_ops, np.float32))
    return mx.engine.stats()['pushed'] - before


def test_bulking_pushes_fewer_engine_ops(threaded):
    n = 256
    assert pushed_for(n, 0) >= n
    assert pushed_for(n, 32) <= n // 32 + 4


def test_naive_engine_ignores_bulking():
    mx.engine.set_engine_type('NaiveEngine')
    a = mx.nd.zeros((4,))
    with mx.engine.bulk(100):
        for _ in range(10):
            a += 1
        assert mx.engine.var_state(a)['version'] == 11    # each op ran at its push
    np.testing.assert_array_equal(a.asnumpy(), np.full(4, 10, np.float32))


def test_error_in_a_group_is_raised_at_the_next_wait(engine_type):
    x = mx.nd.array([4, 6], dtype='int32')
    zero = mx.nd.zeros((2,), dtype='int32')
    other = mx.nd.zeros((2,), dtype='int32')
    with mx.engine.bulk(64):
        y = mx.nd.zeros((2,), dtype='int32')
        _ndarray.binary(x, zero, B['divide'], out=y)   # fails inside the group
        other += 1                                      # written by the same group
        y += 1
    with pytest.raises(ZeroDivisionError) as info:
        y.asnumpy()
    assert info.value.mxcy_op_name
    # per-kernel semantics, as without bulking: `other` does not read the failed result
    np.testing.assert_array_equal(other.asnumpy(), [1, 1])
    with pytest.raises(ZeroDivisionError):
        mx.nd.waitall()
    mx.nd.waitall()
    with mx.engine.bulk(64):                            # bulking still works after
        z = mx.nd.array([6, 9], dtype='int32')
        _ndarray.binary(z, 3, B['divide'], out=z)
        z += 1
    np.testing.assert_array_equal(z.asnumpy(), [3, 4])


def test_bulking_threads_sharing_a_read_only_array(engine_type):
    shared = mx.nd.array(np.arange(16), dtype='int32')
    results, errors = {}, []

    def client(tid):
        try:
            x = mx.nd.zeros((16,), dtype='int32')
            with mx.engine.bulk(8):
                for _ in range(500):
                    x += shared
            results[tid] = x.asnumpy()
        except BaseException as exc:
            errors.append(exc)
    threads = [threading.Thread(target=client, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in threads) and errors == []
    for tid in range(6):
        np.testing.assert_array_equal(results[tid], np.arange(16) * 500)


FREED_ON_OTHER_THREAD = textwrap.dedent('''
    import threading
    import mxcy as mx

    a = mx.nd.ones((4096,))
    box = []

    def other():
        box.clear()                        # the last reference dies on this thread
        box.append(mx.nd.zeros((4096,)))
        box[0].wait_to_read()

    with mx.engine.bulk(1000):
        box.append(a + 1)                  # written by this thread's unflushed group
        t = threading.Thread(target=other)
        t.start()
        t.join()
    mx.nd.waitall()
    print('victim still zero:', bool((box[0].asnumpy() == 0).all()))
''')


def test_array_freed_on_another_thread_while_in_a_bulk_group(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != 'MXCY_ENGINE_TYPE'}
    proc = subprocess.run([sys.executable, '-c', FREED_ON_OTHER_THREAD], env=env, check=False,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, f'exit code {proc.returncode}'
    assert 'victim still zero: True' in proc.stdout


# ---------------------------------------------------------------- per-kernel errors
def test_an_earlier_error_poisons_only_the_kernels_that_read_it(engine_config):
    a = mx.nd.array([1, 2], dtype='int32')
    bad = a / mx.nd.zeros((2,), dtype='int32')
    c = mx.nd.ones((2,), dtype='int32')
    with mx.engine.bulk(4):
        d = bad + 1
        c += 1
    np.testing.assert_array_equal(c.asnumpy(), [2, 2])
    np.testing.assert_array_equal(c.asnumpy(), [2, 2])       # and it stays
    with pytest.raises(ZeroDivisionError):
        d.asnumpy()
    with pytest.raises(ZeroDivisionError):
        mx.nd.waitall()
    mx.nd.waitall()


def test_a_failing_member_in_the_middle_of_a_group(engine_config):
    x = mx.nd.array([4, 6], dtype='int32')
    zero = mx.nd.zeros((2,), dtype='int32')
    ok = mx.nd.ones((2,), dtype='int32')
    y = mx.nd.zeros((2,), dtype='int32')
    part = mx.nd.zeros((2, 2), dtype='int32')
    with mx.engine.bulk(16):
        ok += 1                                         # before the failure
        _ndarray.binary(x, zero, B['divide'], out=y)    # fails
        _ndarray.binary(x, zero, B['divide'], out=part[0])
        z = y + 1                                       # reads the failure: skipped
        twice = ok * 2                                  # independent, after it
        part[1] = 9                                     # another row: keeps part's error
        w = mx.nd.zeros((2,), dtype='int32')
        w[:] = y                                        # copies the failure
        y[:] = 3                                        # a whole write clears y
        u = y + 1                                       # and y is readable again
    np.testing.assert_array_equal(ok.asnumpy(), [2, 2])
    np.testing.assert_array_equal(twice.asnumpy(), [4, 4])
    np.testing.assert_array_equal(u.asnumpy(), [4, 4])
    np.testing.assert_array_equal(y.asnumpy(), [3, 3])
    for poisoned in (z, w, part):
        with pytest.raises(ZeroDivisionError) as info:
            poisoned.asnumpy()
        assert info.value.mxcy_op_name == 'binary'      # the kernel, not "bulk"
    with pytest.raises(ZeroDivisionError):              # each original error, first one
        mx.nd.waitall()
    mx.nd.waitall()
