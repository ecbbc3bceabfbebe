"""``mx.nd.contrib``: the ``_contrib_*`` registry operators without their prefix
(`mxcy.operator.contrib_ops`, CTCLoss ...), and MXNet's hand-written contrib functions:
imperative control flow (foreach, while_loop, cond), boolean_mask and rand_zipfian."""
import math

import numpy as np

from mxcy._ndarray import NDArray

__all__ = ['foreach', 'while_loop', 'cond', 'boolean_mask', 'rand_zipfian']


def _install():
    from mxcy.ndarray._gen import make_function
    from mxcy.operator import list_ops
    for op in list_ops():
        if op.startswith('_contrib_'):
            name = op[len('_contrib_'):]
            globals()[name] = make_function(op, name)
            __all__.append(name)
    import sys
    from mxcy.operator.optimizer_contrib_ops import install_fronts
    __all__.extend(install_fronts(globals(), sys.modules['mxcy.ndarray']))


def _as_list(x):
    return (list(x), True) if isinstance(x, (list, tuple)) else ([x], False)


def foreach(body, data, init_states):
    """Run ``out, states = body(data[i], states)`` for each i along axis 0 of data (an
    NDArray or a list of them); returns (outputs stacked on a new axis 0, final states)."""
    from mxcy.ndarray import stack
    items, _ = _as_list(data)
    if not items or any(not isinstance(d, NDArray) for d in items):
        raise TypeError("foreach: data must be an NDArray or a non-empty list of NDArrays")
    n = items[0].shape[0]
    states, outs, single = init_states, [], None
    for i in range(n):
        step = [d[i] for d in items]
        out, states = body(step if isinstance(data, (list, tuple)) else step[0], states)
        out_list, multi = _as_list(out)
        single = not multi
        outs.append(out_list)
    if not outs:
        raise ValueError("foreach: data has no elements on axis 0")
    stacked = [stack(*[o[k] for o in outs], axis=0) for k in range(len(outs[0]))]
    return (stacked[0] if single else stacked), states


def while_loop(cond, func, loop_vars, max_iterations=None):
    """While ``cond(*loop_vars)`` holds (at most max_iterations times) run
    ``step_out, loop_vars = func(*loop_vars)``; returns (step outputs stacked on axis 0,
    padded with zeros to max_iterations rows when given, final loop_vars)."""
    from mxcy.ndarray import stack, zeros
    loop_vars, multi_vars = _as_list(loop_vars)
    outs, steps = [], 0
    while (max_iterations is None or steps < max_iterations) and \
            bool(_scalar(cond(*loop_vars))):
        step_out, new_vars = func(*loop_vars)
        step_list, _ = _as_list(step_out if step_out is not None else [])
        outs.append(step_list)
        loop_vars, _ = _as_list(new_vars)
        steps += 1
    stacked = []
    if outs and outs[0]:
        for k in range(len(outs[0])):
            rows = [o[k] for o in outs]
            if max_iterations is not None and len(rows) < max_iterations:
                pad = zeros(rows[0].shape, dtype=rows[0].dtype)
                rows += [pad] * (max_iterations - len(rows))
            stacked.append(stack(*rows, axis=0))
    return stacked, (loop_vars if multi_vars else loop_vars[0])


def _scalar(x):
    return x.asnumpy().reshape(-1)[0] if isinstance(x, NDArray) else x


def cond(pred, then_func, else_func):
    """then_func() if pred (a one-element NDArray or a bool) is nonzero, else else_func()."""
    return then_func() if bool(_scalar(pred)) else else_func()


def boolean_mask(data, index, axis=0, out=None, name=None):
    """The slices of data along `axis` where index (1-D, data.shape[axis] long) is
    nonzero; differentiable through take. Waits for index (the shape depends on it)."""
    from mxcy.ndarray import array, take
    if not isinstance(data, NDArray) or not isinstance(index, NDArray):
        raise TypeError("boolean_mask: data and index must be NDArrays")
    ax = axis + len(data.shape) if axis < 0 else axis
    if index.shape != (data.shape[ax],):
        raise ValueError(f"boolean_mask: index must have shape ({data.shape[ax]},) "
                         f"(data {data.shape}, axis {axis}), got {index.shape}")
    keep = np.nonzero(index.asnumpy())[0]
    return take(data, array(keep, dtype='int64'), axis=ax, out=out)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """num_sampled classes drawn from the log-uniform (Zipfian) distribution on
    [0, range_max), and the expected counts of true_classes and of the samples:
    P(c) = (log(c + 2) - log(c + 1)) / log(range_max + 1)."""
    from mxcy.ndarray import random
    log_range = math.log(range_max + 1)
    u = random.uniform(0, log_range, shape=(num_sampled,), dtype='float64', ctx=ctx)
    sampled = (u.exp() - 1).floor()
    sampled = sampled.clip(0, range_max - 1)

    def expected(classes):
        c = classes.astype('float64')
        return ((c + 2).log() - (c + 1).log()) / log_range * num_sampled
    return (sampled.astype('int64'), expected(true_classes).astype(true_classes.dtype),
            expected(sampled))
