# Raw access to an NDArray from other Cython modules: its data address and engine var.
# (The NumPy view shares the array's memory and is cheap next to the kernels these feed.)
cimport numpy as cnp
from mxcy._engine cimport Var, EVar


cdef inline char* nd_ptr(arr) except NULL:
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>arr._np_view())


cdef inline EVar* nd_var(arr) except NULL:
    return (<Var?>arr._chunk).cvar
