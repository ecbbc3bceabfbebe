# Part of mxcy/_engine.pyx (textually included there): one big kernel shared by the workers.
#
# A big kernel (a GEMM) runs on one worker with single-threaded BLAS, so that workers x
# BLAS threads never exceed the cores. `run_parts(fn, arg, nparts)` publishes the kernel
# as `nparts` independent parts; the calling worker and any worker that becomes free
# (idle ones are woken) claim parts with an atomic counter until none is left. No extra thread exists, so the cores are never oversubscribed; a worker that
# wakes late simply finds fewer parts (the caller never waits for a part nobody started).
# On by default; MXCY_KERNEL_SPLIT=0 or engine.set_kernel_split(False) turns it off.

cdef extern from *:
    """
    static inline int mxcy_fetch_add(int* p, int v) {
        return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
    }
    static inline int mxcy_load(int* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void mxcy_inc64(int64_t* p) { __atomic_fetch_add(p, 1, __ATOMIC_RELAXED); }
    static inline int64_t mxcy_load64(int64_t* p) {
        return __atomic_load_n(p, __ATOMIC_ACQUIRE);
    }
    static inline void mxcy_cpu_relax(void) {
    #if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
    #endif
    }
    """
    int mxcy_fetch_add(int* p, int v) nogil
    int mxcy_load(int* p) nogil
    void mxcy_inc64(int64_t* p) nogil
    int64_t mxcy_load64(int64_t* p) nogil
    void mxcy_cpu_relax() nogil

cdef extern from "<sched.h>" nogil:
    int sched_yield()


cdef struct SharedKernel:
    part_fn fn
    void* arg
    int nparts
    int next_part       # atomic: the next unclaimed part
    int parts_done      # atomic
    int joiners         # atomic: workers inside the claim loop
    int64_t prof_seq    # the profiler records each part when set: the op's seq and name
    const char* prof_name
    char prof_pyname[48]

cdef SharedKernel g_share
cdef int g_share_busy = 0       # under g_lock: g_share belongs to a running kernel
cdef int g_share_open = 0       # under g_lock: idle workers may join it
cdef int g_split_enabled = 1
cdef int64_t g_stat_shared = 0      # under g_lock: kernels published to idle workers
cdef int64_t g_stat_helped = 0      # under g_lock: parts that a joining worker ran


cdef void prof_share_owner(SharedKernel* s) noexcept nogil:
    """Tag a published kernel with the op this thread runs, when that op is profiled."""
    cdef ProfBuf* b = <ProfBuf*>tls_get_prof()
    cdef EOp* op = <EOp*>tls_get_op()
    s.prof_seq = 0
    if b != NULL and op != NULL and op.t_push != 0 and b.cur_seq == op.seq:
        s.prof_seq = op.seq
        s.prof_name = b.cur_name
        strncpy(s.prof_pyname, b.cur_pyname, PROF_NAME_LEN)


cdef inline bint share_joinable_locked() noexcept nogil:
    return g_share_open and mxcy_load(&g_share.next_part) < g_share.nparts


cdef int run_claimed_parts(SharedKernel* s) noexcept nogil:
    """Claim and run parts until none is left; returns how many this thread ran."""
    cdef int p, ran = 0
    cdef int64_t t0 = 0
    while True:
        p = mxcy_fetch_add(&s.next_part, 1)
        if p >= s.nparts:
            return ran
        if s.prof_seq:
            t0 = prof_now()
        s.fn(s.arg, p, s.nparts)
        if s.prof_seq:
            prof_record_part(s.prof_name, s.prof_pyname, s.prof_seq, p, s.nparts, t0,
                             prof_now())
        ran += 1
        mxcy_fetch_add(&s.parts_done, 1)


cdef void join_shared_locked() noexcept nogil:
    """An idle worker (holding g_lock) helps with the published kernel's parts."""
    global g_stat_helped
    cdef int ran
    mxcy_fetch_add(&g_share.joiners, 1)
    pthread_mutex_unlock(&g_lock)
    ran = run_claimed_parts(&g_share)
    mxcy_fetch_add(&g_share.joiners, -1)
    pthread_mutex_lock(&g_lock)
    g_stat_helped += ran


cdef inline void spin_until(int* counter, int target) noexcept nogil:
    """Spin (then yield: the other thread may need this core) until *counter == target."""
    cdef int spins = 0
    while mxcy_load(counter) != target:
        spins += 1
        if spins < 2000:
            mxcy_cpu_relax()
        else:
            sched_yield()


cdef void run_parts_alone(part_fn fn, void* arg, int nparts) noexcept nogil:
    """Every part on this thread (the slot is taken or nobody may help), each one
    recorded when the op that runs it is profiled."""
    cdef SharedKernel s
    s.fn = fn
    s.arg = arg
    s.nparts = nparts
    s.next_part = 0
    s.parts_done = 0
    s.joiners = 0
    prof_share_owner(&s)
    run_claimed_parts(&s)


cdef void run_parts(part_fn fn, void* arg, int nparts) noexcept nogil:
    """fn(arg, p, nparts) for every p in [0, nparts), shared with the other workers.

    The kernel is published even when no worker is idle: one that finishes its op joins
    before taking the next (two big GEMMs one after the other on both cores beat the two
    side by side on one core each: they no longer fight over the caches). When another
    kernel holds the slot, this thread first helps with its unclaimed parts, then tries
    again; if the slot is still taken it runs its own parts alone."""
    global g_share_busy, g_share_open, g_stat_shared
    cdef int handed = 0, p
    if nparts > 1 and g_split_enabled and g_nworkers > 1 and not g_naive and not g_shutdown:
        pthread_mutex_lock(&g_lock)
        while True:
            if not g_share_busy:
                g_share_busy = 1
                g_share.fn = fn
                g_share.arg = arg
                g_share.nparts = nparts
                g_share.next_part = 0
                g_share.parts_done = 0
                prof_share_owner(&g_share)
                g_share_open = 1
                handed = 1
                g_stat_shared += 1
                if g_nidle > 0:
                    pthread_cond_signal(&g_work_cv)
                break
            if not share_joinable_locked():
                break
            join_shared_locked()
        pthread_mutex_unlock(&g_lock)
    if not handed:
        if nparts > 1 and tls_get_prof() != NULL:
            run_parts_alone(fn, arg, nparts)    # recorded as parts when profiled
            return
        for p in range(nparts):
            fn(arg, p, nparts)
        return
    run_claimed_parts(&g_share)
    spin_until(&g_share.parts_done, nparts)   # a helper may still be in its last part
    pthread_mutex_lock(&g_lock)
    g_share_open = 0
    pthread_mutex_unlock(&g_lock)
    spin_until(&g_share.joiners, 0)           # nobody reads g_share after this
    pthread_mutex_lock(&g_lock)
    g_share_busy = 0
    pthread_mutex_unlock(&g_lock)


cdef void split_after_fork_child() noexcept nogil:
    """No worker survives a fork, so no kernel is shared in the child."""
    global g_share_busy, g_share_open
    g_share_busy = 0
    g_share_open = 0
    g_share.joiners = 0


def kernel_split():
    """Whether big kernels may be shared with idle workers (see run_parts)."""
    return bool(g_split_enabled)


def set_kernel_split(bint enabled):
    """Allow or forbid big kernels to be shared with idle workers; returns the old value."""
    global g_split_enabled
    old = bool(g_split_enabled)
    g_split_enabled = 1 if enabled else 0
    return old
