"""Executor: a symbol bound to arrays; forward and backward push every node to the engine.

Nothing here waits: independent branches run in parallel on the engine's workers, and a
read of an output (``asnumpy``) is the first wait. Shapes and dtypes of the bound arrays
are checked at bind, naming the argument. Intermediate buffers follow a memory plan
(`mxcy._memplan`): reused when lifetimes do not overlap, written in place where an
operator allows it.
"""
import numpy as np

from mxcy import _graph_passes, _ndarray
from mxcy._exec_program import BackwardProgram, ForwardProgram
from mxcy._memplan import plan_memory
from mxcy.base import MXNetError
from mxcy.context import check_usable, current_context
from mxcy.symbol._infer import _var_dtype
from mxcy.symbol.symbol import aux_variable_ids

_REQS = ('write', 'add', 'null', 'inplace')


def _as_list(values, names, what, allow_none=False):
    """Arrays in `names` order from a list or a dict (missing ones None if allowed)."""
    if values is None:
        if names and not allow_none:
            raise ValueError(f"bind: {what} is missing {names}")
        return [None] * len(names)
    if isinstance(values, dict):
        unknown = [k for k in values if k not in names]
        if unknown:
            raise ValueError(f"bind: {what} has unknown name(s) {unknown}; expected {names}")
        out = [values.get(n) for n in names]
    else:
        out = list(values)
        if len(out) != len(names):
            raise ValueError(f"bind: {what} has {len(out)} arrays, the symbol needs "
                             f"{len(names)}: {names}")
    if not allow_none:
        missing = [n for n, v in zip(names, out) if v is None]
        if missing:
            raise ValueError(f"bind: {what} is missing {missing}")
    for n, v in zip(names, out):
        if v is not None and not isinstance(v, _ndarray.NDArray):
            raise TypeError(f"bind: {what}[{n!r}] must be an NDArray, got {type(v).__name__}")
    return out


def _check_unique_inputs(symbol, what):
    """Refuse a graph with two different variables of one name: binding matches arrays to
    inputs by name (MXNet fails there too, with an internal check)."""
    counts = {}
    for node in symbol._nodes():
        if node.is_variable:
            counts[node.name] = counts.get(node.name, 0) + 1
    dups = [(name, n) for name, n in counts.items() if n > 1]
    if dups:
        text = ' and '.join(f"{n} different variables named {name!r}" for name, n in dups)
        raise MXNetError(f"{what}: the symbol has {text} (inputs: {symbol.list_inputs()}); "
                         "arrays are bound to inputs by name, so they cannot be told apart. "
                         "Use one Variable object wherever that input is meant, or rename "
                         "the others")


def _grad_reqs(grad_req, names):
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(names)
    elif isinstance(grad_req, dict):
        unknown = [k for k in grad_req if k not in names]
        if unknown:
            raise ValueError(f"bind: grad_req names unknown argument(s) {unknown}")
        reqs = [grad_req.get(n, 'null') for n in names]
    else:
        reqs = list(grad_req)
        if len(reqs) != len(names):
            raise ValueError(f"bind: grad_req has {len(reqs)} entries for {len(names)} "
                             "arguments")
    for n, r in zip(names, reqs):
        if r not in _REQS:
            raise ValueError(f"bind: grad_req for {n!r} must be one of {_REQS}, got {r!r}")
    return ['write' if r == 'inplace' else r for r in reqs]


class Executor:
    """A bound symbol (MXNet's ``Executor``)."""

    def __init__(self, symbol, ctx, args, args_grad=None, grad_req='write', aux_states=None,
                 _shared_buffers=None):
        self._symbol = symbol
        self._ctx = ctx if ctx is not None else current_context()
        check_usable(self._ctx, 'bind')
        _check_unique_inputs(symbol, 'bind')
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        self.arg_arrays = _as_list(args, self._arg_names, 'args')
        self.aux_arrays = _as_list(aux_states, self._aux_names, 'aux_states')
        grads = _as_list(args_grad, self._arg_names, 'args_grad', allow_none=True)
        reqs = _grad_reqs(grad_req, self._arg_names)
        self._grad_req = {n: (r if g is not None else 'null')
                          for n, r, g in zip(self._arg_names, reqs, grads)}
        if args_grad is None:
            self._grad_req = {n: 'null' for n in self._arg_names}
        self.grad_arrays = [g if self._grad_req[n] != 'null' else None
                            for n, g in zip(self._arg_names, grads)]
        self._check_bound_arrays()
        self._build(_shared_buffers)
        self._monitor = None          # set_monitor_callback
        self._monitor_all = False
        self._fwd_program = None      # built at the first forward / backward
        self._bwd_program = None
        # inference graph passes (mxcy/_graph_passes.py): built at the first inference
        # forward of a graph that needs no gradient; False when off or nothing to rewrite
        self._passes = _graph_passes.enabled()
        self._infer_graph = None if not self._training and self._passes else False
        self._grad_slots = {}        # name -> (argument index, variable node ids)

    # ------------------------------------------------------------ bind-time checks
    def _check_bound_arrays(self):
        shapes = {n: a.shape for n, a in zip(self._arg_names, self.arg_arrays)}
        shapes.update({n: a.shape for n, a in zip(self._aux_names, self.aux_arrays)})
        arg_shapes, out_shapes, aux_shapes = self._symbol._infer_shape_strict(**shapes)
        types = {n: np.dtype(a.dtype).name for n, a in zip(self._arg_names, self.arg_arrays)}
        arg_types, _, aux_types = self._symbol._infer_type_strict(**types)
        for kind, names, arrays, want_shapes, want_types in (
                ('argument', self._arg_names, self.arg_arrays, arg_shapes, arg_types),
                ('auxiliary state', self._aux_names, self.aux_arrays, aux_shapes, aux_types)):
            for i, (n, a) in enumerate(zip(names, arrays)):
                if a.shape != tuple(want_shapes[i]):
                    raise MXNetError(f"bind: {kind} {n!r} has shape {a.shape}, the graph "
                                     f"needs {tuple(want_shapes[i])}")
                if want_types is not None and np.dtype(a.dtype) != np.dtype(want_types[i]):
                    raise MXNetError(f"bind: {kind} {n!r} has dtype {np.dtype(a.dtype)}, the "
                                     f"graph needs {np.dtype(want_types[i])}")
        # a dtype the variable declares (Variable(dtype=...)) is part of the graph
        for node in self._symbol._nodes():
            if node.is_variable and '__dtype__' in node.attrs and node.name in types:
                declared = np.dtype(_var_dtype(node))
                if np.dtype(types[node.name]) != declared:
                    raise MXNetError(f"bind: argument {node.name!r} has dtype "
                                     f"{np.dtype(types[node.name])}, the graph needs "
                                     f"{declared} (declared by Variable(dtype=...))")
        for n, g, a in zip(self._arg_names, self.grad_arrays, self.arg_arrays):
            if g is not None and (g.shape != a.shape or g.dtype != a.dtype):
                raise MXNetError(f"bind: gradient of {n!r} has shape {g.shape} dtype "
                                 f"{np.dtype(g.dtype)}, the argument has {a.shape} "
                                 f"{np.dtype(a.dtype)}")
        self._out_shapes = out_shapes
        self._out_types = self._symbol._infer_type_strict(**types)[1]

    # ------------------------------------------------------------ graph plan
    def _build(self, shared_buffers):
        sym = self._symbol
        self._nodes = sym._nodes()
        aux_ids = aux_variable_ids(self._nodes)
        var_array, var_grad, var_req = {}, {}, {}
        args = dict(zip(self._arg_names, zip(self.arg_arrays, self.grad_arrays)))
        auxes = dict(zip(self._aux_names, self.aux_arrays))
        for node in self._nodes:
            if node.is_variable:
                if id(node) in aux_ids:
                    var_array[id(node)] = auxes[node.name]
                    var_req[id(node)] = 'null'
                else:
                    var_array[id(node)], var_grad[id(node)] = args[node.name]
                    var_req[id(node)] = self._grad_req[node.name]
        self._var_array, self._var_grad, self._var_req = var_array, var_grad, var_req
        # which entries carry gradient: a path to a variable whose grad_req is not null
        needs = {}
        for node in self._nodes:
            if node.is_variable:
                needs[id(node)] = var_req[id(node)] != 'null'
            else:
                needs[id(node)] = node.op.has_backward and any(
                    needs[id(c)] for c, _ in node.inputs[:node.num_args()])
        self._needs_grad = needs
        self._training = any(needs.values())
        shapes = self._entry_shapes()
        heads = [(id(n), i) for n, i in sym._outputs if not n.is_variable]
        self._shape_of, self._dtype_of = shapes, self._entry_dtypes(shapes)
        self._plan = plan_memory(self._nodes, heads, shapes, self._dtype_of, needs,
                                 self._training, self._ctx, shared_buffers)
        self._entries = self._plan.entry_arrays
        for node in self._nodes:
            if node.is_variable:
                self._entries[(id(node), 0)] = var_array[id(node)]
        self.outputs = [self._entries[(id(n), i)] for n, i in sym._outputs]

    def _entry_shapes(self):
        shapes = {n: a.shape for n, a in zip(self._arg_names, self.arg_arrays)}
        shapes.update({n: a.shape for n, a in zip(self._aux_names, self.aux_arrays)})
        out = {}
        # every output of every op node, hidden ones included (BatchNorm's mean/var)
        known = {}
        for node in self._nodes:
            if node.is_variable:
                known[(id(node), 0)] = shapes[node.name]
                continue
            ins = [known[(id(c), i)] for c, i in node.inputs[:node.num_args()]]
            _, outs, _ = node.op.infer_shape(node.params, ins)
            for i, s in enumerate(outs):
                known[(id(node), i)] = tuple(s)
                out[(id(node), i)] = tuple(s)
        return out

    def _entry_dtypes(self, shapes):
        known = {}
        dtypes = {}
        for node in self._nodes:
            if node.is_variable:
                known[(id(node), 0)] = np.dtype(self._var_array[id(node)].dtype).name
                continue
            ins = [known[(id(c), i)] for c, i in node.inputs[:node.num_args()]]
            _, outs, _ = node.op.infer_type(node.params, ins)
            for i, t in enumerate(outs):
                known[(id(node), i)] = t
                dtypes[(id(node), i)] = t
        return dtypes

    # ------------------------------------------------------------ running
    def forward(self, is_train=False, **kwargs):
        """Copy given inputs in, push every node's forward; returns the outputs."""
        arg_dict = self.arg_dict if kwargs else None
        for name, value in kwargs.items():
            if name not in arg_dict:
                raise ValueError(f"forward: {name!r} is not an argument; arguments are "
                                 f"{self._arg_names}")
            target = arg_dict[name]
            if isinstance(value, _ndarray.NDArray):
                if value.shape != target.shape:
                    raise ValueError(f"forward: {name!r} has shape {value.shape}, the "
                                     f"executor was bound with {target.shape}")
                if value is not target:
                    value.copyto(target)
            else:
                target[:] = value
        if not is_train and self._infer_graph is not False and self._monitor is None:
            if self._infer_graph is None:
                graph = _graph_passes.InferenceGraph(self, self._passes)
                self._infer_graph = graph if graph.changed else False
            if self._infer_graph is not False:
                self._infer_graph.run()
                return self.outputs
        if self._fwd_program is None:
            self._fwd_program = ForwardProgram(self)
        if self._monitor is None:
            self._fwd_program.run(is_train)
            return self.outputs
        self._fwd_program.discard_stale_errors()
        monitor, monitor_all = self._monitor, self._monitor_all
        op_nodes = [n for n in self._nodes if not n.is_variable]
        for node, step in zip(op_nodes, self._fwd_program.steps):
            forward, params, reqs, ins, outs, aux = step
            if monitor_all:
                names = node.op.arguments(params) + node.op.aux_states(params)
                for name, arr in zip(names, ins + aux):
                    monitor(f"{node.name}_{name}", arr)
            forward(params, is_train, reqs, ins, outs, aux)
            for name, arr in zip(node.output_names(False), outs):
                monitor(name, arr)
        return self.outputs

    def backward(self, out_grads=None, is_train=True):
        """Push the backward pass; head gradients default to ones (loss layers ignore them)."""
        if not self._training:
            return
        heads = self._symbol._outputs
        if out_grads is None:
            out_grads = [None] * len(heads)
        elif isinstance(out_grads, _ndarray.NDArray):
            out_grads = [out_grads]
        elif isinstance(out_grads, dict):
            names = self._symbol.list_outputs()
            unknown = [k for k in out_grads if k not in names]
            if unknown:
                raise ValueError(f"backward: out_grads names unknown output(s) {unknown}; "
                                 f"outputs are {names}")
            out_grads = [out_grads.get(k) for k in names]
        if len(out_grads) != len(heads):
            raise ValueError(f"backward: {len(out_grads)} head gradients for {len(heads)} "
                             "outputs")
        head_grads = []
        for (node, idx), g in zip(heads, out_grads):
            out = self._entries[(id(node), idx)]
            if g is None:
                g = self._plan.ones(out)
            elif g.shape != out.shape:
                raise ValueError(f"backward: head gradient for {node.name!r} has shape "
                                 f"{g.shape}, the output has {out.shape}")
            elif g.dtype != out.dtype:
                g = g.astype(out.dtype)    # MXNet copies (and casts) it
            head_grads.append(g)
        self._run_backward(head_grads)

    def _run_backward(self, head_grads):
        """Push the backward pass for head gradients already checked (one per output, of
        its shape and dtype): `backward`'s last step, and the entry for a caller that
        checks them itself (``mx.nn``'s compiled model) instead of twice per step."""
        if not self._training:
            return
        if self._bwd_program is None:
            self._bwd_program = BackwardProgram(self)
        self._bwd_program.run(head_grads, self._monitor)

    # ------------------------------------------------------------ views
    @property
    def arg_dict(self):
        return dict(zip(self._arg_names, self.arg_arrays))

    @property
    def grad_dict(self):
        return {n: g for n, g in zip(self._arg_names, self.grad_arrays) if g is not None}

    @property
    def aux_dict(self):
        return dict(zip(self._aux_names, self.aux_arrays))

    @property
    def output_dict(self):
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    @property
    def peak_bytes(self):
        """Bytes of intermediate buffers the memory plan allocated."""
        return self._plan.planned_bytes

    @property
    def naive_bytes(self):
        """Bytes one buffer per intermediate value (and gradient) would take."""
        return self._plan.naive_bytes

    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, array)`` for every operator output as forward and
        backward push it (``mx.monitor.Monitor`` installs one): forward outputs as
        ``<node>_<output>`` (``fc1_output``, ``bn_mean``), backward ones (the gradients
        of a node's inputs) as ``<node>_backward_output<i>`` (no ``<i>`` for a
        one-input node), as MXNet 1.9.1 names them. With ``monitor_all=True`` each
        node's inputs come first, as ``<node>_<argument>`` (``fc1_weight``).

        The callback runs on the pushing thread before the next operator is pushed, so
        an operation it pushes on `array` (a statistic) sees this value even where the
        memory plan reuses the buffer later. None removes the callback; without one
        forward and backward take their unmonitored path.
        """
        if callback is not None and not callable(callback):
            raise TypeError(f"set_monitor_callback: callback must be callable, got "
                            f"{type(callback).__name__}")
        self._monitor = callback
        self._monitor_all = bool(monitor_all) and callback is not None

    def get_optimized_symbol(self):
        """The bound symbol. An inference-bound executor runs a rewritten program for
        ``forward(is_train=False)`` (mxcy/_graph_passes.py: BatchNorm folding, fused
        activations), but the symbol itself is not rewritten."""
        return self._symbol

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy values into the bound arguments / auxiliary states by name."""
        for name, value in (arg_params or {}).items():
            if name in self.arg_dict:
                value.copyto(self.arg_dict[name]) if isinstance(value, _ndarray.NDArray) \
                    else self.arg_dict[name].__setitem__(slice(None), value)
            elif not allow_extra_params:
                raise ValueError(f"copy_params_from: {name!r} is not an argument of the "
                                 "symbol (pass allow_extra_params=True to skip it)")
        for name, value in (aux_params or {}).items():
            if name in self.aux_dict:
                value.copyto(self.aux_dict[name])
            elif not allow_extra_params:
                raise ValueError(f"copy_params_from: {name!r} is not an auxiliary state")

    def _rebind_grad(self, name, grad):
        """Make `grad` (same shape and dtype) the gradient array of argument `name`; the
        next backward writes there. Lets a caller hand out each backward's gradient
        without copying it (``mx.nn``'s compiled model does, for the input)."""
        slot = self._grad_slots.get(name)
        if slot is None:
            slot = self._grad_slots[name] = (
                self._arg_names.index(name),
                [id(n) for n in self._nodes if n.is_variable and n.name == name])
        i, node_ids = slot
        old = self.grad_arrays[i]
        if old is grad:
            return
        if old is None or grad.shape != old.shape or grad.dtype != old.dtype:
            raise MXNetError(f"_rebind_grad: {name!r} has gradient "
                             f"{None if old is None else (old.shape, old.dtype)}, got "
                             f"{(grad.shape, grad.dtype)}")
        self.grad_arrays[i] = grad
        for node_id in node_ids:
            self._var_grad[node_id] = grad
        if self._bwd_program is not None:            # it holds the gradient arrays too
            self._bwd_program.replace_grad(old, grad)
        elif self._training:
            # built now rather than at the next backward, so that from here on the
            # executor's references to `grad` stay as they are (a caller counting them,
            # as nn's compiled model does, counts them once)
            self._bwd_program = BackwardProgram(self)

    def _rebind_values(self, args, outputs):
        """Make `args` ({argument name: array}) the arguments' arrays and `outputs` (one
        array or None per output) the outputs' buffers, everywhere the executor and its
        programs use them (same shapes and dtypes): a hybridized block runs on its
        caller's inputs and hands out a fresh output array per call, with no copies
        (gluon/_cached.py). Safe because the memory plan never writes over an argument
        and never lets another value share an output's buffer after the output's write.
        Places are found by graph entry (the programs note them), not by array identity,
        so one array passed as two arguments is no trouble."""
        slots = self._rebind_slots()
        for name, array in args.items():
            for container, key in slots[name]:
                container[key] = array
        out_slots = slots[None]
        for i, array in enumerate(outputs):
            if array is not None:
                for container, key in out_slots[i]:
                    container[key] = array

    def _rebind_slots(self):
        """{argument name: [(container, key)]} and {None: one such list per output}: every
        place `_rebind_values` writes, found once per pair of programs (each program
        notes its own places when it is built)."""
        infer = self._infer_graph.program if self._infer_graph else None
        programs = (self._fwd_program, self._bwd_program, infer)
        cached = getattr(self, '_slots', None)
        if cached is not None and cached[0] == tuple(map(id, programs)):
            return cached[1]

        def places(key):
            found = [(self._entries, key)]
            for program in programs:
                if program is not None:
                    found += program.where.get(key, ())
            return found
        slots = {}
        for name, (i, keys) in self._arg_index().items():
            slots[name] = [(self.arg_arrays, i)]
            for key in keys:
                slots[name].append((self._var_array, key[0]))
                slots[name] += places(key)
        slots[None] = [[(self.outputs, i)] + places(key)
                       for i, key in enumerate(self._out_keys)]
        self._slots = (tuple(map(id, programs)), slots, programs)   # keeps the ids valid
        return slots

    def _arg_index(self):
        index = getattr(self, '_arg_keys', None)
        if index is None:
            index = self._arg_keys = {
                n: (i, [(id(v), 0) for v in self._nodes if v.is_variable and v.name == n])
                for i, n in enumerate(self._arg_names)}
            self._out_keys = [(id(n), i) for n, i in self._symbol._outputs]
        return index

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for the input shapes in `kwargs`, sharing this one's memory.

        Shapes are inferred from `kwargs` alone. An array that keeps its shape is shared;
        one that shrinks becomes a view of the old memory; one that grows needs
        ``allow_up_sizing=True`` (a new array). An argument not named in `kwargs` whose
        shape changes is an error unless ``partial_shaping=True`` (as in MXNet).
        """
        arg_shapes, _, aux_shapes = self._symbol._infer_shape_strict(**kwargs)

        def fit(old, shape, name, kind):
            shape = tuple(shape)
            if old is None or old.shape == shape:
                return old
            if name not in kwargs and not partial_shaping:
                raise MXNetError(
                    f"reshape: the shape of {kind} {name!r} would change from {old.shape} "
                    f"to {shape} although it was not given; the new executor would not "
                    "share it with this one. Pass partial_shaping=True if this is intended")
            size = int(np.prod(shape, dtype=np.int64))
            if size <= old.size:
                return old.reshape((-1,))[:size].reshape(shape)
            if not allow_up_sizing:
                raise MXNetError(f"reshape: {kind} {name!r} grows from {old.shape} to {shape}; "
                                 "pass allow_up_sizing=True to allocate a larger array (binding "
                                 "the largest shape first and shrinking is cheaper)")
            return _ndarray.zeros(shape, old.context, old.dtype)
        new_args = [fit(a, s, n, 'argument')
                    for a, s, n in zip(self.arg_arrays, arg_shapes, self._arg_names)]
        new_grads = [fit(g, s, n, 'argument')
                     for g, s, n in zip(self.grad_arrays, arg_shapes, self._arg_names)]
        new_aux = [fit(a, s, n, 'auxiliary state')
                   for a, s, n in zip(self.aux_arrays, aux_shapes, self._aux_names)]
        reqs = {n: self._grad_req[n] for n in self._arg_names}
        grads = dict(zip(self._arg_names, new_grads)) if any(g is not None for g in new_grads) \
            else None
        return Executor(self._symbol, self._ctx, new_args, grads, reqs, new_aux,
                        _shared_buffers=self._plan.buffers)

    def debug_str(self):
        plan = self._plan
        return (self._symbol.debug_str() +
                f"Total {plan.planned_bytes / 2 ** 20:.3f} MB allocated for intermediate "
                f"values and gradients ({plan.naive_bytes / 2 ** 20:.3f} MB without the "
                f"memory plan)\n")


def simple_bind(symbol, ctx, grad_req='write', type_dict=None, shared_exec=None, **shapes):
    """Bind with every array allocated (zeros) from inferred shapes and dtypes."""
    _check_unique_inputs(symbol, 'simple_bind')
    arg_shapes, _, aux_shapes = symbol._infer_shape_strict(**shapes)
    names = symbol.list_arguments()
    # dtypes from type_dict and the variables' own dtype= attributes; float32 otherwise
    arg_types, _, aux_types = symbol.infer_type_partial(**dict(type_dict or {}))
    arg_types = [t or np.float32 for t in arg_types]
    aux_types = [t or np.float32 for t in aux_types]
    ctx = ctx if ctx is not None else current_context()
    args = [_ndarray.zeros(s, ctx, t) for s, t in zip(arg_shapes, arg_types)]
    aux = [_ndarray.zeros(s, ctx, t) for s, t in zip(aux_shapes, aux_types)]
    reqs = _grad_reqs(grad_req, names)
    grads = {n: _ndarray.zeros(s, ctx, t) for n, s, t, r in
             zip(names, arg_shapes, arg_types, reqs) if r != 'null'}
    shared = shared_exec._plan.buffers if shared_exec is not None else None
    return Executor(symbol, ctx, args, grads or None, dict(zip(names, reqs)), aux,
                    _shared_buffers=shared)
