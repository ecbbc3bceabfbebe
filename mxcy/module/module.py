"""Module: one symbol bound to one executor per context, with parameters, an optimizer
and a KVStore.

With several contexts (``context=[mx.cpu(0), mx.cpu(1)]``) the batch is split over one
executor per context (``mxcy.module.executor_group``, ``work_load_list`` honoured); each
step sums the executors' gradients through the KVStore, updates the parameters once and
copies them to every context, so training equals one context with the whole batch. With
a plain local KVStore (the default) the contexts share one copy of the parameters
instead: one update serves every context and no weight is copied; FullyConnected
gradients are accumulated by the executors into one array, the others summed into the
first context's (the store, which would only hand the sum back, is not pushed to). A
batch whose shapes differ from the bound ones (the last, smaller batch) reshapes the
executors, sharing memory.
"""
import logging
import warnings

from mxcy import optimizer as opt
from mxcy.base import MXNetError
from mxcy.context import Context, cpu
from mxcy.io import DataDesc
from mxcy.module.base_module import BaseModule, _batch_label, _stored
from mxcy.module.executor_group import DataParallelExecutorGroup, _descs

_LEAVE_MISSING = object()     # set_params' initializer: leave missing parameters alone


class Module(BaseModule):
    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=cpu(), work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        context = cpu() if context is None else context
        contexts = list(context) if isinstance(context, (list, tuple)) else [context]
        if not contexts or not all(isinstance(c, Context) for c in contexts):
            raise TypeError(f"Module: context must be a Context or a non-empty list of "
                            f"Contexts, got {context!r}")
        work_load_list = [1] * len(contexts) if work_load_list is None else \
            list(work_load_list)
        if len(work_load_list) != len(contexts):
            raise ValueError(f"Module: work_load_list has {len(work_load_list)} entries for "
                             f"{len(contexts)} contexts")
        self._context = contexts
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._compression_params = compression_params
        self._symbol = symbol
        args = symbol.list_arguments()
        self._data_names = list(data_names or [])
        self._label_names = [n for n in (label_names or []) if n in args]
        self._state_names = list(state_names or [])
        self._fixed_param_names = set(fixed_param_names or [])
        for kind, names in (('data', self._data_names), ('state', self._state_names)):
            for name in names:
                if name not in args:
                    raise ValueError(f"Module: {kind} name {name!r} is not an argument of "
                                     f"the symbol; arguments are {args}")
        inputs = set(self._data_names) | set(self._label_names) | set(self._state_names)
        self._param_names = [n for n in args if n not in inputs]
        # the optimizer's index of each parameter (borrow_optimizer shares another's)
        self._param_index = {n: i for i, n in enumerate(self._param_names)}
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._arg_params = None
        self._aux_params = None
        self._exec_group = None
        self._monitor = None
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = False
        self._updater = None
        self._data_shapes = self._label_shapes = None
        self._last_pad = 0

    # ------------------------------------------------------------ properties
    data_names = _stored('_data_names')
    label_names = _stored('_label_names')
    output_names = _stored('_output_names')
    data_shapes = _stored('_data_shapes')
    label_shapes = _stored('_label_shapes')

    @property
    def output_shapes(self):
        return self._exec_group.get_output_shapes()

    @property
    def _exec(self):
        """The first context's executor (the only one with one context)."""
        return self._exec_group.execs[0] if self._exec_group is not None else None

    # ------------------------------------------------------------ binding
    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = self._label_shapes = None

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if inputs_need_grad and not for_training:
            raise MXNetError("bind: inputs_need_grad=True needs for_training=True")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = _descs(data_shapes)
        self._label_shapes = _descs(label_shapes) if label_shapes else None
        shared_group = None
        if shared_module is not None:
            if not shared_module.binded:
                raise MXNetError("bind: shared_module must be bound first")
            shared_group = shared_module._exec_group
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad,
            shared_group=shared_group, logger=self.logger,
            fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            state_names=self._state_names, group2ctxs=self._group2ctxs)
        self.binded = True
        if self._monitor is not None:
            self._exec_group.install_monitor(self._monitor)
        if self.params_initialized:
            self._exec_group.set_params(self._arg_params, self._aux_params)
            self._alias_params()
        if self.optimizer_initialized and shared_module is None:
            self._exec_group.share_params(self._one_update_for_all())

    def reshape(self, data_shapes, label_shapes=None):
        """Reshape every executor for new data (and label) shapes, sharing memory."""
        if not self.binded:
            raise MXNetError("reshape: call bind first")
        self._data_shapes = _descs(data_shapes)
        self._label_shapes = _descs(label_shapes) if label_shapes else self._label_shapes
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # ------------------------------------------------------------ parameters
    def _alias_params(self):
        """`_arg_params`/`_aux_params` ARE the first executor's arrays."""
        first = self._exec
        self._arg_params = {n: first.arg_dict[n] for n in self._param_names}
        self._aux_params = dict(first.aux_dict)

    def _copy_to_other_contexts(self):
        """Every context's parameters and auxiliary states := the first context's."""
        group = self._exec_group
        for block in group.param_arrays + group.aux_arrays:
            for dst in block[1:]:
                block[0].copyto(dst)

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        from mxcy import initializer as init
        if self.params_initialized and not force_init:
            return
        if not self.binded:
            raise MXNetError("init_params: call bind first")
        leave_missing = initializer is _LEAVE_MISSING
        initializer = init.Uniform(0.01) if initializer in (None, _LEAVE_MISSING) else initializer
        attrs = self._symbol.attr_dict()
        first = self._exec
        for names, given, arrays in ((self._param_names, arg_params, first.arg_dict),
                                     (self._aux_names, aux_params, first.aux_dict)):
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
        self._copy_to_other_contexts()
        self._alias_params()
        self.params_initialized = True

    def get_params(self):
        """Copies of the current parameters: (arg_params, aux_params); with several
        contexts, the mean over them of the auxiliary states, and of the parameters when
        each context updated its own copy (kvstore=None; otherwise they are equal)."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("get_params: call bind and init_params first")
        args, aux = {}, {}
        per_context = self.optimizer_initialized and self._kvstore is None
        self._exec_group.get_params(args, aux, params_differ=per_context)
        return args, aux

    def _sync_params_from_devices(self):
        """The first context's parameters := the mean over the contexts."""
        args, aux = self.get_params()
        for name, value in list(args.items()) + list(aux.items()):
            value.copyto(self._arg_params.get(name, self._aux_params.get(name)))

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        # as MXNet: what `arg_params`/`aux_params` lack (with allow_missing=True) is left
        # as it is -- no initializer runs, so a label input in the parameters is fine
        if not self.params_initialized or force_init:
            self.init_params(initializer=_LEAVE_MISSING, arg_params=arg_params,
                             aux_params=aux_params,
                             allow_missing=allow_missing, force_init=True,
                             allow_extra=allow_extra)

    def get_states(self, merge_multi_context=True):
        """The state inputs (``state_names``) per context: ``[[state on ctx 0, ...]]``."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("get_states: call bind and init_params first")
        return self._exec_group.get_states(merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the state inputs from `states` or fill them with the scalar `value`."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("set_states: call bind and init_params first")
        self._exec_group.set_states(states, value)

    # ------------------------------------------------------------ optimizer
    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        from mxcy import kvstore as kvs
        if not (self.binded and self.params_initialized):
            raise MXNetError("init_optimizer: call bind and init_params first")
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring...')
            return
        num_ctx = len(self._context)
        batch_size = self._exec_group.batch_size
        kv = kvstore
        if isinstance(kvstore, str):
            kv = kvs.create(kvstore) if 'dist' in kvstore or num_ctx > 1 else None
        if kv is not None and 'dist' in kv.type and '_sync' in kv.type:
            batch_size *= kv.num_workers
        # without a KVStore each context updates its own copy from its own gradient (as
        # MXNet), under index i * num_ctx + k
        per_context = kv is None and num_ctx > 1
        if per_context:
            idx2name = {i * num_ctx + k: n for i, n in enumerate(self._param_names)
                        for k in range(num_ctx)}
        else:
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
        self._exec_group.share_params(self._one_update_for_all())
        if kv is not None and self._param_names:
            # every rank and context starts from rank 0's weights (one init: one
            # collective, not one per parameter)
            group = self._exec_group
            kv.init(self._param_names, [block[0] for block in group.param_arrays])
            kv.pull(self._param_names, out=[list(block) for block in group.param_arrays])
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
        mine, owner = self._exec_group, shared_module._exec_group
        if len(mine.execs) == len(owner.execs) and all(
                mine.execs[0].arg_dict[n] is owner.execs[0].arg_dict[n]
                for n in self._param_names):
            mine.share_params(None, like=owner)     # bound with shared_module
        else:
            mine.share_params(self._one_update_for_all())

    # ------------------------------------------------------------ computation
    def _batch_shapes_differ(self, data_batch):
        for desc, arr in zip(self._data_shapes, data_batch.data):
            if desc.shape != tuple(arr.shape):
                return True
        return False

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Get ready for `data_batch`: reshape now if its shapes differ from the bound ones.
        mxcy has no row_sparse parameters, so `sparse_row_id_fn` has nothing to pull."""
        if not self.binded:
            raise MXNetError("prepare: call bind first")
        if sparse_row_id_fn is not None:
            warnings.warn("prepare: sparse_row_id_fn is not used: this module has no "
                          "row_sparse parameters", UserWarning, stacklevel=2)
        if self._batch_shapes_differ(data_batch):
            self._reshape_for(data_batch)

    def _reshape_for(self, data_batch):
        data_shapes = [DataDesc(d.name, tuple(a.shape), d.dtype, d.layout)
                       for d, a in zip(self._data_shapes, data_batch.data)]
        label_shapes = None
        labels = _batch_label(data_batch)
        if self._label_shapes and labels:
            label_shapes = [DataDesc(d.name, tuple(a.shape), d.dtype, d.layout)
                            for d, a in zip(self._label_shapes, labels)]
        self.reshape(data_shapes, label_shapes)

    def forward(self, data_batch, is_train=None):
        if not (self.binded and self.params_initialized):
            raise MXNetError("forward: call bind and init_params first")
        if self._batch_shapes_differ(data_batch):
            self._reshape_for(data_batch)
        self._last_pad = getattr(data_batch, 'pad', 0) or 0
        self._exec_group.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        if not (self.binded and self.params_initialized):
            raise MXNetError("backward: call bind and init_params first")
        self._exec_group.backward(out_grads=out_grads)

    def _one_update_for_all(self):
        """Whether the contexts can share one copy of the parameters (see
        ``DataParallelExecutorGroup.share_params``): several contexts whose gradients a
        plain local KVStore would only sum."""
        return len(self._context) > 1 and self._kvstore is not None and \
            _sums_in_place(self._kvstore)

    def update(self):
        """Apply the optimizer to every trainable parameter. With a KVStore (several
        contexts, or distributed): the contexts' gradients are summed, the first
        context's weights updated once and the other contexts given the result. With a
        plain local store (no optimizer of its own: it would only hand the sum back) the
        contexts share one copy of the parameters, the gradients are summed into the
        first context's (most accumulated there by backward already) and one update
        serves all. Any other store (distributed, user-registered, or with an updater)
        sums through pushpull, and the new weights are copied to the other contexts."""
        if not self.optimizer_initialized:
            raise MXNetError("update: call init_optimizer first")
        group = self._exec_group
        trained = [(self._param_index[n], n, weights, grads) for n, weights, grads in
                   zip(self._param_names, group.param_arrays, group.grad_arrays)
                   if grads[0] is not None]
        if not trained:
            return
        num_ctx = len(group.execs)
        kv = self._kvstore
        if kv is None and num_ctx > 1:
            for i, _, weights, grads in trained:
                for k in range(num_ctx):
                    self._updater(i * num_ctx + k, grads[k], weights[k])
            return
        # with shared parameters some gradients are one array already holding the sum
        # over the contexts (grads[k] is grads[0]): only the others are summed
        shared = group.params_shared
        if kv is not None and not _sums_in_place(kv):
            kv.pushpull([n for _, n, _, _ in trained],
                        [_distinct(g) if num_ctx > 1 else g[0] for _, _, _, g in trained],
                        out=[g[0] for _, _, _, g in trained])
        elif num_ctx > 1:
            # the store's sums, in its order: ((g0 + g1) + g2) + ...
            for _, _, _, grads in trained:
                total = grads[0]
                for other in grads[1:]:
                    if other is not total:
                        total += other
        for i, _, weights, grads in trained:
            self._updater(i, grads[0], weights[0])
            if not shared:
                for other in weights[1:]:
                    weights[0].copyto(other)

    def get_outputs(self, merge_multi_context=True):
        """The outputs: joined over the contexts, or ``[[output on ctx 0, ...], ...]``."""
        if not self.binded:
            raise MXNetError("get_outputs: call bind and forward first")
        return self._exec_group.get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        if not self.inputs_need_grad:
            raise MXNetError("get_input_grads: bind with inputs_need_grad=True")
        return self._exec_group.get_input_grads(merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update `eval_metric` with this batch, once per context with its slice (or with
        ``labels[k]`` for context k when `pre_sliced`); padded samples are left out."""
        # pushed, not waited for: the next batch is prepared while this one computes
        self._exec_group.update_metric(eval_metric, labels, pre_sliced, pad=self._last_pad)

    def install_monitor(self, mon):
        """Install `mon` (``mx.monitor.Monitor``) on every executor; it stays installed
        when a batch of another shape reshapes the module."""
        if not self.binded:
            raise MXNetError("install_monitor: call bind first")
        self._monitor = mon
        self._exec_group.install_monitor(mon)

    # ------------------------------------------------------------ checkpoints
    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False,
                        remove_amp_cast=True):
        """``prefix-symbol.json``, ``prefix-%04d.params`` and, if asked, the optimizer
        states in ``prefix-%04d.states`` (mxcy has no AMP casts to remove)."""
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
        mod.params_initialized = True      # copied into the executors at bind
        if load_optimizer_states:
            mod._preload_opt_states = f'{prefix}-{epoch:04d}.states'
        return mod

    def save_optimizer_states(self, fname):
        if not self.optimizer_initialized:
            raise MXNetError("save_optimizer_states: call init_optimizer first")
        with open(fname, 'wb') as f:
            f.write(self._updater.get_states(dump_optimizer=False))

    def load_optimizer_states(self, fname):
        if not self.optimizer_initialized:
            raise MXNetError("load_optimizer_states: call init_optimizer first")
        with open(fname, 'rb') as f:
            self._updater.set_states(f.read())


def _distinct(arrays):
    """`arrays` without the repeats of the first (a gradient the contexts share)."""
    return [arrays[0]] + [a for a in arrays[1:] if a is not arrays[0]]


def _sums_in_place(kv):
    """Whether `kv` is a plain local store with no updater: its pushpull into the first
    value is then just the sum of the values."""
    from mxcy.kvstore.local import KVStore
    return type(kv) is KVStore and kv._updater is None
