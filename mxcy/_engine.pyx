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
  ``wait_all`` the first error recorded since the previous ``wait_all``. A successful
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

cdef extern from "<stdlib.h>" nogil:
    int posix_memalign(void** memptr, size_t alignment, size_t size)

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

pthread_mutex_init(&g_lock, NULL)
pthread_cond_init(&g_work_cv, NULL)
pthread_cond_init(&g_done_cv, NULL)


# ---------------------------------------------------------------- memory pool
# Size-bucketed free lists: power-of-two buckets from 64 B to 64 MiB; larger chunks go
# straight to the allocator. A bucket keeps at most POOL_KEEP free blocks.
cdef enum:
    POOL_MIN_SHIFT = 6
    POOL_MAX_SHIFT = 26
    POOL_NBUCKETS = 21
    POOL_KEEP = 64

cdef struct PoolBlock:
    PoolBlock* next

cdef pthread_mutex_t g_pool_lock
cdef PoolBlock* g_pool[21]
cdef int g_pool_count[21]
cdef int64_t g_pool_hits = 0
cdef int64_t g_pool_misses = 0
pthread_mutex_init(&g_pool_lock, NULL)
memset(g_pool, 0, sizeof(g_pool))
memset(g_pool_count, 0, sizeof(g_pool_count))


cdef inline int pool_bucket(size_t nbytes) noexcept nogil:
    cdef int b = POOL_MIN_SHIFT
    while (<size_t>1 << b) < nbytes:
        b += 1
    return b - POOL_MIN_SHIFT


cdef void* pool_alloc(size_t nbytes) noexcept nogil:
    """A 64-byte aligned block of at least nbytes (NULL when out of memory)."""
    cdef void* p = NULL
    cdef int b
    cdef PoolBlock* blk
    if nbytes == 0:
        nbytes = 1
    if nbytes > (<size_t>1 << POOL_MAX_SHIFT):
        if posix_memalign(&p, 64, nbytes) != 0:
            return NULL
        return p
    b = pool_bucket(nbytes)
    pthread_mutex_lock(&g_pool_lock)
    blk = g_pool[b]
    if blk != NULL:
        g_pool[b] = blk.next
        g_pool_count[b] -= 1
        global g_pool_hits
        g_pool_hits += 1
        pthread_mutex_unlock(&g_pool_lock)
        return <void*>blk
    global g_pool_misses
    g_pool_misses += 1
    pthread_mutex_unlock(&g_pool_lock)
    if posix_memalign(&p, 64, <size_t>1 << (b + POOL_MIN_SHIFT)) != 0:
        return NULL
    return p


cdef void pool_free(void* ptr, size_t nbytes) noexcept nogil:
    cdef int b
    cdef PoolBlock* blk
    if ptr == NULL:
        return
    if nbytes == 0:
        nbytes = 1
    if nbytes > (<size_t>1 << POOL_MAX_SHIFT):
        free(ptr)
        return
    b = pool_bucket(nbytes)
    pthread_mutex_lock(&g_pool_lock)
    if g_pool_count[b] < POOL_KEEP:
        blk = <PoolBlock*>ptr
        blk.next = g_pool[b]
        g_pool[b] = blk
        g_pool_count[b] += 1
        ptr = NULL
    pthread_mutex_unlock(&g_pool_lock)
    if ptr != NULL:
        free(ptr)


def pool_stats():
    """Pool counters: hits, misses and cached blocks per bucket size."""
    cached = {}
    for b in range(POOL_NBUCKETS):
        if g_pool_count[b]:
            cached[1 << (b + POOL_MIN_SHIFT)] = g_pool_count[b]
    return {'hits': g_pool_hits, 'misses': g_pool_misses, 'cached': cached}


# ---------------------------------------------------------------- error records
cdef void error_retain(ErrorRec* e) noexcept nogil:
    if e != NULL:
        e.refcnt += 1


cdef void error_release_locked(ErrorRec* e) noexcept nogil:
    """Drop a reference; the PyObject is freed later by a thread holding the GIL."""
    global g_dead
    if e == NULL:
        return
    e.refcnt -= 1
    if e.refcnt == 0:
        e.next = g_dead
        g_dead = e


cdef void drain_dead():
    """Free released error records (needs the GIL; takes the engine lock briefly)."""
    global g_dead
    cdef ErrorRec* e
    cdef ErrorRec* nxt
    if g_dead == NULL:
        return
    pthread_mutex_lock(&g_lock)
    e = g_dead
    g_dead = NULL
    pthread_mutex_unlock(&g_lock)
    while e != NULL:
        nxt = e.next
        Py_XDECREF(e.exc)
        free(e)
        e = nxt


cdef ErrorRec* make_error(object exc, object name):
    """Wrap an exception raised by op `name` (GIL held)."""
    cdef ErrorRec* e = <ErrorRec*>malloc(sizeof(ErrorRec))
    if e == NULL:
        return NULL
    try:
        exc.add_note(f"(raised in mxcy engine op '{name}')")
        exc.mxcy_op_name = name
    except Exception:
        pass
    e.refcnt = 1
    e.exc = <PyObject*>exc
    Py_INCREF(exc)
    e.next = NULL
    return e


cdef object op_name(EOp* op):
    if op.pyname != NULL:
        return <object>op.pyname
    if op.cname != NULL:
        return op.cname.decode('utf-8', 'replace')
    return '<op>'


_ERROR_TYPES = {ERR_RUNTIME: RuntimeError, ERR_ZERO_DIVISION: ZeroDivisionError,
                ERR_VALUE: ValueError, ERR_INDEX: IndexError, ERR_MEMORY: MemoryError}


cdef ErrorRec* kernel_error(EOp* op, int rc, char* msg) noexcept with gil:
    exc_type = _ERROR_TYPES.get(rc, RuntimeError)
    text = msg[:strlen(msg)].decode('utf-8', 'replace') or f'kernel failed (code {rc})'
    return make_error(exc_type(f"{op_name(op)}: {text}"), op_name(op))


# ---------------------------------------------------------------- tracking (lock held)
cdef inline void var_enqueue(EVar* v, EDep* d) noexcept nogil:
    d.next = NULL
    if v.tail == NULL:
        v.head = d
    else:
        v.tail.next = d
    v.tail = d


cdef inline EDep* var_pop(EVar* v) noexcept nogil:
    cdef EDep* d = v.head
    v.head = d.next
    if v.head == NULL:
        v.tail = NULL
    return d


cdef int register_locked(EOp* op) noexcept nogil:
    """Grant or queue each dependency; return 1 when the op is ready at once."""
    cdef int i
    cdef EDep* d
    cdef EVar* v
    op.wait_count = op.ndeps + 1
    for i in range(op.ndeps):
        d = &op.deps[i]
        v = <EVar*>d.var
        if d.is_write:
            if v.head == NULL and not v.write_running and v.running_reads == 0:
                v.write_running = 1
                op.wait_count -= 1
            else:
                var_enqueue(v, d)
        else:
            if v.head == NULL and not v.write_running:
                v.running_reads += 1
                op.wait_count -= 1
            else:
                var_enqueue(v, d)
    op.wait_count -= 1
    # invariant: the +1 is dropped last, so a zero here means every var was granted now
    return op.wait_count == 0


cdef struct ReadyList:
    EOp** items
    int n
    int cap


cdef void ready_add(ReadyList* rl, EOp* op) noexcept nogil:
    if rl.n == rl.cap:
        rl.cap = 16 if rl.cap == 0 else rl.cap * 2
        rl.items = <EOp**>realloc(rl.items, rl.cap * sizeof(EOp*))
    rl.items[rl.n] = op
    rl.n += 1


cdef inline void grant_dep(EDep* d, ReadyList* rl) noexcept nogil:
    d.op.wait_count -= 1
    if d.op.wait_count == 0:
        ready_add(rl, d.op)


cdef void grant_next(EVar* v, ReadyList* rl) noexcept nogil:
    cdef EDep* d
    if v.write_running or v.head == NULL:
        return
    if v.head.is_write:
        if v.running_reads == 0:
            d = var_pop(v)
            v.write_running = 1
            grant_dep(d, rl)
        return
    while v.head != NULL and not v.head.is_write:
        d = var_pop(v)
        v.running_reads += 1
        grant_dep(d, rl)


cdef void heap_push(EOp* op) noexcept nogil:
    global g_heap, g_heap_len, g_heap_cap
    cdef int i, parent
    if g_heap_len == g_heap_cap:
        g_heap_cap = 64 if g_heap_cap == 0 else g_heap_cap * 2
        g_heap = <EOp**>realloc(g_heap, g_heap_cap * sizeof(EOp*))
    i = g_heap_len
    g_heap_len += 1
    while i > 0:
        parent = (i - 1) // 2
        if not op_before(op, g_heap[parent]):
            break
        g_heap[i] = g_heap[parent]
        i = parent
    g_heap[i] = op


cdef inline int op_before(EOp* a, EOp* b) noexcept nogil:
    if a.priority != b.priority:
        return a.priority > b.priority
    return a.seq < b.seq


cdef EOp* heap_pop() noexcept nogil:
    global g_heap_len
    cdef EOp* top = g_heap[0]
    cdef EOp* last
    cdef int i = 0, child
    g_heap_len -= 1
    if g_heap_len > 0:
        last = g_heap[g_heap_len]
        while True:
            child = 2 * i + 1
            if child >= g_heap_len:
                break
            if child + 1 < g_heap_len and op_before(g_heap[child + 1], g_heap[child]):
                child += 1
            if not op_before(g_heap[child], last):
                break
            g_heap[i] = g_heap[child]
            i = child
        g_heap[i] = last
    return top


cdef void prepare_locked(EOp* op) noexcept nogil:
    """At dispatch: an op reading a poisoned variable is skipped and inherits its error."""
    cdef int i
    cdef EDep* d
    cdef EVar* v
    if op.flags & (FLAG_SYNC | FLAG_DELETE):
        return
    for i in range(op.ndeps):
        d = &op.deps[i]
        v = <EVar*>d.var
        if v.error != NULL and (not d.is_write or d.reads_too):
            op.skipped = 1
            op.error = v.error
            error_retain(v.error)
            return


cdef void complete_locked(EOp* op, ReadyList* rl) noexcept nogil:
    """Release every dependency of a finished op, record its error, free it."""
    global g_pending, g_nerrors, g_errors_cap, g_errors
    cdef int i
    cdef EDep* d
    cdef EVar* v
    if op.error != NULL and op.original_error:
        if g_nerrors == g_errors_cap:
            g_errors_cap = 8 if g_errors_cap == 0 else g_errors_cap * 2
            g_errors = <ErrorRec**>realloc(g_errors, g_errors_cap * sizeof(ErrorRec*))
        g_errors[g_nerrors] = op.error
        g_nerrors += 1
        error_retain(op.error)
    for i in range(op.ndeps):
        d = &op.deps[i]
        v = <EVar*>d.var
        if d.is_write:
            if not (op.flags & FLAG_SYNC):
                if v.error != op.error:
                    error_release_locked(v.error)
                    v.error = op.error
                    error_retain(op.error)
                v.version += 1
            v.write_running = 0
            grant_next(v, rl)
        else:
            v.running_reads -= 1
            if v.running_reads == 0:
                grant_next(v, rl)
    if op.done_flag != NULL:
        op.done_flag[0] = 1
    error_release_locked(op.error)
    if op.flags & FLAG_DELETE:
        v = <EVar*>op.deps[0].var
        # invariant: nothing can be queued behind the delete of an unreachable variable
        error_release_locked(v.error)
        free(v)
    g_pending -= 1
    if g_nwaiters > 0:
        pthread_cond_broadcast(&g_done_cv)
    free(op)


cdef void dispatch_locked(ReadyList* rl, ReadyList* inline_out) noexcept nogil:
    """Route ready ops: sync markers complete now; others go inline (naive) or to workers."""
    cdef EOp* op
    cdef int i = 0
    while i < rl.n:
        op = rl.items[i]
        i += 1
        if op.flags & FLAG_SYNC:
            complete_locked(op, rl)     # may append to rl: handled by this loop
            continue
        prepare_locked(op)
        if g_naive or g_shutdown or g_nworkers_wanted == 0:
            ready_add(inline_out, op)
        else:
            heap_push(op)
            if g_nidle > 0:
                pthread_cond_signal(&g_work_cv)
    rl.n = 0


# ---------------------------------------------------------------- execution (no lock)
cdef void run_python_op(EOp* op) noexcept with gil:
    """Call a pushed Python callable (unless skipped) and drop the op's references."""
    fn = <object>op.pyfn
    op.pyfn = NULL
    Py_DECREF(fn)
    try:
        if not op.skipped:
            fn()
    except BaseException as exc:
        op.error = make_error(exc, op_name(op))
        op.original_error = 1
    if op.pyname != NULL:
        name = <object>op.pyname
        op.pyname = NULL
        Py_DECREF(name)


cdef void execute(EOp* op) noexcept nogil:
    cdef char errmsg[256]
    cdef int rc
    cdef void* saved = tls_get_op()
    tls_set_op(<void*>op)
    if op.pyfn != NULL:
        run_python_op(op)
    elif op.flags & FLAG_DELETE:
        if op.on_free != NULL:
            op.on_free(op.free_ptr, op.free_nbytes)
    elif op.fn != NULL and not op.skipped:
        errmsg[0] = 0
        rc = op.fn(<void*>op.args, errmsg)
        if rc != 0:
            errmsg[255] = 0
            op.error = kernel_error(op, rc, errmsg)
            op.original_error = 1
    tls_set_op(saved)


cdef void run_inline_list(ReadyList* todo) noexcept nogil:
    """Run ops inline on this thread, then release them (and anything they make ready)."""
    cdef ReadyList rl
    cdef EOp* op
    rl.items = NULL
    rl.n = 0
    rl.cap = 0
    while todo.n > 0:
        todo.n -= 1
        op = todo.items[todo.n]
        execute(op)
        pthread_mutex_lock(&g_lock)
        complete_locked(op, &rl)
        dispatch_locked(&rl, todo)
        pthread_mutex_unlock(&g_lock)
    free(rl.items)


cdef void* worker_main(void* arg) noexcept nogil:
    global g_nidle
    cdef ReadyList rl
    cdef ReadyList inl
    cdef EOp* op
    rl.items = NULL
    rl.n = 0
    rl.cap = 0
    inl.items = NULL
    inl.n = 0
    inl.cap = 0
    pthread_mutex_lock(&g_lock)
    while True:
        while g_heap_len == 0 and not g_stop:
            g_nidle += 1
            pthread_cond_wait(&g_work_cv, &g_lock)
            g_nidle -= 1
        if g_heap_len == 0 and g_stop:
            break
        op = heap_pop()
        pthread_mutex_unlock(&g_lock)
        execute(op)
        pthread_mutex_lock(&g_lock)
        complete_locked(op, &rl)
        dispatch_locked(&rl, &inl)
        if inl.n > 0:
            pthread_mutex_unlock(&g_lock)
            run_inline_list(&inl)
            pthread_mutex_lock(&g_lock)
    pthread_mutex_unlock(&g_lock)
    free(rl.items)
    free(inl.items)
    return NULL


cdef int ensure_workers() except -1:
    """Start the worker pool lazily, under the lock so two pushers cannot both start it."""
    global g_nworkers
    cdef pthread_t t
    cdef int failed = 0
    pthread_mutex_lock(&g_lock)
    while g_nworkers < g_nworkers_wanted and not g_shutdown:
        if pthread_create(&t, NULL, worker_main, NULL) != 0:
            failed = 1
            break
        g_threads[g_nworkers] = t
        g_nworkers += 1
    pthread_mutex_unlock(&g_lock)
    if failed and g_nworkers == 0:
        raise RuntimeError("mxcy engine: could not start a worker thread")
    return 0


cdef void stop_workers() noexcept nogil:
    global g_stop, g_nworkers
    cdef int i, n
    pthread_mutex_lock(&g_lock)
    g_stop = 1
    pthread_cond_broadcast(&g_work_cv)
    n = g_nworkers
    pthread_mutex_unlock(&g_lock)
    for i in range(n):
        pthread_join(g_threads[i], NULL)
    pthread_mutex_lock(&g_lock)
    g_nworkers = 0
    g_stop = 0
    pthread_mutex_unlock(&g_lock)


# ---------------------------------------------------------------- push
cdef EOp* new_op(int ndeps, size_t args_size) noexcept nogil:
    cdef size_t head = (sizeof(EOp) + 15) & ~(<size_t>15)
    cdef size_t deps = (ndeps * sizeof(EDep) + 15) & ~(<size_t>15)
    cdef EOp* op = <EOp*>malloc(head + deps + args_size)
    if op == NULL:
        return NULL
    memset(op, 0, sizeof(EOp))
    op.deps = <EDep*>((<char*>op) + head)
    op.args = (<char*>op) + head + deps
    return op


cdef int fill_deps(EOp* op, EVar** reads, int nreads, EVar** writes, int nwrites) noexcept nogil:
    """Dedupe: a var in both sets is one write that also reads; duplicates count once."""
    cdef int i, j, n = 0, dup
    for i in range(nwrites):
        dup = 0
        for j in range(n):
            if op.deps[j].var == <void*>writes[i]:
                dup = 1
                break
        if not dup:
            op.deps[n].op = op
            op.deps[n].var = <void*>writes[i]
            op.deps[n].is_write = 1
            op.deps[n].reads_too = 0
            n += 1
    for i in range(nreads):
        dup = 0
        for j in range(n):
            if op.deps[j].var == <void*>reads[i]:
                dup = 1
                if op.deps[j].is_write:
                    op.deps[j].reads_too = 1
                break
        if not dup:
            op.deps[n].op = op
            op.deps[n].var = <void*>reads[i]
            op.deps[n].is_write = 0
            op.deps[n].reads_too = 0
            n += 1
    op.ndeps = n
    return n


cdef int submit(EOp* op, int may_inline, int backpressure) except -1:
    """Register a filled op and start it: inline when allowed and ready, else to the pool."""
    global g_seq, g_pending, g_nwaiters, g_stat_pushed, g_stat_inline
    cdef ReadyList rl
    cdef ReadyList inl
    cdef int ready
    cdef int threaded = not (g_naive or g_shutdown or g_nworkers_wanted == 0)
    if threaded and g_nworkers < g_nworkers_wanted:
        ensure_workers()
    rl.items = NULL
    rl.n = 0
    rl.cap = 0
    inl.items = NULL
    inl.n = 0
    inl.cap = 0
    pthread_mutex_lock(&g_lock)
    if backpressure and threaded and g_pending >= g_max_pending and tls_get_op() == NULL:
        pthread_mutex_unlock(&g_lock)
        with nogil:
            pthread_mutex_lock(&g_lock)
            g_nwaiters += 1
            while g_pending >= g_max_pending:
                pthread_cond_wait(&g_done_cv, &g_lock)
            g_nwaiters -= 1
            # never take the GIL back while holding the lock
            pthread_mutex_unlock(&g_lock)
        pthread_mutex_lock(&g_lock)
    g_seq += 1
    op.seq = g_seq
    g_pending += 1
    g_stat_pushed += 1
    ready = register_locked(op)
    if ready:
        if threaded and may_inline and op.pyfn == NULL:
            prepare_locked(op)
            g_stat_inline += 1
            ready_add(&inl, op)
        else:
            ready_add(&rl, op)
            dispatch_locked(&rl, &inl)
    pthread_mutex_unlock(&g_lock)
    if inl.n > 0:
        run_inline_list(&inl)
    free(rl.items)
    free(inl.items)
    if g_dead != NULL:
        drain_dead()
    return 0


# ---------------------------------------------------------------- bulking (per thread)
cdef struct BulkState:
    int size            # the bulk size set by this thread
    int count           # kernels in the open group
    char* buf           # records: BulkRec header + args
    size_t used
    size_t cap
    EVar** vars
    int* is_write
    int nvars
    int vars_cap
    int priority


cdef struct BulkRec:
    kernel_fn fn
    const char* name
    size_t size         # bytes of this record including the header, 16-aligned


cdef inline BulkState* bulk_state() noexcept nogil:
    cdef BulkState* b = <BulkState*>tls_get_bulk()
    if b == NULL:
        b = <BulkState*>calloc(1, sizeof(BulkState))
        tls_set_bulk(<void*>b)
    return b


cdef int run_bulk(void* args, char* errmsg) noexcept nogil:
    """Run the kernels of one group in push order; stop at the first failure."""
    cdef size_t total = (<size_t*>args)[0]
    cdef size_t off = 16
    cdef BulkRec* rec
    cdef int rc
    while off < total:
        rec = <BulkRec*>((<char*>args) + off)
        rc = rec.fn(<void*>((<char*>rec) + sizeof(BulkRec)), errmsg)
        if rc != 0:
            return rc
        off += rec.size
    return 0


cdef int bulk_add_var(BulkState* b, EVar* v, int is_write) noexcept nogil:
    cdef int i
    for i in range(b.nvars):
        if b.vars[i] == v:
            if is_write:
                b.is_write[i] = 1
            return 0
    if b.nvars == b.vars_cap:
        b.vars_cap = 16 if b.vars_cap == 0 else b.vars_cap * 2
        b.vars = <EVar**>realloc(b.vars, b.vars_cap * sizeof(EVar*))
        b.is_write = <int*>realloc(b.is_write, b.vars_cap * sizeof(int))
    b.vars[b.nvars] = v
    b.is_write[b.nvars] = is_write
    b.nvars += 1
    return 0


cdef int bulk_flush() except -1:
    cdef BulkState* b = <BulkState*>tls_get_bulk()
    cdef EOp* op
    cdef int i, n
    cdef EVar** reads
    cdef EVar** writes
    cdef int nr = 0, nw = 0
    if b == NULL or b.count == 0:
        return 0
    op = new_op(b.nvars, b.used)
    if op == NULL:
        raise MemoryError("mxcy engine: out of memory creating a bulk op")
    memcpy(op.args, b.buf, b.used)
    (<size_t*>op.args)[0] = b.used
    reads = <EVar**>malloc(b.nvars * sizeof(EVar*) + 1)
    writes = <EVar**>malloc(b.nvars * sizeof(EVar*) + 1)
    for i in range(b.nvars):
        if b.is_write[i]:
            writes[nw] = b.vars[i]
            nw += 1
        else:
            reads[nr] = b.vars[i]
            nr += 1
    fill_deps(op, reads, nr, writes, nw)
    # every var a group writes may also be read by a later kernel of the group
    for i in range(op.ndeps):
        if op.deps[i].is_write:
            op.deps[i].reads_too = 1
    free(reads)
    free(writes)
    op.fn = run_bulk
    op.cname = "bulk"
    op.priority = b.priority
    b.count = 0
    b.used = 16
    b.nvars = 0
    b.priority = 0
    submit(op, 1, 1)
    return 0


cdef int bulk_append(BulkState* b, kernel_fn fn, const void* args, size_t args_size,
                     EVar** reads, int nreads, EVar** writes, int nwrites,
                     int priority, const char* name) except -1:
    cdef size_t rec_size = (sizeof(BulkRec) + args_size + 15) & ~(<size_t>15)
    cdef BulkRec* rec
    cdef int i
    if b.used == 0:
        b.used = 16     # header: total size
    if b.used + rec_size > b.cap:
        b.cap = max(4096, 2 * (b.used + rec_size))
        b.buf = <char*>realloc(b.buf, b.cap)
        if b.buf == NULL:
            raise MemoryError("mxcy engine: out of memory in bulk")
    rec = <BulkRec*>(b.buf + b.used)
    rec.fn = fn
    rec.name = name
    rec.size = rec_size
    memcpy((<char*>rec) + sizeof(BulkRec), args, args_size)
    b.used += rec_size
    for i in range(nwrites):
        bulk_add_var(b, writes[i], 1)
    for i in range(nreads):
        bulk_add_var(b, reads[i], 0)
    if priority > b.priority:
        b.priority = priority
    b.count += 1
    if b.count >= b.size:
        bulk_flush()
    return 0


# ---------------------------------------------------------------- C API for kernels
cdef int push_kernel(kernel_fn fn, const void* args, size_t args_size,
                     EVar** reads, int nreads, EVar** writes, int nwrites,
                     int priority, const char* name, int flags) except -1:
    """Push a C kernel; `args` (args_size bytes) is copied into the op."""
    cdef EOp* op
    cdef BulkState* b = <BulkState*>tls_get_bulk()
    if b != NULL and b.size > 1 and not g_naive:
        return bulk_append(b, fn, args, args_size, reads, nreads, writes, nwrites,
                           priority, name)
    op = new_op(nreads + nwrites, args_size)
    if op == NULL:
        raise MemoryError("mxcy engine: out of memory creating an op")
    memcpy(op.args, args, args_size)
    op.fn = fn
    op.cname = name
    op.priority = priority
    fill_deps(op, reads, nreads, writes, nwrites)
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
    pthread_mutex_lock(&g_lock)
    if v.head != NULL or v.write_running:
        pthread_mutex_unlock(&g_lock)
        op = new_op(1, 0)
        if op == NULL:
            raise MemoryError("mxcy engine: out of memory")
        op.flags = FLAG_SYNC
        op.cname = "wait_to_read"
        op.done_flag = &done
        fill_deps(op, &v, 1, NULL, 0)
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
    check_not_in_op("waitall")
    bulk_flush()
    with nogil:
        pthread_mutex_lock(&g_lock)
        g_nwaiters += 1
        while g_pending > 0:
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
    op = new_op(1, 0)
    if op == NULL:
        raise MemoryError("mxcy engine: out of memory")
    op.flags = FLAG_DELETE
    op.cname = "delete_var"
    op.on_free = on_free
    op.free_ptr = ptr
    op.free_nbytes = nbytes
    fill_deps(op, NULL, 0, &v, 1)
    submit(op, 1, 0)
    return 0


cdef EVar* new_cvar() except NULL:
    cdef EVar* v = <EVar*>calloc(1, sizeof(EVar))
    if v == NULL:
        raise MemoryError("mxcy engine: out of memory creating a variable")
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


def push(fn, reads=(), writes=(), int priority=0, name=None):
    """Push a Python callable `fn()` that reads `reads` and writes `writes`; returns at once."""
    cdef EOp* op
    cdef list rv = [as_var(x) for x in reads]
    cdef list wv = [as_var(x) for x in writes]
    cdef int nr = len(rv), nw = len(wv), i
    cdef EVar** vs
    if not callable(fn):
        raise TypeError(f"engine.push: fn must be callable, got {type(fn).__name__}")
    bulk_flush()
    vs = <EVar**>malloc((nr + nw + 1) * sizeof(EVar*))
    for i in range(nr):
        vs[i] = (<Var>rv[i]).cvar
    for i in range(nw):
        vs[nr + i] = (<Var>wv[i]).cvar
    op = new_op(nr + nw, 0)
    if op == NULL:
        free(vs)
        raise MemoryError("mxcy engine: out of memory creating an op")
    fill_deps(op, vs, nr, vs + nr, nw)
    free(vs)
    op.pyfn = <PyObject*>fn
    Py_INCREF(fn)
    if name is None:
        name = getattr(fn, '__name__', 'python_op')
    name = str(name)
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
    pthread_mutex_lock(&g_lock)
    s = {'pushed': g_stat_pushed, 'inline': g_stat_inline, 'pending': g_pending,
         'workers': g_nworkers, 'engine_type': engine_type()}
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
    global g_nworkers_wanted
    if n < 1 or n > MAX_WORKERS:
        raise ValueError(f"number of worker threads must be in [1, {MAX_WORKERS}], got {n}")
    _quiesce()
    with nogil:
        stop_workers()
    g_nworkers_wanted = n


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
    global g_nwaiters
    pthread_mutex_lock(&g_lock)
    g_nwaiters += 1
    while g_pending > 0:
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
        stop_workers()
    g_shutdown = 1


def _before_fork():
    try:
        bulk_flush()
    except BaseException:
        pass
    # quiesce so no worker is inside a lock or an op when the process is copied
    with nogil:
        wait_pending_quiet()


def _after_fork_parent():
    pass


def _after_fork_child():
    """The child has no worker threads: reset the locks; workers restart on demand."""
    global g_nworkers, g_nidle, g_nwaiters, g_stop
    pthread_mutex_init(&g_lock, NULL)
    pthread_mutex_init(&g_pool_lock, NULL)
    pthread_cond_init(&g_work_cv, NULL)
    pthread_cond_init(&g_done_cv, NULL)
    g_nworkers = 0
    g_nidle = 0
    g_nwaiters = 0
    g_stop = 0


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
    g_nworkers_wanted = int(n) if n else _default_workers()
    if not 1 <= g_nworkers_wanted <= MAX_WORKERS:
        raise ValueError(f"MXCY_CPU_WORKER_NTHREADS must be in [1, {MAX_WORKERS}], got {n}")
    m = os.environ.get('MXCY_ENGINE_MAX_PENDING', '')
    if m:
        g_max_pending = max(1, int(m))


_configure_from_env()
atexit.register(_at_exit)
os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_parent,
                    after_in_child=_after_fork_child)
