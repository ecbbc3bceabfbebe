"""The executor's memory plan: which intermediate values and gradients share buffers.

Steps are the forward of each op node in topological order, then (when training) the
backward of each node in reverse. A forward output lives until its last reader: later
forwards, the backward of a consumer that reads its inputs, or its own node's backward
when that reads its outputs; graph outputs live on. A gradient buffer lives from its
first contribution to the backward of the node that produced the value. Buffers whose
lifetimes do not overlap share one flat slot (same dtype); an operator that allows it
(``inplace_ok``) writes its output over an input that dies at that step.
"""
import numpy as np

from mxcy import _ndarray


class _Slot:
    __slots__ = ('dtype', 'size', 'busy_until', 'users')

    def __init__(self, dtype, size):
        self.dtype = dtype
        self.size = size
        self.busy_until = None
        self.users = 0           # bitset of the steps that write or read the occupant


class _Allocator:
    """Slots handed out in step order. A free slot goes to a new value only when every
    step that used its last occupant is an ancestor of the new value's writer, so reuse
    never orders two steps that the graph leaves independent (parallel branches stay
    parallel: the engine serialises every access to a shared buffer)."""

    def __init__(self, ancestors):
        self.slots = []
        self.assignment = {}     # key -> slot index
        self.ancestors = ancestors

    def release_after(self, step):
        for slot in self.slots:
            if slot.busy_until is not None and slot.busy_until <= step:
                slot.busy_until = None

    def take(self, key, dtype, size, until, writer, users):
        forbidden = ~(self.ancestors[writer] | (1 << writer))
        best = None
        for i, slot in enumerate(self.slots):
            if slot.busy_until is None and slot.dtype == dtype and \
                    not slot.users & forbidden:
                if slot.size == size:        # the first exact fit is the best one
                    best = i
                    break
                if best is None or abs(slot.size - size) < abs(self.slots[best].size - size):
                    best = i
        if best is None:
            self.slots.append(_Slot(dtype, size))
            best = len(self.slots) - 1
        slot = self.slots[best]
        slot.size = max(slot.size, size)
        slot.busy_until = until
        slot.users = users
        self.assignment[key] = best

    def share(self, key, other_key, until, users):
        idx = self.assignment[other_key]
        self.slots[idx].busy_until = until
        self.slots[idx].users = users
        self.assignment[key] = idx


def _step_ancestors(fwd, bwd, fstep, bstep):
    """Bitset of the steps each step depends on (transitively). Forward steps depend on
    the forward of their inputs; a backward step on its node's forward and on the
    backward of every consumer (they produce its output gradients)."""
    deps = {fstep[id(n)]: [fstep[id(c)] for c, _ in n.inputs if id(c) in fstep]
            for n in fwd}
    for n in bwd:
        deps[bstep[id(n)]] = [fstep[id(n)]]
    for n in fwd:
        for c, _ in n.inputs:
            if id(n) in bstep and id(c) in bstep:
                deps[bstep[id(c)]].append(bstep[id(n)])
    ancestors = {}
    for step in sorted(deps):        # dependencies always have smaller step numbers
        bits = 0
        for d in deps[step]:
            bits |= ancestors[d] | (1 << d)
        ancestors[step] = bits
    return ancestors


def _size(shape):
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


class MemoryPlan:
    def __init__(self, nodes, heads, shapes, dtypes, needs, training, ctx, shared_buffers):
        self.shapes, self.dtypes, self.ctx = shapes, dtypes, ctx
        self._zeros, self._ones = {}, {}
        fwd = [n for n in nodes if not n.is_variable]
        bwd = [n for n in reversed(fwd) if needs[id(n)]] if training else []
        fstep = {id(n): i for i, n in enumerate(fwd)}
        bstep = {id(n): len(fwd) + i for i, n in enumerate(bwd)}
        forever = len(fwd) + len(bwd) + 1
        last = {}
        for n in fwd:
            for i in range(len(n.op.outputs(n.params))):
                last[(id(n), i)] = fstep[id(n)]
            if training and id(n) in bstep and 'outputs' in n.op.backward_needs:
                for i in range(len(n.op.outputs(n.params))):
                    last[(id(n), i)] = bstep[id(n)]
        for n in fwd:
            for c, i in n.inputs:
                key = (id(c), i)
                if key not in last:
                    continue
                last[key] = max(last[key], fstep[id(n)])
                if training and id(n) in bstep and 'inputs' in n.op.backward_needs:
                    last[key] = max(last[key], bstep[id(n)])
        for key in heads:
            last[key] = forever
        self.last_use = last
        # users: the steps that write or read each value (bitsets), for _Allocator
        users = {key: 1 << key_step for key, key_step in
                 (((id(n), i), fstep[id(n)]) for n in fwd
                  for i in range(len(n.op.outputs(n.params))))}
        for n in fwd:
            reads = 1 << fstep[id(n)]
            if training and id(n) in bstep:
                if 'inputs' in n.op.backward_needs:
                    reads |= 1 << bstep[id(n)]
                if 'outputs' in n.op.backward_needs:
                    for i in range(len(n.op.outputs(n.params))):
                        users[(id(n), i)] |= 1 << bstep[id(n)]
            for c, i in n.inputs:
                if (id(c), i) in users:
                    users[(id(c), i)] |= reads
        ancestors = _step_ancestors(fwd, bwd, fstep, bstep)
        alloc = _Allocator(ancestors)
        for n in fwd:
            step = fstep[id(n)]
            inplace_from = None
            if getattr(n.op, 'inplace_ok', False) and n.inputs:
                c, i = n.inputs[0]
                key = (id(c), i)
                others = users.get(key, 0) & ~(1 << step)
                if key in alloc.assignment and last.get(key) == step and \
                        not others & ~ancestors[step]:
                    inplace_from = key
            for i in range(len(n.op.outputs(n.params))):
                key = (id(n), i)
                if i == 0 and inplace_from is not None and \
                        dtypes[key] == dtypes[inplace_from] and \
                        _size(shapes[key]) <= _size(shapes[inplace_from]):
                    alloc.share(key, inplace_from, last[key], users[key])
                else:
                    alloc.take(key, dtypes[key], _size(shapes[key]), last[key], step,
                               users[key])
            alloc.release_after(step)
        # gradient buffers of op outputs: born at the first consumer's backward
        self.grad_keys = set()
        grad_writers = {}            # value key -> bitset of the backward steps adding to it
        for m in bwd:
            for c, i in m.inputs[:m.num_args()]:
                grad_writers[(id(c), i)] = grad_writers.get((id(c), i), 0) | 1 << bstep[id(m)]
        for n in bwd:
            step = bstep[id(n)]
            for c, i in n.inputs[:n.num_args()]:
                key = (id(c), i)
                if c.is_variable or not needs[id(c)] or ('g',) + key in alloc.assignment:
                    continue
                # written by each consumer's backward, read by the producer's
                alloc.take(('g',) + key, dtypes[key], _size(shapes[key]), bstep[id(c)],
                           step, grad_writers[key] | 1 << bstep[id(c)])
                self.grad_keys.add(key)
            alloc.release_after(step)
        self.naive_bytes = sum(_size(shapes[k]) * np.dtype(dtypes[k]).itemsize
                               for k in last) + \
            sum(_size(shapes[k]) * np.dtype(dtypes[k]).itemsize for k in self.grad_keys)
        self.buffers = self._allocate(alloc.slots, shared_buffers)
        self.planned_bytes = sum(b.size * np.dtype(b.dtype).itemsize for b in self.buffers)
        self.entry_arrays = {}
        self.grad_arrays = {}
        for key, idx in alloc.assignment.items():
            if key[0] == 'g':
                self.grad_arrays[key[1:]] = self._view(idx, shapes[key[1:]])
            else:
                self.entry_arrays[key] = self._view(idx, shapes[key])

    def _allocate(self, slots, shared):
        out = []
        for i, slot in enumerate(slots):
            old = shared[i] if shared is not None and i < len(shared) else None
            if old is not None and old.size >= slot.size and np.dtype(old.dtype) == \
                    np.dtype(slot.dtype):
                out.append(old)
            else:
                out.append(_ndarray.empty((max(slot.size, 1),), self.ctx, slot.dtype))
        return out

    def _view(self, idx, shape):
        flat = self.buffers[idx]
        return flat[0:_size(shape)].reshape(tuple(shape))

    def zeros(self, shape, dtype):
        key = (tuple(shape), np.dtype(dtype).name)
        if key not in self._zeros:
            self._zeros[key] = _ndarray.zeros(tuple(shape), self.ctx, dtype)
        return self._zeros[key]

    def ones(self, like):
        key = (like.shape, like.dtype)
        if key not in self._ones:
            self._ones[key] = _ndarray.ones(like.shape, self.ctx, like.dtype)
        return self._ones[key]

    def reset_grads(self):
        return _GradState(self)


class _GradState:
    """Gradient bookkeeping of one backward pass: first contribution writes, later add."""

    def __init__(self, plan):
        self.plan = plan
        self.heads = {}
        self.written = set()

    def add_head(self, entry, g):
        self.heads[entry] = g

    def get(self, exe, entry):
        if entry in self.heads:
            if entry in self.written:
                # a head that is also consumed inside the graph: head + internal gradient
                buf = self.plan.grad_arrays[entry]
                return buf + self.heads[entry]
            return self.heads[entry]
        if entry in self.written:
            return self.plan.grad_arrays[entry]
        return self.plan.zeros(self.plan.shapes[entry], self.plan.dtypes[entry])

    def target(self, exe, child, idx):
        """(array, req) for the gradient flowing into input entry (child, idx)."""
        if child.is_variable:
            req = exe._var_req[id(child)]
            if req == 'null':
                return None, 'null'
            grad = exe._var_grad[id(child)]
            if id(child) in self.written:
                return grad, 'add'
            self.written.add(id(child))
            return grad, req
        key = (id(child), idx)
        if not exe._needs_grad[id(child)] or key not in self.plan.grad_arrays:
            return None, 'null'
        if key in self.written:
            return self.plan.grad_arrays[key], 'add'
        self.written.add(key)
        return self.plan.grad_arrays[key], 'write'


def plan_memory(nodes, heads, shapes, dtypes, needs, training, ctx, shared_buffers):
    """Plan buffers for `nodes`; `heads` are the (node id, index) entries returned to users."""
    return MemoryPlan(nodes, heads, shapes, dtypes, needs, training, ctx, shared_buffers)
