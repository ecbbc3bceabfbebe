"""SequentialModule: modules chained so that each one's outputs are the next one's data.

``add(module, take_labels=False, auto_wiring=False)`` appends a module and returns the
SequentialModule (so calls chain); adding resets the bound / initialised state. Only the
modules added with ``take_labels=True`` are bound with the labels and update the metric;
with ``auto_wiring=True`` the previous module's outputs are renamed to this module's data
names at bind. Forward runs the modules in order; backward runs them in reverse, each
module's input gradients being the out_grads of the one before it (so every module after
the first is bound with ``inputs_need_grad=True`` when training). Parameter names must be
unique across the modules.
"""
import copy
import logging

from mxcy.base import MXNetError
from mxcy.io import DataDesc
from mxcy.module.base_module import BaseModule

__all__ = ['SequentialModule']


class _Batch:
    """The batch handed to the next module: its data replaced by the previous outputs."""

    def __init__(self, batch, data, provide_data):
        self.data = data
        self.label = getattr(batch, 'label', None)
        self.pad = getattr(batch, 'pad', 0)
        self.index = getattr(batch, 'index', None)
        self.bucket_key = getattr(batch, 'bucket_key', None)
        self.provide_data = provide_data
        self.provide_label = getattr(batch, 'provide_label', None)


def _name_shape(desc):
    if isinstance(desc, DataDesc):
        return desc.name, desc.shape
    return desc[0], tuple(desc[1])


class SequentialModule(BaseModule):
    """A chain of modules; see the module docstring."""

    META_TAKE_LABELS = 'take_labels'
    META_AUTO_WIRING = 'auto_wiring'

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {self.META_TAKE_LABELS, self.META_AUTO_WIRING}

    def add(self, module, **kwargs):
        """Append `module` with its meta options; returns self."""
        unknown = [k for k in kwargs if k not in self._meta_keys]
        if unknown:
            raise MXNetError(f"SequentialModule.add: unknown meta {unknown} (a typo?); "
                             f"the metas are {sorted(self._meta_keys)}")
        self._modules.append(module)
        self._metas.append(kwargs)
        # a new module: bind, init_params and init_optimizer again
        self.binded = False
        self.params_initialized = False
        self.optimizer_initialized = False
        return self

    def _check(self, what, params=True):
        if not self.binded or (params and not self.params_initialized):
            need = 'bind and init_params' if params else 'bind'
            raise MXNetError(f"SequentialModule.{what}: call {need} first")

    # ------------------------------------------------------------ properties
    @property
    def data_names(self):
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        self._check('data_shapes', params=False)
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        self._check('label_shapes', params=False)
        return self._label_shapes

    @property
    def output_shapes(self):
        self._check('output_shapes', params=False)
        return self._modules[-1].output_shapes

    # ------------------------------------------------------------ parameters
    def get_params(self):
        self._check('get_params')
        arg_params, aux_params = {}, {}
        for module in self._modules:
            args, aux = module.get_params()
            arg_params.update(args)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise every module from the one pair of dicts; a parameter name used by
        two modules is an error, and so (unless `allow_extra`) is a given name that no
        module has."""
        if self.params_initialized and not force_init:
            return
        self._check('init_params', params=False)
        kwargs = {} if initializer is None else {'initializer': initializer}
        for module in self._modules:
            module.init_params(arg_params=arg_params, aux_params=aux_params,
                               allow_missing=allow_missing, force_init=force_init,
                               allow_extra=True, **kwargs)
        owners = {}
        known = {'arg': set(), 'aux': set()}
        for i, module in enumerate(self._modules):
            for kind, params in zip(('arg', 'aux'), module.get_params()):
                for name in params:
                    if (kind, name) in owners:
                        j = owners[kind, name]
                        raise MXNetError(
                            f"SequentialModule: duplicated parameter name {name!r}: layer "
                            f"{i} ({type(module).__name__}) uses it, and layer {j} "
                            f"({type(self._modules[j]).__name__}) already does")
                    owners[kind, name] = i
                    known[kind].add(name)
        if not allow_extra:
            for kind, given in (('arg', arg_params), ('aux', aux_params)):
                extra = sorted(set(given or {}) - known[kind])
                if extra:
                    raise MXNetError(f"SequentialModule.init_params: {extra} are not "
                                     "parameters of any module (pass allow_extra=True to "
                                     "ignore them)")
        self.params_initialized = True

    # ------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind each module on the previous one's output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if inputs_need_grad and not for_training:
            raise MXNetError("SequentialModule.bind: inputs_need_grad=True needs "
                             "for_training=True")
        if shared_module is not None:
            raise MXNetError("SequentialModule.bind: shared_module is not supported")
        if not self._modules:
            raise MXNetError("SequentialModule.bind: add a module first")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._label_shapes = label_shapes
        my_data_shapes = data_shapes
        anybody_needs_label = False
        for i, (module, meta) in enumerate(zip(self._modules, self._metas)):
            my_label_shapes = None
            if meta.get(self.META_TAKE_LABELS, False):
                my_label_shapes = label_shapes
                anybody_needs_label = True
            if meta.get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(my_data_shapes):
                    raise MXNetError(f"SequentialModule.bind: layer {i} has data names "
                                     f"{names} but the previous layer gives "
                                     f"{len(my_data_shapes)} outputs")
                my_data_shapes = [(name, _name_shape(desc)[1])
                                  for name, desc in zip(names, my_data_shapes)]
            module.bind(data_shapes=my_data_shapes, label_shapes=my_label_shapes,
                        for_training=for_training,
                        inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            my_data_shapes = module.output_shapes
        if not anybody_needs_label:
            self._label_shapes = None
        self.binded = True

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        self._check('init_optimizer')
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring.')
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    # ------------------------------------------------------------ computation
    def forward(self, data_batch, is_train=None):
        self._check('forward')
        batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            data = module.get_outputs()
            names = [_name_shape(s)[0] for s in module.output_shapes]
            batch = _Batch(data_batch, data,
                           [DataDesc(n, tuple(x.shape)) for n, x in zip(names, data)])

    def backward(self, out_grads=None):
        self._check('backward')
        for i in range(len(self._modules) - 1, -1, -1):
            module = self._modules[i]
            module.backward(out_grads=out_grads)
            if i == 0:
                break
            out_grads = module.get_input_grads()

    def update(self):
        if not self.optimizer_initialized:
            raise MXNetError("SequentialModule.update: call init_optimizer first")
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        self._check('get_outputs')
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._check('get_input_grads')
        if not self.inputs_need_grad:
            raise MXNetError("SequentialModule.get_input_grads: bind with "
                             "inputs_need_grad=True")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Only the modules added with take_labels=True update the metric."""
        self._check('update_metric')
        for meta, module in zip(self._metas, self._modules):
            if meta.get(self.META_TAKE_LABELS, False):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        self._check('install_monitor', params=False)
        for module in self._modules:
            module.install_monitor(mon)
