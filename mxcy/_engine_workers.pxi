# Part of mxcy/_engine.pyx (textually included there): running ready ops on the pushing
# thread (inline), and the worker pool: the worker loop, starting the pool lazily, and
# stopping it (resize, interpreter exit).
# ---------------------------------------------------------------- inline
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


cdef void run_inline_one(EOp* op) noexcept nogil:
    """run_inline_list of one op, with no list allocated unless it makes others ready."""
    cdef ReadyList rl
    cdef ReadyList todo
    rl.items = NULL
    rl.n = 0
    rl.cap = 0
    todo.items = NULL
    todo.n = 0
    todo.cap = 0
    execute(op)
    pthread_mutex_lock(&g_lock)
    complete_locked(op, &rl)
    dispatch_locked(&rl, &todo)
    pthread_mutex_unlock(&g_lock)
    free(rl.items)
    if todo.n > 0:
        run_inline_list(&todo)
    free(todo.items)


# ---------------------------------------------------------------- workers
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
    tls_set_worker(<int><size_t>arg)       # 1 + the worker's index (the profiler's label)
    pthread_mutex_lock(&g_lock)
    while True:
        # Each test is made once per turn: whether a shared kernel is joinable changes
        # without the lock (its parts are claimed atomically), so "not joinable" must never
        # be read as "the heap has an op" (popping an empty heap ran an op twice and lost
        # the next push).
        if g_stop:
            # leave at once, ready ops or not: a thread that keeps pushing would keep the
            # heap from emptying and the resize joining us from finishing; what is left
            # runs on the next pool (or inline after shutdown, see stop_workers)
            break
        if share_joinable_locked():         # a running kernel's parts come first
            join_shared_locked()
            continue
        if g_heap_len == 0:
            g_nidle += 1
            pthread_cond_wait(&g_work_cv, &g_lock)
            g_nidle -= 1
            continue
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
    prof_thread_exit()
    return NULL


cdef int ensure_workers() except -1:
    """Start the worker pool lazily, under the lock so two pushers cannot both start it."""
    global g_nworkers
    cdef pthread_t t
    cdef int failed = 0
    pthread_mutex_lock(&g_lock)
    while g_nworkers < g_nworkers_wanted and not g_shutdown:
        if pthread_create(&t, NULL, worker_main, <void*><size_t>(g_nworkers + 1)) != 0:
            failed = 1
            break
        g_threads[g_nworkers] = t
        g_nworkers += 1
    pthread_mutex_unlock(&g_lock)
    if failed and g_nworkers == 0:
        raise RuntimeError("mxcy engine: could not start a worker thread")
    return 0


cdef void stop_workers(int then_wanted) noexcept nogil:
    """Join every worker; then, in the same locked step that clears the count, set how
    many the pool should have, so a push racing with a resize sees either the old pool
    (whose workers drain the heap before they leave) or the new size (and starts it)."""
    global g_stop, g_nworkers, g_nworkers_wanted
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
    g_nworkers_wanted = then_wanted
    pthread_mutex_unlock(&g_lock)
    if g_shutdown:
        run_heap_inline()       # no pool will start again: run what the old one left


cdef void run_heap_inline() noexcept nogil:
    cdef ReadyList todo
    todo.items = NULL
    todo.n = 0
    todo.cap = 0
    pthread_mutex_lock(&g_lock)
    while g_heap_len > 0:
        ready_add(&todo, heap_pop())
    pthread_mutex_unlock(&g_lock)
    run_inline_list(&todo)
    free(todo.items)


cdef int restart_workers() except -1:
    """Start missing workers (a wait must never sleep on ops that no worker will run)."""
    if not (g_naive or g_shutdown) and g_nworkers < g_nworkers_wanted:
        ensure_workers()
    return 0
