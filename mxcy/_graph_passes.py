"""Inference graph passes: a rewritten forward program for an executor bound for inference.

When no argument of a bound graph needs a gradient (``grad_req='null'`` everywhere, as
Module binds with ``for_training=False``), ``forward(is_train=False)`` runs a rewritten
graph instead of the bound one, exact to float rounding:

1. **BatchNorm folding.** A BatchNorm whose input is the only use of a Convolution's (or
   FullyConnected's) output, on the channel axis, is folded into it: with
   s = γ / √(moving_var + eps) (γ = 1 under ``fix_gamma``), the layer runs with
   w' = w·s (per output channel) and b' = (b − moving_mean)·s + β (b = 0 without bias).
2. **Activation fusion.** A ReLU (``Activation(act_type='relu')``, ``relu``) or a
   ``clip`` that is the only use of a 1-/2-D convolution's output (folded or not) is
   applied in place on the convolution's output inside the same engine op
   (``mxcy._fused.conv_act``, which calls _conv's own forward kernel); a ReLU after an
   ``elemwise_add`` (residual blocks) becomes one ``a + b → relu`` op written in place over
   its first input where the memory plan allows; a ReLU after a BatchNorm that was not
   folded becomes ``BatchNormWithReLU`` (one scale-shift-relu pass).

A value used twice, or returned as an output, is never folded away. The rewritten graph
gets its own memory plan, sharing the bound plan's buffers (never an output's), and
writes the same output arrays. ``forward(is_train=True)``, and any forward while a
monitor callback is installed, run the bound graph unchanged.

**When the folded weights are recomputed.** They are computed by an engine op at the
first inference forward, and again at the first inference forward after any write to one
of their sources (weight, bias, γ, β, moving mean/var): each source array's engine write
counter is compared on every inference forward, so ``Module.set_params``/``init_params``/
``load_params``, ``Executor.copy_params_from``, ``arg_dict[name][:] = ...``, an optimizer
update and a rebinding of the argument to another array are all seen. A write that
bypasses the engine (through memory obtained outside mxcy's NDArray operations) is not.

``MXCY_GRAPH_PASSES`` in the environment when a graph is bound chooses the passes for that
executor: ``0`` none, ``1`` (the default) all, or a comma-separated list of ``fold``
(pass 1), ``conv_act`` (a clamp fused into a convolution) and ``elemwise`` (add+ReLU,
BatchNorm+ReLU), e.g. ``MXCY_GRAPH_PASSES=fold,conv_act``.
"""
import math
import os

import numpy as np

from mxcy import _ndarray
from mxcy._exec_program import ForwardProgram
from mxcy._memplan import plan_memory
from mxcy.operator import get_op
from mxcy.operator.conv import _as_2d, _pad_pair, _pair

ENV = 'MXCY_GRAPH_PASSES'
_FLOATS = ('float32', 'float64')


PASSES = ('fold', 'conv_act', 'elemwise')


def enabled():
    """The passes graphs bound now get (``MXCY_GRAPH_PASSES``): a frozenset of PASSES
    names, empty when off."""
    spec = os.environ.get(ENV, '1').strip().lower()
    if spec in ('', '1', 'all', 'on', 'true'):
        return frozenset(PASSES)
    if spec in ('0', 'none', 'off', 'false'):
        return frozenset()
    names = frozenset(t.strip() for t in spec.split(',') if t.strip())
    unknown = sorted(names - set(PASSES))
    if unknown:
        raise ValueError(f"{ENV}={spec!r}: unknown pass(es) {unknown}; expected 0, 1 or a "
                         f"comma-separated list of {list(PASSES)}")
    return names


class _PNode:
    """A node of the rewritten graph (same interface as the symbol's nodes)."""
    __slots__ = ('op', 'params', 'inputs', 'name', 'nargs', 'act', 'fold')

    def __init__(self, op, params, inputs, name, nargs):
        self.op, self.params, self.inputs, self.name, self.nargs = \
            op, params, inputs, name, nargs
        self.act = None        # (lo, hi) clamp fused into a convolution
        self.fold = None       # _Fold of a BatchNorm folded into this layer

    @property
    def is_variable(self):
        return self.op is None

    def num_args(self):
        return self.nargs


class _ConvAct:
    """Convolution with folded weights and/or a fused clamp; params: (conv params, act)."""
    name = '_fused_conv_act'
    backward_needs = ()
    has_backward = False

    def outputs(self, p):
        return ['output']

    def forward(self, p, is_train, req, ins, outs, aux):
        conv_p, act = p
        if act is None:
            _CONV.forward(conv_p, is_train, req, ins, outs, aux)
            return
        from mxcy import _fused
        _, stride, pad, dilate = _CONV.geometry(conv_p)
        x, w, y = ins[0], ins[1], outs[0]
        b = None if conv_p.no_bias else ins[2]
        _fused.conv_act(x.reshape(_as_2d(x.shape)), w.reshape(_as_2d(w.shape)), b,
                        y.reshape(_as_2d(y.shape)), _pair(stride), _pad_pair(pad),
                        _pair(dilate), conv_p.num_group, act[0], act[1])


class _AddAct:
    """y = clamp(a + b) in one op; may write over a."""
    name = '_fused_add_act'
    backward_needs = ()
    has_backward = False
    inplace_ok = True

    def outputs(self, p):
        return ['output']

    def forward(self, p, is_train, req, ins, outs, aux):
        from mxcy import _fused
        _fused.add_act(ins[0], ins[1], outs[0], p[0], p[1])


class _Fold:
    """Folded weight and bias of one layer + BatchNorm, recomputed when a source changes."""

    def __init__(self, layer, bn, layer_params, dtype):
        self.layer_ids = [id(c) for c, _ in layer.inputs[1:layer.num_args()]]
        aux = bn.inputs[bn.num_args():]
        self.bn_ids = [id(c) for c, _ in bn.inputs[1:3]] + [id(c) for c, _ in aux]
        self.no_bias = layer_params.no_bias
        self.eps, self.fix_gamma = bn.params.eps, bn.params.fix_gamma
        self.dtype = dtype
        self.stamp = None
        self.weight = self.bias = None

    def sources(self, var_array):
        return [var_array[i] for i in self.layer_ids + self.bn_ids]

    def refresh(self, var_array, ctx):
        """Push the fold again when a source array was replaced or written since."""
        srcs = self.sources(var_array)
        stamp = [(id(a), a._chunk.writes_pushed) for a in srcs]
        if stamp == self.stamp:
            return
        self.stamp = stamp
        eps, fix_gamma, no_bias, dtype = self.eps, self.fix_gamma, self.no_bias, self.dtype

        def run(*views):
            w = views[0]
            b = None if no_bias else views[1]
            gamma, beta, mean, var = views[len(views) - 6:len(views) - 2]
            w_out, b_out = views[-2], views[-1]
            scale = 1.0 / np.sqrt(var.astype(np.float64) + eps)
            if not fix_gamma:
                scale = scale * gamma
            shape = (-1,) + (1,) * (w.ndim - 1)
            w_out[...] = (w * scale.reshape(shape)).astype(dtype)
            bias = 0.0 if b is None else b.astype(np.float64)
            b_out[...] = ((bias - mean) * scale + beta).astype(dtype)
        _ndarray.push_numpy(run, srcs, [self.weight, self.bias], 'BatchNorm_fold')


_CONV = get_op('Convolution')
_BN_RELU = get_op('_contrib_BatchNormWithReLU')
_CONV_ACT, _ADD_ACT = _ConvAct(), _AddAct()


def _act_range(node):
    """(lo, hi) of a ReLU or clip node, else None."""
    name = node.op.name
    if name == 'relu' or (name == 'Activation' and node.params.act_type == 'relu'):
        return (0.0, math.inf)
    if name == 'clip':
        return (float(node.params.a_min), float(node.params.a_max))
    return None


class InferenceGraph:
    """The rewritten graph of an executor, its memory plan and program (or nothing to do:
    ``changed`` False)."""

    def __init__(self, exe, passes=PASSES):
        self.exe = exe
        self.passes = passes
        nodes, shapes, dtypes = exe._nodes, exe._shape_of, exe._dtype_of
        uses = {}
        for n in nodes:
            for c, i in n.inputs:
                uses[(id(c), i)] = uses.get((id(c), i), 0) + 1
        heads = {(id(n), i) for n, i in exe._symbol._outputs}
        self._uses, self._heads = uses, heads

        def single_use(key):
            return uses.get(key, 0) == 1 and key not in heads

        passes = self.passes
        remap, rep = {}, {}         # original entry -> new entry; new entry -> original
        new_nodes, self.folds, changed = [], [], False
        for n in nodes:
            if n.is_variable:
                new_nodes.append(n)
                remap[(id(n), 0)] = (n, 0)
                continue
            ins = [remap[(id(c), i)] for c, i in n.inputs]
            src = ins[0] if ins else None
            src_key = n.inputs[0] if n.inputs else None
            src_key = (id(src_key[0]), src_key[1]) if src_key else None
            if n.op.name == 'BatchNorm' and 'fold' in passes and \
                    self._foldable(n, src, src_key, single_use, shapes, dtypes):
                self._fold(src[0], n, new_nodes, dtypes[src_key], shapes)
                remap[(id(n), 0)] = src
                rep[(id(src[0]), 0)] = (id(n), 0)
                changed = True
                continue
            act = _act_range(n)
            if act is not None and src is not None and single_use(src_key) and \
                    dtypes[src_key] in _FLOATS and src[1] == 0 and \
                    self._fuse_act(src[0], act):
                remap[(id(n), 0)] = src
                rep[(id(src[0]), 0)] = (id(n), 0)
                changed = True
                continue
            node = _PNode(n.op, n.params, ins, n.name, n.num_args())
            new_nodes.append(node)
            for i in range(len(n.op.outputs(n.params))):
                remap[(id(n), i)] = (node, i)
                rep[(id(node), i)] = (id(n), i)
        self.changed = changed
        if not changed:
            return
        self.nodes = new_nodes
        self.head_keys = {}
        for n, i in exe._symbol._outputs:
            if not n.is_variable:
                node, j = remap[(id(n), i)]
                self.head_keys[(id(node), j)] = (id(n), i)
        new_shapes = {k: shapes[v] for k, v in rep.items()}
        new_dtypes = {k: dtypes[v] for k, v in rep.items()}
        needs = {id(n): False for n in new_nodes}
        outs = exe.outputs
        shared = [None if any(b._chunk is o._chunk for o in outs) else b
                  for b in exe._plan.buffers]
        self.plan = plan_memory(new_nodes, list(self.head_keys), new_shapes, new_dtypes,
                                needs, False, exe._ctx, shared)
        self.entries = entries = self.plan.entry_arrays
        for n in new_nodes:
            if n.is_variable and not isinstance(n, _PNode):
                entries[(id(n), 0)] = exe._var_array[id(n)]
        for fold_node, fold in self.folds:
            entries[(id(fold_node[0]), 0)] = fold.weight
            entries[(id(fold_node[1]), 0)] = fold.bias
        for new_key, old_key in self.head_keys.items():
            entries[new_key] = exe._entries[old_key]
        shim = _Shim(new_nodes, entries, self.plan)
        self.program = ForwardProgram(shim)
        # Executor._rebind_values finds places by the bound graph's entry keys
        for new_key, old_key in self.head_keys.items():
            self.program.where.setdefault(old_key, []).extend(
                self.program.where.get(new_key, []))

    # ------------------------------------------------------------ patterns
    def _foldable(self, bn, src, src_key, single_use, shapes, dtypes):
        layer = src[0] if src is not None else None
        if not isinstance(layer, _PNode) or src[1] != 0 or layer.fold is not None or \
                layer.act is not None or layer.op.name not in ('Convolution',
                                                               'FullyConnected'):
            return False
        if not single_use(src_key) or dtypes[src_key] not in _FLOATS:
            return False
        # folded from bound arrays: the weights, γ, β and statistics must be variables
        if not all(c.is_variable for c, _ in list(layer.inputs[1:]) + list(bn.inputs[1:])):
            return False
        # the statistics outputs must be unused
        if any(not self._unused((id(bn), i)) for i in (1, 2)):
            return False
        ndim = len(shapes[src_key])
        axis = bn.params.axis % ndim if -ndim <= bn.params.axis < ndim else None
        want = 1 if layer.op.name == 'Convolution' else ndim - 1
        return axis == want and bn.params.eps > 0

    def _unused(self, key):
        return key not in self._heads and not self._uses.get(key)

    def _fold(self, layer, bn, new_nodes, dtype, shapes):
        exe = self.exe
        orig_layer_inputs = [c for c, _ in layer.inputs]
        weight = exe._var_array[id(orig_layer_inputs[1])]
        shape = (weight.shape[0],)
        fold_layer = _FoldSource(layer, orig_layer_inputs)
        fold = _Fold(fold_layer, bn, layer.params, dtype)
        fold.weight = _ndarray.empty(weight.shape, exe._ctx, dtype)
        fold.bias = _ndarray.empty(shape, exe._ctx, dtype)
        w_node = _PNode(None, None, [], bn.name + '_folded_weight', 0)
        b_node = _PNode(None, None, [], bn.name + '_folded_bias', 0)
        new_nodes.append(w_node)
        new_nodes.append(b_node)
        params = _with(layer.params, no_bias=False)
        if layer.op.name == 'Convolution':
            layer.op, layer.params = _CONV_ACT, (params, None)
        else:
            layer.params = params
        layer.inputs = [layer.inputs[0], (w_node, 0), (b_node, 0)]
        layer.nargs = 3
        layer.fold = fold
        self.folds.append(((w_node, b_node), fold))

    def _fuse_act(self, node, act):
        if not isinstance(node, _PNode) or node.act is not None:
            return False
        if 'conv_act' in self.passes:
            if node.op.name == 'Convolution' and len(node.params.kernel) <= 2:
                node.op, node.params = _CONV_ACT, (node.params, None)
            if node.op is _CONV_ACT and len(node.params[0].kernel) <= 2:
                node.act = act
                node.params = (node.params[0], act)
                return True
        if 'elemwise' not in self.passes:
            return False
        if node.op.name == 'elemwise_add':
            node.op, node.params, node.act = _ADD_ACT, act, act
            return True
        if node.op.name == 'BatchNorm' and act == (0.0, math.inf):
            node.op = _BN_RELU
            node.act = act
            return True
        return False

    # ------------------------------------------------------------ running
    def run(self):
        var_array = self.exe._var_array
        for _, fold in self.folds:
            fold.refresh(var_array, self.exe._ctx)
        self.program.run(False)


class _FoldSource:
    """The original inputs of a layer whose weights get folded (its PNode's inputs are
    replaced by the folded constants)."""

    def __init__(self, layer, inputs):
        self.inputs = [(c, 0) for c in inputs]
        self._nargs = layer.nargs

    def num_args(self):
        return self._nargs


class _Shim:
    """What ForwardProgram reads of an executor."""

    def __init__(self, nodes, entries, plan):
        self._nodes, self._entries, self._plan = nodes, entries, plan


def _with(params, **changes):
    from mxcy.operator._params import Params
    values = params.as_dict()
    values.update(changes)
    return Params(values)
