"""``gluon.Trainer``: applies an optimizer to a set of Parameters (MXNet 1.9.1 semantics).

* ``Trainer(params, optimizer, optimizer_params=None, kvstore='device',
  compression_params=None, update_on_kvstore=None)``; `params` is a ParameterDict or dict
  (taken in sorted key order) or a list of Parameters; `optimizer` a registered name
  (with `optimizer_params`) or an Optimizer instance. The optimizer's ``param_dict``
  holds the Parameters, so their ``lr_mult`` / ``wd_mult`` (read at each update) scale
  the learning rate and weight decay.
* ``step(batch_size)`` = ``allreduce_grads()`` + ``update(batch_size)``: the optimizer's
  ``rescale_grad`` becomes ``1 / batch_size`` (times the optimizer's own initial
  rescale_grad) before the update.
* Several contexts: each Parameter holds one copy per context. With a KVStore the
  gradients of the copies are summed through it; by default (``update_on_kvstore=None``)
  the KVStore also applies the optimizer once and every copy pulls the new weights;
  ``update_on_kvstore=False`` pulls the summed gradient into every copy and each context
  runs its own updater. One context (and not 'dist'): no KVStore at all. ``kvstore``:
  None, a type name ('local', 'device', 'dist_sync', ...) or a KVStore.
* ``dist_sync``: the KVStore is set up when the Trainer is made, so every rank starts
  from rank 0's initialized weights (MXNet did it at the first step, after each rank's
  first gradients); gradients are summed over the ranks, as MXNet's servers do, and the
  rescale is ``1 / batch_size`` with the `batch_size` given: pass the global batch
  (per-rank batch times ``kv.num_workers``) to train like one process on that batch.
* Stale gradients: a Parameter whose gradient nothing wrote since the last update
  (usually: the block that owns it was not used in this forward) makes ``step`` /
  ``update`` raise UserWarning naming it and its context, before anything changes;
  ``ignore_stale_grad=True`` skips such Parameters instead. Freshness is the data
  arrays' ``_fresh_grad`` flag, set by ``backward`` and cleared by an update, as in
  MXNet. Unlike MXNet, the check keeps
  working after the first step when the KVStore does the updates, and runs before the
  KVStore updates anything.
* ``save_states`` / ``load_states`` write and read the optimizer (hyperparameters,
  update counts) and its per-parameter states with mxcy's states format (MXNet's NDArray
  file format plus a JSON header; never a pickle).
* Gradient compression (``compression_params``) is not implemented by mxcy's KVStores:
  asking for it when a KVStore is used raises an MXNetError.
"""
import os

import numpy as np

from mxcy import kvstore as _kvs
from mxcy import optimizer as opt
from mxcy.autograd import _Variable
from mxcy.base import MXNetError
from mxcy.gluon.parameter import Parameter
from mxcy.gluon.parameter_dict import ParameterDict

__all__ = ['Trainer']

def _as_param_list(params):
    if isinstance(params, (dict, ParameterDict)):
        params = [params[key] for key in sorted(params.keys())]
    if not isinstance(params, (list, tuple)):
        raise ValueError(f"Trainer: the first argument must be a list or dict of "
                         f"Parameters, got {type(params).__name__}")
    out = []
    for p in params:
        if not isinstance(p, Parameter):
            raise ValueError(f"Trainer: the first argument must be a list or dict of "
                             f"Parameters, got a list holding {type(p).__name__}")
        if not any(p is q for q in out):        # a shared Parameter listed twice
            out.append(p)
    return out


class Trainer:
    """Applies an Optimizer to Parameters after ``autograd.backward`` (see the module
    docstring for the contract)."""

    def __init__(self, params, optimizer, optimizer_params=None, kvstore='device',
                 compression_params=None, update_on_kvstore=None):
        self._params = _as_param_list(params)
        self._param2idx = {}
        for i, param in enumerate(self._params):
            self._param2idx[param.name] = i
            param._trainer = self
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params or {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {'kvstore': kvstore, 'update_on_kvstore': update_on_kvstore}
        self._fresh = None          # freshness taken before an allreduce wrote the grads
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._reset_kvstore()
        if 'dist' in str(getattr(kvstore, 'type', kvstore)):
            # every rank starts from rank 0's weights before its first forward (MXNet
            # waited for the first step, so that step's gradients came from each rank's
            # own initial weights); deferred Parameters follow at their first step
            self._prepare()

    # ------------------------------------------------------------ set-up
    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise ValueError(f"Trainer: all Parameters must be initialized on the same "
                                 f"contexts, but Parameter '{param.name}' is on {ctx} "
                                 f"while the Parameters before it are on {contexts}")
            contexts = ctx
        return contexts if contexts is not None else []

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise ValueError("Trainer: optimizer_params must be None when optimizer "
                                 "is an Optimizer instance, not a name")
            self._optimizer = optimizer
            # not a copy: changing a Parameter's lr_mult/wd_mult later takes effect
            self._optimizer.param_dict = param_dict
        elif isinstance(optimizer, str):
            self._optimizer = opt.create(optimizer, param_dict=param_dict,
                                         **optimizer_params)
        else:
            raise TypeError(f"Trainer: optimizer must be an Optimizer or the name of one, "
                            f"got {type(optimizer).__name__}")
        self._updaters = [opt.get_updater(self._optimizer)
                          for _ in range(max(len(self._contexts), 1))]

    def _reset_kvstore(self):
        if self._kvstore is not None and 'dist' in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _create_kvstore(self, kvstore):
        """(store or None, whether it should update) as MXNet's model._create_kvstore."""
        update = bool(int(os.environ.get('MXNET_UPDATE_ON_KVSTORE', '1')))
        if kvstore is None:
            return None, False
        if isinstance(kvstore, str):
            if len(self._contexts) == 1 and 'dist' not in kvstore:
                return None, False          # one device, one process: nothing to reduce
            kv = _kvs.create(kvstore)
            if kvstore == 'local':
                sizes = [int(np.prod(p.shape)) for p in self._params
                         if p.shape is not None and all(d > 0 for d in p.shape)]
                if max(sizes, default=0) > 1024 * 1024 * 16:
                    update = False
        elif callable(getattr(kvstore, 'pushpull', None)):
            kv = kvstore
        else:
            raise TypeError(f"Trainer: kvstore must be None, a KVStore or a KVStore type "
                            f"name, got {type(kvstore).__name__}")
        return kv, update and kv.is_capable('optimizer')

    def _init_kvstore(self):
        config = self._kvstore_params
        kv, update_on_kvstore = self._create_kvstore(config['kvstore'])
        self._distributed = kv is not None and 'dist' in kv.type
        if self._distributed and 'async' in kv.type:
            if config['update_on_kvstore'] is False:
                raise ValueError("Please set update_on_kvstore=True when training in "
                                 "async mode.")
            update_on_kvstore = True
        if config['update_on_kvstore'] is not None:
            update_on_kvstore = bool(config['update_on_kvstore'])
        if kv is not None:
            if update_on_kvstore and not kv.is_capable('optimizer'):
                raise ValueError(f"Please set update_on_kvstore=False when training with "
                                 f"{type(kv).__name__}")
            if self._compression_params:
                compress = getattr(kv, 'set_gradient_compression', None)
                if compress is None:
                    raise MXNetError("Trainer: compression_params were given, but mxcy's "
                                     f"KVStore ({kv.type}) has no gradient compression")
                compress(self._compression_params)
            if update_on_kvstore:
                kv.set_optimizer(self._optimizer)
            self._kvstore = kv
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _init_params(self):
        """Put the initialized Parameters into the KVStore (rank 0's values, pulled into
        every copy); deferred ones wait for a later call."""
        waiting = []
        if self._kvstore is not None:
            index = {id(p): i for i, p in enumerate(self._params)}
            for param in self._params_to_init:
                if param._data is None:
                    waiting.append(param)
                    continue
                idx = index[id(param)]
                arrays = param._nd_list('data')
                self._kvstore.broadcast(idx, arrays[0], out=arrays)
        self._params_to_init = waiting

    def _prepare(self):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    # ------------------------------------------------------------ learning rate
    @property
    def learning_rate(self):
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate can be "
                              "accessed.")
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        if isinstance(self._optimizer, opt.Optimizer):
            return self._optimizer
        raise UserWarning("Optimizer has not been initialized yet")

    def set_learning_rate(self, lr):
        """Set the optimizer's base learning rate."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate is "
                              "mutated.")
        self._optimizer.set_learning_rate(lr)

    def _check_and_rescale_grad(self, scale):
        self._optimizer.rescale_grad = scale

    # ------------------------------------------------------------ stale gradients
    def _freshness(self):
        """{id(grad): whether a backward wrote it since it was last used}."""
        fresh = {}
        for param in self._params:
            if param.grad_req == 'null' or param._data is None:
                continue
            for data, g in zip(param._nd_list('data'), param._nd_list('grad')):
                fresh[id(g)] = data._fresh_grad
        return fresh

    @staticmethod
    def _mark_used(param):
        """The Parameter's gradients were used: clear its fresh flags (MXNet's rule)."""
        for data in param._nd_list('data'):
            data._fresh_grad = False

    def _check_stale(self, fresh, ignore_stale_grad):
        if ignore_stale_grad:
            return
        for param in self._params:
            if param.grad_req == 'null':
                continue
            for data, g in zip(param._nd_list('data'), param._nd_list('grad')):
                if not fresh.get(id(g), False):
                    raise _stale(param, data)

    # ------------------------------------------------------------ training steps
    def step(self, batch_size, ignore_stale_grad=False):
        """allreduce_grads() then update(batch_size): one optimizer step, gradients
        rescaled by 1/batch_size. Call after backward, outside record()."""
        self._check_and_rescale_grad(self._scale / batch_size)
        self._prepare()
        self._allreduce_grads(ignore_stale_grad)
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Sum each Parameter's gradients over its contexts (and ranks) into every copy;
        for a manual step: allreduce_grads(), change the gradients, update()."""
        self._prepare()
        if self._kvstore is not None and self._update_on_kvstore:
            raise AssertionError("allreduce_grads() when parameters are updated on kvstore "
                                 "is not supported. Try setting `update_on_kvstore` to "
                                 "False when creating trainer.")
        self._allreduce_grads(True)

    def _allreduce_grads(self, ignore_stale_grad):
        if self._kvstore is None:
            return
        fresh = self._freshness()
        if self._fresh is not None:         # allreduce_grads() again before update()
            fresh = {k: v or self._fresh.get(k, False) for k, v in fresh.items()}
        self._fresh = fresh
        if self._update_on_kvstore:
            # the store updates the weights now: refuse stale gradients before that
            self._check_stale(fresh, ignore_stale_grad)
        for i, param in enumerate(self._params):
            if param.grad_req == 'null':
                continue
            grads = param._nd_list('grad')
            if self._update_on_kvstore:
                if not self._distributed and not any(fresh.get(id(g)) for g in grads):
                    continue        # all stale, ignored (every rank must push: dist pushes)
                self._kvstore.pushpull(i, grads, out=param._nd_list('data'), priority=-i)
            else:
                self._kvstore.pushpull(i, grads, out=grads, priority=-i)
            self._mark_used(param)

    def update(self, batch_size, ignore_stale_grad=False):
        """Apply the optimizer to every Parameter, gradients rescaled by 1/batch_size
        (after allreduce_grads(), when the KVStore does not update)."""
        self._prepare()
        if self._kvstore is not None and self._update_on_kvstore:
            raise AssertionError("update() when parameters are updated on kvstore is not "
                                 "supported. Try setting `update_on_kvstore` to False when "
                                 "creating trainer.")
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad=False):
        fresh = self._fresh         # from allreduce_grads(); else each array's own flag
        self._fresh = None
        if self._kvstore is not None and self._update_on_kvstore:
            return          # the KVStore updated (and checked) in _allreduce_grads
        # one pass: every stale gradient is refused before anything is updated or marked
        per_ctx = [([], [], []) for _ in self._updaters]
        used = []
        for i, param in enumerate(self._params):
            if param._grad_req == 'null':
                continue
            datas, grads = param._data, param._grad     # mx.nd lists, not copied: read only
            if datas is None or grads is None:
                datas, grads = param._nd_list('data'), param._nd_list('grad')   # raise, saying why
            if len(datas) != len(self._updaters):
                raise MXNetError(f"Trainer: Parameter '{param.name}' is on {len(datas)} "
                                 f"contexts, the Trainer was made for {len(self._updaters)}")
            for (idx, gs, ws), w, g in zip(per_ctx, datas, grads):
                ag = w._ag          # data._fresh_grad without the property
                if (fresh.get(id(g), False) if fresh is not None else
                        type(ag) is _Variable and ag.fresh):
                    idx.append(i)
                    gs.append(g)
                    ws.append(w)
                elif not ignore_stale_grad:
                    raise _stale(param, w)
            used.append(datas)
        for datas in used:
            for data in datas:
                ag = data._ag
                if type(ag) is _Variable:
                    ag.fresh = False
                else:
                    _clear_fresh(data)
        for updater, (idx, gs, ws) in zip(self._updaters, per_ctx):
            if idx:
                updater(idx, gs, ws)

    # ------------------------------------------------------------ states
    def save_states(self, fname):
        """Save the optimizer and its states (momentum, Adam's moments, update counts)."""
        self._prepare()
        if self._update_on_kvstore:
            if self._params_to_init:
                raise MXNetError("Cannot save trainer states when some parameters are not "
                                 "yet initialized in kvstore.")
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            with open(fname, 'wb') as f:
                f.write(self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname):
        """Load what save_states wrote; the Parameters' lr_mult/wd_mult stay this
        Trainer's."""
        self._prepare()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            with open(fname, 'rb') as f:
                states = f.read()
            for updater in self._updaters:
                updater.set_states(states)
            self._optimizer = self._updaters[0].optimizer
        for updater in self._updaters:
            updater.optimizer = self._optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))


def _clear_fresh(data):
    ag = data._ag
    if type(ag) is _Variable:
        ag.fresh = False
    else:
        data._fresh_grad = False        # (raises, naming the array's missing gradient)


def _stale(param, data):
    return UserWarning(
        f"Gradient of Parameter `{param.name}` on context {data.context} has not been "
        "updated by backward since last `step`. This could mean a bug in your model that "
        "made it only use a subset of the Parameters (Blocks) for this iteration. If you "
        "are intentionally only using a subset, call step with ignore_stale_grad=True to "
        "suppress this warning and skip updating of Parameters with stale gradient")
