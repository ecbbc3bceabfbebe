# Part of mxcy/_engine.pyx (textually included there): the profiler's records.
#
# While the profiler records (g_prof_on), `submit` stamps each op with its push time and
# `execute` takes the start and end times around the run; the thread that ran the op
# appends one ProfRec to its own buffer (its mutex is uncontended: only a dump reads it).
# Parts of a shared kernel (run_parts) and the kernels of a bulk group get records of
# their own. Buffers grow by doubling up to g_prof_cap records per thread; past that a
# record is dropped and counted. Nothing here touches Python until `prof_collect`.
# Off, an op costs one branch at push (g_prof_on) and one at execute (op.t_push != 0).

cdef extern from "<time.h>" nogil:
    ctypedef int clockid_t
    cdef struct timespec:
        long tv_sec
        long tv_nsec
    int clock_gettime(clockid_t, timespec*)
    clockid_t CLOCK_MONOTONIC

cdef extern from *:
    """
    #include <unistd.h>
    #include <sys/syscall.h>
    static __thread void *mxcy_tls_prof = 0;
    static __thread int mxcy_tls_worker = 0;
    static inline void *tls_get_prof(void) { return mxcy_tls_prof; }
    static inline void tls_set_prof(void *b) { mxcy_tls_prof = b; }
    static inline int tls_get_worker(void) { return mxcy_tls_worker; }
    static inline void tls_set_worker(int w) { mxcy_tls_worker = w; }
    static inline long mxcy_gettid(void) { return (long)syscall(SYS_gettid); }
    static inline int64_t mxcy_next_id(int64_t *p) {
        return __atomic_add_fetch(p, 1, __ATOMIC_RELAXED);
    }
    """
    void* tls_get_prof() noexcept nogil
    void tls_set_prof(void*) noexcept nogil
    int tls_get_worker() noexcept nogil
    void tls_set_worker(int) noexcept nogil
    long mxcy_gettid() noexcept nogil
    int64_t mxcy_next_id(int64_t* p) noexcept nogil


cdef enum:
    REC_OP = 0          # an engine op (bulk groups included)
    REC_PART = 1        # one part of a kernel shared between workers (run_parts)
    REC_BULK = 2        # one kernel inside a bulk group
    REC_DEPS = 8        # variables kept per record (the count says how many there were)
    PROF_NAME_LEN = 48  # bytes kept of a Python op's name
    FLAG_PYNAME = 1 << 11   # internal: op.args holds the Python op's name (profiler)


cdef struct ProfRec:
    const char* name        # a C kernel's static name, or NULL: see pyname
    int64_t t_push
    int64_t t_start
    int64_t t_end
    int64_t seq             # the engine op's push sequence number
    int kind
    int part
    int nparts
    int ndeps
    unsigned int wmask      # bit i: vars[i] is written
    int skipped
    int64_t vars[8]
    char pyname[48]


cdef struct ProfBuf:
    pthread_mutex_t mu
    ProfRec* recs
    int64_t n
    int64_t cap
    int64_t dropped
    long tid                # the OS thread id of the owner
    int worker              # 1 + worker index, or 0 for a client thread
    int alive               # 0 once its worker left: an empty one is reused
    const char* cur_name    # the op this thread runs now (for its kernel parts)
    char cur_pyname[48]
    int64_t cur_seq
    ProfBuf* next


cdef pthread_mutex_t g_prof_lock          # guards the list of buffers
cdef ProfBuf* g_prof_bufs = NULL
cdef int g_prof_on = 0
cdef int64_t g_prof_cap = 1 << 18         # records per thread before drops
cdef int64_t g_var_ids = 0
pthread_mutex_init(&g_prof_lock, NULL)


cdef inline int64_t prof_now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <int64_t>ts.tv_sec * 1000000000 + ts.tv_nsec


cdef ProfBuf* prof_buf() noexcept nogil:
    """This thread's buffer (an empty one left by a finished worker is reused)."""
    global g_prof_bufs
    cdef ProfBuf* b = <ProfBuf*>tls_get_prof()
    if b != NULL:
        return b
    pthread_mutex_lock(&g_prof_lock)
    b = g_prof_bufs
    while b != NULL and (b.alive or b.n != 0 or b.dropped != 0):
        b = b.next
    if b == NULL:
        b = <ProfBuf*>calloc(1, sizeof(ProfBuf))
        if b == NULL:
            pthread_mutex_unlock(&g_prof_lock)
            return NULL
        pthread_mutex_init(&b.mu, NULL)
        b.next = g_prof_bufs
        g_prof_bufs = b
    b.alive = 1
    b.tid = mxcy_gettid()
    b.worker = tls_get_worker()
    pthread_mutex_unlock(&g_prof_lock)
    tls_set_prof(<void*>b)
    return b


cdef void prof_thread_exit() noexcept nogil:
    """A worker leaves: its buffer keeps its records until collected, then is reused."""
    cdef ProfBuf* b = <ProfBuf*>tls_get_prof()
    if b != NULL:
        pthread_mutex_lock(&g_prof_lock)
        b.alive = 0
        pthread_mutex_unlock(&g_prof_lock)
        tls_set_prof(NULL)


cdef ProfRec* prof_slot(ProfBuf* b) noexcept nogil:
    """A record to fill, with b.mu held (NULL, lock released, when full: counted)."""
    cdef int64_t cap
    cdef ProfRec* grown
    pthread_mutex_lock(&b.mu)
    if b.n >= g_prof_cap:
        b.dropped += 1
        pthread_mutex_unlock(&b.mu)
        return NULL
    if b.n == b.cap:
        cap = 1024 if b.cap == 0 else b.cap * 2
        if cap > g_prof_cap:
            cap = g_prof_cap
        grown = <ProfRec*>realloc(b.recs, cap * sizeof(ProfRec))
        if grown == NULL:
            b.dropped += 1
            pthread_mutex_unlock(&b.mu)
            return NULL
        b.recs = grown
        b.cap = cap
    b.n += 1
    return &b.recs[b.n - 1]


cdef inline void prof_name_of(EOp* op, const char** name, char* pyname) noexcept nogil:
    name[0] = op.cname
    pyname[0] = 0
    if op.flags & FLAG_PYNAME:
        strncpy(pyname, op.args, PROF_NAME_LEN - 1)
        pyname[PROF_NAME_LEN - 1] = 0


cdef void prof_begin(EOp* op) noexcept nogil:
    """Before an op runs: remember it as this thread's current op (for its parts)."""
    cdef ProfBuf* b = prof_buf()
    if b != NULL:
        prof_name_of(op, &b.cur_name, b.cur_pyname)
        b.cur_seq = op.seq


cdef void prof_fill(ProfRec* r, int kind, const char* name, const char* pyname,
                    int64_t t_push, int64_t t0, int64_t t1, int64_t seq) noexcept nogil:
    r.name = name
    r.pyname[0] = 0
    if pyname != NULL:
        strncpy(r.pyname, pyname, PROF_NAME_LEN - 1)
        r.pyname[PROF_NAME_LEN - 1] = 0
    r.kind = kind
    r.t_push = t_push
    r.t_start = t0
    r.t_end = t1
    r.seq = seq
    r.part = 0
    r.nparts = 0
    r.ndeps = 0
    r.wmask = 0
    r.skipped = 0


cdef void prof_record_op(EOp* op, int64_t t0, int64_t t1) noexcept nogil:
    """The op ran on this thread from t0 to t1 (ns)."""
    cdef ProfBuf* b = prof_buf()
    cdef ProfRec* r
    cdef int i
    if b == NULL:
        return
    r = prof_slot(b)
    b.cur_name = NULL
    b.cur_pyname[0] = 0
    if r == NULL:
        return
    prof_fill(r, REC_OP, op.cname, NULL, op.t_push, t0, t1, op.seq)
    if op.flags & FLAG_PYNAME:
        prof_name_of(op, &r.name, r.pyname)
    r.ndeps = op.ndeps
    r.skipped = op.skipped
    for i in range(min(op.ndeps, REC_DEPS)):
        r.vars[i] = (<EVar*>op.deps[i].var).id
        if op.deps[i].is_write:
            r.wmask |= 1u << i
    pthread_mutex_unlock(&b.mu)


cdef void prof_record_bulk(EOp* op, const char* name, int* idx, int nidx, int64_t t_push,
                           int64_t t0, int64_t t1, int ran) noexcept nogil:
    """One kernel of bulk group `op` (its var slots `idx`, see _engine_bulk.pxi)."""
    cdef ProfBuf* b = prof_buf()
    cdef ProfRec* r
    cdef int i
    if b == NULL:
        return
    r = prof_slot(b)
    if r == NULL:
        return
    prof_fill(r, REC_BULK, name, NULL, t_push, t0, t1, op.seq)
    r.ndeps = nidx
    r.skipped = not ran
    for i in range(min(nidx, REC_DEPS)):
        r.vars[i] = (<EVar*>op.deps[idx[i] >> 3].var).id
        if idx[i] & 2:      # BULK_WRITE
            r.wmask |= 1u << i
    pthread_mutex_unlock(&b.mu)


cdef void prof_record_part(const char* name, const char* pyname, int64_t seq, int part,
                           int nparts, int64_t t0, int64_t t1) noexcept nogil:
    cdef ProfBuf* b = prof_buf()
    cdef ProfRec* r
    if b == NULL:
        return
    r = prof_slot(b)
    if r == NULL:
        return
    prof_fill(r, REC_PART, name, pyname, 0, t0, t1, seq)
    r.part = part
    r.nparts = nparts
    pthread_mutex_unlock(&b.mu)


cdef void prof_after_fork_child() noexcept nogil:
    """Only the forking thread survives: reset the locks; old records stay collectable."""
    cdef ProfBuf* b = g_prof_bufs
    pthread_mutex_init(&g_prof_lock, NULL)
    while b != NULL:
        pthread_mutex_init(&b.mu, NULL)
        b = b.next


# ---------------------------------------------------------------- Python face
def prof_set_recording(bint on):
    """Stamp ops pushed from now on (True) or stop stamping them (False)."""
    global g_prof_on
    g_prof_on = 1 if on else 0


def prof_recording():
    return bool(g_prof_on)


def prof_clock_ns():
    """The profiler's clock (CLOCK_MONOTONIC, ns): user events use it too."""
    return prof_now()


def prof_set_capacity(int64_t n):
    """Records kept per thread before further ones are dropped (and counted); returns
    the previous capacity."""
    global g_prof_cap
    if n < 1:
        raise ValueError(f"profiler buffer capacity must be at least 1 record, got {n}")
    old = g_prof_cap
    g_prof_cap = n
    return old


cdef object prof_rec_tuple(ProfRec* r):
    if r.name != NULL:
        name = r.name.decode('utf-8', 'replace')
    else:
        name = r.pyname[:strlen(r.pyname)].decode('utf-8', 'replace') or 'python_op'
    reads = []
    writes = []
    for i in range(min(r.ndeps, REC_DEPS)):
        (writes if r.wmask & (1u << i) else reads).append(r.vars[i])
    return (r.kind, name, r.t_push, r.t_start, r.t_end, r.seq, r.part, r.nparts,
            reads, writes, r.ndeps, bool(r.skipped))


def prof_collect(bint clear=True):
    """[(tid, worker, dropped, [record tuples])] per thread buffer; empties them when
    `clear`. A record tuple: (kind, name, t_push, t_start, t_end, seq, part, nparts,
    reads, writes, ndeps, skipped), times in CLOCK_MONOTONIC ns, vars by `var_id`."""
    cdef ProfBuf* b
    cdef ProfRec* copy
    cdef int64_t n, i, dropped
    out = []
    pthread_mutex_lock(&g_prof_lock)
    b = g_prof_bufs
    pthread_mutex_unlock(&g_prof_lock)
    while b != NULL:        # buffers are never freed and new ones go to the head
        with nogil:
            pthread_mutex_lock(&b.mu)
            n = b.n
            dropped = b.dropped
            copy = <ProfRec*>malloc(n * sizeof(ProfRec) + 1)
            if copy != NULL:
                memcpy(copy, b.recs, n * sizeof(ProfRec))
                if clear:
                    b.n = 0
                    b.dropped = 0
            pthread_mutex_unlock(&b.mu)
        if copy == NULL:
            raise MemoryError("profiler: out of memory collecting records")
        try:
            if n or dropped:
                out.append((b.tid, b.worker, dropped,
                            [prof_rec_tuple(&copy[i]) for i in range(n)]))
        finally:
            free(copy)
        b = b.next
    return out


def var_id(x):
    """The engine variable id of a Var or an array (as the profiler's trace names it)."""
    return as_var(x).cvar.id
