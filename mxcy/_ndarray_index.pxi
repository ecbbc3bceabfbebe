# Included by _ndarray.pyx: the NumPy paths (float16 fallbacks, casts, indexing with keys
# that are not first-axis views) and MXNet's reshape rules.

# ---------------------------------------------------------------- NumPy copies
cdef object _np_copy(NDArray x):
    """A new NumPy array holding a copy of x's values (x's writers have run): one NumPy
    allocation and a memcpy, without the GIL for a large copy."""
    cdef cnp.npy_intp dims[32]
    cdef int i, nd = len(x._shape)
    cdef char* src = x._ptr()
    cdef size_t nbytes = <size_t>x._nbytes()
    cdef void* dst
    for i in range(nd):
        dims[i] = x._shape[i]
    arr = cnp.PyArray_SimpleNew(nd, dims, NP_TYPENUM[x._dtype])
    dst = cnp.PyArray_DATA(<cnp.ndarray>arr)
    if nbytes > 65536:
        with nogil:
            memcpy(dst, src, nbytes)
    elif nbytes:
        memcpy(dst, src, nbytes)
    return arr


# ---------------------------------------------------------------- NumPy fallbacks
def _binary_np(int op, scalar):
    """The float16 path of a binary op: `mxcy._reference`, the same semantics in NumPy."""
    def run(x, *rest):
        _reference.binary_np(op, x, rest[0] if len(rest) == 2 else scalar, rest[-1])
    return run


def _unary_np(int op):
    """The float16 path of a unary op (see `_binary_np`)."""
    def run(x, out):
        _reference.unary_np(op, x, out)
    return run


def _fill_into(value):
    def run(out):
        out[...] = value
    return run


def _copy_into(src, out):
    out[...] = src


def _cast_into(src, out):
    out[...] = src.astype(out.dtype)


def _frozen_key(key):
    """A private copy of an index key: the op that uses it runs later, on a worker, so a
    list or NumPy array the caller changes after the call must not reach it. NDArray
    indices become int64 NumPy arrays (MXNet accepts float index arrays too)."""
    if isinstance(key, tuple):
        return tuple(_frozen_key(k) for k in key)
    if isinstance(key, NDArray):
        return key.asnumpy().astype(np.int64)
    if isinstance(key, list) and not key:
        return np.array([], dtype=np.intp)
    if isinstance(key, (list, np.ndarray)):
        return np.array(key)
    return key


def _getitem_copy(NDArray x, key):
    """x[key] for keys that are not first-axis views: a new array (NumPy semantics)."""
    probe = np.broadcast_to(np.empty((), dtype=np.int8), x._shape)
    try:
        shape = probe[key].shape
    except IndexError as e:
        raise IndexError(f"NDArray index {key!r} is invalid for shape {x._shape}: {e}") from None
    if shape == () and type(x) is NDArray:
        shape = (1,)        # MXNet 1.x has no 0-d arrays (mx.np has)
    out = _empty_as(x, shape, x._dtype, x._ctx)

    def run(src, dst):
        dst[...] = np.asarray(src[key]).reshape(dst.shape)
    _push_numpy(run, [x], [out], 'getitem')
    return out


def _setitem_numpy(NDArray x, key, value):
    probe = np.broadcast_to(np.empty((), dtype=np.int8), x._shape)
    try:
        target_shape = probe[key].shape
    except IndexError as e:
        raise IndexError(f"NDArray index {key!r} is invalid for shape {x._shape}: {e}") from None
    if isinstance(value, NDArray):
        src = value
        vshape = value.shape
    elif isinstance(value, numbers.Number):
        src = None
        vshape = ()
    else:
        src = from_numpy_copy(np.asarray(value), x._ctx, _NP_TYPES[x._dtype])
        vshape = src.shape
    try:
        np.broadcast_to(np.empty(vshape, dtype=np.int8), target_shape)
    except ValueError:
        raise ValueError(f"cannot assign a value of shape {vshape} to NDArray index "
                         f"{key!r} of shape {target_shape}") from None
    if src is None:
        def run_scalar(dst):
            dst[key] = value
        _push_numpy(run_scalar, [], [x], 'setitem')
    else:
        def run(v, dst):
            dst[key] = v.astype(dst.dtype, copy=False)
        _push_numpy(run, [src], [x], 'setitem')


# ---------------------------------------------------------------- reshape rules
def infer_reshape(tuple src, tuple target, bint reverse=False):
    """MXNet's Reshape: 0 copies a dim, -1 infers one, -2 copies the rest, -3 merges two,
    -4 splits one into the next two values (one may be -1)."""
    cdef int64_t total = _prod(src)
    cdef bint plain = True
    for t in target:
        if type(t) is int:
            if t <= 0:
                plain = False
            continue
        plain = False
        if isinstance(t, bool) or not isinstance(t, numbers.Integral):
            raise TypeError(f"reshape: shape must contain integers, got {target!r}")
    if plain and not reverse and _prod(target) == total:
        return target         # the common case: explicit positive sizes
    if reverse:
        res = infer_reshape(src[::-1], target[::-1], False)
        return tuple(res[::-1])
    out = []
    i = 0     # index into src
    j = 0
    infer_at = -1
    target = tuple(int(t) for t in target)
    while j < len(target):
        t = target[j]
        if t > 0:
            out.append(t)
            i += 1
        elif t == 0:
            if i >= len(src):
                raise ValueError(f"reshape: 0 at position {j} has no matching input "
                                 f"dimension (input shape {src})")
            out.append(src[i])
            i += 1
        elif t == -1:
            if infer_at >= 0:
                raise ValueError(f"reshape: more than one -1 in {target}")
            infer_at = len(out)
            out.append(1)
            i += 1
        elif t == -2:
            out.extend(src[i:])
            i = len(src)
        elif t == -3:
            if i + 1 >= len(src):
                raise ValueError(f"reshape: -3 needs two input dimensions at {i} "
                                 f"(input shape {src})")
            out.append(src[i] * src[i + 1])
            i += 2
        elif t == -4:
            if j + 2 >= len(target) or i >= len(src):
                raise ValueError(f"reshape: -4 must be followed by two values, in {target}")
            d1, d2 = target[j + 1], target[j + 2]
            if d1 < -1 or d2 < -1 or (d1 == -1 and d2 == -1):
                raise ValueError(f"reshape: -4 must be followed by two sizes (at most one "
                                 f"of them -1), got {d1}, {d2} in {target}")
            if d1 == -1:
                d1 = src[i] // d2 if d2 else 0
            if d2 == -1:
                d2 = src[i] // d1 if d1 else 0
            if d1 * d2 != src[i]:
                raise ValueError(f"reshape: -4 split {d1}x{d2} does not equal input "
                                 f"dimension {src[i]} (input shape {src})")
            out.extend([d1, d2])
            i += 1
            j += 2
        else:
            raise ValueError(f"reshape: invalid value {t} in target shape {target}")
        j += 1
    if infer_at >= 0:
        known = 1
        for k, d in enumerate(out):
            if k != infer_at:
                known *= d
        if known == 0 or total % known:
            raise ValueError(f"reshape: cannot reshape array of shape {src} into {target}")
        out[infer_at] = total // known
    if _prod(tuple(out)) != total:
        raise ValueError(f"reshape: cannot reshape array of shape {src} (size {total}) into "
                         f"{tuple(out)} (size {_prod(tuple(out))})")
    return tuple(out)
