"""Errors travel as data: fault injection in Python ops and in C kernels.

Pinned down, under both engine types: an op's exception never raises at push; it is
stored on the variables the op writes and raised, with its original type, message,
traceback and the op's name (``exc.__notes__``, ``exc.mxcy_op_name``), by the next wait
that observes it: ``asnumpy``/``wait_to_read`` of the array, of any array computed from
it (those ops are skipped and inherit the error), and ``waitall`` (once). Then the error
is cleared and the engine goes on working. A wait issued from inside an op raises
RuntimeError about a deadlock instead of hanging.
"""
import os
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest

import mxcy as mx

SUBPROCESS_TIMEOUT = 60


class InjectedError(Exception):
    """Raised by the test ops (a type the engine cannot have produced by itself)."""


def push_failing(outputs, name='failing_op', inputs=(), exc=None):
    """Push a Python op that raises `exc` (default InjectedError) instead of writing."""
    exc = exc if exc is not None else InjectedError(f'injected fault in {name}')

    def fail(*views):
        raise exc
    mx.nd.push_numpy(fail, list(inputs), list(outputs), name)
    return exc


def assert_names_op(exc, name):
    assert exc.mxcy_op_name == name
    assert any(name in note for note in getattr(exc, '__notes__', ()))


def int_division_by_zero():
    return mx.nd.array([1, 2], dtype='int32') / mx.nd.zeros((2,), dtype='int32')


# ---------------------------------------------------------------- where errors surface
def test_push_never_raises(engine_type):
    a = mx.nd.zeros((3,))
    assert push_failing([a]) is not None        # returned normally, even under Naive
    int_division_by_zero()
    mx.engine.push(lambda: 1 / 0, writes=[mx.engine.new_var()], name='zero')
    # the first error to complete is raised; independent ops may complete in any order
    with pytest.raises((InjectedError, ZeroDivisionError)):
        mx.nd.waitall()


def test_python_op_error_at_asnumpy(engine_type):
    a = mx.nd.zeros((3,))
    raised = push_failing([a], name='boom_op')
    with pytest.raises(InjectedError, match='injected fault in boom_op') as info:
        a.asnumpy()
    assert info.value is raised                  # the original object, type and message
    assert_names_op(info.value, 'boom_op')
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert 'fail' in frames                      # the op's own traceback is kept
    np.testing.assert_array_equal(a.asnumpy().shape, (3,))     # cleared: no second raise
    a[:] = 7
    np.testing.assert_array_equal((a + 1).asnumpy(), np.full(3, 8, np.float32))


def test_downstream_wait_inherits_the_error(engine_type):
    a = mx.nd.zeros((3,))
    raised = push_failing([a], name='boom_op')
    b = a + 1                               # C kernel reading a poisoned array: skipped
    c = mx.nd.empty((3,))
    ran = []
    mx.nd.push_numpy(lambda x, out: ran.append('consumer'), [b], [c], 'consumer')
    with pytest.raises(InjectedError) as info:
        c.wait_to_read()
    assert info.value is raised
    assert_names_op(info.value, 'boom_op')
    with pytest.raises(InjectedError):
        b.wait_to_read()
    assert ran == []
    with pytest.raises(InjectedError):
        a.asnumpy()


def test_waitall_raises_the_error(engine_type):
    a = mx.nd.zeros((3,))
    raised = push_failing([a], name='boom_op')
    a += 1
    with pytest.raises(InjectedError) as info:
        mx.nd.waitall()
    assert info.value is raised
    assert_names_op(info.value, 'boom_op')
    mx.nd.waitall()                         # raised once, then clean


def test_error_of_an_op_without_writes_reaches_waitall_only(engine_type):
    v = mx.engine.new_var()

    def fail():
        raise InjectedError('reader failed')
    mx.engine.push(fail, reads=[v], name='reader')
    mx.engine.wait(v)                       # v was not written by the failing op
    with pytest.raises(InjectedError, match='reader failed'):
        mx.engine.wait_all()


def test_kernel_error_is_raised_at_the_next_wait(engine_type):
    x = int_division_by_zero()
    y = x + 1                               # skipped, inherits
    with pytest.raises(ZeroDivisionError, match='division') as info:
        x.asnumpy()
    name = info.value.mxcy_op_name
    assert isinstance(name, str) and name
    assert_names_op(info.value, name)
    with pytest.raises(ZeroDivisionError) as info_y:
        y.wait_to_read()
    assert info_y.value is info.value
    with pytest.raises(ZeroDivisionError):
        mx.nd.waitall()
    mx.nd.waitall()
    x.asnumpy()                             # cleared
    z = mx.nd.array([6, 9], dtype='int32') / mx.nd.array([3, 3], dtype='int32')
    np.testing.assert_array_equal(z.asnumpy(), [2, 3])


def test_kernel_error_at_waitall_only(engine_type):
    int_division_by_zero()
    mx.nd.array([1], dtype='int32') % mx.nd.zeros((1,), dtype='int32')
    with pytest.raises(ZeroDivisionError):
        mx.nd.waitall()
    mx.nd.waitall()


def test_waitall_raises_the_first_error_once(engine_type):
    a = mx.nd.zeros((2,))
    first = push_failing([a], name='first', exc=KeyError('first'))
    push_failing([a], name='second', exc=IndexError('second'))  # write-only: it runs too
    with pytest.raises(KeyError) as info:
        mx.nd.waitall()
    assert info.value is first
    mx.nd.waitall()
    with pytest.raises(IndexError, match='second'):     # a's error is the latest write's
        a.asnumpy()
    mx.nd.waitall()
    third = push_failing([mx.nd.zeros((1,))], name='third')
    with pytest.raises(InjectedError) as info:          # a new error is not lost
        mx.nd.waitall()
    assert info.value is third


def test_many_errors_then_waitall_once(engine_type):
    arrays = [mx.nd.zeros((2,)) for _ in range(8)]
    for i in range(400):
        push_failing([arrays[i % 8]], name=f'fail{i}')
    with pytest.raises(InjectedError):
        mx.nd.waitall()
    mx.nd.waitall()
    for a in arrays:
        with pytest.raises(InjectedError):
            a.asnumpy()
        a.asnumpy()


# ---------------------------------------------------------------- poisoning
def test_multi_output_failure_poisons_every_output(engine_type):
    x = mx.nd.ones((4,))
    out1, out2 = mx.nd.zeros((4,)), mx.nd.zeros((4,))
    raised = push_failing([out1, out2], name='two_outputs', inputs=[x])
    side_effects = []
    for k, src in enumerate([out1, out2, out1]):
        dst = mx.nd.empty((4,))
        mx.nd.push_numpy(lambda s, d, k=k: side_effects.append(k), [src], [dst], f'use{k}')
    both = mx.nd.empty((4,))
    mx.nd.push_numpy(lambda s1, s2, d: side_effects.append('both'), [out1, out2], [both],
                     'use_both')
    mixed = out2 + out1                     # a C kernel consumer
    for arr in (out1, out2, both, mixed):
        with pytest.raises(InjectedError) as info:
            arr.wait_to_read()
        assert info.value is raised
        assert_names_op(info.value, 'two_outputs')
    assert side_effects == []
    np.testing.assert_array_equal(x.asnumpy(), np.ones(4, np.float32))   # inputs untouched


def test_write_only_op_clears_a_poisoned_array(engine_type):
    a = mx.nd.zeros((3,))
    push_failing([a])
    a[:] = 5                                # fill: writes a without reading it
    np.testing.assert_array_equal(a.asnumpy(), np.full(3, 5, np.float32))
    b = mx.nd.zeros((3,))
    push_failing([b])
    mx.nd.push_numpy(lambda out: out.fill(2), [], [b], 'python_fill')
    np.testing.assert_array_equal(b.asnumpy(), np.full(3, 2, np.float32))


def test_read_write_op_keeps_the_poison(engine_type):
    a = mx.nd.zeros((3,))
    raised = push_failing([a])
    a += 1                                  # reads a: skipped, a keeps the error
    ran = []
    mx.nd.push_numpy(lambda x, out: ran.append(1), [a], [a], 'in_place_python')
    with pytest.raises(InjectedError) as info:
        a.asnumpy()
    assert info.value is raised and ran == []


def test_error_on_a_view_poisons_the_whole_chunk(engine_type):
    base = mx.nd.zeros((4, 2))
    push_failing([base[1]], name='row_op')
    with pytest.raises(InjectedError):
        base[3].asnumpy()                   # another view of the same chunk


def test_same_exceptions_under_both_engines():
    def scenario():
        a = mx.nd.zeros((2,))
        push_failing([a], name='py_fault', exc=ValueError('bad value 42'))
        b = a * 2
        seen = []
        for make in (lambda: b, int_division_by_zero):     # one after the other
            try:
                make().asnumpy()
            except Exception as exc:
                seen.append((type(exc), str(exc), exc.mxcy_op_name, exc.__notes__))
        try:
            mx.nd.waitall()
        except Exception as exc:
            seen.append((type(exc), str(exc)))
        return seen
    results = {}
    for kind in ('ThreadedEngine', 'NaiveEngine'):
        mx.engine.set_engine_type(kind)
        results[kind] = scenario()
    assert results['ThreadedEngine'] == results['NaiveEngine']
    assert [r[0] for r in results['NaiveEngine']] == [ValueError, ZeroDivisionError,
                                                       ValueError]


# ---------------------------------------------------------------- waits inside ops
WAIT_INSIDE_OP = textwrap.dedent('''
    import numpy as np
    import mxcy as mx

    assert mx.engine.engine_type() == {engine!r}
    x = mx.nd.ones((3,))
    y = mx.nd.empty((3,))
    caught = []

    def op(src, out):
        for wait in (x.asnumpy, x.wait_to_read, mx.nd.waitall,
                     lambda: mx.engine.wait(x), lambda: mx.engine.set_num_workers(1)):
            try:
                wait()
                caught.append('no error')
            except RuntimeError as exc:
                caught.append(str(exc))
        out[...] = src * 2
    mx.nd.push_numpy(op, [x], [y], 'waiter')
    np.testing.assert_array_equal(y.asnumpy(), [2, 2, 2])
    assert len(caught) == 5 and all('deadlock' in c for c in caught), caught

    def uncaught():
        x.wait_to_read()
    v = mx.engine.new_var()
    mx.engine.push(uncaught, writes=[v], name='uncaught_wait')
    try:
        mx.engine.wait(v)
        raise SystemExit('the wait inside the op did not raise')
    except RuntimeError as exc:
        assert 'deadlock' in str(exc) and exc.mxcy_op_name == 'uncaught_wait'
    print('OK')
''')


@pytest.mark.parametrize('engine', ['ThreadedEngine', 'NaiveEngine'])
def test_wait_inside_an_op_raises_instead_of_hanging(engine):
    code = WAIT_INSIDE_OP.format(engine=engine)
    env = dict(os.environ, MXCY_ENGINE_TYPE=engine)
    proc = subprocess.run([sys.executable, '-c', code], env=env, check=False,
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith('OK')


# ---------------------------------------------------------------- partial writes (views)
def test_writing_one_slice_keeps_the_error_of_another(engine_config):
    a = mx.nd.array([[1, 2, 3], [4, 5, 6]], dtype='int32')
    row = a[0] / mx.nd.zeros((3,), dtype='int32')       # fails asynchronously
    x = mx.nd.zeros((4, 3), dtype='int32')
    x[1] = row                  # skipped: x[1] holds no result, x carries the error
    x[2] = 7                    # a successful write of another row clears nothing
    with pytest.raises(ZeroDivisionError):
        x.asnumpy()


def test_partial_writes_of_every_kind_keep_the_error(engine_config):
    x = mx.nd.zeros((4, 3))
    raised = push_failing([x[1]], name='row_op')
    x[2] = 7                                                  # fill of a row
    x[0] = mx.nd.ones((3,))                                   # copy into a row
    x[3] = mx.nd.ones((1,))                                   # broadcast (a Python op)
    x[2:4] += 1                                               # reads only rows 2..3
    mx.nd.push_numpy(lambda out: out.fill(3), [], [x[3]], 'python_row')
    with pytest.raises(InjectedError) as info:
        x.asnumpy()
    assert info.value is raised


def test_a_write_over_the_whole_array_still_clears(engine_config):
    x = mx.nd.zeros((4, 3))
    push_failing([x[1]], name='row_op')
    x[:] = 2                    # covers every row: the bad row is overwritten
    np.testing.assert_array_equal(x.asnumpy(), np.full((4, 3), 2, np.float32))
    y = mx.nd.zeros((2, 2))
    push_failing([y[0]], name='row_op')
    y.reshape((4,))[:] = 5      # a view over the whole chunk counts as whole
    np.testing.assert_array_equal(y.asnumpy(), np.full((2, 2), 5, np.float32))
