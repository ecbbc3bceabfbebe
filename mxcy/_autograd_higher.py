"""``autograd.grad(..., create_graph=True)``: gradients that are themselves recorded.

The ordinary backward pushes each operator's fused backward kernels, which are not
recorded. Here the pass runs with recording on and asks each node's operator for its
gradient as recorded mx.nd calls (``OpSpec.grad_graph``, declared next to its backward),
so the gradients it returns belong to a graph and can be differentiated again (a
gradient penalty, a Hessian-vector product). Contributions to one value are summed with
recorded additions. Like MXNet, an operator whose gradient is not made of
differentiable operators raises, naming it.
"""
from mxcy import _ndarray
from mxcy.base import MXNetError


def _zeros(like):
    return _ndarray.full(like.shape, 0, like.context, like.dtype)


def _relevant(order, wanted, _Output):
    """The ids of the nodes on a path to a wanted variable: only their gradients are
    computed (and only their operators must have a grad_graph)."""
    live = set()
    for node in order:                  # inputs before outputs
        for src in node.sources:
            if id(src) in wanted or (isinstance(src, _Output) and id(src.node) in live):
                live.add(id(node))
                break
    return live


def _attached_outputs(node, _Output):
    """The node's saved outputs with their graph records back for the call (the saved
    views are detached so that a graph frees by reference counting)."""
    if node.outputs is None:
        return None
    for i, o in enumerate(node.outputs):
        o._ag = _Output(node, i)
    return node.outputs


def graph_gradients(heads, head_grads, variables, order, check_versions, _Output):
    """The gradients of `heads` with respect to `variables` (their `_ag` records), as
    recorded arrays. Call with recording on; `order` is the heads' nodes, topological."""
    wanted = {id(v._ag) for v in variables}
    live = _relevant(order, wanted, _Output)
    values = {}

    def add(key, g):
        prev = values.get(key)
        values[key] = g if prev is None else prev + g

    def key_of(src):
        if isinstance(src, _Output):
            return (id(src.node), src.index) if id(src.node) in live else None
        return ('var', id(src)) if id(src) in wanted else None

    for k, h in enumerate(heads):
        key = key_of(h._ag)
        if key is not None:
            g = head_grads[k] if head_grads is not None and head_grads[k] is not None \
                else _ndarray.full(h.shape, 1, h.context, h.dtype)
            add(key, g)
    for node in reversed(order):
        if id(node) not in live:
            continue
        spec, n = node.spec, node.n_args
        if spec.grad_graph is None:
            raise MXNetError(f"autograd.grad(create_graph=True): the gradient of operator "
                             f"'{spec.name}' is a fused kernel, not made of differentiable "
                             "operators, so it cannot be differentiated again")
        n_out = 1 if node.out_meta is None else len(node.out_meta)
        out_grads = [values.pop((id(node), i), None) for i in range(n_out)]
        if all(g is None for g in out_grads):
            continue                    # no gradient reaches it (BlockGrad above it)
        check_versions(node)
        for i, g in enumerate(out_grads):
            if g is None:               # an output no path uses: a zero gradient
                shape, dtype, ctx = node.out_meta[i]
                out_grads[i] = _ndarray.full(shape, 0, ctx, dtype)
        outs = _attached_outputs(node, _Output)
        try:
            in_grads = spec.grad_graph(node.params, out_grads, node.inputs[:n], outs)
        finally:
            for o in outs or ():
                o._ag = None
        for src, g in zip(node.sources, in_grads):
            key = key_of(src)
            if key is not None and g is not None:
                add(key, g)
    return [values.get(('var', id(v._ag))) if ('var', id(v._ag)) in values else _zeros(v)
            for v in variables]
