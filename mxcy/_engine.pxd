# C contract between the engine and the kernels (see _engine.pyx for the rules).
from libc.stdint cimport int64_t
from cpython.ref cimport PyObject

# A kernel runs on a worker thread without the GIL. It returns 0 on success, or one of
# the ERR_* codes below after writing a message into `errmsg` (ERRMSG_LEN bytes).
ctypedef int (*kernel_fn)(void* args, char* errmsg) noexcept nogil
ctypedef void (*free_fn)(void* ptr, size_t nbytes) noexcept nogil

cdef enum:
    ERRMSG_LEN = 256
    ERR_RUNTIME = 1
    ERR_ZERO_DIVISION = 2
    ERR_VALUE = 3
    ERR_INDEX = 4
    ERR_MEMORY = 5

# push flags
cdef enum:
    FLAG_SMALL = 1      # cheap kernel: may run inline on the pushing thread when its vars are free
    # bit FLAG_PARTIAL0 << i: write i covers only part of its variable (a view), so its
    # success must not clear an error the variable carries (the rest is still bad);
    # writes 0..MAX_PARTIAL_WRITES-1 can be marked, later ones count as whole
    FLAG_PARTIAL0 = 1 << 16
    MAX_PARTIAL_WRITES = 15

cdef struct ErrorRec:
    int refcnt
    PyObject* exc
    ErrorRec* next

cdef struct EOp
cdef struct EDep:
    EOp* op
    void* var          # EVar*
    int is_write
    int reads_too      # a var both read and written: its error poisons the op
    int partial        # a write to part of the var: success keeps the var's error
    EDep* next

cdef struct EVar:
    int magic              # VAR_LIVE until its delete completes (checked by dep_var)
    int64_t id             # a serial number, unique in the process (the profiler's name)
    EDep* head
    EDep* tail
    int running_reads
    int write_running
    int64_t version
    int64_t writes_pushed  # writes pushed so far (atomic): autograd's version check
    ErrorRec* error
    int bulk_refs          # open bulk groups (of any thread) that use this var
    int delete_deferred    # delete_var arrived while bulk_refs > 0
    free_fn del_fn
    void* del_ptr
    size_t del_nbytes

cdef class Var:
    """An engine variable; when `data` is set it also owns a pooled memory chunk."""
    cdef EVar* cvar
    cdef char* data
    cdef size_t nbytes

ctypedef void (*part_fn)(void* arg, int part, int nparts) noexcept nogil

cdef Var new_chunk(size_t nbytes)
cdef void run_parts(part_fn fn, void* arg, int nparts) noexcept nogil
cdef int push_kernel(kernel_fn fn, const void* args, size_t args_size,
                     EVar** reads, int nreads, EVar** writes, int nwrites,
                     int priority, const char* name, int flags) except -1
cdef int wait_var(EVar* v) except -1
cdef int wait_all_c() except -1
cdef void* pool_alloc(size_t nbytes) noexcept nogil
cdef void pool_free(void* ptr, size_t nbytes) noexcept nogil

cdef struct EOp:
    int magic              # OP_LIVE from push to completion
    kernel_fn fn
    char* args
    PyObject* pyfn
    PyObject* pyname
    const char* cname
    int priority
    int64_t seq
    int64_t t_push         # CLOCK_MONOTONIC ns at push while the profiler records, else 0
    int64_t wait_seq       # seq, or for an op pushed from inside a running op that op's
                           # wait_seq: wait_all counts it as pushed when its parent was
    int wait_count
    int ndeps
    int flags
    int skipped
    int original_error
    int* done_flag
    ErrorRec* error
    free_fn on_free
    void* free_ptr
    size_t free_nbytes
    EDep* deps
    EOp* pprev             # the list of pending ops, in push order (for wait_all)
    EOp* pnext
