# mx.np's C base class (included at the end of _ndarray.pyx)


@cython.c_api_binop_methods(True)
cdef class _NumpyOperators(NDArray):
    """The base of ``mx.np.ndarray``: +, -, *, / as C slots. A Python class deriving
    NDArray directly gets CPython's generic operator slot (NDArray's __add__/__radd__ are
    methods), a method lookup per operator; deriving this class keeps the C slot. The
    operand that is an mx.np array decides, as its __add__/__radd__ did."""

    def __add__(x, y):
        if isinstance(x, _NumpyOperators):
            return _arith(<NDArray>x, y, OP_ADD, OP_ADD, None)
        return _arith(<NDArray>y, x, OP_ADD, OP_ADD, None)

    def __sub__(x, y):
        if isinstance(x, _NumpyOperators):
            return _arith(<NDArray>x, y, OP_SUB, OP_RSUB, None)
        return _arith(<NDArray>y, x, OP_RSUB, OP_SUB, None)

    def __mul__(x, y):
        if isinstance(x, _NumpyOperators):
            return _arith(<NDArray>x, y, OP_MUL, OP_MUL, None)
        return _arith(<NDArray>y, x, OP_MUL, OP_MUL, None)

    def __truediv__(x, y):
        if isinstance(x, _NumpyOperators):
            return _arith(<NDArray>x, y, OP_DIV, OP_RDIV, None)
        return _arith(<NDArray>y, x, OP_RDIV, OP_DIV, None)
