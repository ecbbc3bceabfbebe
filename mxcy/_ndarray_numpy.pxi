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

    def __getattr__(self, name):
        # not NDArray's: mx.nd's functions are no methods of an mx.np array
        raise AttributeError(f"'ndarray' object has no attribute '{name}'")


cdef extern from *:
    """
    static void mxcy_copy_arith_slots(PyObject* dst, PyObject* src) {
        PyNumberMethods* d = ((PyTypeObject*)dst)->tp_as_number;
        PyNumberMethods* s = ((PyTypeObject*)src)->tp_as_number;
        d->nb_add = s->nb_add;
        d->nb_subtract = s->nb_subtract;
        d->nb_multiply = s->nb_multiply;
        d->nb_true_divide = s->nb_true_divide;
        PyType_Modified((PyTypeObject*)dst);
    }
    static destructor mxcy_base_dealloc = NULL;
    static void mxcy_np_dealloc(PyObject* o) {
        /* subtype_dealloc's work for a class that adds nothing to its C base (no
           fields, __dict__, finalizer): the base's dealloc, then the type's reference */
        PyTypeObject* tp = Py_TYPE(o);
        mxcy_base_dealloc(o);
        Py_DECREF(tp);
    }
    static int mxcy_set_plain_dealloc(PyObject* cls, PyObject* base) {
        PyTypeObject* t = (PyTypeObject*)cls;
        PyTypeObject* b = (PyTypeObject*)base;
        if (t->tp_basicsize != b->tp_basicsize || t->tp_itemsize || t->tp_dictoffset ||
                t->tp_finalize || t->tp_del || t->tp_weaklistoffset != b->tp_weaklistoffset)
            return 0;
        mxcy_base_dealloc = b->tp_dealloc;
        t->tp_dealloc = mxcy_np_dealloc;
        return 1;
    }
    static void mxcy_generic_getattr(PyObject* dst) {
        ((PyTypeObject*)dst)->tp_getattro = PyObject_GenericGetAttr;
        PyType_Modified((PyTypeObject*)dst);
    }
    """
    void mxcy_copy_arith_slots(object dst, object src)
    void mxcy_generic_getattr(object dst)
    int mxcy_set_plain_dealloc(object cls, object base)

_C_ARITH = ('__add__', '__radd__', '__sub__', '__rsub__', '__mul__', '__rmul__',
            '__truediv__', '__rtruediv__')
_C_GETATTR = ('__getattribute__', '__getattr__')


def _keep_c_operators(type cls):
    """Give `cls`, a Python subclass of _NumpyOperators, its base's C slots for +, -, *, /
    and CPython's own attribute lookup. CPython gives a Python subclass its generic slot (a
    method lookup and call per operator or attribute) whenever a base lists one of the
    names as a method rather than a slot wrapper, as Cython's `__add__` and `__getattr__`
    are; the C slot is what that lookup ends at. Each group is left alone when the class
    (or a base between) defines one of its names itself. Returns the number of groups set."""
    cdef int copied = 0
    if not issubclass(cls, _NumpyOperators) or cls.__flags__ & (1 << 9) == 0:
        raise TypeError(f"_keep_c_operators: {cls!r} is not a Python subclass of "
                        f"_NumpyOperators")
    if all(getattr(cls, n) is getattr(_NumpyOperators, n) for n in _C_ARITH):
        mxcy_copy_arith_slots(cls, _NumpyOperators)
        copied += 1
    if all(getattr(cls, n) is getattr(_NumpyOperators, n) for n in _C_GETATTR):
        # _NumpyOperators.__getattr__ only raises: CPython's own lookup raises the same
        # AttributeError, and its method calls then skip making a bound method
        mxcy_generic_getattr(cls)
        copied += 1
    return copied


def np_unary(type cls, int code, slow, str name):
    """mx.np's unary function `name` (exp, log ...): a float32/float64 array of class
    `cls` (mx.np.ndarray, exactly) with no `out`, on a thread that is not recording, goes
    straight to the C kernel `code` (a U_* code), as ``mx.nd``'s arithmetic does; any
    other call is ``slow(x, out=out, **kwargs)``, the registry path."""
    def fn(x, out=None, **kwargs):
        if type(x) is cls and out is None and (<NDArray>x)._dtype <= DT_FLOAT64 and \
                not mxcy_thread_records:
            return _unary(<NDArray>x, code, None)
        return slow(x, out=out, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = slow.__doc__
    fn.__module__ = slow.__module__
    return fn


def _plain_dealloc(type cls):
    """Free instances of `cls` (mx.np.ndarray: a Python subclass of _NumpyOperators that adds
    no field, __dict__ or finalizer) with the C base's dealloc and a decref of the type,
    which is what CPython's generic subtype dealloc comes down to for such a class, at a
    fraction of its cost (each result array is freed once). Only for a class that will
    get no __del__ later (CPython would not revisit this slot). Returns whether it did."""
    if not issubclass(cls, _NumpyOperators) or cls.__flags__ & (1 << 9) == 0 or \
            type(cls) is not type:
        raise TypeError(f"_plain_dealloc: {cls!r} is not a Python subclass of "
                        f"_NumpyOperators")
    return bool(mxcy_set_plain_dealloc(cls, _NumpyOperators))
