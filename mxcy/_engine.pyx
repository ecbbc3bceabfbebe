# cython: language_level=3, boundscheck=True, wraparound=True
"""The dependency engine: versioned variables, a per-variable op queue, native workers.

Contract (what the tests pin down):

* ``push(fn, reads, writes, priority=0, name=None)`` returns at once. Per variable, ops
  keep push order: consecutive reads may run together; a write waits for every earlier
  read and write; a read waits for the earlier writes. A variable that is both read and
  written counts once, as a write; duplicates are dropped.
* An op's wait counter starts at ``ndeps + 1``; registering on each variable either
  grants it (decrement) or queues it; the ``+1`` is dropped last, so an op never starts
  while it is still being registered. It is dispatched when the counter reaches zero.
* Dispatch is separate from tracking: ``NaiveEngine`` runs every ready op inline on the
  thread that made it ready; ``ThreadedEngine`` hands it to a native worker pool (highest
  priority first, then push order), except that a FLAG_SMALL C kernel whose variables are
  all free at push time runs inline on the pushing thread (it is released like any op).
* C kernels run without the GIL; Python callables take it.
* Errors travel as data: an op that raises stores its exception on every variable it
  writes and on a global list; an op reading a poisoned variable is skipped and its
  writes inherit the error. ``wait_var`` raises (then clears) the error of that variable,
  ``wait_all`` the first error recorded since the previous ``wait_all``. ``wait_all``
  waits for every op pushed before it and for the ops those push while they run. A successful
  write that does not read a poisoned variable clears it. Errors never raise at push.
* A wait from inside an engine op raises RuntimeError instead of deadlocking.
* Backpressure: a push from a client thread blocks while ``max_pending`` ops are
  pending, so a loop that never waits stays within bounded memory.
* ``delete_var`` pushes a write that frees the variable (and its memory chunk) after
  every op pushed before it has run.
* Bulking (per thread): with ``set_bulk_size(n)``, n > 1, C kernels pushed by a thread
  are grouped into one engine op of up to n kernels; a wait, a Python op, a delete or
  ``set_bulk_size`` flushes the group. If a kernel in a group fails, the group's writes
  all carry the error.

All tracking state is C structures guarded by one mutex. A thread that holds the mutex
never waits for the GIL, so client threads may take the mutex while holding the GIL.
"""
import atexit
import os
import threading

from cpython.ref cimport PyObject, Py_INCREF, Py_DECREF, Py_XDECREF
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free, realloc, calloc, getenv, atoi
from libc.string cimport memcpy, memset, strncpy, strlen
from libc.stdio cimport fprintf, stderr

cdef extern from "<stdlib.h>" nogil:
    int posix_memalign(void** memptr, size_t alignment, size_t size)
    void abort()

cdef extern from "<pthread.h>" nogil:
    ctypedef unsigned long pthread_t
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    int pthread_mutex_init(pthread_mutex_t*, void*)
    int pthread_mutex_lock(pthread_mutex_t*)
    int pthread_mutex_unlock(pthread_mutex_t*)
    int pthread_cond_init(pthread_cond_t*, void*)
    int pthread_cond_wait(pthread_cond_t*, pthread_mutex_t*)
    int pthread_cond_signal(pthread_cond_t*)
    int pthread_cond_broadcast(pthread_cond_t*)
    int pthread_create(pthread_t*, void*, void* (*)(void*) noexcept nogil, void*)
    int pthread_join(pthread_t, void**)

cdef extern from *:
    """
    static __thread void *mxcy_tls_current_op = 0;
    static __thread void *mxcy_tls_bulk = 0;
    static inline void *tls_get_op(void) { return mxcy_tls_current_op; }
    static inline void tls_set_op(void *op) { mxcy_tls_current_op = op; }
    static inline void *tls_get_bulk(void) { return mxcy_tls_bulk; }
    static inline void tls_set_bulk(void *b) { mxcy_tls_bulk = b; }
    """
    void* tls_get_op() noexcept nogil
    void tls_set_op(void*) noexcept nogil
    void* tls_get_bulk() noexcept nogil
    void tls_set_bulk(void*) noexcept nogil


cdef enum:
    FLAG_SYNC = 1 << 8        # internal: a wait marker, completes as soon as it is granted
    FLAG_DELETE = 1 << 9      # internal: frees its (single) variable after completion
    FLAG_BULK = 1 << 10       # internal: a bulk group, errors tracked per kernel and variable
    VAR_LIVE = 0x5641524C     # EVar.magic / EOp.magic: live and dead records
    VAR_DEAD = 0x76617264
    OP_LIVE = 0x4F504C56
    OP_DEAD = 0x6F706464
    MAX_WORKERS = 256


# ---------------------------------------------------------------- global state
cdef pthread_mutex_t g_lock
cdef pthread_cond_t g_work_cv       # workers sleep here
cdef pthread_cond_t g_done_cv       # waiters (wait_var, wait_all, backpressure) sleep here
cdef EOp** g_heap = NULL            # ready ops, a binary heap on (priority desc, seq asc)
cdef int g_heap_len = 0
cdef int g_heap_cap = 0
cdef int64_t g_seq = 0
cdef int64_t g_pending = 0          # registered, not completed
cdef EOp* g_pend_head = NULL        # pending ops in push (sequence) order
cdef EOp* g_pend_tail = NULL
cdef int64_t g_max_pending = 4096
cdef int g_naive = 0
cdef int g_shutdown = 0             # after interpreter exit began: run everything inline
cdef int g_stop = 0
cdef int g_nworkers_wanted = 1
cdef int g_nworkers = 0
cdef int g_nidle = 0
cdef int g_nwaiters = 0
cdef pthread_t g_threads[256]
cdef ErrorRec** g_errors = NULL     # originals since the last wait_all
cdef int g_nerrors = 0
cdef int g_errors_cap = 0
cdef ErrorRec* g_dead = NULL        # released records whose PyObject still needs a decref
cdef int64_t g_stat_pushed = 0
cdef int64_t g_stat_inline = 0
cdef int g_keep_freed = 0           # MXCY_ENGINE_DEBUG=1: never reuse op/var records

pthread_mutex_init(&g_lock, NULL)
pthread_cond_init(&g_work_cv, NULL)
pthread_cond_init(&g_done_cv, NULL)

include "_engine_pool.pxi"
include "_engine_prof.pxi"
include "_engine_parallel.pxi"
include "_engine_core.pxi"
include "_engine_workers.pxi"
include "_engine_bulk.pxi"


# ---------------------------------------------------------------- C API for kernels
cdef int push_kernel(kernel_fn fn, const void* args, size_t args_size,
                     EVar** reads, int nreads, EVar** writes, int nwrites,
                     int priority, const char* name, int flags) except -1:
    """Push a C kernel; `args` (args_size bytes) is copied into the op."""
    cdef EOp* op
    cdef BulkState* b = <BulkState*>tls_get_bulk()
    if b != NULL and b.size > 1 and not g_naive:
        return bulk_append(b, fn, args, args_size, reads, nreads, writes, nwrites,
                           priority, name, flags)
    op = new_op(nreads + nwrites, args_size)
    if op == NULL:
        raise MemoryError("mxcy engine: out of memory creating an op")
    memcpy(op.args, args, args_size)
    op.fn = fn
    op.cname = name
    op.priority = priority
    fill_deps(op, reads, nreads, writes, nwrites, flags)
    return submit(op, flags & FLAG_SMALL, 1)


cdef int check_not_in_op(str what) except -1:
    cdef EOp* op = <EOp*>tls_get_op()
    if op != NULL:
        raise RuntimeError(
            f"mxcy engine: {what} called from inside engine op '{op_name(op)}' would "
            "deadlock (the op waits for itself); read inputs before pushing the op, or "
            "pass them in as its read variables")
    return 0


cdef int raise_error(ErrorRec* e) except -1:
    exc = <object>e.exc
    pthread_mutex_lock(&g_lock)
    error_release_locked(e)
    pthread_mutex_unlock(&g_lock)
    drain_dead()
    raise exc


cdef int wait_var(EVar* v) except -1:
    """Block until every write pushed before now on v has run; raise its stored error."""
    global g_nwaiters
    cdef int done = 0
    cdef EOp* op
    cdef ErrorRec* e
    check_not_in_op("wait_to_read")
    bulk_flush()
    restart_workers()
    pthread_mutex_lock(&g_lock)
    if v.head != NULL or v.write_running:
        pthread_mutex_unlock(&g_lock)
        op = new_op(1, 0)
        if op == NULL:
            raise MemoryError("mxcy engine: out of memory")
        op.flags = FLAG_SYNC
        op.cname = "wait_to_read"
        op.done_flag = &done
        fill_deps(op, &v, 1, NULL, 0, 0)
        submit(op, 0, 0)
        with nogil:
            pthread_mutex_lock(&g_lock)
            g_nwaiters += 1
            while not done:
                pthread_cond_wait(&g_done_cv, &g_lock)
            g_nwaiters -= 1
            pthread_mutex_unlock(&g_lock)
        pthread_mutex_lock(&g_lock)
    e = v.error
    v.error = NULL
    pthread_mutex_unlock(&g_lock)
    if e != NULL:
        raise_error(e)
    return 0


cdef int wait_all_c() except -1:
    """Block until every op pushed so far has run; raise the first error since the last."""
    global g_nwaiters, g_nerrors
    cdef ErrorRec* first = NULL
    cdef int i
    cdef int64_t upto
    check_not_in_op("waitall")
    bulk_flush()
    restart_workers()
    with nogil:
        pthread_mutex_lock(&g_lock)
        upto = g_seq
        g_nwaiters += 1
        while not pushed_before_done(upto):
            pthread_cond_wait(&g_done_cv, &g_lock)
        g_nwaiters -= 1
        if g_nerrors > 0:
            first = g_errors[0]
            for i in range(1, g_nerrors):
                error_release_locked(g_errors[i])
            g_nerrors = 0
        pthread_mutex_unlock(&g_lock)
    if first != NULL:
        raise_error(first)
    drain_dead()
    return 0


cdef int delete_cvar(EVar* v, free_fn on_free, void* ptr, size_t nbytes) except -1:
    cdef EOp* op
    bulk_flush()
    pthread_mutex_lock(&g_lock)
    if v.bulk_refs > 0:
        # an open bulk group of another thread still uses v: that thread pushes the
        # delete when it flushes the group, so the delete stays after the group's ops
        v.delete_deferred = 1
        v.del_fn = on_free
        v.del_ptr = ptr
        v.del_nbytes = nbytes
        pthread_mutex_unlock(&g_lock)
        return 0
    if v.head == NULL and not v.write_running and v.running_reads == 0 and not g_prof_on \
            and not g_keep_freed:
        # no op queued or running on v, so none holds it: free it now, as its delete op
        # would when it ran (the profiler's trace keeps the op; the debug mode its record)
        error_release_locked(v.error)
        v.error = NULL
        v.magic = VAR_DEAD
        pthread_mutex_unlock(&g_lock)
        free(v)
        if on_free != NULL:
            on_free(ptr, nbytes)
        if g_dead != NULL:
            drain_dead()
        return 0
    pthread_mutex_unlock(&g_lock)
    op = new_op(1, 0)
    if op == NULL:
        raise MemoryError("mxcy engine: out of memory")
    op.flags = FLAG_DELETE
    op.cname = "delete_var"
    op.on_free = on_free
    op.free_ptr = ptr
    op.free_nbytes = nbytes
    fill_deps(op, NULL, 0, &v, 1, 0)
    submit(op, 1, 0)
    return 0


cdef EVar* new_cvar() except NULL:
    cdef EVar* v = <EVar*>calloc(1, sizeof(EVar))
    if v == NULL:
        raise MemoryError("mxcy engine: out of memory creating a variable")
    v.magic = VAR_LIVE
    v.id = mxcy_next_id(&g_var_ids)
    return v


# ---------------------------------------------------------------- Python face
cdef class Var:
    """An engine variable. Arrays own one, with their memory chunk attached."""

    def __cinit__(self):
        self.cvar = new_cvar()
        self.data = NULL
        self.nbytes = 0

    def __dealloc__(self):
        if self.cvar != NULL:
            try:
                if self.data != NULL:
                    delete_cvar(self.cvar, pool_free, self.data, self.nbytes)
                else:
                    delete_cvar(self.cvar, NULL, NULL, 0)
            except BaseException:
                pass
            self.cvar = NULL

    @property
    def version(self):
        """Number of completed writes (read under the engine lock)."""
        pthread_mutex_lock(&g_lock)
        n = self.cvar.version
        pthread_mutex_unlock(&g_lock)
        return n

    @property
    def writes_pushed(self):
        """Number of writes pushed so far (in push order, whether run or not)."""
        return mxcy_load64(&self.cvar.writes_pushed)

    def wait(self):
        wait_var(self.cvar)


cdef Var new_chunk(size_t nbytes):
    cdef Var v = Var.__new__(Var)
    v.data = <char*>pool_alloc(nbytes)
    if v.data == NULL:
        raise MemoryError(f"mxcy: cannot allocate {nbytes} bytes")
    v.nbytes = nbytes
    return v


def new_var():
    """A fresh engine variable (no memory attached)."""
    return Var()


cdef inline Var as_var(object x):
    if isinstance(x, Var):
        return <Var>x
    chunk = getattr(x, '_chunk', None)
    if isinstance(chunk, Var):
        return <Var>chunk
    raise TypeError(f"engine.push: expected an engine Var or an NDArray in reads/writes, "
                    f"got {type(x).__name__}")


cdef int partial_flags(list writes) except -1:
    """The FLAG_PARTIAL0 bits of the writes that are views covering part of their chunk."""
    cdef int flags = 0, i
    cdef Var chunk
    for i in range(min(len(writes), MAX_PARTIAL_WRITES)):
        x = writes[i]
        if isinstance(x, Var):
            continue
        chunk = as_var(x)
        addr, nbytes = x._span()
        if addr != <size_t>chunk.data or nbytes != chunk.nbytes:
            flags |= FLAG_PARTIAL0 << i
    return flags


def push(fn, reads=(), writes=(), int priority=0, name=None):
    """Push a Python callable `fn()` that reads `reads` and writes `writes`; returns at once.

    `reads`/`writes` hold engine Vars or arrays; an array that is a view of part of its
    memory is a partial write (its success keeps an error stored on the rest).
    """
    cdef EOp* op
    cdef list rv = [as_var(x) for x in reads]
    cdef list wv = [as_var(x) for x in writes]
    cdef int nr = len(rv), nw = len(wv), i
    cdef int flags = partial_flags(list(writes)) if nw else 0
    cdef EVar** vs
    if not callable(fn):
        raise TypeError(f"engine.push: fn must be callable, got {type(fn).__name__}")
    bulk_flush()
    vs = <EVar**>malloc((nr + nw + 1) * sizeof(EVar*))
    for i in range(nr):
        vs[i] = (<Var>rv[i]).cvar
    for i in range(nw):
        vs[nr + i] = (<Var>wv[i]).cvar
    if name is None:
        name = getattr(fn, '__name__', 'python_op')
    name = str(name)
    op = new_op(nr + nw, PROF_NAME_LEN if g_prof_on else 0)
    if op == NULL:
        free(vs)
        raise MemoryError("mxcy engine: out of memory creating an op")
    fill_deps(op, vs, nr, vs + nr, nw, flags)
    free(vs)
    if g_prof_on:       # the profiler names the op without holding a Python object
        strncpy(op.args, name.encode('utf-8', 'replace')[:PROF_NAME_LEN - 1], PROF_NAME_LEN)
        op.flags |= FLAG_PYNAME
    op.pyfn = <PyObject*>fn
    Py_INCREF(fn)
    op.pyname = <PyObject*>name
    Py_INCREF(name)
    op.priority = priority
    submit(op, 0, 1)


cdef int noop_kernel(void* args, char* errmsg) noexcept nogil:
    return 0


def push_noop(reads=(), writes=(), int priority=0):
    """Push a native no-op (for measuring the engine's own cost)."""
    cdef EVar* vs[64]
    cdef int nr = len(reads), nw = len(writes), i
    if nr + nw > 64:
        raise ValueError("engine.push_noop: at most 64 variables")
    for i in range(nr):
        vs[i] = as_var(reads[i]).cvar
    for i in range(nw):
        vs[nr + i] = as_var(writes[i]).cvar
    push_kernel(noop_kernel, NULL, 0, vs, nr, vs + nr, nw, priority, "noop", 0)


def wait(var):
    """Wait for the writers of `var` and raise the error it carries, if any."""
    wait_var(as_var(var).cvar)


def wait_all():
    wait_all_c()


def var_state(var):
    """Debug snapshot of a variable's queue: for state-machine tests."""
    cdef EVar* v = as_var(var).cvar
    cdef EDep* d
    pthread_mutex_lock(&g_lock)
    queue = []
    d = v.head
    while d != NULL:
        queue.append(('w' if d.is_write else 'r', op_name(d.op)))
        d = d.next
    state = {'running_reads': v.running_reads, 'write_running': bool(v.write_running),
             'version': v.version, 'has_error': v.error != NULL, 'queue': queue}
    pthread_mutex_unlock(&g_lock)
    return state


def stats():
    """Counters: ops pushed, run inline, pending; workers; big kernels shared with idle
    workers and the parts those workers ran."""
    pthread_mutex_lock(&g_lock)
    s = {'pushed': g_stat_pushed, 'inline': g_stat_inline, 'pending': g_pending,
         'workers': g_nworkers, 'engine_type': engine_type(),
         'shared_kernels': g_stat_shared, 'helped_parts': g_stat_helped}
    pthread_mutex_unlock(&g_lock)
    return s


def engine_type():
    return 'NaiveEngine' if g_naive else 'ThreadedEngine'


def set_engine_type(str name):
    """Switch between 'NaiveEngine' and 'ThreadedEngine' (waits for pending ops first)."""
    global g_naive
    if name not in ('NaiveEngine', 'ThreadedEngine', 'ThreadedEnginePerDevice'):
        raise ValueError(f"engine type must be 'NaiveEngine' or 'ThreadedEngine', got {name!r}")
    _quiesce()
    g_naive = 1 if name == 'NaiveEngine' else 0


def num_workers():
    return g_nworkers_wanted


def set_num_workers(int n):
    """Resize the worker pool (waits for pending ops, then restarts the workers)."""
    if n < 1 or n > MAX_WORKERS:
        raise ValueError(f"number of worker threads must be in [1, {MAX_WORKERS}], got {n}")
    _quiesce()
    # other threads may push meanwhile: an op that lands in the ready heap after the old
    # workers left is run by the new ones, which start before this returns
    with nogil:
        stop_workers(n)
    restart_workers()


def max_pending():
    return g_max_pending


def set_max_pending(int64_t n):
    """Pending ops after which a client thread's push blocks (backpressure); returns old."""
    global g_max_pending
    if n < 1:
        raise ValueError(f"max_pending must be at least 1, got {n}")
    old = g_max_pending
    g_max_pending = n
    return old


def bulk_size():
    cdef BulkState* b = <BulkState*>tls_get_bulk()
    return 0 if b == NULL else b.size


def set_bulk_size(int size):
    """Set this thread's bulk size (ops grouped per engine op); returns the previous one."""
    if size < 0:
        raise ValueError(f"bulk size must be >= 0, got {size}")
    cdef BulkState* b = bulk_state()
    bulk_flush()
    old = b.size
    b.size = size
    return old


def flush_bulk():
    bulk_flush()


cdef void wait_pending_quiet() noexcept nogil:
    """Wait for the ops pushed so far (not for ones other threads push meanwhile)."""
    global g_nwaiters
    cdef int64_t upto
    pthread_mutex_lock(&g_lock)
    upto = g_seq
    g_nwaiters += 1
    while not pushed_before_done(upto):
        pthread_cond_wait(&g_done_cv, &g_lock)
    g_nwaiters -= 1
    pthread_mutex_unlock(&g_lock)


def _quiesce():
    """Wait for every pending op without consuming errors."""
    check_not_in_op("engine reconfiguration")
    bulk_flush()
    with nogil:
        wait_pending_quiet()


# ---------------------------------------------------------------- exit and fork
def _at_exit():
    global g_shutdown
    try:
        bulk_flush()
    except BaseException:
        pass
    with nogil:
        wait_pending_quiet()
    # from here on every push runs inline, so a thread that keeps pushing cannot keep
    # the workers (and the exit) busy
    g_shutdown = 1
    with nogil:
        stop_workers(g_nworkers_wanted)


def _before_fork():
    try:
        bulk_flush()
    except BaseException:
        pass
    # quiesce so no worker is inside a lock or an op when the process is copied
    with nogil:
        wait_pending_quiet()


def _after_fork_child():
    """The child has no worker threads: reset the locks; workers restart on demand."""
    global g_nworkers, g_nidle, g_nwaiters, g_stop
    split_after_fork_child()
    prof_after_fork_child()
    pthread_mutex_init(&g_lock, NULL)
    pthread_mutex_init(&g_pool_lock, NULL)
    pthread_cond_init(&g_work_cv, NULL)
    pthread_cond_init(&g_done_cv, NULL)
    g_nworkers = 0
    g_nidle = 0
    g_nwaiters = 0
    g_stop = 0


include "_engine_config.pxi"


_configure_from_env()
atexit.register(_at_exit)
os.register_at_fork(before=_before_fork, after_in_child=_after_fork_child)
