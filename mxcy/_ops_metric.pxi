# Part of mxcy/_ops.pyx (textually included there): metric kernels. A training loop updates
# its metric every batch; as a Python op that update needs the GIL on a worker, which stalls
# the thread that is pushing the next batch (GIL hand-offs cost up to the switch interval).

cdef struct AccuracyArgs:
    char* pred
    char* label
    double* counts        # [correct, seen], accumulated
    int64_t rows
    int64_t classes
    int pred_dtype
    int label_dtype


cdef inline double load_as_double(char* p, int dtype, int64_t i) noexcept nogil:
    if dtype == DT_FLOAT32:
        return (<float*>p)[i]
    if dtype == DT_FLOAT64:
        return (<double*>p)[i]
    if dtype == DT_INT32:
        return (<int32_t*>p)[i]
    return <double>(<int64_t*>p)[i]


cdef int accuracy_kernel(void* args, char* errmsg) noexcept nogil:
    """counts += [rows whose argmax (NumPy's: the first maximum, NaN wins) equals the
    label truncated to an integer, rows]."""
    cdef AccuracyArgs* a = <AccuracyArgs*>args
    cdef int64_t i, j, best, correct = 0
    cdef double v, top
    for i in range(a.rows):
        best = 0
        top = load_as_double(a.pred, a.pred_dtype, i * a.classes)
        for j in range(1, a.classes):
            if top != top:
                break
            v = load_as_double(a.pred, a.pred_dtype, i * a.classes + j)
            if v > top or v != v:
                best = j
                top = v
        if <int64_t>load_as_double(a.label, a.label_dtype, i) == best:
            correct += 1
    a.counts[0] += correct
    a.counts[1] += a.rows
    return 0


cdef bytes _B_ACCURACY = b"Accuracy.update"
# the dtypes the C metric and row kernels take (callers check with these, never a copy)
FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
INDEX_DTYPES = FLOAT_DTYPES + (np.dtype(np.int32), np.dtype(np.int64))


def push_accuracy_update(pred, label, counts):
    """Push counts += [correct, rows] for class scores `pred` (rows, classes) against
    `label` (rows values), into the float64 NDArray `counts` of shape (2,)."""
    cdef AccuracyArgs a
    cdef EVar* reads[2]
    cdef EVar* w
    if len(pred.shape) != 2 or pred.shape[1] < 1:
        raise ValueError(f"Accuracy.update: predictions must be (batch, classes), got "
                         f"{tuple(pred.shape)}")
    if label.size != pred.shape[0]:
        raise ValueError(f"Accuracy.update: label shape {tuple(label.shape)} does not match "
                         f"prediction shape {tuple(pred.shape)}; expected one label per row")
    if np.dtype(pred.dtype) not in FLOAT_DTYPES or np.dtype(label.dtype) not in INDEX_DTYPES:
        raise TypeError(f"Accuracy.update: float predictions and float/int labels, got "
                        f"{np.dtype(pred.dtype).name} and {np.dtype(label.dtype).name}")
    if np.dtype(counts.dtype) != np.float64 or counts.shape != (2,):
        raise ValueError("Accuracy.update: counts must be a float64 array of shape (2,)")
    pred = nd_apart(pred, (counts,))
    label = nd_apart(label, (counts,))
    a.pred = nd_ptr(pred)
    a.label = nd_ptr(label)
    a.counts = <double*>nd_ptr(counts)
    a.rows = pred.shape[0]
    a.classes = pred.shape[1]
    a.pred_dtype = _NP_CODES[np.dtype(pred.dtype)]
    a.label_dtype = _NP_CODES[np.dtype(label.dtype)]
    reads[0] = nd_var(pred)
    reads[1] = nd_var(label)
    w = nd_var(counts)
    push_kernel(accuracy_kernel, &a, sizeof(a), reads, 2, &w, 1, 0, _B_ACCURACY,
                (FLAG_SMALL if pred.size <= 16384 else 0) | nd_wflag(counts, 0))


def accuracy_np(pred, label):
    """The kernel's twin on NumPy arrays: [correct, rows]."""
    counts = np.zeros(2, np.float64)
    cdef AccuracyArgs a
    cdef char err[256]
    pred = np.ascontiguousarray(pred)
    label = np.ascontiguousarray(label)
    if pred.ndim != 2 or label.size != pred.shape[0] or pred.dtype not in FLOAT_DTYPES \
            or label.dtype not in INDEX_DTYPES:
        raise ValueError(f"accuracy_np: needs float (rows, classes) scores and one float/int "
                         f"label per row, got {pred.dtype}{pred.shape}, "
                         f"{label.dtype}{label.shape}")
    a.pred = <char*>cnp.PyArray_DATA(pred)
    a.label = <char*>cnp.PyArray_DATA(label)
    a.counts = <double*>cnp.PyArray_DATA(counts)
    a.rows = pred.shape[0]
    a.classes = pred.shape[1]
    a.pred_dtype = _NP_CODES[pred.dtype]
    a.label_dtype = _NP_CODES[label.dtype]
    accuracy_kernel(&a, err)
    return counts
