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
