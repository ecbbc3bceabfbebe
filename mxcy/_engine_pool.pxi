# Part of mxcy/_engine.pyx (textually included there): the size-bucketed memory pool.
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
cdef int g_pool_off = 0     # MXCY_MEMORY_POOL=0: exact-size blocks, so memory checkers see overruns
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
    if nbytes > (<size_t>1 << POOL_MAX_SHIFT) or g_pool_off:
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
    if nbytes > (<size_t>1 << POOL_MAX_SHIFT) or g_pool_off:
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
