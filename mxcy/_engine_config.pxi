# Part of mxcy/_engine.pyx (textually included there): settings read from the environment
# at import (MXCY_* and, where MXNet has one, its MXNET_* name).

def _default_workers():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _configure_from_env():
    global g_naive, g_nworkers_wanted, g_max_pending
    kind = os.environ.get('MXCY_ENGINE_TYPE', os.environ.get('MXNET_ENGINE_TYPE', ''))
    if kind:
        if kind not in ('NaiveEngine', 'ThreadedEngine', 'ThreadedEnginePerDevice'):
            raise ValueError(f"MXCY_ENGINE_TYPE must be NaiveEngine or ThreadedEngine, "
                             f"got {kind!r}")
        g_naive = 1 if kind == 'NaiveEngine' else 0
    n = os.environ.get('MXCY_CPU_WORKER_NTHREADS',
                       os.environ.get('MXNET_CPU_WORKER_NTHREADS', ''))
    g_nworkers_wanted = _env_int('MXCY_CPU_WORKER_NTHREADS', n, 1, MAX_WORKERS) if n \
        else _default_workers()
    split = os.environ.get('MXCY_KERNEL_SPLIT', '')
    if split:
        set_kernel_split(_env_int('MXCY_KERNEL_SPLIT', split, 0, 1))
    global g_keep_freed, g_pool_off
    g_keep_freed = _env_int('MXCY_ENGINE_DEBUG', os.environ.get('MXCY_ENGINE_DEBUG') or '0',
                            0, 1)
    g_pool_off = not _env_int('MXCY_MEMORY_POOL', os.environ.get('MXCY_MEMORY_POOL') or '1',
                              0, 1)
    m = os.environ.get('MXCY_ENGINE_MAX_PENDING', '')
    if m:
        g_max_pending = _env_int('MXCY_ENGINE_MAX_PENDING', m, 1, 1 << 62)


def _env_int(name, text, low, high):
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {text!r}") from None
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {value}")
    return value
