"""A hybridized block's graph, run through executors (MXNet's CachedOp).

The traced Symbol is bound once per input signature (shapes, dtypes, context, which
inputs need a gradient) with the parameters' own arrays as its arguments, so the
executor's memory plan and programs are the ones ``bind`` uses. Nothing is copied around
it: each call runs on the caller's input arrays and writes fresh output arrays
(`Executor._rebind_values`), and backward writes each gradient straight into its target
(`Executor._rebind_grad`; a gradient that must be added goes through a scratch buffer).

Under ``autograd.record()`` a call is one node of the tape whose backward is the
executor's backward; the executor stays reserved for that node until its backward ran
(or the node is dropped), so a block called twice in one recorded step uses two
executors and neither pass overwrites the other's saved values.
"""
import numpy as np

from mxcy import _ndarray
from mxcy import ndarray as _nd
from mxcy._ndarray import NDArray
from mxcy.autograd import _STATE
from mxcy.symbol.symbol import Symbol

_new_empty = _ndarray.new_empty
_record_call = _ndarray.record_call
_input_versions = _ndarray.input_versions
_FLOATS = (np.float16, np.float32, np.float64)


class _CachedSpec:
    """The OpSpec stand-in of a recorded call (see autograd._Node)."""
    backward_needs = ('out_grads', 'inputs')
    has_backward = True

    def __init__(self, graph, exe, names):
        self.graph, self.exe, self.names = graph, exe, names

    @property
    def name(self):             # (made when an error names the node, not per call)
        return f'{self.graph.block.name} (hybridized)'

    def arguments(self, p):
        return self.names

    def aux_states(self, p):
        return []

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        exe = self.exe
        adds = []
        bound = exe.grad_arrays
        for name, own, k, target, r in zip(self.names, exe._scratch_list, exe._grad_pos,
                                           in_grads, req):
            if own is None:                     # bound without a gradient
                continue
            if r == 'write':
                if bound[k] is not target:      # (the same target as last step: nothing)
                    exe._rebind_grad(name, target)
            else:                               # 'add', or 'null': not into a target
                exe._rebind_grad(name, own)
                if r == 'add':
                    adds.append((target, own))
        for g, o in zip(out_grads, exe.outputs):
            if g.shape != o.shape or g.dtype != o.dtype:
                exe.backward(out_grads)         # checks (and casts) the head gradients
                break
        else:                                   # autograd's own buffers: already right
            exe._run_backward(out_grads)
        for target, own in adds:
            target += own

    def release(self):
        """The node's backward ran (or the node died): the executor is free again."""
        if self.exe is not None:
            self.graph._release(self.exe)
            self.exe = None

    __del__ = release


class CachedGraph:
    def __init__(self, block, inputs, out, params, flags):
        self.block = block
        # an output listed twice (an RNN cell's `return h, [h]`) is computed once and
        # returned twice, so autograd sums the gradients of both uses (MXNet's CachedOp
        # does); the executor would keep only the last head gradient of a repeated output
        entries = out._outputs
        unique = list(dict.fromkeys(entries))
        self.picks = [unique.index(e) for e in entries]
        if self.picks == list(range(len(entries))):
            self.picks = None                   # (each output once: returned as they are)
        self.symbol = out if len(unique) == len(entries) else Symbol(unique)
        self.input_names = [i.name for i in inputs]
        self.arg_names = out.list_arguments()
        self.aux_names = out.list_auxiliary_states()
        self.params = {name: p for name, p in params.items()}
        missing = [n for n in self.arg_names + self.aux_names
                   if n not in self.params and n not in self.input_names]
        if missing:
            raise ValueError(f"{block.name}: the traced graph needs {missing}, which are "
                             "neither inputs nor parameters of the block")
        self.flags = flags
        self.free = {}          # signature -> [idle executors]
        # a recorded call's inputs: the data, then the parameters (by argument position)
        params_in_order = [n for n in self.arg_names if n not in self.input_names]
        self.node_names = list(self.input_names) + params_in_order
        self.param_positions = [self.arg_names.index(n) for n in params_in_order]

    # ------------------------------------------------------------ executors
    def _bind(self, arrays, wants_grad):
        ctx = arrays[0].context
        args, grads, reqs = {}, {}, {}
        given = dict(zip(self.input_names, zip(arrays, wants_grad)))
        for name in self.arg_names:
            if name in given:
                x, wanted = given[name]
                args[name] = x.copyto(ctx)
                # an input outside any graph needs no gradient (no dx GEMM for the data)
                reqs[name] = 'write' if wanted else 'null'
                if wanted:
                    grads[name] = _nd.zeros(x.shape, ctx=ctx, dtype=x.dtype)
            else:
                p = self.params[name]
                args[name] = p.data(ctx)
                reqs[name] = 'null' if p.grad_req == 'null' else 'write'
                if reqs[name] != 'null':
                    grads[name] = _nd.zeros(args[name].shape, ctx=ctx,
                                            dtype=args[name].dtype)
        aux = {name: self.params[name].data(ctx) for name in self.aux_names}
        exe = self.symbol.bind(ctx, args, args_grad=grads, grad_req=reqs, aux_states=aux)
        exe._scratch_grads = dict(grads)
        # per node input (the data, then the parameters): the executor's own gradient
        # buffer, None where it was bound without one
        exe._scratch_list = [grads.get(n) for n in self.node_names]
        exe._grad_pos = [self.arg_names.index(n) for n in self.node_names]
        if self.block._op_hook is not None:
            callback, monitor_all = self.block._op_hook
            exe.set_monitor_callback(_op_hook_adapter(self.symbol, callback), monitor_all)
        # outputs that are arguments (a graph returning an input or a parameter) are
        # copied out; every other output gets a fresh array per call
        args_ids = {id(a) for a in exe.arg_arrays}
        exe._fresh_outputs = [(o.shape, _ndarray.dtype_of(o), o.context)
                              if id(o) not in args_ids else None for o in exe.outputs]
        exe._arg_index()                        # built once: _rebind_values uses it
        return exe

    def _take(self, arrays, recording):
        """An idle executor bound for these inputs' signature (bound now if none)."""
        key = []
        for a in arrays:
            key.append((a.shape, a.dtype, a.context,
                        recording and a._ag is not None and a.dtype in _FLOATS))
        key = tuple(key)
        idle = self.free.get(key)
        if idle is None:
            idle = self.free[key] = []
        exe = idle.pop() if idle else self._bind(arrays, [k[3] for k in key])
        exe._idle = idle
        return exe

    def _release(self, exe):
        exe._idle.append(exe)

    # ------------------------------------------------------------ a call
    def __call__(self, arrays):
        if len(arrays) != len(self.input_names):
            raise ValueError(f"{self.block.name}: called with {len(arrays)} inputs, the "
                             f"hybridized graph takes {len(self.input_names)}")
        state = _STATE
        recording = state.recording
        exe = self._take(arrays, recording)
        # the executor keeps detached twins of the outputs (same memory): the caller's
        # arrays will point at the recorded node, which holds the executor, and a cycle
        # back would leave a node that never runs backward (an error, a forward under
        # record() alone) to the garbage collector, its executor reserved till then
        fresh, twins = [], []
        for f in exe._fresh_outputs:
            if f is None:
                fresh.append(None)
                twins.append(None)
            else:
                o = _new_empty(*f)
                fresh.append(o)
                twins.append(o.detach())
        exe._rebind_values(dict(zip(self.input_names, arrays)), twins)
        if exe._monitor is None and exe._fwd_program is not None:
            exe._fwd_program.run(state.training)
        else:
            exe.forward(is_train=state.training)
        outs = fresh
        for i, o in enumerate(exe.outputs):
            if fresh[i] is None:
                outs[i] = o.copy()
        ins = list(arrays)
        if recording:
            bound = exe.arg_arrays
            for i in self.param_positions:
                ins.append(bound[i])
            for x in ins:
                if x._ag is not None:
                    _record_call(_CachedSpec(self, exe, self.node_names), None, len(ins),
                                 ins, _input_versions(ins, len(ins)), outs)
                    break
            else:
                self._release(exe)
        else:
            self._release(exe)
        picks = self.picks
        if picks is None:
            return outs
        return [outs[i] for i in picks]


def flat_inputs(args, flatten):
    """A call's input arrays: `args` themselves when each is an array (the usual call),
    else `flatten`ed (gluon.block._flatten) with the Nones dropped."""
    arrays = [a for a in args if isinstance(a, NDArray)]
    if len(arrays) == len(args):
        return arrays
    return [a for a in flatten(args)[0] if a is not None]


def _op_hook_adapter(symbol, callback):
    """The executor's monitor callback (name, array) as MXNet's op hook (name, operator
    name, array), names as bytes: the operator is that of the node the name starts with."""
    ops = sorted(((n.name, n.op.name) for n in symbol._nodes() if not n.is_variable),
                 key=lambda item: -len(item[0]))

    def hook(name, array):
        op = next((op for node, op in ops if name.startswith(node + '_')), '')
        callback(name.encode(), op.encode(), array)
    return hook
