"""Suite-wide fixtures: each test starts with an engine free of other tests' errors."""
import pytest

import mxcy as mx


@pytest.fixture(autouse=True)
def _drain_engine_errors():
    """Errors a test leaves behind (waitall keeps them until raised) must not surface in
    the next test: wait for everything and drop what is left, before and after."""
    for _ in range(2):
        try:
            mx.nd.waitall()
        except Exception:       # noqa: BLE001  (another test's leftover error)
            pass
    yield
    for _ in range(2):
        try:
            mx.nd.waitall()
        except Exception:       # noqa: BLE001
            pass


ENGINE_CONFIGS = ['NaiveEngine', 1, 2, 8]


@pytest.fixture(params=ENGINE_CONFIGS, ids=lambda c: c if isinstance(c, str) else f'{c}w')
def engine_config(request):
    """Runs a test under NaiveEngine and under ThreadedEngine with 1, 2 and 8 workers
    (8 on this 2-core machine: more workers than cores), restoring the settings after."""
    saved = (mx.engine.engine_type(), mx.engine.num_workers())
    if request.param == 'NaiveEngine':
        mx.engine.set_engine_type('NaiveEngine')
    else:
        mx.engine.set_engine_type('ThreadedEngine')
        mx.engine.set_num_workers(request.param)
    yield request.param
    for _ in range(2):
        try:
            mx.nd.waitall()
        except Exception:       # noqa: BLE001  (an error the test left behind)
            pass
    mx.engine.set_engine_type(saved[0])
    mx.engine.set_num_workers(saved[1])
