"""The base ``Optimizer``, its registry, and ``Updater`` / ``get_updater`` (MXNet 1.x).

Contract (MXNet 1.x ``mx.optimizer``):

* ``Optimizer(rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None,
  learning_rate=0.01, lr_scheduler=None, sym=None, begin_num_update=0,
  multi_precision=False, param_dict=None)``; subclasses add their own hyperparameters
  and implement ``create_state(index, weight)`` and ``update(index, weight, grad,
  state)``, which change `weight` and `state` in place with NDArray arithmetic (pushed
  to the engine, never waited for) and never modify `grad`.
* ``_update_count(index)`` counts updates per index (starting at ``begin_num_update``);
  ``num_update`` is the largest count, and the lr scheduler is called with it.
* ``_get_lr(index)`` / ``_get_wd(index)``: the rate times the index's multiplier,
  looked up in ``param_dict[index]``, then ``lr_mult[index]``, then
  ``lr_mult[idx2name[index]]``. Multipliers come from ``set_lr_mult`` /
  ``set_wd_mult`` and the symbol's ``__lr_mult__`` / ``__wd_mult__`` variable
  attributes; as in MXNet, when `param_idx2name` is given every parameter whose name
  does not end in ``_weight`` or ``_gamma`` (biases, BatchNorm's beta, ...) gets
  ``wd_mult`` 0.
* ``clip_gradient``: None, or a bound c > 0 clipping the rescaled gradient to [-c, c];
  0 or a negative value means no clipping, as in MXNet's update kernels.
* ``multi_precision=True`` with a float16 weight keeps a float32 master copy: the
  state is ``(weight32, inner_state)``, the update runs in float32 and is cast back.
* ``register`` / ``alias`` / ``create`` come from ``mxcy.registry``: ``create`` takes a
  name (case-insensitive) with keyword arguments, an instance, a dict or a JSON
  ``'["sgd", {"momentum": 0.9}]'`` string.
* ``Updater(optimizer)(index, grad, weight)`` creates the index's state on first use and
  updates; ``get_states`` / ``set_states`` save and restore the states (and the update
  counts, so schedules and Adam's bias correction resume correctly) as data: MXNet's
  NDArray file format plus a JSON header, never a pickle (``mxcy.optimizer._states``).
"""
import numbers
import warnings

import numpy as np

from mxcy import registry
from mxcy._ndarray import NDArray
from mxcy.ndarray.elemwise import clip

__all__ = ['Optimizer', 'Updater', 'get_updater', 'register', 'alias', 'create']


def moment_states(weight):
    """(mean, variance): two zero arrays like `weight`, the state of Adam-style rules."""
    from mxcy._ndarray import zeros
    return (zeros(weight.shape, weight.context, dtype=weight.dtype),
            zeros(weight.shape, weight.context, dtype=weight.dtype))


def _number(owner, arg, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{owner}: {arg} must be a number, got {type(value).__name__} "
                        f"{value!r}")
    return float(value)


class Optimizer:
    """Base class of the optimizers (see the module docstring for the contract)."""

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None,
                 learning_rate=0.01, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        owner = type(self).__name__
        self.rescale_grad = _number(owner, 'rescale_grad', rescale_grad)
        self.lr = _number(owner, 'learning_rate', learning_rate)
        self.wd = _number(owner, 'wd', wd)
        self.clip_gradient = (None if clip_gradient is None else
                              _number(owner, 'clip_gradient', clip_gradient))
        if lr_scheduler is not None and not callable(lr_scheduler):
            raise TypeError(f"{owner}: lr_scheduler must be an LRScheduler (callable with "
                            f"num_update), got {type(lr_scheduler).__name__}")
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is not None and hasattr(lr_scheduler, 'base_lr'):
            lr_scheduler.base_lr = self.lr      # MXNet: the optimizer's rate wins
        if isinstance(begin_num_update, bool) or \
                not isinstance(begin_num_update, numbers.Integral) or begin_num_update < 0:
            raise ValueError(f"{owner}: begin_num_update must be an int >= 0, got "
                             f"{begin_num_update!r}")
        self.begin_num_update = int(begin_num_update)
        self.num_update = self.begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.multi_precision = bool(multi_precision)
        self.aggregate_num = 0          # mxcy updates one index at a time
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError(f"{owner}: param_idx2name must be a dict index -> name, got "
                            f"{type(param_idx2name).__name__}")
        self.idx2name = dict(param_idx2name)
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = dict(param_dict) if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # ------------------------------------------------------------ registry (as MXNet)
    @staticmethod
    def register(klass):
        """Register an Optimizer subclass under its lower-case class name."""
        return register(klass)

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An optimizer by registered name (case-insensitive)."""
        return create(name, **kwargs)

    # ------------------------------------------------------------ states
    def create_state(self, index, weight):
        """The auxiliary state of one weight (None when the optimizer needs none)."""
        return None

    def create_state_multi_precision(self, index, weight):
        """``(weight32, create_state(index, weight32))`` for a float16 weight with
        ``multi_precision=True``, else ``create_state(index, weight)``."""
        if self.multi_precision and weight.dtype == np.float16:
            weight32 = weight.astype(np.float32)
            return (weight32, self.create_state(index, weight32))
        if weight.dtype == np.float16:
            warnings.warn(f"{type(self).__name__}: accumulating float16 weights in float16 "
                          "can lead to poor accuracy or slow convergence; consider "
                          "multi_precision=True", stacklevel=2)
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Update `weight` (and `state`) in place from `grad`."""
        raise NotImplementedError(f"{type(self).__name__} must implement update")

    def update_multi_precision(self, index, weight, grad, state):
        """``update`` on the float32 master copy for float16 weights with
        ``multi_precision=True`` (then cast back into `weight`), else ``update``."""
        if self.multi_precision and weight.dtype == np.float16:
            weight32, inner = state
            self.update(index, weight32, grad.astype(np.float32), inner)
            weight[:] = weight32            # a casting copy
        else:
            self.update(index, weight, grad, state)

    # ------------------------------------------------------------ learning rate
    @property
    def learning_rate(self):
        """The current base rate (from the scheduler when there is one)."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    @learning_rate.setter
    def learning_rate(self, lr):
        self.set_learning_rate(lr)

    def set_learning_rate(self, lr):
        """Set the base rate; an error when an lr_scheduler decides it (as MXNet)."""
        if self.lr_scheduler is not None:
            raise UserWarning("set_learning_rate: this optimizer has an lr_scheduler, "
                              "which decides the learning rate; change the scheduler "
                              "instead")
        self.lr = _number('set_learning_rate', 'lr', lr)

    def set_lr_scale(self, args_lrscale):
        raise DeprecationWarning("set_lr_scale is deprecated; use set_lr_mult")

    def set_lr_mult(self, args_lr_mult):
        """Per-parameter lr multipliers: the symbol's ``__lr_mult__`` attributes, then
        `args_lr_mult` (a dict index or name -> multiplier)."""
        self.lr_mult = {}
        self.lr_mult.update(self._sym_mults('__lr_mult__'))
        self.lr_mult.update(_mult_dict('set_lr_mult', args_lr_mult))

    def set_wd_mult(self, args_wd_mult):
        """Per-parameter wd multipliers: 0 for named parameters not ending in
        ``_weight`` or ``_gamma``, then the symbol's ``__wd_mult__`` attributes, then
        `args_wd_mult` (a dict index or name -> multiplier)."""
        self.wd_mult = {}
        for name in self.idx2name.values():
            if not (name.endswith('_weight') or name.endswith('_gamma')):
                self.wd_mult[name] = 0.0
        self.wd_mult.update(self._sym_mults('__wd_mult__'))
        self.wd_mult.update(_mult_dict('set_wd_mult', args_wd_mult))

    def _sym_mults(self, key):
        if not self.sym_info:
            return {}
        attrs, arg_names = self.sym_info
        return {name: float(attrs[name][key]) for name in arg_names
                if name in attrs and key in attrs[name]}

    # ------------------------------------------------------------ update counts
    def _set_current_context(self, device_id):
        """Count updates per device (each device sees every index once per batch)."""
        counts = self._all_index_update_counts.get(device_id)
        if counts is None:
            counts = self._all_index_update_counts[device_id] = {}
        self._index_update_count = counts

    def _update_count(self, index):
        """Count one update of `index` (or of each index in a list)."""
        counts = self._index_update_count
        for idx in (index if isinstance(index, (list, tuple)) else (index,)):
            n = counts.get(idx, self.begin_num_update) + 1
            counts[idx] = n
            if n > self.num_update:
                self.num_update = n

    def _get_lr(self, index):
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None \
            else self.lr
        return lr * self._mult(index, self.lr_mult, 'lr_mult')

    def _get_wd(self, index):
        return self.wd * self._mult(index, self.wd_mult, 'wd_mult')

    def _get_lrs(self, indices):
        return [self._get_lr(i) for i in indices]

    def _get_wds(self, indices):
        return [self._get_wd(i) for i in indices]

    def _mult(self, index, mults, attr):
        if self.param_dict and index in self.param_dict:
            return getattr(self.param_dict[index], attr)
        if index in mults:
            return mults[index]
        name = self.idx2name.get(index)
        return mults.get(name, 1.0) if name is not None else 1.0

    # ------------------------------------------------------------ helpers for subclasses
    def _begin_update(self, index, weight, grad):
        """Check `weight`/`grad`, count the update, return ``(lr, wd)`` for `index`."""
        if weight.shape != grad.shape:
            raise ValueError(f"{type(self).__name__}.update: index {index!r}: grad has "
                             f"shape {grad.shape}, but the weight has shape {weight.shape}")
        if weight.dtype != grad.dtype:
            raise TypeError(f"{type(self).__name__}.update: index {index!r}: grad has "
                            f"dtype {np.dtype(grad.dtype)}, but the weight has dtype "
                            f"{np.dtype(weight.dtype)}")
        self._update_count(index)
        return self._get_lr(index), self._get_wd(index)

    def _clips(self):
        c = self.clip_gradient
        return c is not None and c > 0

    def _clip_(self, x):
        """Clip `x` in place to [-clip_gradient, clip_gradient] when clipping is on."""
        c = self.clip_gradient
        if c is not None and c > 0:
            clip(x, -c, c, out=x)
        return x

    def _scaled_grad(self, grad, weight=None, wd=0.0):
        """A new array ``clip(rescale_grad * grad [+ wd * weight], clip_gradient)``."""
        g = grad * self.rescale_grad
        if wd:
            g += weight * wd
        return self._clip_(g)

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop('param_dict', None)      # Parameters are re-attached by their owner
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.param_dict = {}

    def __repr__(self):
        return f"{type(self).__name__}(learning_rate={self.lr}, wd={self.wd})"


def _fusable(weight):
    """Whether the fused C update kernels (float32/float64 NDArrays) can update `weight`."""
    return isinstance(weight, NDArray) and weight.dtype in (np.float32, np.float64)


def _mult_dict(owner, mults):
    if not isinstance(mults, dict):
        raise TypeError(f"{owner}: expected a dict index or name -> multiplier, got "
                        f"{type(mults).__name__}")
    return {k: _number(owner, f'multiplier of {k!r}', v) for k, v in mults.items()}


register = registry.get_register_func(Optimizer, 'optimizer')
# MXNet's ``Optimizer.opt_registry``: the live dict registered name -> class
Optimizer.opt_registry = registry._registry(Optimizer, 'optimizer')
alias = registry.get_alias_func(Optimizer, 'optimizer')
_create = registry.get_create_func(Optimizer, 'optimizer')


def create(name, **kwargs):
    """An optimizer by its (case-insensitive) registered name, ``create('sgd',
    learning_rate=0.1)``; an Optimizer instance is returned as it is."""
    return _create(name, **kwargs)


# ---------------------------------------------------------------- Updater
_MISSING = object()


class Updater:
    """Applies an optimizer to ``(index, grad, weight)``, creating each index's state on
    first use (MXNet 1.x ``mx.optimizer.Updater``)."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}

    def __call__(self, index, grad, weight):
        if isinstance(index, (list, tuple)):
            if not (isinstance(grad, (list, tuple)) and isinstance(weight, (list, tuple))
                    and len(grad) == len(weight) == len(index)):
                raise ValueError(f"Updater: {len(index)} indices need lists of "
                                 f"{len(index)} grads and weights")
            for i, g, w in zip(index, grad, weight):
                self._update_one(i, g, w)
        else:
            self._update_one(index, grad, weight)

    def _update_one(self, index, grad, weight):
        if isinstance(index, bytes):
            index = index.decode('utf-8')
        opt = self.optimizer
        set_context = getattr(opt, '_set_current_context', None)
        if set_context is not None:
            set_context(weight.context.device_id)
        state = self.states.get(index, _MISSING)
        if state is _MISSING:
            create_fn = getattr(opt, 'create_state_multi_precision', opt.create_state)
            state = self.states[index] = create_fn(index, weight)
            self.states_synced[index] = True
        elif not self.states_synced.get(index, False):
            state = self.states[index] = self.sync_state_context(state, weight.context)
            self.states_synced[index] = True
        getattr(opt, 'update_multi_precision', opt.update)(index, weight, grad, state)

    def sync_state_context(self, state, context):
        """`state` with every NDArray moved to `context`."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            return type(state)(self.sync_state_context(s, context) for s in state)
        return state

    def get_states(self, dump_optimizer=False):
        """The states (and update counts; with `dump_optimizer`, the optimizer's
        hyperparameters too) as bytes: MXNet's NDArray file format with a JSON header."""
        from mxcy.optimizer import _states
        return _states.dumps(self.states, self.optimizer, dump_optimizer)

    def set_states(self, states):
        """Restore from ``get_states`` bytes (a saved optimizer replaces the current one,
        as in MXNet)."""
        from mxcy.optimizer import _states
        loaded, optimizer = _states.loads(states, self.optimizer)
        if optimizer is not None:
            self.optimizer = optimizer
        self.states = loaded
        self.states_synced = dict.fromkeys(loaded, False)


def get_updater(optimizer):
    """An ``Updater`` for `optimizer` (MXNet 1.x ``mx.optimizer.get_updater``)."""
    return Updater(optimizer)
