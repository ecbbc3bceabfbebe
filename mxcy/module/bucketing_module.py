"""BucketingModule: one Module per bucket (e.g. sequence length), sharing parameters.

``sym_gen(bucket_key) -> (symbol, data_names, label_names)`` builds the graph of one
bucket. The default bucket is bound first and owns the parameters; every other bucket
is bound on first use with ``shared_module=`` the default bucket's Module, so its
parameters, their gradients and auxiliary states are the SAME NDArrays (not copies), and
its intermediate buffers reuse the default executor's memory where they fit (make the
default bucket the largest one). The optimizer, its states and the KVStore belong to the
default module and are borrowed by the others, so training on any bucket updates the
one set of weights. ``forward`` switches to ``data_batch.bucket_key``.

``fit`` / ``score`` / ``predict`` come from BaseModule unchanged.
"""
import logging

from mxcy.base import MXNetError
from mxcy.context import cpu
from mxcy.module.base_module import BaseModule, _batch_label
from mxcy.module.module import Module


class BucketingModule(BaseModule):
    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=None,
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise ValueError("BucketingModule: default_bucket_key must be given (the "
                             "largest bucket, whose module owns the parameters)")
        if not callable(sym_gen):
            raise TypeError(f"BucketingModule: sym_gen must be callable, got "
                            f"{type(sym_gen).__name__}")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, _ = self._call_sym_gen(default_bucket_key)
        args = symbol.list_arguments()
        self._fixed_param_names = list(fixed_param_names or [])
        self._state_names = list(state_names or [])
        for kind, names in (('data', data_names), ('state', self._state_names),
                            ('fixed_param', self._fixed_param_names)):
            unknown = [n for n in names if n not in args]
            if unknown:
                raise ValueError(f"BucketingModule: {kind} names {unknown} are not arguments "
                                 f"of the default bucket's symbol; arguments are {args}")
        self._context = cpu() if context is None else context
        self._work_load_list = work_load_list
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._grad_req = 'write'
        self._monitor = None
        self._preloaded = None       # (arg_params, aux_params) from load(), used at bind

    def _call_sym_gen(self, bucket_key):
        result = self._sym_gen(bucket_key)
        if not isinstance(result, (tuple, list)) or len(result) != 3:
            raise TypeError(f"BucketingModule: sym_gen({bucket_key!r}) must return (symbol, "
                            f"data_names, label_names), got {type(result).__name__}")
        symbol, data_names, label_names = result
        return symbol, list(data_names or []), list(label_names or [])

    def _new_module(self, bucket_key):
        symbol, data_names, label_names = self._call_sym_gen(bucket_key)
        return Module(symbol, data_names, label_names, logger=self.logger,
                      context=self._context, work_load_list=self._work_load_list,
                      fixed_param_names=self._fixed_param_names,
                      state_names=self._state_names)

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    # ------------------------------------------------------------ properties
    @property
    def default_bucket_key(self):
        return self._default_bucket_key

    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        self._check_bound('data_shapes')
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        self._check_bound('label_shapes')
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        self._check_bound('output_shapes')
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        self._check_bound('symbol')
        return self._curr_module.symbol

    def _check_bound(self, what):
        if not self.binded:
            raise MXNetError(f"BucketingModule.{what}: call bind() first")

    # ------------------------------------------------------------ parameters
    def get_params(self):
        if not self.params_initialized:
            raise MXNetError("BucketingModule.get_params: parameters are not initialized")
        return self._buckets[self._default_bucket_key].get_params()

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        self._check_bound('init_params')
        default = self._buckets[self._default_bucket_key]
        default.init_params(initializer=initializer, arg_params=arg_params,
                            aux_params=aux_params, allow_missing=allow_missing,
                            force_init=force_init, allow_extra=allow_extra)
        self._mark_params_initialized()

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        if self.params_initialized and not force_init:
            self.logger.warning('Parameters already initialized and force_init=False. '
                                'set_params call ignored.')
            return
        self.init_params(arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=True, allow_extra=allow_extra)

    def _mark_params_initialized(self):
        """Every bucket module sees the (shared) arrays as its initialized parameters."""
        for module in self._buckets.values():
            module._arg_params = {n: module._exec.arg_dict[n] for n in module._param_names}
            module._aux_params = dict(module._exec.aux_dict)
            module.params_initialized = True
        self.params_initialized = True

    # ------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind the default bucket's module (the others bind on first use)."""
        saved = self.get_params() if self.params_initialized and self.binded else None
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if shared_module is not None:
            raise MXNetError("BucketingModule.bind: shared_module is not supported")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        module = self._new_module(self._default_bucket_key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=grad_req)
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        self.binded = True
        if self._monitor is not None:
            module.install_monitor(self._monitor)
        saved = saved or self._preloaded
        if saved is not None:
            self.params_initialized = False
            self.init_params(arg_params=saved[0], aux_params=saved[1], force_init=True)
            self._preloaded = None

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make `bucket_key` current, binding its module (sharing parameters) if new."""
        self._check_bound('switch_bucket')
        if bucket_key not in self._buckets:
            default = self._buckets[self._default_bucket_key]
            module = self._new_module(bucket_key)
            foreign = [n for n in module._param_names if n not in default._param_names]
            if foreign:
                raise MXNetError(f"BucketingModule: bucket {bucket_key!r} has parameters "
                                 f"{foreign} that the default bucket "
                                 f"{self._default_bucket_key!r} lacks; every bucket must use "
                                 "a subset of the default bucket's parameters")
            module.bind(data_shapes, label_shapes, default.for_training,
                        default.inputs_need_grad, force_rebind=False, shared_module=default,
                        grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            if self.params_initialized:
                module._arg_params = {n: module._exec.arg_dict[n] for n in module._param_names}
                module._aux_params = dict(module._exec.aux_dict)
                module.params_initialized = True
            if self.optimizer_initialized:
                module.borrow_optimizer(default)
            self._buckets[bucket_key] = module
        self._curr_module = self._buckets[bucket_key]
        self._curr_bucket_key = bucket_key

    # ------------------------------------------------------------ optimizer
    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        if not (self.binded and self.params_initialized):
            raise MXNetError("BucketingModule.init_optimizer: bind and init_params first")
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring.')
            return
        default = self._buckets[self._default_bucket_key]
        default.init_optimizer(kvstore, optimizer, optimizer_params, force_init=force_init)
        for module in self._buckets.values():
            if module is not default:
                module.borrow_optimizer(default)
        self.optimizer_initialized = True

    # ------------------------------------------------------------ computation
    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Bind the batch's bucket ahead of time (the current bucket is kept)."""
        self._check_bound('prepare')
        key, module = self._curr_bucket_key, self._curr_module
        self.switch_bucket(*self._batch_bucket(data_batch))
        self._curr_bucket_key, self._curr_module = key, module

    def _batch_bucket(self, data_batch):
        """(bucket key, data shapes, label shapes) of a batch; a batch without bucket_key
        or provide_data/provide_label (any object with ``data``) gets the default bucket
        and the shapes of its arrays."""
        key = getattr(data_batch, 'bucket_key', None)
        if key is None:
            key = self._default_bucket_key
        data_shapes = getattr(data_batch, 'provide_data', None)
        if data_shapes is None:
            data_shapes = [(n, a.shape) for n, a in zip(self.data_names, data_batch.data)]
        label_shapes = getattr(data_batch, 'provide_label', None)
        labels = _batch_label(data_batch)
        if label_shapes is None and labels:
            module = self._curr_module or self._buckets[self._default_bucket_key]
            label_shapes = [(d.name, a.shape) for d, a in
                            zip(module.label_shapes or [], labels)]
        return key, data_shapes, label_shapes

    def forward(self, data_batch, is_train=None):
        if not (self.binded and self.params_initialized):
            raise MXNetError("BucketingModule.forward: bind and init_params first")
        self.switch_bucket(*self._batch_bucket(data_batch))
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        self._check_bound('backward')
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        if not self.optimizer_initialized:
            raise MXNetError("BucketingModule.update: call init_optimizer first")
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        self._check_bound('get_outputs')
        return self._curr_module.get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._check_bound('get_input_grads')
        return self._curr_module.get_input_grads(merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._check_bound('update_metric')
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, monitor):
        self._monitor = monitor
        for module in self._buckets.values():
            module.install_monitor(monitor)

    # ------------------------------------------------------------ checkpoints
    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False):
        """The default bucket's symbol and the (shared) parameters, as Module does."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("BucketingModule.save_checkpoint: bind and init_params first")
        self._buckets[self._default_bucket_key].save_checkpoint(prefix, epoch,
                                                                save_optimizer_states)

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule whose parameters come from ``prefix-%04d.params`` (set at
        bind). `sym_gen` and `default_bucket_key` are required, as in MXNet."""
        from mxcy.model import load_checkpoint
        if sym_gen is None or default_bucket_key is None:
            raise ValueError("BucketingModule.load: sym_gen and default_bucket_key are "
                             "required")
        _, args, aux = load_checkpoint(prefix, epoch)
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        mod._preloaded = (args, aux)
        mod.params_initialized = True
        return mod
