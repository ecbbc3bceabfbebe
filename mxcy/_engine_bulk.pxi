# Part of mxcy/_engine.pyx (textually included there): per-thread bulking of small C kernels.
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
    ErrorRec* error     # set when this kernel failed (owned until the group completes)
    int nidx            # var slots that follow the header (see BULK_READ...)
    int64_t t_push      # push time while the profiler records, else 0
    int args_off        # offset of the kernel's args from the record start


# A record's var slots: (index in the group's vars) * 8 | these bits
cdef enum:
    BULK_READ = 1
    BULK_WRITE = 2
    BULK_PARTIAL = 4


# A group op's args: BulkHead, then `held` and `verr` (nvars error pointers each), then
# the records. `held` keeps each var's error from dispatch alive; `verr` is the error
# state of each var as the group's kernels run, so a kernel is skipped only when it reads
# a var that is poisoned at that point, and only its writes inherit the error.
cdef struct BulkHead:
    size_t total        # bytes of args
    size_t records      # offset of the first record
    int nvars


cdef inline ErrorRec** bulk_held(EOp* op) noexcept nogil:
    return <ErrorRec**>(op.args + sizeof(BulkHead))


cdef inline ErrorRec** bulk_verr(EOp* op) noexcept nogil:
    return bulk_held(op) + (<BulkHead*>op.args).nvars


cdef inline BulkState* bulk_state() noexcept nogil:
    cdef BulkState* b = <BulkState*>tls_get_bulk()
    if b == NULL:
        b = <BulkState*>calloc(1, sizeof(BulkState))
        tls_set_bulk(<void*>b)
    return b


cdef void bulk_prepare_locked(EOp* op) noexcept nogil:
    """At dispatch: take each var's current error as the group's starting state."""
    cdef ErrorRec** held = bulk_held(op)
    cdef ErrorRec** verr = bulk_verr(op)
    cdef int i
    for i in range(op.ndeps):
        held[i] = (<EVar*>op.deps[i].var).error
        error_retain(held[i])
        verr[i] = held[i]


cdef void run_bulk(EOp* op) noexcept nogil:
    """Run the group's kernels in push order, each with the per-kernel error rules of a
    separate op: skipped when it reads a poisoned var, its failure poisons only its
    writes, and a whole (not partial) successful write clears a var."""
    cdef BulkHead* head = <BulkHead*>op.args
    cdef ErrorRec** verr = bulk_verr(op)
    cdef size_t off = head.records
    cdef BulkRec* rec
    cdef int* idx
    cdef int j, rc
    cdef ErrorRec* e
    cdef char errmsg[256]
    cdef int64_t t0 = 0
    cdef ProfBuf* pb = NULL
    if op.t_push != 0:
        pb = prof_buf()
    while off < head.total:
        rec = <BulkRec*>(op.args + off)
        idx = <int*>((<char*>rec) + sizeof(BulkRec))
        if pb != NULL:
            pb.cur_name = rec.name      # names the kernel's shared parts
            t0 = prof_now()
        e = NULL
        for j in range(rec.nidx):
            if idx[j] & BULK_READ and verr[idx[j] >> 3] != NULL:
                e = verr[idx[j] >> 3]
                break
        if e == NULL:
            errmsg[0] = 0
            rc = rec.fn(<void*>((<char*>rec) + rec.args_off), errmsg)
            if rc != 0:
                errmsg[255] = 0
                e = kernel_error(rec.name, rc, errmsg)
                rec.error = e
        if pb != NULL:
            prof_record_bulk(op, rec.name, idx, rec.nidx, rec.t_push, t0, prof_now(),
                             e == NULL or rec.error != NULL)
        for j in range(rec.nidx):
            if idx[j] & BULK_WRITE and (e != NULL or not idx[j] & BULK_PARTIAL):
                verr[idx[j] >> 3] = e
        off += rec.size


cdef inline ErrorRec* bulk_var_error(EOp* op, int i) noexcept nogil:
    return bulk_verr(op)[i]


cdef void bulk_release_locked(EOp* op) noexcept nogil:
    """At completion: keep the kernels' own errors for wait_all, drop the group's refs."""
    cdef BulkHead* head = <BulkHead*>op.args
    cdef ErrorRec** held = bulk_held(op)
    cdef size_t off = head.records
    cdef BulkRec* rec
    cdef int i
    while off < head.total:
        rec = <BulkRec*>(op.args + off)
        if rec.error != NULL:
            record_error_locked(rec.error)
            error_release_locked(rec.error)
            rec.error = NULL
        off += rec.size
    for i in range(op.ndeps):
        error_release_locked(held[i])
        held[i] = NULL


cdef int bulk_add_var(BulkState* b, EVar* v, int is_write) noexcept nogil:
    """The index of v among the group's vars (added when new)."""
    cdef int i
    for i in range(b.nvars):
        if b.vars[i] == v:
            if is_write:
                b.is_write[i] = 1
            return i
    # the var must outlive the group even if its array is freed on another thread
    pthread_mutex_lock(&g_lock)
    v.bulk_refs += 1
    pthread_mutex_unlock(&g_lock)
    if b.nvars == b.vars_cap:
        b.vars_cap = 16 if b.vars_cap == 0 else b.vars_cap * 2
        b.vars = <EVar**>realloc(b.vars, b.vars_cap * sizeof(EVar*))
        b.is_write = <int*>realloc(b.is_write, b.vars_cap * sizeof(int))
    b.vars[b.nvars] = v
    b.is_write[b.nvars] = is_write
    b.nvars += 1
    return b.nvars - 1


cdef int bulk_flush() except -1:
    cdef BulkState* b = <BulkState*>tls_get_bulk()
    cdef EOp* op
    cdef BulkHead* head
    cdef int i, nvars
    cdef size_t records
    cdef EVar** vars_copy
    if b == NULL or b.count == 0:
        return 0
    records = (sizeof(BulkHead) + 2 * b.nvars * sizeof(ErrorRec*) + 15) & ~(<size_t>15)
    op = new_op(b.nvars, records + b.used)
    if op == NULL:
        raise MemoryError("mxcy engine: out of memory creating a bulk op")
    memset(op.args, 0, records)
    memcpy(op.args + records, b.buf, b.used)
    head = <BulkHead*>op.args
    head.total = records + b.used
    head.records = records
    head.nvars = b.nvars
    # deps in the group's var order, so dep i is the var of record slot i; the group
    # decides per kernel whether an error skips it (bulk_prepare_locked, run_bulk)
    for i in range(b.nvars):
        op.deps[i].op = op
        op.deps[i].var = <void*>b.vars[i]
        op.deps[i].is_write = b.is_write[i]
        op.deps[i].reads_too = b.is_write[i]
        op.deps[i].partial = 0
    op.ndeps = b.nvars
    op.flags = FLAG_BULK
    op.cname = "bulk"
    op.priority = b.priority
    nvars = b.nvars
    vars_copy = <EVar**>malloc(nvars * sizeof(EVar*) + 1)
    memcpy(vars_copy, b.vars, nvars * sizeof(EVar*))
    b.count = 0
    b.used = 0
    b.nvars = 0
    b.priority = 0
    try:
        submit(op, 1, 1)
    finally:
        release_bulk_vars(vars_copy, nvars)
        free(vars_copy)
    return 0


cdef int release_bulk_vars(EVar** vs, int n) except -1:
    """Drop the group's hold on its vars; push the deletes that arrived meanwhile."""
    cdef int i
    cdef EVar* v
    for i in range(n):
        v = vs[i]
        pthread_mutex_lock(&g_lock)
        v.bulk_refs -= 1
        if v.bulk_refs == 0 and v.delete_deferred:
            v.delete_deferred = 0
            pthread_mutex_unlock(&g_lock)
            delete_cvar(v, v.del_fn, v.del_ptr, v.del_nbytes)
        else:
            pthread_mutex_unlock(&g_lock)
    return 0


cdef int bulk_append(BulkState* b, kernel_fn fn, const void* args, size_t args_size,
                     EVar** reads, int nreads, EVar** writes, int nwrites,
                     int priority, const char* name, int flags) except -1:
    cdef int nidx = nreads + nwrites
    cdef size_t args_off = (sizeof(BulkRec) + nidx * sizeof(int) + 15) & ~(<size_t>15)
    cdef size_t rec_size = (args_off + args_size + 15) & ~(<size_t>15)
    cdef BulkRec* rec
    cdef int* idx
    cdef int i, j, k, n = 0, slot
    if b.used + rec_size > b.cap:
        b.cap = max(4096, 2 * (b.used + rec_size))
        b.buf = <char*>realloc(b.buf, b.cap)
        if b.buf == NULL:
            raise MemoryError("mxcy engine: out of memory in bulk")
    rec = <BulkRec*>(b.buf + b.used)
    rec.fn = fn
    rec.name = name
    rec.size = rec_size
    rec.error = NULL
    rec.t_push = prof_now() if g_prof_on else 0
    rec.args_off = <int>args_off
    idx = <int*>((<char*>rec) + sizeof(BulkRec))
    memcpy((<char*>rec) + args_off, args, args_size)
    b.used += rec_size
    for i in range(nwrites):
        mxcy_inc64(&writes[i].writes_pushed)
        slot = bulk_add_var(b, writes[i], 1) * 8 | BULK_WRITE
        if i < MAX_PARTIAL_WRITES and flags & (FLAG_PARTIAL0 << i):
            slot |= BULK_PARTIAL
        idx[n] = slot
        n += 1
    for i in range(nreads):
        k = bulk_add_var(b, reads[i], 0)
        for j in range(n):
            if idx[j] >> 3 == k:
                idx[j] |= BULK_READ     # read and written by this kernel
                break
        else:
            idx[n] = k * 8 | BULK_READ
            n += 1
    rec.nidx = n
    if priority > b.priority:
        b.priority = priority
    b.count += 1
    if b.count >= b.size:
        bulk_flush()
    return 0
