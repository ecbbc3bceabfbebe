# Part of mxcy/_ops.pyx (textually included there): axis permutation (transpose, SwapAxis)
# and row gather/scatter (Embedding). As Python ops these needed the GIL on a worker,
# stalling the thread that pushes the next batch; as C kernels they run beside it.

cdef enum:
    PERM_MAX_DIMS = 8

cdef struct PermuteArgs:
    char* src
    char* dst
    int64_t n                          # elements
    int ndim
    int itemsize
    int64_t shape[8]                   # of dst
    int64_t src_stride[8]              # elements of src per step along each dst axis


cdef inline void copy_item(char* dst, char* src, int itemsize) noexcept nogil:
    if itemsize == 4:
        (<int32_t*>dst)[0] = (<int32_t*>src)[0]
    elif itemsize == 8:
        (<int64_t*>dst)[0] = (<int64_t*>src)[0]
    elif itemsize == 2:
        (<uint16_t*>dst)[0] = (<uint16_t*>src)[0]
    else:
        dst[0] = src[0]


ctypedef fused item_t:
    uint8_t
    uint16_t
    int32_t
    int64_t


cdef void copy_blocks(item_t* dst, const item_t* src, int64_t na, int64_t nb, int64_t du,
                      int64_t su, int64_t sl) noexcept nogil:
    """dst[i·du + j] := src[i·su + j·sl] for i < na, j < nb, by 16x16 blocks."""
    cdef int64_t a0, b0, a1, b1, i, j
    for a0 in range(0, na, 16):
        a1 = min(na, a0 + 16)
        for b0 in range(0, nb, 16):
            b1 = min(nb, b0 + 16)
            for i in range(a0, a1):
                for j in range(b0, b1):
                    dst[i * du + j] = src[i * su + j * sl]


cdef void permute_tiled(PermuteArgs* a, int u) noexcept nogil:
    """The permutation by 16x16 blocks of dst's axes (u, last), one block pass per index of
    the other axes: where dst's last axis is strided in src and axis u is not, a row-by-row
    copy reads each element from another cache line (a (1, 2, 0) transpose of 64^3 floats
    jumps 16 KB a read); in blocks both sides stay in cache."""
    cdef int nd = a.ndim, isz = a.itemsize, d, k, nout = 0
    cdef int ax[8]
    cdef int64_t idx[8]
    cdef int64_t dstride[8]
    cdef int64_t na = a.shape[u], nb = a.shape[nd - 1]
    cdef int64_t su = a.src_stride[u], sl = a.src_stride[nd - 1]
    cdef int64_t so = 0, do = 0, it, count, du
    dstride[nd - 1] = 1
    for d in range(nd - 2, -1, -1):
        dstride[d] = dstride[d + 1] * a.shape[d + 1]
    du = dstride[u]
    for d in range(nd - 1):
        if d != u:
            ax[nout] = d
            idx[nout] = 0
            nout += 1
    count = a.n // (na * nb)
    for it in range(count):
        if isz == 4:
            copy_blocks((<int32_t*>a.dst) + do, (<int32_t*>a.src) + so, na, nb, du, su, sl)
        elif isz == 8:
            copy_blocks((<int64_t*>a.dst) + do, (<int64_t*>a.src) + so, na, nb, du, su, sl)
        elif isz == 2:
            copy_blocks((<uint16_t*>a.dst) + do, (<uint16_t*>a.src) + so, na, nb, du, su, sl)
        else:
            copy_blocks((<uint8_t*>a.dst) + do, (<uint8_t*>a.src) + so, na, nb, du, su, sl)
        k = nout - 1
        while k >= 0:
            d = ax[k]
            idx[k] += 1
            so += a.src_stride[d]
            do += dstride[d]
            if idx[k] < a.shape[d]:
                break
            so -= a.src_stride[d] * a.shape[d]
            do -= dstride[d] * a.shape[d]
            idx[k] = 0
            k -= 1


cdef int permute_kernel(void* args, char* errmsg) noexcept nogil:
    """dst (row-major) := src with its axes permuted; odometer over dst's index space (by
    blocks where dst's last axis is strided in src: permute_tiled)."""
    cdef PermuteArgs* a = <PermuteArgs*>args
    cdef int64_t idx[8]
    cdef int nd = a.ndim, d, isz = a.itemsize
    cdef int64_t inner = a.shape[nd - 1], step = a.src_stride[nd - 1] * isz
    cdef int64_t o = 0, i, so = 0
    cdef char* s
    cdef char* t
    if nd >= 2 and inner >= 4 and a.src_stride[nd - 1] != 1:
        for d in range(nd - 1):
            if a.src_stride[d] == 1 and a.shape[d] >= 4:
                permute_tiled(a, d)
                return 0
    for d in range(nd):
        idx[d] = 0
    while o < a.n:
        s = a.src + so * isz
        t = a.dst + o * isz
        if step == isz:                 # a contiguous row
            memcpy(t, s, inner * isz)
        else:
            for i in range(inner):
                copy_item(t + i * isz, s + i * step, isz)
        o += inner
        d = nd - 2
        while d >= 0:
            idx[d] += 1
            so += a.src_stride[d]
            if idx[d] < a.shape[d]:
                break
            so -= a.src_stride[d] * a.shape[d]
            idx[d] = 0
            d -= 1
    return 0


cdef bytes _B_PERMUTE = b"transpose"


def push_permute(x, out, perm, str name='transpose'):
    """Push out := x.transpose(perm) (out has the permuted shape and x's dtype)."""
    cdef PermuteArgs a
    cdef EVar* r
    cdef EVar* w
    cdef int d, nd = len(perm)
    shape = x.shape
    if nd != len(shape) or nd > PERM_MAX_DIMS or nd < 1:
        raise ValueError(f"{name}: permutation {tuple(perm)} for shape {tuple(shape)} "
                         f"(at most {PERM_MAX_DIMS} axes)")
    if tuple(out.shape) != tuple(shape[p] for p in perm) or out.dtype != x.dtype:
        raise ValueError(f"{name}: output {tuple(out.shape)} does not match the permuted "
                         f"shape {tuple(shape[p] for p in perm)}")
    strides = [1] * nd
    for d in range(nd - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    a.n = x.size
    if a.n == 0:
        return
    a.ndim = nd
    a.itemsize = np.dtype(x.dtype).itemsize
    for d in range(nd):
        a.shape[d] = shape[perm[d]]
        a.src_stride[d] = strides[perm[d]]
    x = nd_apart(x, (out,))
    a.src = nd_ptr(x)
    a.dst = nd_ptr(out)
    r = nd_var(x)
    w = nd_var(out)
    push_kernel(permute_kernel, &a, sizeof(a), &r, 1, &w, 1, 0, _B_PERMUTE,
                (FLAG_SMALL if a.n <= 16384 else 0) | nd_wflag(out, 0))


# ---------------------------------------------------------------- rows by index
cdef struct RowsArgs:
    char* idx
    char* table          # (input_dim, width)
    char* rows           # (count, width)
    int64_t count
    int64_t input_dim
    int64_t width
    int idx_dtype
    int dtype            # of table and rows (scatter: float32/float64)
    int itemsize
    int zero_first       # scatter with req write


cdef inline int64_t clipped_index(char* idx, int dtype, int64_t i, int64_t n) noexcept nogil:
    """MXNet's clip mode: truncate toward zero, then clamp into [0, n)."""
    cdef int64_t k = <int64_t>load_as_double(idx, dtype, i)
    if k < 0:
        return 0
    return k if k < n else n - 1


cdef int gather_rows_kernel(void* args, char* errmsg) noexcept nogil:
    """rows[i] := table[clip(idx[i])] (Embedding forward)."""
    cdef RowsArgs* a = <RowsArgs*>args
    cdef int64_t i, nbytes = a.width * a.itemsize
    for i in range(a.count):
        memcpy(a.rows + i * nbytes,
               a.table + clipped_index(a.idx, a.idx_dtype, i, a.input_dim) * nbytes, nbytes)
    return 0


cdef void scatter_typed(RowsArgs* a, real_t* table, real_t* rows) noexcept nogil:
    cdef int64_t i, j, k, w = a.width
    cdef real_t* dst
    cdef real_t* src
    if a.zero_first:
        memset(table, 0, a.input_dim * w * sizeof(real_t))
    for i in range(a.count):
        k = clipped_index(a.idx, a.idx_dtype, i, a.input_dim)
        dst = table + k * w
        src = rows + i * w
        for j in range(w):
            dst[j] += src[j]


cdef int scatter_rows_kernel(void* args, char* errmsg) noexcept nogil:
    """table[clip(idx[i])] += rows[i] (Embedding backward), zeroing table first for write."""
    cdef RowsArgs* a = <RowsArgs*>args
    if a.dtype == DT_FLOAT32:
        scatter_typed(a, <float*>a.table, <float*>a.rows)
    else:
        scatter_typed(a, <double*>a.table, <double*>a.rows)
    return 0


cdef bytes _B_GATHER = b"Embedding"
cdef bytes _B_SCATTER = b"Embedding_backward"


def push_rows(str direction, idx, table, rows, bint zero_first=True):
    """'gather': rows := table[clip(idx)]; 'scatter': table (zeroed first when zero_first)
    += rows at clip(idx). idx holds `count` indices (float or int); table is
    (input_dim, width), rows (count, width), one dtype (scatter: float32/float64)."""
    cdef RowsArgs a
    cdef EVar* reads[2]
    cdef EVar* w
    if direction not in ('gather', 'scatter'):
        raise ValueError(f"push_rows: direction must be 'gather' or 'scatter', got "
                         f"{direction!r}")
    dt = np.dtype(table.dtype)
    if (len(table.shape) != 2 or len(rows.shape) != 2 or rows.shape[1] != table.shape[1]
            or rows.shape[0] != idx.size or np.dtype(rows.dtype) != dt):
        raise ValueError(f"Embedding: rows {np.dtype(rows.dtype).name}{tuple(rows.shape)} "
                         f"do not match table {dt.name}{tuple(table.shape)} and "
                         f"{idx.size} indices")
    if np.dtype(idx.dtype) not in INDEX_DTYPES:
        raise TypeError(f"Embedding: indices must be float32/float64/int32/int64, got "
                        f"{np.dtype(idx.dtype).name}")
    if direction == 'scatter' and dt not in FLOAT_DTYPES:
        raise TypeError(f"Embedding_backward: float32 or float64 only, got {dt.name}")
    a.count = idx.size
    a.input_dim = table.shape[0]
    a.width = table.shape[1]
    a.idx_dtype = _NP_CODES[np.dtype(idx.dtype)]
    a.dtype = _NP_CODES.get(dt, -1)
    a.itemsize = dt.itemsize
    a.zero_first = zero_first
    written = rows if direction == 'gather' else table
    idx = nd_apart(idx, (written,))
    if direction == 'gather':
        table = nd_apart(table, (rows,))
    else:
        rows = nd_apart(rows, (table,))
    a.idx = nd_ptr(idx)
    a.table = nd_ptr(table)
    a.rows = nd_ptr(rows)
    if a.input_dim == 0 and a.count > 0:
        raise ValueError("Embedding: input_dim is 0, there is no row to index")
    reads[0] = nd_var(idx)
    if direction == 'gather':
        if a.count == 0 or a.width == 0:
            return
        reads[1] = nd_var(table)
        w = nd_var(rows)
        push_kernel(gather_rows_kernel, &a, sizeof(a), reads, 2, &w, 1, 0, _B_GATHER,
                    (FLAG_SMALL if rows.size <= 16384 else 0) | nd_wflag(rows, 0))
    else:
        reads[1] = nd_var(rows)
        w = nd_var(table)
        push_kernel(scatter_rows_kernel, &a, sizeof(a), reads, 2, &w, 1, 0, _B_SCATTER,
                    (FLAG_SMALL if rows.size <= 16384 else 0) | nd_wflag(table, 0))
