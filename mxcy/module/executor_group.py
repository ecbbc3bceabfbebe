"""DataParallelExecutorGroup: one executor per context, each on a slice of the batch.

The contract (MXNet 1.9.1's data parallelism):

* a batch of ``B`` samples is split into consecutive slices along each input's batch axis
  (``'N'`` of its layout, axis 0 by default), slice ``i`` holding about
  ``B * work_load_list[i] / sum(work_load_list)`` samples (Python's ``round``; the last
  slice takes what rounding left over). An empty slice is an error.
* every executor holds its own copy of the parameters, their gradients and the auxiliary
  states; ``param_arrays[i][k]`` is parameter ``i`` on context ``k``. Keeping the copies
  equal (summing gradients through a KVStore) is the Module's business. When it would
  only sum the gradients and copy the updated weights back (a plain local KVStore),
  ``share_params(True)`` makes the executors share the first one's parameters (and the
  gradients of FullyConnected weights and biases, which the others' backward adds into)
  instead, so one update serves all and no weight is copied (auxiliary states stay per
  executor).
* outputs and input gradients are per executor; ``merge_multi_context=True`` joins them
  along the batch axis, ``False`` returns ``[[array on context 0, ...], ...]``.
* a metric is updated once per executor, with that executor's slice of the labels.

mxcy's ``cpu(i)`` contexts are all this machine: the executors share memory and one
engine, so their ops overlap on the engine's workers. ``group2ctxs`` (ctx_group -> context,
for model parallelism) is checked and kept per executor, but every group runs where its
executor runs.
"""
import logging

import numpy as np

from mxcy import ndarray as nd
from mxcy.base import MXNetError
from mxcy.context import Context
from mxcy.executor import Executor
from mxcy.io import DataDesc

__all__ = ['DataParallelExecutorGroup']


def _split_input_slice(batch_size, work_load_list):
    """Consecutive slices of ``range(batch_size)``, sized by `work_load_list`."""
    total = sum(work_load_list)
    if total <= 0 or any(w < 0 for w in work_load_list):
        raise ValueError(f"work_load_list must hold non-negative loads with a positive sum, "
                         f"got {list(work_load_list)}")
    counts = [round(w * batch_size / total) for w in work_load_list]
    short = batch_size - sum(counts)
    if short > 0:
        counts[-1] += short
    slices, end = [], 0
    for k, count in enumerate(counts):
        begin = min(end, batch_size)
        end = min(begin + count, batch_size)
        if begin >= end:
            raise ValueError(f"a batch of {batch_size} split by work_load_list "
                             f"{list(work_load_list)} leaves slice {k} empty; use a larger "
                             "batch or fewer contexts")
        slices.append(slice(begin, end))
    return slices


def _prepare_group2ctxs(group2ctxs, ctx_len):
    """One ``{ctx_group: Context}`` (or None) per executor, from MXNet's three forms: a
    dict of a context or a list of contexts per group, or a list of dicts."""
    if group2ctxs is None:
        return [None] * ctx_len
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != ctx_len:
            raise ValueError(f"group2ctxs: a list needs one dict per context ({ctx_len}), "
                             f"got {len(group2ctxs)}")
        return group2ctxs
    if not isinstance(group2ctxs, dict):
        raise TypeError(f"group2ctxs must be a dict or a list of dicts, got "
                        f"{type(group2ctxs).__name__}")
    out = [{} for _ in range(ctx_len)]
    for group, ctxs in group2ctxs.items():
        if isinstance(ctxs, Context):
            ctxs = [ctxs] * ctx_len
        elif len(ctxs) == 1:
            ctxs = list(ctxs) * ctx_len
        elif len(ctxs) != ctx_len:
            raise ValueError(f"group2ctxs[{group!r}]: needs one context or {ctx_len} "
                             f"(one per context), got {len(ctxs)}")
        for i in range(ctx_len):
            out[i][group] = ctxs[i]
    return out


def _descs(shapes):
    return [s if isinstance(s, DataDesc) else DataDesc(s[0], tuple(s[1]))
            for s in (shapes or [])]


def _slice_along(arr, axis, part):
    """``arr``'s rows `part` along `axis` (a NumPy array or an NDArray)."""
    if isinstance(arr, nd.NDArray):
        if axis == 0:
            return arr[part.start:part.stop]
        return nd.slice_axis(arr, axis=axis, begin=part.start, end=part.stop)
    index = [slice(None)] * np.ndim(arr)
    index[axis] = part
    return np.asarray(arr)[tuple(index)]


def _copy_in(src, dst):
    """dst[:] = src for an NDArray or NumPy source of dst's shape."""
    if isinstance(src, nd.NDArray):
        if src is not dst:
            src.copyto(dst)
    else:
        dst[:] = np.asarray(src)


def _merge(per_exec, axis):
    if len(per_exec) == 1:
        return per_exec[0]
    return nd.concatenate(list(per_exec), axis=axis)


class DataParallelExecutorGroup:
    """Executors of one symbol on several contexts; see the module docstring."""

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req='write', state_names=None, group2ctxs=None):
        self.symbol = symbol
        self.contexts = list(contexts)
        self.workload = list(workload) if workload is not None else [1] * len(self.contexts)
        if len(self.workload) != len(self.contexts):
            raise ValueError(f"work_load_list has {len(self.workload)} entries for "
                             f"{len(self.contexts)} contexts")
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(self.contexts))
        self.param_names = list(param_names)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.output_names = symbol.list_outputs()
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self.fixed_param_names = set(fixed_param_names or [])
        self.state_names = list(state_names or [])
        self._grad_req_arg = grad_req
        self.execs = []
        self._monitor = None
        self.params_shared = False
        self.bind_exec(data_shapes, label_shapes, shared_group)
        if shared_group is not None and shared_group.params_shared:
            self.share_params(True, like=shared_group)

    # ------------------------------------------------------------ binding
    def _grad_reqs(self, data_names):
        """{argument: req}: parameters per `grad_req` (a str or a dict by name), fixed ones
        'null'; data 'write' when inputs need gradients; labels and states 'null'."""
        given = self._grad_req_arg
        reqs = {}
        for name in self.arg_names:
            if name in self.param_names:
                req = given.get(name, 'write') if isinstance(given, dict) else given
                trained = self.for_training and name not in self.fixed_param_names
                reqs[name] = req if trained else 'null'
            elif name in data_names:
                reqs[name] = 'write' if self.inputs_need_grad else 'null'
            else:
                reqs[name] = 'null'
        return reqs

    def decide_slices(self, data_shapes):
        """The batch size and the slices; every data input must hold the same batch."""
        sizes = {}
        for desc in data_shapes:
            axis = DataDesc.get_batch_axis(getattr(desc, 'layout', None))
            if axis >= 0:
                sizes[desc.name] = desc.shape[axis]
        if len(set(sizes.values())) > 1:
            raise MXNetError(f"bind: the data inputs hold different batch sizes {sizes}")
        self.batch_size = next(iter(sizes.values())) if sizes else 0
        self.slices = _split_input_slice(self.batch_size, self.workload)
        return self.slices

    def _sliced_shape(self, shapes, i):
        out = {}
        for desc in shapes:
            shape = list(desc.shape)
            axis = DataDesc.get_batch_axis(getattr(desc, 'layout', None))
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            out[desc.name] = tuple(shape)
        return out

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Bind (or, with `reshape`, reshape) one executor per context."""
        self.data_shapes = _descs(data_shapes)
        self.label_shapes = _descs(label_shapes) if label_shapes else None
        self.data_names = [d.name for d in self.data_shapes]
        labels = [d for d in self.label_shapes or [] if d.name in self.arg_names]
        self.label_names = [d.name for d in labels]
        self.decide_slices(self.data_shapes)
        self.data_layouts = [DataDesc.get_batch_axis(getattr(d, 'layout', None))
                             for d in self.data_shapes]
        self.label_layouts = [DataDesc.get_batch_axis(getattr(d, 'layout', None))
                              for d in labels]
        types = {d.name: d.dtype for d in self.data_shapes + labels}
        reqs = self._grad_reqs(self.data_names)
        if shared_group is not None and len(shared_group.execs) != len(self.contexts):
            raise MXNetError(f"bind: shared_module runs on {len(shared_group.execs)} "
                             f"contexts, this module on {len(self.contexts)}")
        for i in range(len(self.contexts)):
            shapes = self._sliced_shape(self.data_shapes + labels, i)
            if reshape:
                old = self.execs[i]
                self.execs[i] = old.reshape(allow_up_sizing=True, **shapes)
                self._follow_monitor(old, self.execs[i])
            else:
                shared = shared_group.execs[i] if shared_group is not None else None
                self.execs.append(self._bind_ith_exec(i, shapes, types, reqs, shared,
                                                      shared_group))
        self._collect_arrays()

    def _bind_ith_exec(self, i, shapes, types, reqs, shared_exec, shared_group):
        ctx = self.contexts[i]
        if shared_exec is None:
            return self.symbol.simple_bind(ctx, grad_req=reqs, type_dict=types,
                                           group2ctx=self.group2ctxs[i], **shapes)
        return self._bind_sharing(ctx, shapes, types, reqs, shared_exec,
                                  shared_group.param_names)

    def _bind_sharing(self, ctx, shapes, types, reqs, shared, shared_param_names):
        """An executor whose parameters, their gradients and auxiliary states ARE the
        shared executor's arrays (same NDArray objects, matched by name), and whose
        intermediate buffers reuse the shared executor's memory (BucketingModule)."""
        sym = self.symbol
        arg_shapes, _, aux_shapes = sym._infer_shape_strict(**shapes)
        arg_types, _, aux_types = sym.infer_type_partial(**types)

        def take(kind, name, shape, dtype, pool):
            dtype = np.dtype(dtype or np.float32)
            arr = pool.get(name)
            if arr is None:
                return nd.zeros(tuple(shape), ctx, dtype)
            if arr.shape != tuple(shape) or np.dtype(arr.dtype) != dtype:
                raise MXNetError(f"bind: {kind} {name!r} is {arr.shape} {np.dtype(arr.dtype)} "
                                 f"in shared_module, this module needs {tuple(shape)} {dtype}")
            return arr
        shared_params = {n: shared.arg_dict[n] for n in shared_param_names}
        args, grads = [], {}
        for name, shape, dtype in zip(sym.list_arguments(), arg_shapes, arg_types):
            pool = shared_params if name in self.param_names else {}
            args.append(take('parameter', name, shape, dtype, pool))
            if reqs[name] != 'null':
                grad_pool = shared.grad_dict if name in shared_params else {}
                grads[name] = take('gradient', name, shape, dtype, grad_pool)
        aux = [take('auxiliary state', name, shape, dtype, shared.aux_dict)
               for name, shape, dtype in zip(self.aux_names, aux_shapes, aux_types)]
        return Executor(sym, ctx, args, grads or None, reqs, aux,
                        _shared_buffers=shared._plan.buffers)

    def _collect_arrays(self):
        execs = self.execs
        self.data_arrays = [[(s, e.arg_dict[n]) for s, e in zip(self.slices, execs)]
                            for n in self.data_names]
        self.label_arrays = [[(s, e.arg_dict[n]) for s, e in zip(self.slices, execs)]
                             for n in self.label_names]
        self.state_arrays = [[e.arg_dict[n] for e in execs] for n in self.state_names]
        self.param_arrays = [[e.arg_dict[n] for e in execs] for n in self.param_names]
        self.grad_arrays = [[e.grad_dict.get(n) for e in execs] for n in self.param_names] \
            if self.for_training else []
        self.aux_arrays = [[e.aux_dict[n] for e in execs] for n in self.aux_names]
        self.input_grad_arrays = [[e.grad_dict[n] for e in execs] for n in self.data_names] \
            if self.inputs_need_grad else []

    def reshape(self, data_shapes, label_shapes):
        """Reshape every executor for a batch of new shapes (memory is shared)."""
        if _descs(data_shapes) == self.data_shapes and \
                (_descs(label_shapes) or None) == self.label_shapes:
            return
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def share_params(self, shared, like=None):
        """With `shared`, every executor's parameters become the first executor's arrays,
        so one update serves every context and no weight is copied. The gradients of the
        parameters that only FullyConnected nodes read as weight or bias (see
        `_accumulated_in_place`) are shared too: the other executors add into the first's
        (grad_req 'add'; they run backward after it, in push order), so after backward
        the first context's gradient holds the sum with no add of its own (a gradient
        computed before is added in now). The other gradients stay per executor, computed
        in parallel and summed by the caller. Without `shared`, executor k gets copies of
        its own back (of the first's values; gradients zeroed). With `like` (a group
        bound with ``shared_group``), executor k takes exactly the parameter arrays and
        gradient requests of ``like``'s executor k."""
        shared = like.params_shared if like is not None else bool(shared)
        shared = shared and len(self.execs) > 1
        in_place = _accumulated_in_place(self.symbol)
        first = self.execs[0]
        for k in range(1, len(self.execs)):
            old = self.execs[k]
            args, grads, reqs = list(old.arg_arrays), dict(old.grad_dict), \
                dict(old._grad_req)
            for j, name in enumerate(self.arg_names):
                if name not in self.param_names:
                    continue
                mine, theirs = grads.get(name), first.grad_dict.get(name)
                if like is not None:
                    src = like.execs[k]
                    arr, grad, req = src.arg_dict[name], src.grad_dict.get(name), \
                        src._grad_req[name]
                elif shared and theirs is not None and name in in_place:
                    arr, grad, req = first.arg_dict[name], theirs, 'add'
                    if mine is not None and mine is not theirs:
                        theirs += mine      # a gradient computed before: the sum goes on
                elif shared or args[j] is first.arg_dict[name]:
                    arr = first.arg_dict[name] if shared else \
                        first.arg_dict[name].copyto(old._ctx)
                    req = first._grad_req[name]
                    grad = mine if mine is not None and mine is not theirs else \
                        nd.zeros(arr.shape, old._ctx, arr.dtype)
                    if req == 'null':
                        grad = None
                else:
                    continue            # already its own copy
                args[j], reqs[name] = arr, req
                grads.pop(name, None)
                if grad is not None:
                    grads[name] = grad
            before = old.grad_dict
            if reqs == old._grad_req and all(a is b for a, b in zip(args, old.arg_arrays)) \
                    and grads.keys() == before.keys() \
                    and all(g is before[n] for n, g in grads.items()):
                continue
            self.execs[k] = Executor(self.symbol, old._ctx, args, grads or None, reqs,
                                     old.aux_arrays, _shared_buffers=old._plan.buffers)
            self._follow_monitor(old, self.execs[k])
        self.params_shared = shared
        self._collect_arrays()

    # ------------------------------------------------------------ parameters and states
    def set_params(self, arg_params, aux_params, allow_extra=False):
        for e in self.execs:
            e.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params, params_differ=True):
        """Write the mean over the contexts of each parameter and auxiliary state into the
        given dicts (of parameters, the first context's copy when `params_differ` is
        False: the copies are equal, and a mean could round)."""
        for names, arrays, out, mean_of in (
                (self.param_names, self.param_arrays, arg_params, params_differ),
                (self.aux_names, self.aux_arrays, aux_params, True)):
            for name, block in zip(names, arrays):
                mean = block[0].copy()
                if mean_of and len(block) > 1:
                    for other in block[1:]:
                        mean += other
                    mean /= len(block)
                if name in out:
                    mean.astype(out[name].dtype).copyto(out[name])
                else:
                    out[name] = mean

    def get_states(self, merge_multi_context=True):
        """``[[state on context 0, ...], ...]``; merging is refused as in MXNet (a state
        need not have a batch axis)."""
        if merge_multi_context:
            raise MXNetError("get_states: merge_multi_context=True is not supported (as in "
                             "MXNet); pass merge_multi_context=False")
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Set the states from `states` (per state: a list with one array per context, or
        one array of the whole batch, sliced) or fill them with the scalar `value`."""
        if (states is None) == (value is None):
            raise ValueError("set_states: give exactly one of states and value")
        if value is not None:
            for block in self.state_arrays:
                for dst in block:
                    dst[:] = value
            return
        if len(states) != len(self.state_arrays):
            raise ValueError(f"set_states: {len(states)} states given, the module has "
                             f"{len(self.state_arrays)} ({self.state_names})")
        for name, src, block in zip(self.state_names, states, self.state_arrays):
            if isinstance(src, (list, tuple)):
                if len(src) != len(block):
                    raise ValueError(f"set_states: state {name!r} needs {len(block)} arrays "
                                     f"(one per context), got {len(src)}")
                for s, dst in zip(src, block):
                    _copy_in(s, dst)
            elif len(block) == 1:
                _copy_in(src, block[0])
            else:
                for part, dst in zip(self.slices, block):
                    _copy_in(_slice_along(src, 0, part), dst)

    # ------------------------------------------------------------ computation
    def _load(self, sources, arrays, layouts, what):
        if len(sources) < len(arrays):
            raise MXNetError(f"forward: the batch has {len(sources)} {what} arrays, the "
                             f"module needs {len(arrays)}")
        single = len(self.execs) == 1
        for src, targets, axis in zip(sources, arrays, layouts):
            for part, dst in targets:
                _copy_in(src if single or axis < 0 else _slice_along(src, axis, part), dst)

    def forward(self, data_batch, is_train=None):
        """Split the batch over the executors, then run each (their ops overlap)."""
        self._load(data_batch.data, self.data_arrays, self.data_layouts, 'data')
        labels = getattr(data_batch, 'label', None)
        if labels and self.label_arrays:        # a prediction batch may carry no labels
            self._load(labels, self.label_arrays, self.label_layouts, 'label')
        if is_train is None:
            is_train = self.for_training
        for e in self.execs:
            e.forward(is_train=is_train)

    def backward(self, out_grads=None):
        if not self.for_training:
            raise MXNetError("backward: the module was bound with for_training=False")
        for i, e in enumerate(self.execs):
            grads = out_grads
            if out_grads is not None and len(self.execs) > 1:
                grads = [_slice_along(g, 0, self.slices[i]) for g in out_grads]
            e.backward(out_grads=grads)

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        end = len(self.output_names) if end is None else end
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            return [_merge(o, 0) for o in outputs]
        return outputs

    def get_output_shapes(self):
        shapes = []
        for i, name in enumerate(self.output_names):
            first = self.execs[0].outputs[i].shape
            rows = sum(e.outputs[i].shape[0] for e in self.execs) if first else 0
            shapes.append((name, (rows,) + tuple(first[1:]) if first else first))
        return shapes

    def get_input_grads(self, merge_multi_context=True):
        if not self.inputs_need_grad:
            raise MXNetError("get_input_grads: bind with inputs_need_grad=True")
        if merge_multi_context:
            return [_merge(g, 0) for g in self.input_grad_arrays]
        return self.input_grad_arrays

    def update_metric(self, eval_metric, labels, pre_sliced=False, pad=0):
        """Update `eval_metric` once per executor with its slice; the last `pad` samples of
        the batch (an iterator's padding) are left out."""
        real = self.batch_size - pad
        update = getattr(eval_metric, 'update_async', eval_metric.update)
        for i, (e, part) in enumerate(zip(self.execs, self.slices)):
            keep = min(part.stop, real) - part.start
            if keep <= 0:
                continue
            if pre_sliced:
                mine = list(labels[i])
            elif len(self.execs) == 1:
                mine = list(labels)
            else:
                axes = self.label_layouts or [0] * len(labels)
                mine = [lab if axis < 0 else _slice_along(lab, axis, part)
                        for lab, axis in zip(labels, axes)]
            outputs = list(e.outputs)
            rows = part.stop - part.start
            if keep < rows:
                outputs = [_without_padding(o, rows, rows - keep) for o in outputs]
                mine = [_without_padding(lab, rows, rows - keep) for lab in mine]
            update(mine, outputs)

    # ------------------------------------------------------------ monitor
    def install_monitor(self, mon):
        self._monitor = mon
        for e in self.execs:
            mon.install(e)

    def _follow_monitor(self, old, new):
        """A reshaped executor keeps the monitor (MXNet's lost it)."""
        mon = self._monitor
        if mon is not None and old in mon.exes:
            mon.exes[mon.exes.index(old)] = new
            new.set_monitor_callback(old._monitor, old._monitor_all)


def _accumulated_in_place(symbol):
    """The variables that only FullyConnected nodes read, as weight or bias. Their
    gradient is one GEMM that adds into its output at no cost (beta = 1) and that the
    engine splits over idle workers, so a second executor accumulating into the first's
    gradient waits for nothing it could have overlapped. Other gradients (a convolution's
    weight, measured: its kernel runs on one worker) are better computed by each executor
    at once and summed after (an add of the parameter's size)."""
    readers = {}
    for node in symbol._nodes():
        if node.is_variable:
            continue
        fc = node.op.name == 'FullyConnected'
        for pos, (child, _) in enumerate(node.inputs):
            if child.is_variable:
                readers.setdefault(child.name, []).append(fc and pos > 0)
    return {name for name, ok in readers.items() if all(ok)}


def _without_padding(arr, batch, pad):
    """The rows of `arr` that belong to real samples: its first axis holds `batch` samples,
    each possibly spread over k consecutive rows (an output reshaped to (batch·k, ...))."""
    rows = arr.shape[0]
    if rows % batch:
        return arr
    k = rows // batch
    return arr[0:(batch - pad) * k]
