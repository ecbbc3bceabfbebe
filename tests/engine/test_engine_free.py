"""Freeing a variable: at once when no op is queued or running on it, else by a delete op
that runs after them (the memory goes back to the pool only then, so a late op never
writes into memory another array got). An error on a variable freed at once still reaches
``waitall``, which keeps the original."""
import gc
import threading
import time

import numpy as np
import pytest

import mxcy as mx


def test_a_freed_array_with_a_queued_op_keeps_its_memory(threaded, gates):
    src = mx.nd.zeros((64,))
    gate = gates.push('hold_src', writes=[src])
    doomed = src + 1                  # queued behind the gate
    del doomed                        # its delete must wait for that op
    gc.collect()
    fresh = [mx.nd.full((64,), float(i)) for i in range(16)]   # may reuse pooled memory
    gate.release()
    mx.nd.waitall()
    for i, f in enumerate(fresh):
        np.testing.assert_array_equal(f.asnumpy(), np.full(64, i, np.float32))
    assert mx.engine.stats()['pending'] == 0


def test_a_free_var_is_freed_at_once(engine_type):
    x = mx.nd.ones((32,))
    x.wait_to_read()
    before = mx.engine.stats()['pushed']
    for _ in range(50):
        y = x + 1                     # the previous y is freed at each rebinding
    assert mx.engine.stats()['pushed'] - before == 50      # the additions, no deletes
    np.testing.assert_array_equal(y.asnumpy(), np.full(32, 2, np.float32))


def test_an_error_on_a_var_freed_at_once_reaches_waitall(threaded):
    class Injected(Exception):
        pass
    done = threading.Event()
    x = mx.nd.zeros((8,))

    def fail(view):
        try:
            raise Injected('injected fault')
        finally:
            done.set()
    mx.nd.push_numpy(fail, [], [x], 'failing_op')
    assert done.wait(10)
    deadline = time.monotonic() + 10
    while mx.engine.stats()['pending'] and time.monotonic() < deadline:
        time.sleep(0.001)              # the failed op completes (nothing waits on x)
    assert mx.engine.stats()['pending'] == 0
    del x                              # freed with its error, which nobody observed
    gc.collect()
    with pytest.raises(Injected):
        mx.nd.waitall()
    mx.nd.waitall()                    # raised once, then cleared
