"""An executor's forward and backward passes resolved once, at the first run.

After binding, every array an operator reads or writes is fixed, and so is which gradient
write is the first into its buffer ('write') and which accumulate ('add'). Looking all of
that up again on every step (dictionaries keyed by node ids, list building, req lookups)
cost several microseconds per node, on the thread that also feeds the engine; the
programs below keep it to one call per node. Only the head gradients change between
backward passes: they are slots filled in at run time.
"""


class ForwardProgram:
    """One (forward fn, params, reqs, inputs, outputs, aux) tuple per operator node."""

    def __init__(self, exe):
        steps = []
        entries = exe._entries
        for node in exe._nodes:
            if node.is_variable:
                continue
            ins = [entries[(id(c), i)] for c, i in node.inputs]
            nargs = node.num_args()
            outs = [entries[(id(node), i)] for i in range(len(node.op.outputs(node.params)))]
            steps.append((node.op.forward, node.params, ['write'] * len(outs), ins[:nargs],
                          outs, ins[nargs:]))
        self.steps = steps

    def run(self, is_train):
        for forward, params, reqs, ins, outs, aux in self.steps:
            forward(params, is_train, reqs, ins, outs, aux)


class _HeadSlot:
    """Where a head gradient enters a node's output gradients: position `pos` of the list
    gets head `head`, or the internal gradient `buf` plus head `head` when the output is
    also consumed inside the graph."""
    __slots__ = ('pos', 'head', 'buf')

    def __init__(self, pos, head, buf):
        self.pos, self.head, self.buf = pos, head, buf


class BackwardProgram:
    """The backward pass as (backward fn, params, reqs, out grads, inputs, outputs, input
    grads, aux, head slots) steps, found by replaying the gradient bookkeeping once."""

    def __init__(self, exe):
        heads = exe._symbol._outputs
        head_index = {(id(node), idx): k for k, (node, idx) in enumerate(heads)}
        state = exe._plan.reset_grads()
        for entry in head_index:
            state.add_head(entry, entry)        # placeholder: resolved per run
        entries = exe._entries
        steps = []
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
            ins = [entries[(id(c), i)] for c, i in node.inputs]
            outs = [entries[(id(node), i)] for i in range(n_out)]
            in_grads, reqs = [], []
            for c, i in node.inputs[:nargs]:
                target, req = state.target(exe, c, i)
                in_grads.append(target)
                reqs.append(req)
            if all(r == 'null' for r in reqs):
                continue
            steps.append((node.op.backward, node.params, reqs, out_g, ins[:nargs], outs,
                          in_grads, ins[nargs:], slots))
        self.steps = steps

    def replace_grad(self, old, new):
        """Write into `new` wherever the program wrote the gradient array `old`
        (``Executor._rebind_grad``)."""
        for step in self.steps:
            in_grads = step[6]
            for j, g in enumerate(in_grads):
                if g is old:
                    in_grads[j] = new

    def run(self, head_grads):
        for backward, params, reqs, out_g, ins, outs, in_grads, aux, slots in self.steps:
            if slots:
                out_g = list(out_g)
                for s in slots:
                    g = head_grads[s.head]
                    out_g[s.pos] = g if s.buf is None else s.buf + g
            backward(params, reqs, out_g, ins, outs, in_grads, aux)
