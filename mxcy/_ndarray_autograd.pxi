# Included by _ndarray.pyx: the hooks through which NDArray's own syntax (a + b, -a, a[i],
# reshape, a[i] = v) is recorded by autograd. mx.nd functions record in ndarray/_gen.py;
# the arithmetic dunders and views bypass the registry for speed, so while any thread
# records they ask mxcy.autograd (`_AG`) first. One C int is the only cost otherwise.

cdef int g_recording_threads = 0       # threads inside autograd.record() (GIL held)
cdef object _AG = None                 # mxcy.autograd's hook object


def _set_autograd_hook(hook):
    global _AG
    _AG = hook


cdef extern from *:
    """
    static __thread int mxcy_thread_records = 0;   /* this thread's autograd state */
    static __thread int mxcy_thread_training = 0;
    """
    int mxcy_thread_records
    int mxcy_thread_training


cdef class ThreadState:
    """autograd's recording and training flags of the calling thread (`autograd._STATE`):
    C thread-locals, so the one recording flag is the one the C paths read (a new thread
    starts with both off). Setting `recording` also counts the recording threads."""

    @property
    def recording(self):
        return bool(mxcy_thread_records)

    @recording.setter
    def recording(self, value):
        global g_recording_threads, mxcy_thread_records
        cdef bint on = value
        if on != mxcy_thread_records:
            g_recording_threads += 1 if on else -1
            mxcy_thread_records = on

    @property
    def training(self):
        return bool(mxcy_thread_training)

    @training.setter
    def training(self, value):
        global mxcy_thread_training
        mxcy_thread_training = bool(value)


cdef dict _ARITH_SPECS = None         # op code -> (spec on two arrays, spec on a scalar,
cdef object _ARITH_BUILDER = None      #   operands swapped), built at the first use
cdef dict _SCALAR_PARAMS = {}          # scalar -> its Params
cdef object _PARAMS = None             # mxcy.operator._params.Params
cdef object _NO_PARAMS = None


def _set_arith_specs(builder):
    """autograd's builder of (the table of registry ops that record the arithmetic
    dunders, the Params class), called at the first recorded dunder: the registry is
    complete by then."""
    global _ARITH_BUILDER
    _ARITH_BUILDER = builder


cdef object _NP_ARITH = None           # mx.np's promotion/comparison hook (numpy/multiarray)


def _set_np_arith_hook(hook):
    global _NP_ARITH
    _NP_ARITH = hook


cdef inline bint _np_special(NDArray x, other, int op):
    """Whether `x OP other` on an mx.np array needs NumPy semantics that the C path does
    not have: a comparison (bool result), bool or mixed dtypes (promotion), an integer
    division (float result), or an operand that is not an array or a Python number."""
    cdef int c = x._dtype
    if c == DT_BOOL or OP_EQ <= op <= OP_LE:
        return True
    if isinstance(other, NDArray):
        return (<NDArray>other)._dtype != c or (c > 2 and (op == OP_DIV or op == OP_RDIV))
    if type(other) is float or type(other) is int:
        return c > 2 and (op == OP_DIV or op == OP_RDIV)
    return True


cdef object _arith(NDArray x, other, int op, int rop, object out):
    """The arithmetic dunders: recorded by autograd when it records and an operand (or
    the in-place target) belongs to a graph, else straight to the kernel. An mx.np array
    (any subclass) that needs NumPy's promotion or a bool result goes to mx.np's hook,
    which converts the operands and comes back here."""
    cdef object r
    if type(x) is not NDArray and _NP_ARITH is not None and _np_special(x, other, op):
        return _NP_ARITH(x, other, op, out)
    if g_recording_threads:
        if out is None:
            r = _recorded_arith(x, other, op, rop)
            if r is not None:
                return r
        r = _AG.binary(x, other, op, out)
        if r is not NotImplemented:
            return r
    return _binary(x, other, op, rop, out)


cdef object _recorded_arith(NDArray x, other, int op, int rop):
    """The common recorded case in C: the kernel, then one graph node of the registry op
    MXNet records (broadcast_mul, _mul_scalar ...), as ``mx.nd`` would record it. None:
    not this case (an in-place target, an odd operand, nothing of a graph), left to the
    general path."""
    global _ARITH_SPECS, _PARAMS, _NO_PARAMS
    cdef NDArray y = None
    cdef list inputs
    cdef tuple entry
    cdef double scalar
    if isinstance(other, float) or type(other) is int:
        if x._ag is None:
            return None
        scalar = other
    elif isinstance(other, NDArray):
        y = <NDArray>other
        if x._ag is None and y._ag is None:
            return None
    else:
        return None
    if not mxcy_thread_records:
        return None
    if _ARITH_SPECS is None:
        _ARITH_SPECS, _PARAMS = _ARITH_BUILDER()
        _NO_PARAMS = _PARAMS({})
    entry = _ARITH_SPECS.get(op)
    if entry is None:
        return None
    result = _binary(x, other, op, rop, None)
    if y is None:
        spec = entry[1]
        params = _SCALAR_PARAMS.get(other)      # 2 and 2.0: equal keys, equal params
        if params is None:
            if len(_SCALAR_PARAMS) > 1024:
                _SCALAR_PARAMS.clear()
            params = _SCALAR_PARAMS[other] = _PARAMS({'scalar': scalar})
        inputs = [x]
        versions = [x._chunk.cvar.writes_pushed] if entry[4] else None
    else:
        spec = entry[0]
        params = _NO_PARAMS
        inputs = [y, x] if entry[2] else [x, y]
        versions = input_versions(inputs, 2) if entry[3] else None
    _record(spec, params, len(inputs), inputs, versions, [result])
    return result


def _autograd():
    from mxcy import autograd
    return autograd


# ---------------------------------------------------------------- recorded calls
# mxcy.autograd's graph records, here because recording one is on the path of every
# recorded op call (a Python class cost about a microsecond more per call).
cdef class GraphOutput:
    """`array._ag` of an output of a recorded call: (node, index)."""
    cdef readonly object node
    cdef readonly int index

    def __init__(self, node, int index):
        self.node = node
        self.index = index


cdef class GraphNode:
    """One recorded operator call. It keeps what backward reads: the inputs (and their
    write counts when backward reads them), and, when the operator's backward reads
    them, its outputs as detached views (same memory, no link back to this node, so a
    graph is freed by reference counting alone)."""
    cdef public object spec, params, inputs, sources, versions, outputs, out_versions
    cdef public object out_meta
    cdef public int n_args
    cdef public bint freed

    def __init__(self, spec, params, int n_args, list inputs, versions, list outputs):
        _fill_node(self, spec, params, n_args, inputs, versions, outputs)

    def free(self):
        """Drop the saved arrays (backward without retain_graph)."""
        self.inputs = self.outputs = self.sources = None
        self.freed = True
        release = getattr(self.spec, 'release', None)
        if release is not None:         # a hybridized block's executor (gluon/_cached.py)
            release()


cdef int _fill_node(GraphNode self, spec, params, int n_args, list inputs, versions,
                    list outputs) except -1:
    cdef NDArray x
    cdef int i
    self.spec = spec
    self.params = params
    self.n_args = n_args
    self.inputs = inputs
    self.sources = [(<NDArray>inputs[i])._ag for i in range(n_args)]
    self.versions = versions
    if 'outputs' in spec.backward_needs:
        self.outputs = [(<NDArray>x)._view((<NDArray>x)._offset, (<NDArray>x)._shape)
                        for x in outputs]
        self.out_versions = [(<NDArray>x)._chunk.cvar.writes_pushed for x in outputs]
    else:
        self.outputs = self.out_versions = None
    # shapes for the zero gradient of an output that no path uses
    self.out_meta = [(x.shape, x.dtype, x.context) for x in outputs] \
        if len(outputs) > 1 else None
    self.freed = False
    return 0


def record_call(spec, params, int n_args, list inputs, versions, list outputs):
    """A GraphNode for the call, with each output's `_ag` pointing at it."""
    return _record(spec, params, n_args, inputs, versions, outputs)


cdef GraphNode _record(spec, params, int n_args, list inputs, versions, list outputs):
    cdef GraphNode node = GraphNode.__new__(GraphNode)
    cdef GraphOutput out
    cdef int i
    _fill_node(node, spec, params, n_args, inputs, versions, outputs)
    for i in range(len(outputs)):
        out = GraphOutput.__new__(GraphOutput)
        out.node = node
        out.index = i
        (<NDArray>outputs[i])._ag = out
    return node


def input_versions(list arrays, int n):
    """The write counts of the first n arrays (autograd's version check)."""
    return [(<NDArray>arrays[i])._chunk.cvar.writes_pushed for i in range(n)]


cdef class GraphVariable:
    """`array._ag` of a variable: its gradient buffer, grad_req, and whether a backward
    wrote the buffer since the flag was last cleared (Trainer's stale-gradient check)."""
    cdef public object grad, req
    cdef public bint fresh

    def __init__(self, grad, req):
        self.grad = grad
        self.req = req
        self.fresh = False


# ---------------------------------------------------------------- the backward walk
# autograd._backward's loop over the tape (issue 15: it was the hybridized step's largest
# piece of main-thread Python). `targets` is autograd._Targets: its `values` dict
# ((id(node), index) -> gradient buffer of a recorded output) and `written` set (ids of
# the variables written in this pass) are used here directly; its Python methods only
# for grad()'s captured variables. `stale` is autograd._check_versions, called to raise
# (naming the operator and input) once the C comparison found a write after recording.

cdef bint _versions_moved(GraphNode node):
    cdef list versions = node.versions
    cdef list arrays
    cdef Py_ssize_t i
    if versions is not None:
        arrays = node.inputs
        for i in range(len(versions)):
            if (<NDArray>arrays[i])._chunk.cvar.writes_pushed != <int64_t>versions[i]:
                return True
    versions = node.out_versions
    if versions is not None:
        arrays = node.outputs
        for i in range(len(versions)):
            if (<NDArray>arrays[i])._chunk.cvar.writes_pushed != <int64_t>versions[i]:
                return True
    return False


# The gradient buffers of recorded outputs (a head's ones, each node's output gradient)
# live for one backward: made new each step, each cost an engine variable and a delete
# op. One that nobody else holds once its node's backward is pushed goes back to this
# pool for the next backward of its shape (the engine orders that next write after the
# pushed reads); a buffer kept by anyone (a custom Function's backward) is left alone.
cdef dict _GRAD_POOL = {}               # (shape, dtype code, device type, device id)
                                        #   -> [idle arrays] (Context hashes in Python)
cdef Py_ssize_t _GRAD_POOL_N = 0        # idle arrays in all
cdef Py_ssize_t GRAD_POOL_MAX = 32      # at most, and 4 per key


cdef NDArray _grad_buffer(tuple shape, int dtype, ctx):
    global _GRAD_POOL_N
    cdef list idle = _GRAD_POOL.get((shape, dtype, ctx.device_typeid, ctx.device_id))
    if idle:
        _GRAD_POOL_N -= 1
        return <NDArray>idle.pop()
    return _empty(shape, dtype, ctx)


def grad_buffer(tuple shape, int dtype, ctx):
    """An uninitialised gradient buffer for autograd, from the pool when one is idle."""
    return _grad_buffer(shape, dtype, ctx)


def grad_pool_size():
    """The number of idle arrays in autograd's gradient-buffer pool (for tests)."""
    return _GRAD_POOL_N


cdef int _recycle(list grads) except -1:
    """Give `grads`' arrays back to the pool where nothing else holds them (nor a view
    of their memory); empties `grads`."""
    global _GRAD_POOL_N
    cdef Py_ssize_t i
    cdef list idle
    for i in range(len(grads)):
        g = grads[i]            # the only reference left, if nobody else holds it
        grads[i] = None
        if type(g) is not NDArray or _GRAD_POOL_N >= GRAD_POOL_MAX or Py_REFCNT(g) != 1 \
                or (<NDArray>g)._offset != 0:
            continue
        chunk = (<NDArray>g)._chunk
        if Py_REFCNT(chunk) != 2:       # the array's and `chunk`'s: no view of it
            continue
        ctx = (<NDArray>g)._ctx
        key = ((<NDArray>g)._shape, (<NDArray>g)._dtype, ctx.device_typeid, ctx.device_id)
        idle = _GRAD_POOL.get(key)
        if idle is None:
            idle = _GRAD_POOL[key] = []
        elif len(idle) >= 4:
            continue
        idle.append(g)
        _GRAD_POOL_N += 1
    return 0


def tape_order(list heads):
    """(The nodes reachable from `heads`' arrays, each after every node that feeds it,
    None), or (None, the first node met whose graph an earlier backward freed)."""
    cdef list order = [], stack = []
    cdef dict state = {}                # node -> 1 (expanding) or 2 (placed)
    cdef GraphNode node
    for h in heads:
        ag = (<NDArray>h)._ag
        if type(ag) is GraphOutput:
            stack.append(((<GraphOutput>ag).node, False))
    while stack:
        item = stack.pop()
        node = <GraphNode>item[0]
        if item[1]:
            if state.get(node) != 2:
                state[node] = 2
                order.append(node)
            continue
        if node in state:
            continue
        if node.freed:
            return None, node
        state[node] = 1
        stack.append((node, True))
        for src in node.sources:
            if type(src) is GraphOutput and (<GraphOutput>src).node not in state:
                stack.append(((<GraphOutput>src).node, False))
    return order, None


def run_tape(list order, targets, stale):
    """Push each node's backward, `order` (autograd._topological) walked from the end."""
    cdef dict values = targets.values
    cdef set written = targets.written
    cdef bint plain = targets.captured is None
    cdef Py_ssize_t k
    for k in range(len(order) - 1, -1, -1):
        _run_node(<GraphNode>order[k], targets, values, written, plain, stale)


cdef int _run_node(GraphNode node, targets, dict values, set written, bint plain,
                   stale) except -1:
    cdef object spec = node.spec
    cdef list out_grads, in_grads = [], reqs = [], later = None, ins = node.inputs
    cdef list sources = node.sources
    cdef set seen = None
    cdef Py_ssize_t i, n = node.n_args
    cdef GraphVariable var
    cdef GraphOutput out
    cdef NDArray x, tmp
    cdef tuple key
    if node.out_meta is None:
        out_grads = [values.pop((id(node), 0))]
    else:
        out_grads = []
        unused = getattr(spec, 'unused_out_grads', ())     # None for these, not zeros
        for i, meta in enumerate(node.out_meta):
            g = values.pop((id(node), i), None)
            if g is None and i not in unused:
                g = full(meta[0], 0, meta[2], meta[1])
            out_grads.append(g)
    for i in range(len(sources)):
        src = sources[i]
        if type(src) is GraphVariable and plain:        # the usual case
            var = <GraphVariable>src
            if var.req == 'null':
                buf, req = None, 'null'
            else:
                buf = var.grad
                req = 'add' if var.req == 'add' or id(var) in written else 'write'
                var.fresh = True
                written.add(id(var))
        elif type(src) is GraphOutput:
            out = <GraphOutput>src
            key = (id(out.node), out.index)
            buf = values.get(key)
            if buf is not None:
                req = 'add'
            else:
                x = <NDArray>ins[i]
                buf = values[key] = _grad_buffer(x._shape, x._dtype, x._ctx)
                req = 'write'
        elif type(src) is GraphVariable:
            buf, req = targets.variable(src)
        else:
            buf, req = None, 'null'
        if buf is not None:
            if seen is None:
                seen = set()
            elif id(buf) in seen:
                # the same array twice among the inputs (x * x): a temporary, added after
                x = <NDArray>ins[i]
                tmp = _empty(x._shape, x._dtype, x._ctx)
                if later is None:
                    later = []
                later.append((buf, tmp))
                buf, req = tmp, 'write'
            seen.add(id(buf))
        in_grads.append(buf)
        reqs.append(req)
    if seen is None:                            # nothing to compute
        _recycle(out_grads)
        return 0
    if _versions_moved(node):
        stale(node)
    spec.backward(node.params, reqs, out_grads, ins[:n], node.outputs, in_grads, ins[n:])
    if later is not None:
        for buf, tmp in later:
            buf += tmp
    _recycle(out_grads)
    return 0
