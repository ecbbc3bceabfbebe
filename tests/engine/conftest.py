"""Fixtures for the engine tests.

* ``restore_engine`` (autouse): every test starts with no stale errors and gets the engine
  settings it found (type, workers, max_pending, bulk size) back afterwards.
* ``engine_type``: runs a test once per engine type ('ThreadedEngine', 'NaiveEngine').
* ``gates``: pushes Python ops that block on a ``threading.Event`` until the test releases
  them, so a test can freeze an op mid-run and inspect the queues. Waits are bounded:
  an op never released gives up after ``GATE_TIMEOUT`` seconds and records that it did.
  Test modules cannot import this file (importlib mode), so helpers come as fixtures.
"""
import threading

import pytest

import mxcy as mx

GATE_TIMEOUT = 10.0
ENGINE_TYPES = ['ThreadedEngine', 'NaiveEngine']


def _drain_errors():
    """Wait for everything pending and forget any error left by a previous test."""
    for _ in range(2):
        try:
            mx.engine.wait_all()
            return
        except Exception:
            pass


@pytest.fixture(autouse=True)
def restore_engine():
    saved = (mx.engine.engine_type(), mx.engine.num_workers(), mx.engine.max_pending(),
             mx.engine.bulk_size())
    _drain_errors()
    yield
    mx.engine.set_bulk_size(saved[3])
    _drain_errors()
    if mx.engine.engine_type() != saved[0]:
        mx.engine.set_engine_type(saved[0])
    if mx.engine.num_workers() != saved[1]:
        mx.engine.set_num_workers(saved[1])
    mx.engine.set_max_pending(saved[2])


@pytest.fixture(params=ENGINE_TYPES)
def engine_type(request):
    """The engine type under test, switched on for the test and switched back after."""
    old = mx.engine.engine_type()
    mx.engine.set_engine_type(request.param)
    yield request.param
    _drain_errors()
    mx.engine.set_engine_type(old)


@pytest.fixture
def threaded():
    """ThreadedEngine for tests that freeze ops (a frozen op would block NaiveEngine)."""
    old = mx.engine.engine_type()
    mx.engine.set_engine_type('ThreadedEngine')
    yield
    _drain_errors()
    mx.engine.set_engine_type(old)


class Gate:
    """A Python engine op that signals when it starts and blocks until released.

    ``started``/``finished`` are events; ``timed_out`` is set when nobody released it
    within GATE_TIMEOUT (a hang turned into a visible failure). ``log`` gets the name
    appended when the op starts.
    """

    def __init__(self, name, log=None):
        self.name = name
        self.log = log
        self.started = threading.Event()
        self.released = threading.Event()
        self.finished = threading.Event()
        self.timed_out = False

    def __call__(self):
        if self.log is not None:
            self.log.append(self.name)
        self.started.set()
        if not self.released.wait(GATE_TIMEOUT):
            self.timed_out = True
            raise TimeoutError(f"gate {self.name!r} was never released")
        self.finished.set()

    def release(self):
        self.released.set()

    def wait_started(self):
        """True when the op has started (bounded wait)."""
        return self.started.wait(GATE_TIMEOUT)

    def wait_finished(self):
        return self.finished.wait(GATE_TIMEOUT)


class Gates:
    """Push gate ops; every gate is released at teardown so no test leaves a frozen op."""

    def __init__(self):
        self.all = []

    def make(self, name, log=None):
        gate = Gate(name, log)
        self.all.append(gate)
        return gate

    def push(self, name, reads=(), writes=(), priority=0, log=None):
        gate = self.make(name, log)
        mx.engine.push(gate, reads=reads, writes=writes, priority=priority, name=name)
        return gate

    def release_all(self):
        for gate in self.all:
            gate.release()


@pytest.fixture
def gates(restore_engine):
    g = Gates()
    yield g
    g.release_all()
    _drain_errors()
