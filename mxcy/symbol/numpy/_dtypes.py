"""Forward dtype inference for ``mx.sym.np`` while a block traces: each node's output
dtypes from its inputs' (the operator's own ``infer_type``), memoized per node, so that
deciding NumPy's promotion at every ``F.np`` call costs one node, not the whole graph."""
import numpy as _onp


def _var_dtype(node, known):
    name = known.get(node.name)
    if name is None and '__dtype__' in node.attrs:
        from mxcy.symbol._infer import _var_dtype as attr_dtype
        name = attr_dtype(node)
    return None if name is None else _onp.dtype(name).name


def _node_dtypes(node, cache):
    ins = [cache[id(n)][1][i] for n, i in node.inputs]
    n_out = len(node.op.outputs(node.params))
    try:
        _, outs, _ = node.op.infer_type(node.params, ins[:node.num_args()])
    except Exception:                   # noqa: BLE001  (an undecidable node: unknown)
        return [None] * n_out
    return [None if t is None else _onp.dtype(t).name for t in outs]


def forward_dtypes(symbols, known, cache):
    """[np.dtype or None] for each single-output Symbol in `symbols`: `known` maps input
    names to dtypes; `cache` ({id(node): (node, dtypes)}) is kept across calls."""
    def cached(node):
        hit = cache.get(id(node))
        return hit is not None and hit[0] is node

    for sym in symbols:
        todo = [(node, False) for node, _ in sym._outputs]
        while todo:
            node, ready = todo.pop()
            if cached(node):
                continue
            if node.is_variable:
                cache[id(node)] = (node, [_var_dtype(node, known)])
            elif ready:
                cache[id(node)] = (node, _node_dtypes(node, cache))
            else:
                todo.append((node, True))
                todo.extend((n, False) for n, _ in node.inputs if not cached(n))
    out = []
    for sym in symbols:
        node, i = sym._outputs[0]
        t = cache[id(node)][1][i]
        out.append(None if t is None else _onp.dtype(t))
    return out


def traced_dtypes(symbols):
    """The dtypes of `symbols` while a hybridized block traces: from its input dtypes
    (gluon.block's trace state) and the parameters' ``__dtype__``; memoized over the
    trace, so tracing stays linear in the graph's size. Outside a trace, from the
    variables' ``__dtype__`` alone."""
    from mxcy.gluon.block import _TRACING
    known = getattr(_TRACING, 'dtypes', None)
    cache = getattr(_TRACING, 'dtype_cache', None)
    return forward_dtypes(symbols, known or {}, {} if cache is None else cache)
