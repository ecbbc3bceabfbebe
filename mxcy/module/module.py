"""Module: one symbol bound to one executor, with parameters, an optimizer and a KVStore.

MXNet splits a batch over several devices; on CPU the engine's workers already use every
core, so mxcy binds one executor per Module and rejects a list of several contexts with a
clear message. A batch whose shapes differ from the bound ones (the last, smaller batch)
reshapes the executor, sharing memory.
"""
import logging

import numpy as np

from mxcy import ndarray as nd
from mxcy import optimizer as opt
from mxcy.base import MXNetError
from mxcy.context import cpu
from mxcy.io import DataDesc
from mxcy.module.base_module import BaseModule, _batch_label


def _descs(shapes):
    if shapes is None:
        return []
    out = []
    for s in shapes:
        out.append(s if isinstance(s, DataDesc) else DataDesc(s[0], tuple(s[1])))
    return out


_LEAVE_MISSING = object()     # set_params' initializer: leave missing parameters alone


class Module(BaseModule):
    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=None, work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        context = cpu() if context is None else context
        if isinstance(context, (list, tuple)):
            if len(context) != 1:
                raise MXNetError("Module: mxcy binds one executor per Module; pass one "
                                 f"context (got {len(context)}); the engine's workers "
                                 "already spread the work over the cores")
            context = context[0]
        self._context = context
        self._symbol = symbol
        args = symbol.list_arguments()
        self._data_names = list(data_names or [])
        self._label_names = [n for n in (label_names or []) if n in args]
        self._state_names = list(state_names or [])
        self._fixed_param_names = set(fixed_param_names or [])
        for name in self._data_names:
            if name not in args:
                raise ValueError(f"Module: data name {name!r} is not an argument of the "
                                 f"symbol; arguments are {args}")
        inputs = set(self._data_names) | set(self._label_names) | set(self._state_names)
        self._param_names = [n for n in args if n not in inputs]
        # the optimizer's index of each parameter (borrow_optimizer shares another's)
        self._param_index = {n: i for i, n in enumerate(self._param_names)}
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._arg_params = None
        self._aux_params = None
        self._exec = None
        self._monitor = None
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = False
        self._updater = None
        self._data_shapes = self._label_shapes = None
        self._last_pad = 0

    # ------------------------------------------------------------ properties
    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes

    @property
    def output_shapes(self):
        return [(n, o.shape) for n, o in zip(self._output_names, self._exec.outputs)]

    # ------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = _descs(data_shapes)
        self._label_shapes = _descs(label_shapes) if label_shapes else None
        shapes = {d.name: d.shape for d in self._data_shapes}
        types = {d.name: d.dtype for d in self._data_shapes}
        for d in self._label_shapes or []:
            if d.name in self._label_names:
                shapes[d.name] = d.shape
                types[d.name] = d.dtype
        reqs = {}
        for name in self._symbol.list_arguments():
            if name in self._param_names:
                reqs[name] = grad_req if for_training and name not in \
                    self._fixed_param_names else 'null'
            elif name in self._data_names:
                reqs[name] = 'write' if inputs_need_grad else 'null'
            else:
                reqs[name] = 'null'
        if shared_module is None:
            self._exec = self._symbol.simple_bind(self._context, grad_req=reqs,
                                                  type_dict=types, **shapes)
        else:
            self._exec = self._bind_sharing(shared_module, shapes, types, reqs)
        self.binded = True
        if self.params_initialized:
            self._exec.copy_params_from(self._arg_params, self._aux_params)

    def _bind_sharing(self, shared_module, shapes, types, reqs):
        """An executor whose parameters, their gradients and auxiliary states ARE the
        shared module's arrays (same NDArray objects, matched by name), and whose
        intermediate buffers reuse the shared executor's memory (BucketingModule)."""
        from mxcy.executor import Executor
        if not shared_module.binded:
            raise MXNetError("bind: shared_module must be bound first")
        shared = shared_module._exec
        sym, ctx = self._symbol, self._context
        arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
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
        shared_params = {n: shared.arg_dict[n] for n in shared_module._param_names}
        args, grads = [], {}
        for name, shape, dtype in zip(sym.list_arguments(), arg_shapes, arg_types):
            pool = shared_params if name in self._param_names else {}
            args.append(take('parameter', name, shape, dtype, pool))
            if reqs[name] != 'null':
                grad_pool = shared.grad_dict if name in shared_params else {}
                grads[name] = take('gradient', name, shape, dtype, grad_pool)
        aux = [take('auxiliary state', name, shape, dtype, shared.aux_dict)
               for name, shape, dtype in zip(self._aux_names, aux_shapes, aux_types)]
        return Executor(sym, ctx, args, grads or None, reqs, aux,
                        _shared_buffers=shared._plan.buffers)

    def reshape(self, data_shapes, label_shapes=None):
        assert self.binded
        self._data_shapes = _descs(data_shapes)
        self._label_shapes = _descs(label_shapes) if label_shapes else self._label_shapes
        shapes = {d.name: d.shape for d in self._data_shapes}
        for d in self._label_shapes or []:
            if d.name in self._label_names:
                shapes[d.name] = d.shape
        old, self._exec = self._exec, self._exec.reshape(allow_up_sizing=True, **shapes)
        if self._monitor is not None and old in self._monitor.exes:
            # the monitor follows the module to its new executor (MXNet's lost it)
            self._monitor.exes[self._monitor.exes.index(old)] = self._exec
            self._exec.set_monitor_callback(old._monitor, old._monitor_all)

    # ------------------------------------------------------------ parameters
    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        from mxcy import initializer as init
        if self.params_initialized and not force_init:
            return
        assert self.binded, 'call bind before init_params'
        leave_missing = initializer is _LEAVE_MISSING
        initializer = init.Uniform(0.01) if initializer in (None, _LEAVE_MISSING) else initializer
        attrs = self._symbol.attr_dict()
        for names, given, arrays in ((self._param_names, arg_params, self._exec.arg_dict),
                                     (self._aux_names, aux_params, self._exec.aux_dict)):
            for name in names:
                target = arrays[name]
                if given is not None and name in given:
                    value = given[name]
                    if tuple(value.shape) != target.shape:
                        raise MXNetError(f"init_params: {name!r} has shape {value.shape}, "
                                         f"the module needs {target.shape}")
                    target[:] = value
                elif given is not None and not allow_missing:
                    raise MXNetError(f"init_params: {name!r} is missing from the given "
                                     "parameters (pass allow_missing=True to initialise it)")
                elif not (leave_missing and given is not None):
                    initializer(init.InitDesc(name, attrs.get(name, {})), target)
        if not allow_extra:
            for given, names in ((arg_params, self._param_names), (aux_params, self._aux_names)):
                extra = [k for k in (given or {}) if k not in names]
                if extra:
                    raise MXNetError(f"init_params: {extra} are not parameters of this "
                                     "module (pass allow_extra=True to ignore them)")
        self._arg_params = {n: self._exec.arg_dict[n] for n in self._param_names}
        self._aux_params = dict(self._exec.aux_dict)
        self.params_initialized = True

    def get_params(self):
        """Copies of the current parameters: (arg_params, aux_params)."""
        assert self.params_initialized
        args = {n: self._exec.arg_dict[n].copy() for n in self._param_names}
        aux = {n: a.copy() for n, a in self._exec.aux_dict.items()}
        return args, aux

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        # as MXNet: what `arg_params`/`aux_params` lack (with allow_missing=True) is left
        # as it is -- no initializer runs, so a label input in the parameters is fine
        if not self.params_initialized or force_init:
            self.init_params(initializer=_LEAVE_MISSING, arg_params=arg_params,
                             aux_params=aux_params,
                             allow_missing=allow_missing, force_init=True,
                             allow_extra=allow_extra)

    # ------------------------------------------------------------ optimizer
    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        from mxcy import kvstore as kvs
        assert self.binded and self.params_initialized
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring...')
            return
        batch_size = self._data_shapes[0].shape[0] if self._data_shapes else 1
        kv = kvstore
        if isinstance(kvstore, str):
            kv = kvs.create(kvstore) if 'dist' in kvstore else None
        if kv is not None and 'dist' in kv.type and '_sync' in kv.type:
            batch_size *= kv.num_workers
        idx2name = dict(enumerate(self._param_names))
        params = dict(optimizer_params or {})
        if isinstance(optimizer, str):
            params.setdefault('rescale_grad', 1.0 / batch_size)
            optimizer = opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name,
                                   **params)
        else:
            optimizer.idx2name = idx2name.copy()
        self._optimizer = optimizer
        self._kvstore = kv
        self._updater = opt.get_updater(optimizer)
        if kv is not None and self._param_names:
            # every rank starts from rank 0's weights (one init: one collective, not one
            # per parameter)
            weights = [self._exec.arg_dict[name] for name in self._param_names]
            kv.init(self._param_names, weights)
            kv.pull(self._param_names, out=weights)
        self.optimizer_initialized = True
        states = getattr(self, '_preload_opt_states', None)
        if states is not None:
            self.load_optimizer_states(states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Use `shared_module`'s optimizer, updater (so its optimizer states) and KVStore;
        parameters keep the shared module's update indices (BucketingModule)."""
        if not shared_module.optimizer_initialized:
            raise MXNetError("borrow_optimizer: shared_module has no optimizer yet")
        unknown = [n for n in self._param_names if n not in shared_module._param_index]
        if unknown:
            raise MXNetError(f"borrow_optimizer: parameters {unknown} are not parameters of "
                             "shared_module, so it has no optimizer state for them")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self._param_index = shared_module._param_index
        self.optimizer_initialized = True

    # ------------------------------------------------------------ computation
    def _batch_shapes_differ(self, data_batch):
        for desc, arr in zip(self._data_shapes, data_batch.data):
            if desc.shape != tuple(arr.shape):
                return True
        return False

    def forward(self, data_batch, is_train=None):
        assert self.binded and self.params_initialized
        if is_train is None:
            is_train = self.for_training
        if self._batch_shapes_differ(data_batch):
            data_shapes = [DataDesc(d.name, tuple(a.shape), d.dtype)
                           for d, a in zip(self._data_shapes, data_batch.data)]
            label_shapes = None
            labels = _batch_label(data_batch)
            if self._label_shapes and labels:
                label_shapes = [DataDesc(d.name, tuple(a.shape), d.dtype)
                                for d, a in zip(self._label_shapes, labels)]
            self.reshape(data_shapes, label_shapes)
        args = self._exec.arg_dict
        for name, arr in zip(self._data_names, data_batch.data):
            _copy_in(arr, args[name])
        labels = _batch_label(data_batch)
        if labels is not None:
            for name, arr in zip(self._label_names, labels):
                _copy_in(arr, args[name])
        self._last_pad = getattr(data_batch, 'pad', 0) or 0
        self._exec.forward(is_train=is_train)

    def backward(self, out_grads=None):
        assert self.binded and self.params_initialized
        self._exec.backward(out_grads=out_grads)

    def update(self):
        """Apply the optimizer to every trainable parameter (through the KVStore in
        distributed training: push the gradient, pull the reduced result)."""
        assert self.optimizer_initialized
        args, grads = self._exec.arg_dict, self._exec.grad_dict
        trained = [(self._param_index[n], n) for n in self._param_names
                   if grads.get(n) is not None]
        if self._kvstore is not None and trained:
            names = [n for _, n in trained]
            self._kvstore.pushpull(names, [grads[n] for n in names],
                                   out=[grads[n] for n in names])
        for i, name in trained:
            self._updater(i, grads[name], args[name])

    def get_outputs(self, merge_multi_context=True):
        assert self.binded
        return list(self._exec.outputs)

    def get_input_grads(self, merge_multi_context=True):
        assert self.inputs_need_grad, 'bind with inputs_need_grad=True'
        return [self._exec.grad_dict[n] for n in self._data_names]

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update `eval_metric` with this batch; padded samples are left out."""
        pad = self._last_pad
        outputs = self._exec.outputs
        if pad:
            batch = self._data_shapes[0].shape[0]
            outputs = [_without_padding(o, batch, pad) for o in outputs]
            labels = [_without_padding(lab, batch, pad) for lab in labels]
        # pushed, not waited for: the next batch is prepared while this one computes
        getattr(eval_metric, 'update_async', eval_metric.update)(labels, outputs)

    def install_monitor(self, monitor):
        """Install `monitor` (``mx.monitor.Monitor``) on the executor; it stays installed
        when a batch of another shape reshapes the module."""
        assert self.binded, 'call bind before install_monitor'
        self._monitor = monitor
        monitor.install(self._exec)

    # ------------------------------------------------------------ checkpoints
    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False):
        from mxcy.model import save_checkpoint
        args, aux = self.get_params()
        save_checkpoint(prefix, epoch, self._symbol, args, aux)
        if save_optimizer_states:
            self.save_optimizer_states(f'{prefix}-{epoch:04d}.states')

    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        from mxcy.model import load_checkpoint
        symbol, args, aux = load_checkpoint(prefix, epoch)
        mod = Module(symbol=symbol, **kwargs)
        mod._arg_params, mod._aux_params = args, aux
        mod.params_initialized = True      # copied into the executor at bind
        if load_optimizer_states:
            mod._preload_opt_states = f'{prefix}-{epoch:04d}.states'
        return mod

    def save_optimizer_states(self, fname):
        assert self.optimizer_initialized
        with open(fname, 'wb') as f:
            f.write(self._updater.get_states(dump_optimizer=False))

    def load_optimizer_states(self, fname):
        assert self.optimizer_initialized
        with open(fname, 'rb') as f:
            self._updater.set_states(f.read())


def _without_padding(arr, batch, pad):
    """The rows of `arr` that belong to real samples: its first axis holds `batch` samples,
    each possibly spread over k consecutive rows (an output reshaped to (batch·k, ...))."""
    rows = arr.shape[0]
    if rows % batch:
        return arr
    k = rows // batch
    return arr[0:(batch - pad) * k]


def _copy_in(src, dst):
    """dst[:] = src for an NDArray or NumPy batch (same shape)."""
    if isinstance(src, nd.NDArray):
        if src is not dst:
            src.copyto(dst)
    else:
        dst[:] = np.asarray(src)
