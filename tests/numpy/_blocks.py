"""Shared by the NumPy-mode tests of mx.sym.np and hybridized Gluon: the np-mode fixture
and a HybridBlock that runs a given function of F."""
import pytest

from mxcy import gluon, npx


@pytest.fixture(autouse=True)
def np_mode():
    """Each test of a module that imports this runs under npx.set_np()."""
    npx.set_np()
    yield
    npx.reset_np()


class FnBlock(gluon.HybridBlock):
    """hybrid_forward(F, *xs) = fn(F, *xs)."""

    def __init__(self, fn, **kwargs):
        super().__init__(**kwargs)
        self._fn = fn

    def hybrid_forward(self, F, *xs):
        return self._fn(F, *xs)
