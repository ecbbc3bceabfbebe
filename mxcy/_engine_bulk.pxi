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
    return 0


cdef int bulk_flush() except -1:
    cdef BulkState* b = <BulkState*>tls_get_bulk()
    cdef EOp* op
    cdef int i, n
    cdef EVar** reads
    cdef EVar** writes
    cdef EVar** vars_copy
    cdef int nr = 0, nw = 0, nvars
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
    nvars = b.nvars
    vars_copy = <EVar**>malloc(nvars * sizeof(EVar*) + 1)
    memcpy(vars_copy, b.vars, nvars * sizeof(EVar*))
    b.count = 0
    b.used = 16
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
