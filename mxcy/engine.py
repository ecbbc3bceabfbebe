"""Python face of the dependency engine (``mx.engine``).

``push``/``new_var``/``wait``/``wait_all`` are the engine's own calls; ``bulk`` and
``set_bulk_size`` follow MXNet 1.x. Engine type and pool size come from
``MXCY_ENGINE_TYPE`` (``NaiveEngine`` or ``ThreadedEngine``) and
``MXCY_CPU_WORKER_NTHREADS`` (default: the cores this process may use), or the setters.
"""
import contextlib

from mxcy import _engine
from mxcy._engine import (Var, new_var, push, push_noop, wait, wait_all, var_state, stats,
                          engine_type, set_engine_type, num_workers, max_pending,
                          set_max_pending, bulk_size, pool_stats, kernel_split,
                          set_kernel_split)

__all__ = ['Var', 'new_var', 'push', 'push_noop', 'wait', 'wait_all', 'var_state', 'stats',
           'engine_type', 'set_engine_type', 'num_workers', 'set_num_workers',
           'max_pending', 'set_max_pending', 'bulk', 'set_bulk_size', 'bulk_size',
           'pool_stats', 'blas_threads', 'kernel_split', 'set_kernel_split']

_blas_limiter = None


def blas_threads():
    """Threads each BLAS call may use: cores // workers, so workers × BLAS ≤ cores."""
    return max(1, _engine._default_workers() // max(1, num_workers()))


def _limit_blas_threads():
    """Cap the BLAS that our GEMM kernels call (SciPy's) at blas_threads()."""
    global _blas_limiter
    try:
        import scipy.linalg.cython_blas  # noqa: F401  (loads SciPy's BLAS)
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return
    controller = ThreadpoolController()
    scipy_blas = controller.select(user_api='blas')
    selected = [lib for lib in scipy_blas.lib_controllers
                if '/scipy.libs/' in lib.filepath or '/scipy/' in lib.filepath]
    for lib in selected or scipy_blas.lib_controllers[:1]:
        lib.set_num_threads(blas_threads())
    _blas_limiter = selected


def set_num_workers(n):
    """Resize the worker pool (after pending ops finish) and re-balance BLAS threads."""
    _engine.set_num_workers(n)
    _limit_blas_threads()


def set_bulk_size(size):
    """Group up to `size` small ops pushed by this thread into one engine op; returns the
    previous size (MXNet 1.x ``mx.engine.set_bulk_size``)."""
    return _engine.set_bulk_size(size)


@contextlib.contextmanager
def bulk(size):
    """``with mx.engine.bulk(n):`` bulks ops pushed inside the block, then flushes."""
    prev = set_bulk_size(size)
    try:
        yield
    finally:
        set_bulk_size(prev)


_limit_blas_threads()
