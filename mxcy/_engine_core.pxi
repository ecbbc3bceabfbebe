# Part of mxcy/_engine.pyx (textually included there): dependency tracking, dispatch, execution and push; the caller holds or takes g_lock as each function says.
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


cdef ErrorRec* kernel_error(const char* cname, int rc, char* msg) noexcept with gil:
    """The error of C kernel `cname` that returned code rc with message msg."""
    exc_type = _ERROR_TYPES.get(rc, RuntimeError)
    name = cname.decode('utf-8', 'replace') if cname != NULL else '<op>'
    text = msg[:strlen(msg)].decode('utf-8', 'replace') or f'kernel failed (code {rc})'
    return make_error(exc_type(f"{name}: {text}"), name)


# ---------------------------------------------------------------- integrity checks
# Corrupted tracking would hang or crash later, far from its cause: stop at once, naming
# the op (faulthandler then prints every thread's Python stack).
cdef void engine_corrupt(const char* what, EOp* op) noexcept nogil:
    cdef const char* name
    if op == NULL:
        fprintf(stderr, "mxcy engine: internal error: %s\n", what)
        abort()
    name = op.cname
    if name == NULL:
        name = "<python op>"
    fprintf(stderr, "mxcy engine: internal error: %s (op '%s', seq %lld)\n", what, name,
            <long long>op.seq)
    abort()


cdef inline EVar* dep_var(EDep* d) noexcept nogil:
    cdef EVar* v = <EVar*>d.var
    if v.magic != VAR_LIVE:
        engine_corrupt("a variable used after its delete", d.op)
    return v


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
        v = dep_var(d)
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
    if d.op.magic != OP_LIVE or d.op.wait_count <= 0:
        engine_corrupt("a dependency granted twice", d.op)
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
    cdef EOp* top
    cdef EOp* last
    cdef int i = 0, child
    if g_heap_len <= 0:
        engine_corrupt("an op taken from an empty ready heap", NULL)
    top = g_heap[0]
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
    if op.flags & FLAG_BULK:
        bulk_prepare_locked(op)         # per kernel, while the group runs
        return
    for i in range(op.ndeps):
        d = &op.deps[i]
        v = <EVar*>d.var
        if v.error != NULL and (not d.is_write or d.reads_too):
            op.skipped = 1
            op.error = v.error
            error_retain(v.error)
            return


cdef inline void pending_link(EOp* op) noexcept nogil:
    """Append a newly registered op to the pending list (lock held)."""
    global g_pend_head, g_pend_tail
    op.pnext = NULL
    op.pprev = g_pend_tail
    if g_pend_tail != NULL:
        g_pend_tail.pnext = op
    else:
        g_pend_head = op
    g_pend_tail = op


cdef inline void pending_unlink(EOp* op) noexcept nogil:
    global g_pend_head, g_pend_tail
    if op.pprev != NULL:
        op.pprev.pnext = op.pnext
    else:
        g_pend_head = op.pnext
    if op.pnext != NULL:
        op.pnext.pprev = op.pprev
    else:
        g_pend_tail = op.pprev


cdef inline void pending_link_after(EOp* parent, EOp* op) noexcept nogil:
    """Insert op right after its (still pending) parent: the list stays ordered by
    wait_seq, since everything after the parent has a wait_seq at least the parent's."""
    global g_pend_tail
    op.pprev = parent
    op.pnext = parent.pnext
    if parent.pnext != NULL:
        parent.pnext.pprev = op
    else:
        g_pend_tail = op
    parent.pnext = op


cdef inline int pushed_before_done(int64_t seq) noexcept nogil:
    """Whether every op registered with a wait_seq <= seq has completed (an op pushed
    from inside an op counts as pushed when that op was, so waitall waits for it too)."""
    return g_pend_head == NULL or g_pend_head.wait_seq > seq


cdef void record_error_locked(ErrorRec* e) noexcept nogil:
    """Keep an op's original error for the next wait_all."""
    global g_nerrors, g_errors_cap, g_errors
    if g_nerrors == g_errors_cap:
        g_errors_cap = 8 if g_errors_cap == 0 else g_errors_cap * 2
        g_errors = <ErrorRec**>realloc(g_errors, g_errors_cap * sizeof(ErrorRec*))
    g_errors[g_nerrors] = e
    g_nerrors += 1
    error_retain(e)


cdef inline void set_var_error_locked(EVar* v, ErrorRec* e) noexcept nogil:
    if v.error != e:
        error_release_locked(v.error)
        v.error = e
        error_retain(e)


cdef void complete_locked(EOp* op, ReadyList* rl) noexcept nogil:
    """Release every dependency of a finished op, record its error, free it."""
    global g_pending
    cdef int i
    cdef EDep* d
    cdef EVar* v
    if op.magic != OP_LIVE or op.wait_count != 0:
        engine_corrupt("an op completed twice or before it was ready", op)
    if op.error != NULL and op.original_error:
        record_error_locked(op.error)
    for i in range(op.ndeps):
        d = &op.deps[i]
        v = dep_var(d)
        if d.is_write:
            if not v.write_running:
                engine_corrupt("a write released that was not running", op)
            if op.flags & FLAG_BULK:
                set_var_error_locked(v, bulk_var_error(op, i))
                v.version += 1
            elif not (op.flags & FLAG_SYNC):
                # a write to part of the var leaves the error of the rest in place
                if op.error != NULL or not d.partial:
                    set_var_error_locked(v, op.error)
                v.version += 1
            v.write_running = 0
            grant_next(v, rl)
        else:
            if v.running_reads <= 0 or v.write_running:
                engine_corrupt("a read released that was not running", op)
            v.running_reads -= 1
            if v.running_reads == 0:
                grant_next(v, rl)
    if op.done_flag != NULL:
        op.done_flag[0] = 1
    if op.flags & FLAG_BULK:
        bulk_release_locked(op)
    error_release_locked(op.error)
    if op.flags & FLAG_DELETE:
        v = <EVar*>op.deps[0].var
        if v.head != NULL:
            engine_corrupt("an op queued behind a variable's delete", op)
        error_release_locked(v.error)
        v.magic = VAR_DEAD
        if not g_keep_freed:
            free(v)
    g_pending -= 1
    pending_unlink(op)
    if g_nwaiters > 0:
        pthread_cond_broadcast(&g_done_cv)
    op.magic = OP_DEAD
    if not g_keep_freed:
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
    cdef int64_t t0 = 0
    if op.magic != OP_LIVE:
        engine_corrupt("a freed op executed", op)
    tls_set_op(<void*>op)
    if op.t_push != 0:          # the profiler stamped it at push
        prof_begin(op)
        t0 = prof_now()
    if op.pyfn != NULL:
        run_python_op(op)
    elif op.flags & FLAG_DELETE:
        if op.on_free != NULL:
            op.on_free(op.free_ptr, op.free_nbytes)
    elif op.flags & FLAG_BULK:
        run_bulk(op)
    elif op.fn != NULL and not op.skipped:
        errmsg[0] = 0
        rc = op.fn(<void*>op.args, errmsg)
        if rc != 0:
            errmsg[255] = 0
            op.error = kernel_error(op.cname, rc, errmsg)
            op.original_error = 1
    if t0 != 0:
        prof_record_op(op, t0, prof_now())
    tls_set_op(saved)


# ---------------------------------------------------------------- push
cdef EOp* new_op(int ndeps, size_t args_size) noexcept nogil:
    cdef size_t head = (sizeof(EOp) + 15) & ~(<size_t>15)
    cdef size_t deps = (ndeps * sizeof(EDep) + 15) & ~(<size_t>15)
    cdef EOp* op = <EOp*>malloc(head + deps + args_size)
    if op == NULL:
        return NULL
    memset(op, 0, sizeof(EOp))
    op.magic = OP_LIVE
    op.deps = <EDep*>((<char*>op) + head)
    op.args = (<char*>op) + head + deps
    return op


cdef int fill_deps(EOp* op, EVar** reads, int nreads, EVar** writes, int nwrites,
                   int flags) noexcept nogil:
    """Dedupe: a var in both sets is one write that also reads; duplicates count once.
    Write i is partial when `flags` has FLAG_PARTIAL0 << i (a var written twice is
    partial only if both writes are)."""
    cdef int i, j, n = 0, dup, partial
    for i in range(nwrites):
        partial = i < MAX_PARTIAL_WRITES and (flags & (FLAG_PARTIAL0 << i)) != 0
        dup = 0
        for j in range(n):
            if op.deps[j].var == <void*>writes[i]:
                dup = 1
                op.deps[j].partial = op.deps[j].partial and partial
                break
        if not dup:
            mxcy_inc64(&writes[i].writes_pushed)
            op.deps[n].op = op
            op.deps[n].var = <void*>writes[i]
            op.deps[n].is_write = 1
            op.deps[n].reads_too = 0
            op.deps[n].partial = partial
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
            op.deps[n].partial = 0
            n += 1
    op.ndeps = n
    return n


cdef int submit(EOp* op, int may_inline, int backpressure) except -1:
    """Register a filled op and start it: inline when allowed and ready, else to the pool."""
    global g_seq, g_pending, g_nwaiters, g_stat_pushed, g_stat_inline
    cdef ReadyList rl
    cdef ReadyList inl
    cdef EOp* parent
    cdef EOp* inline_op = NULL
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
    if g_prof_on and not (op.flags & FLAG_SYNC):
        op.t_push = prof_now()
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
    parent = <EOp*>tls_get_op()
    if parent != NULL and parent.magic == OP_LIVE and parent.seq > 0:
        op.wait_seq = parent.wait_seq
        pending_link_after(parent, op)
    else:
        op.wait_seq = op.seq
        pending_link(op)
    g_stat_pushed += 1
    ready = register_locked(op)
    if ready:
        if threaded and may_inline and op.pyfn == NULL:
            prepare_locked(op)
            g_stat_inline += 1
            inline_op = op
        else:
            ready_add(&rl, op)
            dispatch_locked(&rl, &inl)
    pthread_mutex_unlock(&g_lock)
    if inline_op != NULL:
        run_inline_one(inline_op)
    elif inl.n > 0:
        run_inline_list(&inl)
    free(rl.items)
    free(inl.items)
    if g_dead != NULL:
        drain_dead()
    return 0


def discard_errors(arrays):
    """Drop the errors that the variables of `arrays` carry now, in push order: one op
    that writes each of them as a whole (a no-op kernel) and so clears its error once
    every earlier op on it has run. For buffers that the caller rewrites before it reads
    them again (an executor's memory plan): their values are views of part of a buffer,
    whose writes keep an error, so one failed pass would otherwise poison every later one.
    Variables without an error are left alone (no op, no ordering)."""
    cdef list vs = [as_var(x) for x in arrays]
    cdef EVar** bad = <EVar**>malloc((len(vs) + 1) * sizeof(EVar*))
    cdef int n = 0
    cdef EOp* op
    if bad == NULL:
        raise MemoryError("mxcy engine: out of memory")
    pthread_mutex_lock(&g_lock)
    for x in vs:
        if (<Var>x).cvar.error != NULL:
            bad[n] = (<Var>x).cvar
            n += 1
    pthread_mutex_unlock(&g_lock)
    try:
        if n == 0:
            return
        bulk_flush()
        op = new_op(n, 0)
        if op == NULL:
            raise MemoryError("mxcy engine: out of memory creating an op")
        fill_deps(op, NULL, 0, bad, n, 0)
        op.fn = noop_kernel
        op.cname = "discard_errors"
        submit(op, 1, 1)
    finally:
        free(bad)
