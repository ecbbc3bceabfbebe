"""An executor's forward and backward passes resolved once, at the first run.

After binding, every array an operator reads or writes is fixed, and so is which gradient
write is the first into its buffer ('write') and which accumulate ('add'). Looking all of
that up again on every step (dictionaries keyed by node ids, list building, req lookups)
cost several microseconds per node, on the thread that also feeds the engine; the
programs below keep it to one call per node. Only the head gradients change between
backward passes: they are slots filled in at run time.
"""
from mxcy import _engine


def note_places(where, keys, arrays):
    """Record in `where` (entry key -> [(list, index)]) where each entry's array stands in
    `arrays`, a list a program step keeps: Executor._rebind_values replaces them."""
    for j, key in enumerate(keys):
        where.setdefault(key, []).append((arrays, j))
    return arrays


class ForwardProgram:
    """One (forward fn, params, reqs, inputs, outputs, aux) tuple per operator node."""

    def __init__(self, exe):
        steps = []
        entries = exe._entries
        self.where = where = {}
        for node in exe._nodes:
            if node.is_variable:
                continue
            nargs = node.num_args()
            in_keys = [(id(c), i) for c, i in node.inputs]
            out_keys = [(id(node), i) for i in range(len(node.op.outputs(node.params)))]
            ins = note_places(where, in_keys[:nargs], [entries[k] for k in in_keys[:nargs]])
            aux = note_places(where, in_keys[nargs:], [entries[k] for k in in_keys[nargs:]])
            outs = note_places(where, out_keys, [entries[k] for k in out_keys])
            steps.append((node.op.forward, node.params, ['write'] * len(outs), ins, outs,
                          aux))
        self.steps = steps
        self.buffers = list(exe._plan.buffers)

    def discard_stale_errors(self):
        """Every planned value is written before it is read, so an error that a failed
        pass left on a shared buffer is stale (a write to part of it would keep it)."""
        _engine.discard_errors(self.buffers)

    def run(self, is_train):
        self.discard_stale_errors()
        for forward, params, reqs, ins, outs, aux in self.steps:
            forward(params, is_train, reqs, ins, outs, aux)


class _HeadSlot:
    """Where a head gradient enters a node's output gradients: position `pos` of the list
    gets head `head`, or the internal gradient `buf` plus head `head` when the output is
    also consumed inside the graph."""
    __slots__ = ('pos', 'head', 'buf')

    def __init__(self, pos, head, buf):
        self.pos, self.head, self.buf = pos, head, buf



def _with_heads(out_g, slots, head_grads):
    """A copy of the output gradients `out_g` with the head gradients of `slots` filled in."""
    out_g = list(out_g)
    for s in slots:
        g = head_grads[s.head]
        out_g[s.pos] = g if s.buf is None else s.buf + g
    return out_g

class BackwardProgram:
    """The backward pass as (backward fn, params, reqs, out grads, inputs, outputs, input
    grads, aux, head slots) steps, found by replaying the gradient bookkeeping once."""

    def __init__(self, exe):
        heads = exe._symbol._outputs
        head_index = {(id(node), idx): k for k, (node, idx) in enumerate(heads)}
        state = exe._plan.reset_grads()
        self.where = {}                 # entry key -> [(list, index)] (note_places)
        for entry in head_index:
            state.add_head(entry, entry)        # placeholder: resolved per run
        entries = exe._entries
        steps = []
        self.node_names = []          # per step, for a monitor callback
        for node in reversed(exe._nodes):
            if node.is_variable or not exe._needs_grad[id(node)]:
                continue
            nargs = node.num_args()
            n_out = len(node.op.outputs(node.params))
            out_g, slots = [], []
            for i in range(n_out):
                entry = (id(node), i)
                if entry in head_index:
                    buf = exe._plan.grad_arrays[entry] if entry in state.written else None
                    slots.append(_HeadSlot(i, head_index[entry], buf))
                    out_g.append(None)
                else:
                    out_g.append(state.get(exe, entry))
            in_keys = [(id(c), i) for c, i in node.inputs]
            out_keys = [(id(node), i) for i in range(n_out)]
            in_grads, reqs = [], []
            for c, i in node.inputs[:nargs]:
                target, req = state.target(exe, c, i)
                in_grads.append(target)
                reqs.append(req)
            if all(r == 'null' for r in reqs):
                continue
            where = self.where
            steps.append((node.op.backward, node.params, reqs, out_g,
                          note_places(where, in_keys[:nargs],
                                      [entries[k] for k in in_keys[:nargs]]),
                          note_places(where, out_keys, [entries[k] for k in out_keys]),
                          in_grads,
                          note_places(where, in_keys[nargs:],
                                      [entries[k] for k in in_keys[nargs:]]), slots))
            self.node_names.append(node.name)
        self.steps = steps
        # an output that is a variable: its head gradient goes into the variable's gradient
        # after every operator's contribution, written if none came and grad_req is
        # 'write', else added. One entry listed as several outputs takes the last head
        # gradient given for it, as for an operator's output (and as in MXNet 1.9.1).
        self.var_heads = []
        for k in head_index.values():
            node = heads[k][0]
            if not node.is_variable or exe._var_req[id(node)] == 'null':
                continue
            add = id(node) in state.written or exe._var_req[id(node)] == 'add'
            self.var_heads.append([k, exe._var_grad[id(node)], add])

    def replace_grad(self, old, new):
        """Write into `new` wherever the program wrote the gradient array `old`
        (``Executor._rebind_grad``)."""
        for step in self.steps:
            in_grads = step[6]
            for j, g in enumerate(in_grads):
                if g is old:
                    in_grads[j] = new
        for var_head in self.var_heads:
            if var_head[1] is old:
                var_head[1] = new

    def run(self, head_grads, monitor=None):
        """Push every backward step; `monitor` (an executor's monitor callback) gets the
        input gradients each step writes."""
        if monitor is not None:
            self._run_monitored(head_grads, monitor)
            return
        for backward, params, reqs, out_g, ins, outs, in_grads, aux, slots in self.steps:
            if slots:
                out_g = _with_heads(out_g, slots, head_grads)
            backward(params, reqs, out_g, ins, outs, in_grads, aux)
        self._var_heads(head_grads)

    def _run_monitored(self, head_grads, monitor):
        for name, step in zip(self.node_names, self.steps):
            backward, params, reqs, out_g, ins, outs, in_grads, aux, slots = step
            if slots:
                out_g = _with_heads(out_g, slots, head_grads)
            backward(params, reqs, out_g, ins, outs, in_grads, aux)
            # NOTE: a gradient accumulated into ('add') shows the sum so far, not this
            # node's own contribution; null gradients are not computed, so not shown
            one = len(in_grads) == 1
            for j, (g, req) in enumerate(zip(in_grads, reqs)):
                if g is not None and req != 'null':
                    monitor(f"{name}_backward_output{'' if one else j}", g)
        self._var_heads(head_grads)

    def _var_heads(self, head_grads):
        for k, grad, add in self.var_heads:
            if add:
                grad += head_grads[k]
            else:
                head_grads[k].copyto(grad)
