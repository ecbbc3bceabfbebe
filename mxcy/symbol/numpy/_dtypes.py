"""Forward inference for ``mx.sym.np`` while a block traces: each node's output dtypes
(or shapes) from its inputs' by the operator's own ``infer_type`` (``infer_shape``),
memoized per node over the trace, so that deciding NumPy's promotion or a reduction's
zero-dim result at every ``F.np`` call costs one node, not the whole graph."""
import ast

import numpy as _onp


def _var_value(node, kind, known):
    value = known.get(node.name)
    if kind == 'type':
        if value is None and '__dtype__' in node.attrs:
            from mxcy.symbol._infer import _var_dtype
            value = _var_dtype(node)
        return None if value is None else _onp.dtype(value).name
    if value is None and '__shape__' in node.attrs:
        value = tuple(ast.literal_eval(node.attrs['__shape__']))
    return tuple(value) if value and all(d > 0 for d in value) else None


def _node_values(node, kind, cache):
    ins = [cache[(kind, id(n))][1][i] for n, i in node.inputs]
    n_out = len(node.op.outputs(node.params))
    infer = node.op.infer_type if kind == 'type' else node.op.infer_shape
    try:
        _, outs, _ = infer(node.params, ins[:node.num_args()])
    except Exception:                   # noqa: BLE001  (an undecidable node: unknown)
        return [None] * n_out
    if kind == 'type':
        return [None if t is None else _onp.dtype(t).name for t in outs]
    return [tuple(s) if s is not None and all(d > 0 for d in s) else None for s in outs]


def forward(symbols, kind, known, cache):
    """The dtype names (kind 'type') or full shapes (kind 'shape'), None where unknown,
    of each single-output Symbol in `symbols`: `known` maps input names to values;
    `cache` ({(kind, id(node)): (node, values)}) is kept across calls."""
    def cached(node):
        hit = cache.get((kind, id(node)))
        return hit is not None and hit[0] is node

    for sym in symbols:
        todo = [(node, False) for node, _ in sym._outputs]
        while todo:
            node, ready = todo.pop()
            if cached(node):
                continue
            if node.is_variable:
                cache[(kind, id(node))] = (node, [_var_value(node, kind, known)])
            elif ready:
                cache[(kind, id(node))] = (node, _node_values(node, kind, cache))
            else:
                todo.append((node, True))
                todo.extend((n, False) for n, _ in node.inputs if not cached(n))
    return [cache[(kind, id(node))][1][i] for node, i in (s._outputs[0] for s in symbols)]


def _trace_state(kind):
    from mxcy.gluon.block import _TRACING
    known = getattr(_TRACING, 'dtypes' if kind == 'type' else 'shapes', None)
    cache = getattr(_TRACING, 'dtype_cache', None)
    return known or {}, {} if cache is None else cache


def traced_dtypes(symbols):
    """The dtypes of `symbols` while a hybridized block traces: from its input dtypes
    (gluon.block's trace state) and the parameters' ``__dtype__``; outside a trace, from
    the variables' ``__dtype__`` alone."""
    return [None if t is None else _onp.dtype(t)
            for t in forward(symbols, 'type', *_trace_state('type'))]


def traced_shape(symbol):
    """The shape of `symbol` from the traced block's input shapes and the parameters'
    ``__shape__``, or None where not known."""
    return forward([symbol], 'shape', *_trace_state('shape'))[0]


def traced_ndim(symbol):
    shape = traced_shape(symbol)
    return None if shape is None else len(shape)
