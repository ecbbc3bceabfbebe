"""BaseModule: ``fit``, ``score`` and ``predict`` written only against a small interface.

Subclasses implement ``bind``, ``init_params``, ``init_optimizer``, ``forward``,
``backward``, ``update``, ``update_metric``, ``get_outputs``, ``get_params`` and
``set_params``; the loops here never look inside. Callbacks are the extension point: a
batch-end, epoch-end or evaluation-end callback that returns ``False`` stops training
(MXNet ignored that return value, mx#3737), so early stopping needs no new flags.
"""
import logging
import operator
import time

import numpy as np

from mxcy import metric as metric_module
from mxcy import ndarray as nd
from mxcy.base import MXNetError
from mxcy.model import BatchEndParam


def _as_list(obj):
    if obj is None:
        return []
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def _call_all(callbacks, *args):
    """Run every callback; True when one of them asked to stop (returned False)."""
    stop = False
    for callback in _as_list(callbacks):
        if callback(*args) is False:
            stop = True
    return stop


def _reset_for_predict(data_iter):
    """Each sample once, no roll-over carry (mx#5690), where the iterator supports it (a
    plain list of batches has nothing to reset)."""
    reset = getattr(data_iter, 'reset_for_predict', getattr(data_iter, 'reset', None))
    if reset is not None:
        reset()


def _batch_label(batch):
    """A batch's labels or None: any object with a ``data`` attribute is a batch (MXNet's
    prediction tutorial uses ``namedtuple('Batch', ['data'])``); ``label``, ``pad``,
    ``index``, ``bucket_key``, ``provide_data`` and ``provide_label`` are optional."""
    return getattr(batch, 'label', None)


def _stored(attr):
    """A read-only property that returns ``self.<attr>`` (a name list or shapes a module
    keeps as they are)."""
    return property(operator.attrgetter(attr))


class _WarningsOnly:
    """A logger face that drops debug/info records and forwards the rest."""

    def __init__(self, logger):
        self._logger = logger

    def debug(self, *args, **kwargs):
        pass

    info = debug

    def __getattr__(self, name):
        return getattr(self._logger, name)


class BaseModule:
    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # ------------------------------------------------------------ high level
    def forward_backward(self, data_batch):
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Evaluate on `eval_data`; padded samples of a last batch are not counted."""
        assert self.binded and self.params_initialized
        if reset:
            _reset_for_predict(eval_data)
        eval_metric = metric_module.create(eval_metric)
        eval_metric.reset()
        actual = 0
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(batch, is_train=False)
            labels = _batch_label(batch)
            if labels is None:
                raise MXNetError(f"score: batch {nbatch} ({type(batch).__name__}) has no "
                                 "label to score the outputs against")
            self.update_metric(eval_metric, labels)
            _call_all(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            actual = nbatch + 1
        if _call_all(score_end_callback, BatchEndParam(epoch, actual, eval_metric, locals())):
            self._stop_requested = True
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield (outputs without padding, batch index, batch) per batch."""
        assert self.binded and self.params_initialized
        if reset:
            _reset_for_predict(eval_data)
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(batch, is_train=False)
            pad = getattr(batch, 'pad', 0) or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """Outputs over `eval_data` (padding removed), concatenated over batches."""
        if isinstance(eval_data, (np.ndarray, nd.NDArray)):
            from mxcy.io import NDArrayIter
            eval_data = NDArrayIter(eval_data, batch_size=eval_data.shape[0])
        outputs = [[o.copy() for o in outs]
                   for outs, _, _ in self.iter_predict(eval_data, num_batch, reset)]
        if not outputs:
            return []
        if not merge_batches:
            return outputs
        merged = [nd.concatenate(list(parts), axis=0) for parts in zip(*outputs)]
        if len(merged) == 1 and not always_output_list:
            return merged[0]
        return merged

    def fit(self, train_data, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', optimizer='sgd',
            optimizer_params=(('learning_rate', 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=None, arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None, epoch_size=None):
        """Train: bind, initialise, then per epoch run every batch, log, call back."""
        from mxcy import initializer as init
        if num_epoch is None:
            raise ValueError("fit: num_epoch must be given")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer if initializer is not None
                         else init.Uniform(0.01), arg_params=arg_params,
                         aux_params=aux_params, allow_missing=allow_missing,
                         force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        validation_metric = validation_metric if validation_metric is not None else eval_metric
        eval_metric = metric_module.create(eval_metric)
        self._stop_requested = False
        log = self._fit_logger()
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            stop = False
            for data_batch in train_data:
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                self.update_metric(eval_metric, _batch_label(data_batch))
                if monitor is not None:
                    monitor.toc_print()
                stop = _call_all(batch_end_callback,
                                 BatchEndParam(epoch, nbatch, eval_metric, locals()))
                nbatch += 1
                if stop or (epoch_size is not None and nbatch >= epoch_size):
                    break
            # the whole epoch: batch callbacks (Speedometer) only reset the local counters
            for name, value in eval_metric.get_global_name_value():
                log.info('Epoch[%d] Train-%s=%f', epoch, name, value)
            log.info('Epoch[%d] Time cost=%.3f', epoch, time.time() - tic)
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            stop = _call_all(epoch_end_callback, epoch, self.symbol, arg_params,
                             aux_params) or stop
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, value in res:
                    log.info('Epoch[%d] Validation-%s=%f', epoch, name, value)
                stop = stop or self._stop_requested
            train_data.reset()
            if stop:
                log.info('Epoch[%d] a callback asked to stop training', epoch)
                break

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Set the parameters (through ``init_params``, as MXNet's BaseModule)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    # ------------------------------------------------------------ parameters on disk
    def save_params(self, fname):
        """Save the parameters to `fname` in MXNet's format (``arg:``/``aux:`` names)."""
        arg_params, aux_params = self.get_params()
        save = {f'arg:{k}': v for k, v in arg_params.items()}
        save.update({f'aux:{k}': v for k, v in aux_params.items()})
        nd.save(fname, save)

    def load_params(self, fname):
        """Load parameters saved by `save_params` (or MXNet) and set them."""
        arg_params, aux_params = {}, {}
        for key, value in nd.load(fname).items():
            kind, _, name = key.partition(':')
            if kind == 'arg' and name:
                arg_params[name] = value
            elif kind == 'aux' and name:
                aux_params[name] = value
            else:
                raise MXNetError(f"load_params: {fname!r} holds {key!r}; every name in a "
                                 "parameter file starts with 'arg:' or 'aux:'")
        self.set_params(arg_params, aux_params)

    # ------------------------------------------------------------ defaults
    def get_states(self, merge_multi_context=True):
        """The module's state inputs: none here (Module has ``state_names``)."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("get_states: call bind and init_params first")
        if merge_multi_context:
            raise MXNetError("get_states: merge_multi_context=True is not supported (as in "
                             "MXNet); pass merge_multi_context=False")
        return []

    def set_states(self, states=None, value=None):
        """This module has no state inputs: only ``states=None, value=None`` is valid."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("set_states: call bind and init_params first")
        if states or value is not None:
            raise MXNetError(f"set_states: {type(self).__name__} has no state inputs")

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Nothing to prepare here (Module and BucketingModule reshape or bind ahead)."""
        if sparse_row_id_fn is not None:
            import warnings
            warnings.warn(f"prepare: sparse_row_id_fn is not used by {type(self).__name__}",
                          UserWarning, stacklevel=2)

    def _fit_logger(self):
        """`self.logger`, except on ranks > 0 of a distributed job: there fit's info lines
        (the metrics, the same on every rank) are dropped and warnings still pass."""
        kvstore = getattr(self, '_kvstore', None)
        if kvstore is None or getattr(kvstore, 'rank', 0) == 0:
            return self.logger
        return _WarningsOnly(self.logger)

    @property
    def symbol(self):
        return self._symbol
