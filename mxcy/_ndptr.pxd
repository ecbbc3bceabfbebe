# Raw access to an NDArray from other Cython modules: its data address and engine var,
# and the two questions every kernel push must answer about views (see nd_apart, nd_wflag).
# (The NumPy view shares the array's memory and is cheap next to the kernels these feed.)
cimport numpy as cnp
from mxcy._engine cimport Var, EVar, FLAG_PARTIAL0, MAX_PARTIAL_WRITES


cdef inline char* nd_ptr(arr) except NULL:
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>arr._np_view())


cdef inline EVar* nd_var(arr) except NULL:
    return (<Var?>arr._chunk).cvar


cdef inline bint spans_clash(size_t xa, size_t xn, size_t oa, size_t on,
                             bint same_place_ok) noexcept nogil:
    """Whether a kernel that reads bytes [xa, xa+xn) and writes [oa, oa+on) could read
    what it has already written: the spans overlap, other than exactly in place for a
    kernel that reads each element before it writes it (elementwise ones)."""
    if xn == 0 or on == 0 or xa + xn <= oa or oa + on <= xa:
        return False
    return not (same_place_ok and xa == oa and xn == on)


cdef inline object nd_apart(x, outs, bint same_place_ok=False):
    """`x`, or a copy of it (pushed first) when it overlaps one of `outs`: the kernel then
    reads its input as it was before the op (NumPy's semantics), however it is split."""
    if x is None:
        return x
    for o in outs:
        if o is not None and o._chunk is x._chunk:
            xa, xn = x._span()
            oa, on = o._span()
            if spans_clash(xa, xn, oa, on, same_place_ok):
                return x.copy()
    return x


cdef inline int nd_wflag(arr, int i) except -1:
    """The push flag of write i when `arr` is a view of part of its chunk (its success
    then keeps an error the chunk carries), else 0."""
    cdef Var chunk = <Var?>arr._chunk
    if i >= MAX_PARTIAL_WRITES:
        return 0
    addr, nbytes = arr._span()
    if addr == <size_t>chunk.data and nbytes == chunk.nbytes:
        return 0
    return FLAG_PARTIAL0 << i
