"""Imperative differentiation (MXNet 1.x ``mx.autograd``).

Inside ``record()``, every operator call whose inputs belong to a graph (a variable made
by ``attach_grad``/``mark_variables``, or the output of a recorded call) is recorded as a
node: the operator's one declaration (`OpSpec`), its parsed parameters, its inputs and
their write counts at the call, its outputs. ``backward`` walks the nodes reachable from
the heads in reverse order and pushes each operator's own ``backward`` — the kernels the
executor runs, so a gradient fixed for one is fixed for both. Gradient buffers follow
bind's rules: the first contribution to a variable with grad_req 'write' overwrites it,
later ones (and 'add') accumulate.

Recording state is per thread, as in MXNet. The graph is held by the arrays (each output
points at its node), so two threads recording at once build separate graphs.

Versions catch what MXNet let through silently: an input that backward reads and that was
written after it was recorded (``x[:] = 0`` between forward and backward) makes backward
raise, naming the operator, instead of returning a wrong gradient.

``grad(create_graph=True)`` records the gradient computation itself (mxcy._autograd_higher)
so that it can be differentiated again.
"""

from mxcy import _ndarray
from mxcy._ndarray import NDArray
from mxcy.base import MXNetError


_STATE = _ndarray.ThreadState()     # this thread's recording/training flags, in C

_GRAPH_ERROR = ("Assigning to NDArrays that are already in a computational graph will cause "
                "undefined behavior when evaluating gradients. Please call backward first "
                "to clear the graph or do this outside of a record section. Also note that "
                "you cannot use inplace operations like +=, *=, relu(x, out=x), y[idx]=x, "
                "etc inside a record section.")


# ---------------------------------------------------------------- recording state
def is_recording():
    """Whether operator calls on this thread are recorded."""
    return _STATE.recording


def is_training():
    """Whether operators run in training mode on this thread (Dropout, BatchNorm)."""
    return _STATE.training


def set_recording(is_recording):
    """Turn recording on or off for this thread; returns the previous state."""
    prev = _STATE.recording
    _STATE.recording = is_recording
    return prev


def set_training(train_mode):
    """Set training mode for this thread; returns the previous state."""
    prev = _STATE.training
    _STATE.training = bool(train_mode)
    return prev


class _RecordingStateScope:
    """Sets recording and/or training mode on entry and restores both on exit."""

    def __init__(self, is_record, train_mode):
        self._enter_record = is_record
        self._enter_train = train_mode
        self._prev_record = None
        self._prev_train = None

    def __enter__(self):
        if self._enter_record is not None:
            self._prev_record = set_recording(self._enter_record)
        if self._enter_train is not None:
            self._prev_train = set_training(self._enter_train)
        return self

    def __exit__(self, *exc):
        if self._enter_record is not None:
            set_recording(self._prev_record)
        if self._enter_train is not None:
            set_training(self._prev_train)
        return False


def record(train_mode=True):
    """Scope in which operator calls are recorded for backward (training mode by default)."""
    return _RecordingStateScope(True, train_mode)


def pause(train_mode=False):
    """Scope in which nothing is recorded (prediction mode by default)."""
    return _RecordingStateScope(False, train_mode)


def train_mode():
    """Scope in which operators run in training mode; recording is left as it is."""
    return _RecordingStateScope(None, True)


def predict_mode():
    """Scope in which operators run in prediction mode; recording is left as it is."""
    return _RecordingStateScope(None, False)


# ---------------------------------------------------------------- graph records
_Variable = _ndarray.GraphVariable  # array._ag of a variable: grad, req, fresh
_Output = _ndarray.GraphOutput     # array._ag of a recorded output: (node, index)
_Node = _ndarray.GraphNode         # one recorded call (see _ndarray_autograd.pxi)
_record_call = _ndarray.record_call
_input_versions = _ndarray.input_versions     # write counts of the first n arrays, in C
_run_tape = _ndarray.run_tape
_tape_order = _ndarray.tape_order


_REQS = ('write', 'add', 'null')


def _check_req(grad_req, what):
    if grad_req not in _REQS:
        raise ValueError(f"{what}: grad_req must be one of {list(_REQS)}, got {grad_req!r}")


def attach_grad(array, grad_req='write', stype=None):
    """`NDArray.attach_grad`: a zero gradient buffer; the array becomes a variable."""
    _check_req(grad_req, 'attach_grad')
    if stype not in (None, 'default'):
        raise ValueError(f"attach_grad: only dense gradients (stype 'default'), got {stype!r}")
    grad = _ndarray.full(array.shape, 0, array.context, array.dtype)
    if type(array) is not NDArray:          # mx.np.ndarray: its gradient is one too
        grad = grad._as_class(type(array))
    array._ag = _Variable(grad, grad_req)


def grad_of(array):
    info = array._ag
    return info.grad if isinstance(info, _Variable) else None


def fresh_grad(array):
    """Whether a backward wrote `array`'s gradient since the flag was last cleared."""
    info = array._ag
    return isinstance(info, _Variable) and info.fresh


def set_fresh_grad(array, value):
    info = array._ag
    if not isinstance(info, _Variable):
        raise MXNetError("_fresh_grad: the array has no gradient buffer (attach_grad)")
    info.fresh = bool(value)


def mark_variables(variables, gradients, grad_reqs='write'):
    """Make `variables` variables of autograd whose gradients go into `gradients`."""
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    variables, gradients = list(variables), list(gradients)
    if len(variables) != len(gradients):
        raise ValueError(f"mark_variables: {len(variables)} variables but {len(gradients)} "
                         "gradients")
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    if len(reqs) != len(variables):
        raise ValueError(f"mark_variables: {len(reqs)} grad_reqs for {len(variables)} "
                         "variables")
    for v, g, r in zip(variables, gradients, reqs):
        _check_req(r, 'mark_variables')
        if not isinstance(v, NDArray) or not isinstance(g, NDArray):
            raise TypeError("mark_variables: variables and gradients must be NDArrays")
        if g.shape != v.shape or g.dtype != v.dtype:
            raise ValueError(f"mark_variables: gradient {g.dtype.__name__}{g.shape} does not "
                             f"match its variable {v.dtype.__name__}{v.shape}")
        v._ag = _Variable(g, r)


# ---------------------------------------------------------------- recording a call
def check_not_in_graph(array, what):
    """Refuse to overwrite an array that a recorded graph uses (MXNet's rule)."""
    if _STATE.recording and array._ag is not None:
        raise MXNetError(f"{what}: {_GRAPH_ERROR}")


def run_op(spec, params, req, n_args, ins, outs, out_given):
    """Run a registry op's forward for mx.nd, recording it when this thread records and
    an input belongs to a graph (called by ndarray/_gen.py for every call)."""
    state = _STATE
    args = ins if len(ins) == n_args else ins[:n_args]
    aux = [] if args is ins else ins[n_args:]
    if not state.recording:
        spec.forward(params, state.training, list(req), args, outs, aux)
        return
    if out_given:
        for o in outs:
            if o._ag is not None:
                raise MXNetError(f"{spec.name}: {_GRAPH_ERROR}")
    for x in args:
        if x._ag is not None:
            break
    else:                           # nothing of a graph: run it unrecorded
        spec.forward(params, state.training, list(req), args, outs, aux)
        return
    versions = _ndarray.input_versions(ins, n_args) if 'inputs' in spec.backward_needs \
        else None
    state.recording = False         # what forward pushes inside is not recorded again
    try:
        spec.forward(params, state.training, list(req), args, outs, aux)
    finally:
        state.recording = True
    if spec.has_backward:
        _record_call(spec, params, n_args, ins, versions, outs)


# ---------------------------------------------------------------- backward
def _as_list(x, what):
    if x is None:
        return None
    if isinstance(x, NDArray):
        return [x]
    if isinstance(x, (list, tuple)):
        return list(x)
    raise TypeError(f"{what}: expected an NDArray or a list of NDArrays, got "
                    f"{type(x).__name__}")


def _topological(heads):
    """The nodes reachable from `heads`, each after every node that feeds it (in C)."""
    order, freed = _tape_order(heads)
    if freed is not None:
        raise MXNetError(f"backward: the graph through '{freed.spec.name}' was freed by an "
                         "earlier backward; pass retain_graph=True to the first one to "
                         "differentiate the same graph twice")
    return order


class _Targets:
    """Where gradients go in one backward pass. Variables: their own buffers (first
    contribution per grad_req, later ones added), or new buffers for `grad()`. Recorded
    outputs: buffers owned by this pass, created by the first contribution."""

    def __init__(self, captured):
        self.captured = captured        # id(variable record) -> buffer, for grad()
        self.written = set()
        self.values = {}                # (id(node), index) -> gradient buffer

    def variable(self, var):
        """(buffer, req) for a contribution to a variable, or (None, 'null')."""
        if self.captured is not None:
            buf = self.captured.get(id(var))
            if buf is None:
                return None, 'null'
            req = 'add' if id(var) in self.written else 'write'
        else:
            if var.req == 'null':
                return None, 'null'
            buf = var.grad
            req = 'add' if var.req == 'add' or id(var) in self.written else 'write'
            var.fresh = True
        self.written.add(id(var))
        return buf, req

    def output(self, src, like):
        key = (id(src.node), src.index)
        buf = self.values.get(key)
        if buf is not None:
            return buf, 'add'
        buf = self.values[key] = _ndarray.new_empty(like.shape, _ndarray.dtype_of(like),
                                                    like.context)
        return buf, 'write'

    def source(self, src, like):
        if isinstance(src, _Variable):
            return self.variable(src)
        if isinstance(src, _Output):
            return self.output(src, like)
        return None, 'null'


def _seed_heads(heads, head_grads, targets):
    for k, h in enumerate(heads):
        g = head_grads[k] if head_grads is not None else None
        if g is None:
            src = h._ag
            if isinstance(src, _Output) and (id(src.node), src.index) not in targets.values:
                # the usual head: its gradient buffer starts as ones (one fill, no copy)
                buf = _ndarray.grad_buffer(h.shape, _ndarray.dtype_of(h), h.context)
                targets.values[(id(src.node), src.index)] = _ndarray.full(None, 1, out=buf)
                continue
            g = _ndarray.full(h.shape, 1, h.context, h.dtype)
        elif not isinstance(g, NDArray):
            raise TypeError(f"backward: head gradient {k} must be an NDArray, got "
                            f"{type(g).__name__}")
        elif g.shape != h.shape:
            raise ValueError(f"backward: head gradient {k} has shape {g.shape}, its head "
                             f"{h.shape}")
        buf, req = targets.source(h._ag, h)
        if req == 'write':
            g.copyto(buf)
        elif req == 'add':
            buf += g


def _check_versions(node):
    names = None
    versions = node.versions
    if versions is not None and _input_versions(node.inputs, len(versions)) != versions:
        for i, version in enumerate(versions):    # the arguments (aux states are
            x = node.inputs[i]                           # the op's to update)
            if x._chunk.writes_pushed != version:
                names = names or node.spec.arguments(node.params)
                what = names[i] if i < len(names) else f'input {i}'
                raise MXNetError(f"backward: input '{what}' of {node.spec.name} was written "
                                 "after the call was recorded (an in-place change between "
                                 "forward and backward); the gradient would be wrong")
    outputs = node.outputs
    if outputs is not None and _input_versions(outputs, len(outputs)) != node.out_versions:
        for i, o in enumerate(outputs):
            if o._chunk.writes_pushed != node.out_versions[i]:
                raise MXNetError(f"backward: output {i} of {node.spec.name} was written "
                                 "after the call was recorded; the gradient would be wrong")


def _backward(heads, head_grads, retain_graph, train_mode, captured=None):
    heads = _as_list(heads, 'backward')
    head_grads = _as_list(head_grads, 'backward')
    if head_grads is not None and len(head_grads) != len(heads):
        raise ValueError(f"backward: {len(head_grads)} head gradients for {len(heads)} "
                         "heads")
    for h in heads:
        if not isinstance(h, NDArray):
            raise TypeError(f"backward: heads must be NDArrays, got {type(h).__name__}")
        if h._ag is None:
            raise MXNetError("backward: cannot differentiate an array that is not in a "
                             "computational graph: compute it inside autograd.record() from "
                             "arrays that have attach_grad() (or pass retain_graph=True to "
                             "an earlier backward of the same graph)")
    order, freed = _tape_order(heads)
    if freed is not None:
        _topological(heads)             # raises, naming the freed node
    targets = _Targets(captured)
    state = _STATE
    was_recording, was_training = state.recording, state.training
    if was_recording:
        state.recording = False
    state.training = train_mode
    try:
        _seed_heads(heads, head_grads, targets)
        _run_tape(order, targets, _check_versions)      # in C: _ndarray_autograd.pxi
    finally:
        state.training = was_training
        if was_recording:
            state.recording = True
    if not retain_graph:
        for node in order:
            node.free()


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Gradients of `heads` (head gradients default to ones) into the gradient buffers of
    the variables they were computed from."""
    _backward(heads, head_grads, retain_graph, train_mode)


def _graph_grad(heads, variables, head_grads, retain_graph, train_mode):
    """grad(create_graph=True): the gradients as recorded arrays (_autograd_higher)."""
    from mxcy._autograd_higher import graph_gradients
    heads = _as_list(heads, 'grad')
    head_grads = _as_list(head_grads, 'grad')
    if head_grads is not None and len(head_grads) != len(heads):
        raise ValueError(f"grad: {len(head_grads)} head gradients for {len(heads)} heads")
    for h in heads:
        if not isinstance(h, NDArray) or h._ag is None:
            raise MXNetError("grad: every head must be an NDArray computed inside "
                             "autograd.record() from arrays with attach_grad()")
    order = _topological(heads)
    with _RecordingStateScope(True, train_mode):
        result = graph_gradients(heads, head_grads, variables, order, _check_versions,
                                 _Output)
    if not retain_graph:
        for node in order:
            node.free()
    return result


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """The gradients of `heads` with respect to `variables`, as new arrays (the
    variables' own gradient buffers are left alone)."""
    variables = _as_list(variables, 'grad')
    for v in variables:
        if not isinstance(v, NDArray) or not isinstance(v._ag, _Variable):
            raise MXNetError("grad: every variable must have a gradient buffer "
                             "(attach_grad() or mark_variables()) before it is used")
    if create_graph:
        return _graph_grad(heads, variables, head_grads,
                           True if retain_graph is None else retain_graph, train_mode)
    captured = {id(v._ag): _ndarray.full(v.shape, 0, v.context, v.dtype) for v in variables}
    _backward(heads, head_grads, create_graph if retain_graph is None else retain_graph,
              train_mode, captured)
    return [captured[id(v._ag)] for v in variables]


def get_symbol(x):
    """The recorded computation of `x` as a Symbol; the arrays it started from (variables
    and constants) become free variables var0, var1, ... in the order first met."""
    from mxcy import symbol as _sym
    if not isinstance(x, NDArray) or not isinstance(x._ag, _Output):
        raise MXNetError("get_symbol: the array is not the output of a recorded "
                         "computation (compute it inside autograd.record())")
    order = _topological([x])
    made, leaves = {}, {}

    def leaf(arr):
        if id(arr) not in leaves:
            leaves[id(arr)] = (arr, _sym.var(f'var{len(leaves)}'))
        return leaves[id(arr)][1]

    def source(arr, src):
        if isinstance(src, _Output):
            outs = made[id(src.node)]
            return outs[src.index]
        return leaf(arr)
    for node in order:
        spec = node.spec
        if not hasattr(spec, 'params') or node.params is None:
            raise MXNetError(f"get_symbol: '{spec.name}' (a custom Function or a "
                             "hybridized block) has no symbol form")
        args = [source(a, s) for a, s in zip(node.inputs, node.sources)]
        args += [leaf(a) for a in node.inputs[node.n_args:]]
        out = getattr(_sym, spec.name)(*args, **node.params.attrs())
        made[id(node)] = [out[i] for i in range(len(out.list_outputs()))] \
            if len(out.list_outputs()) > 1 else [out]
    return made[id(x._ag.node)][x._ag.index]


# ---------------------------------------------------------------- custom functions
class _FunctionSpec:
    """Stands in for an OpSpec in a node recorded by a `Function` call."""
    backward_needs = ('out_grads',)
    has_backward = True

    def __init__(self, function):
        self.function = function
        self.name = type(function).__name__

    def arguments(self, p):
        return [f'data{i}' for i in range(self.function._n_inputs)]

    def aux_states(self, p):
        return []

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        with pause():
            grads = self.function.backward(*out_grads)
        grads = [grads] if isinstance(grads, NDArray) else list(grads)
        if len(grads) != len(in_grads):
            raise MXNetError(f"{self.name}.backward returned {len(grads)} gradients for "
                             f"{len(in_grads)} inputs")
        for i, (g, target, r) in enumerate(zip(grads, in_grads, req)):
            if r == 'null':
                continue
            if not isinstance(g, NDArray) or g.shape != target.shape:
                raise MXNetError(f"{self.name}.backward: gradient {i} must be an NDArray of "
                                 f"shape {target.shape}, got {getattr(g, 'shape', g)}")
            if r == 'add':
                target += g
            else:
                g.copyto(target)


class Function:
    """A differentiable function with a hand-written gradient: subclass it, define
    ``forward(*inputs)`` and ``backward(*output_grads)`` on NDArrays, and call an
    instance (once per forward) like a function. ``save_for_backward`` keeps arrays for
    ``backward`` in ``saved_tensors``."""

    def __init__(self):
        self._used = False
        self._n_inputs = 0
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def __call__(self, *inputs):
        if self._used:
            raise MXNetError(f"{type(self).__name__}: each Function instance can be called "
                             "once; make a new one per forward")
        self._used = True
        for i, x in enumerate(inputs):
            if not isinstance(x, NDArray):
                raise TypeError(f"{type(self).__name__}: input {i} must be an NDArray, got "
                                f"{type(x).__name__}")
        self._n_inputs = len(inputs)
        with pause(_STATE.training):
            outputs = self.forward(*inputs)
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        if _STATE.recording and any(x._ag is not None for x in inputs):
            node = _Node(_FunctionSpec(self), None, len(inputs), list(inputs), None, outs)
            for i, o in enumerate(outs):
                if o._ag is not None:
                    raise MXNetError(f"{type(self).__name__}.forward must return new arrays, "
                                     "not its inputs or arrays already in a graph")
                o._ag = _Output(node, i)
        return outputs

    def forward(self, *inputs):
        """Compute the outputs from the inputs (a subclass defines it)."""
        raise NotImplementedError(f"{type(self).__name__} must define forward")

    def backward(self, *output_grads):
        """The input gradients from the output gradients (a subclass defines it)."""
        raise NotImplementedError(f"{type(self).__name__} must define backward")


from mxcy import _autograd_syntax  # noqa: E402  (needs the names above)

_ndarray._set_autograd_hook(_autograd_syntax.Hooks(_STATE, check_not_in_graph))
_ndarray._set_arith_specs(_autograd_syntax.arith_specs)
