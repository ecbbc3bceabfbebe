"""Each test starts with fresh ``mx.name`` counters, so its first Dense is ``dense0``."""
import pytest

import mxcy as mx


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield
