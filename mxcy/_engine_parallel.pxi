# Part of mxcy/_engine.pyx (textually included there): running a kernel in two halves
# when another worker is idle.
#
# A big kernel (a GEMM) runs on one worker with single-threaded BLAS, so that workers x
# BLAS threads never exceed the cores. When a worker sits idle, though, its core is free:
# `run_split2(fn, arg)` then hands part 1 of the kernel to one persistent helper thread and
# runs part 0 itself; otherwise it runs both parts in turn. It is off by default: measured
# here, a 1024^3 GEMM ran 2x faster with it, GEMMs of ~10^7 multiply-adds gained nothing
# (the hand-off costs as much), and when more work reached the idle worker meanwhile the
# cores were oversubscribed (two big GEMMs pushed together ran 1.26x slower than one after
# the other). Turn it on with MXCY_KERNEL_SPLIT=1 or engine.set_kernel_split(True).

cdef pthread_mutex_t g_split_lock
cdef pthread_cond_t g_split_cv
cdef pthread_cond_t g_split_done_cv
cdef pthread_t g_split_thread
cdef int g_split_started = 0
cdef int g_split_busy = 0          # the helper has been handed a task
cdef int g_split_finished = 0
cdef int g_stop_split = 0
cdef int g_split_enabled = 0      # opt-in: MXCY_KERNEL_SPLIT=1 or set_kernel_split(True)
cdef part_fn g_split_fn = NULL
cdef void* g_split_arg = NULL
pthread_mutex_init(&g_split_lock, NULL)
pthread_cond_init(&g_split_cv, NULL)
pthread_cond_init(&g_split_done_cv, NULL)


cdef void* split_helper_main(void* unused) noexcept nogil:
    global g_split_fn, g_split_finished
    cdef part_fn fn
    cdef void* arg
    pthread_mutex_lock(&g_split_lock)
    while True:
        while g_split_fn == NULL and not g_stop_split:
            pthread_cond_wait(&g_split_cv, &g_split_lock)
        if g_split_fn == NULL:
            break
        fn = g_split_fn
        arg = g_split_arg
        pthread_mutex_unlock(&g_split_lock)
        fn(arg, 1)
        pthread_mutex_lock(&g_split_lock)
        g_split_fn = NULL
        g_split_finished = 1
        pthread_cond_broadcast(&g_split_done_cv)
    pthread_mutex_unlock(&g_split_lock)
    return NULL


cdef void run_split2(part_fn fn, void* arg) noexcept nogil:
    """fn(arg, 0) and fn(arg, 1), on two cores when a worker is idle."""
    global g_split_started, g_split_busy, g_split_finished, g_split_fn, g_split_arg
    cdef int handed = 0
    if g_split_enabled and g_nidle > 0 and not g_naive and not g_shutdown:
        pthread_mutex_lock(&g_split_lock)
        if not g_split_busy:
            if not g_split_started:
                if pthread_create(&g_split_thread, NULL, split_helper_main, NULL) == 0:
                    g_split_started = 1
            if g_split_started:
                g_split_busy = 1
                g_split_finished = 0
                g_split_fn = fn
                g_split_arg = arg
                handed = 1
                pthread_cond_signal(&g_split_cv)
        pthread_mutex_unlock(&g_split_lock)
    fn(arg, 0)
    if not handed:
        fn(arg, 1)
        return
    pthread_mutex_lock(&g_split_lock)
    while not g_split_finished:
        pthread_cond_wait(&g_split_done_cv, &g_split_lock)
    g_split_busy = 0
    pthread_mutex_unlock(&g_split_lock)


cdef void split_after_fork_child() noexcept nogil:
    """The helper thread does not exist in a forked child: start afresh."""
    global g_split_started, g_split_busy, g_split_fn
    pthread_mutex_init(&g_split_lock, NULL)
    pthread_cond_init(&g_split_cv, NULL)
    pthread_cond_init(&g_split_done_cv, NULL)
    g_split_started = 0
    g_split_busy = 0
    g_split_fn = NULL


cdef void stop_split_helper() noexcept nogil:
    global g_stop_split, g_split_started
    if not g_split_started:
        return
    pthread_mutex_lock(&g_split_lock)
    g_stop_split = 1
    pthread_cond_broadcast(&g_split_cv)
    pthread_mutex_unlock(&g_split_lock)
    pthread_join(g_split_thread, NULL)
    g_split_started = 0
    g_stop_split = 0


def kernel_split():
    """Whether big kernels may borrow an idle worker's core (see run_split2)."""
    return bool(g_split_enabled)


def set_kernel_split(bint enabled):
    """Allow or forbid big kernels to borrow an idle worker's core; returns the old value."""
    global g_split_enabled
    old = bool(g_split_enabled)
    g_split_enabled = 1 if enabled else 0
    return old
