"""Checkpoints in MXNet's layout and the classic ``FeedForward`` trainer.

``prefix-symbol.json`` holds the graph (MXNet 1.x JSON), ``prefix-%04d.params`` the
parameters as an NDArray dict with ``arg:``/``aux:`` key prefixes, exactly as MXNet
writes them, so checkpoints move between mxcy and MXNet both ways.
"""
import importlib.util
import logging
from collections import namedtuple

import numpy as np

from mxcy import ndarray as nd
from mxcy.base import MXNetError, mx_real_t  # noqa: F401  (mx.model.mx_real_t)
from mxcy.context import Context, cpu  # noqa: F401  (mx.model names, as in MXNet)
from mxcy.initializer import Uniform  # noqa: F401
from mxcy.io.base import DataDesc  # noqa: F401
from mxcy.optimizer import get_updater  # noqa: F401

# MXNet's FeedForward derived from scikit-learn's BaseEstimator when it was installed;
# BASE_ESTIMATOR is imported only when asked for, so importing mxcy stays quick.
SKLEARN_INSTALLED = importlib.util.find_spec('sklearn') is not None


def __getattr__(name):
    if name == 'BASE_ESTIMATOR':
        if SKLEARN_INSTALLED:
            from sklearn.base import BaseEstimator
            return BaseEstimator
        return object
    if name == 'LogValidationMetricsCallback':     # callback imports this module
        from mxcy.callback import LogValidationMetricsCallback
        return LogValidationMetricsCallback
    raise AttributeError(f"module 'mxcy.model' has no attribute {name!r}")


BatchEndParam = namedtuple('BatchEndParams', ['epoch', 'nbatch', 'eval_metric', 'locals'])


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write ``prefix-symbol.json`` (when a symbol is given) and ``prefix-%04d.params``."""
    if symbol is not None:
        symbol.save(f'{prefix}-symbol.json')
    save_dict = {f'arg:{k}': v.as_in_context(v.context) for k, v in arg_params.items()}
    save_dict.update({f'aux:{k}': v for k, v in (aux_params or {}).items()})
    param_name = f'{prefix}-{epoch:04d}.params'
    nd.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """(arg_params, aux_params) from ``prefix-%04d.params``."""
    save_dict = nd.load(f'{prefix}-{epoch:04d}.params')
    if not isinstance(save_dict, dict):
        raise MXNetError(f"load_params: {prefix}-{epoch:04d}.params holds a list, not the "
                         "arg:/aux: dictionary of a checkpoint")
    arg_params, aux_params = {}, {}
    for key, value in save_dict.items():
        kind, _, name = key.partition(':')
        if kind == 'arg':
            arg_params[name] = value
        elif kind == 'aux':
            aux_params[name] = value
        else:
            raise MXNetError(f"load_params: key {key!r} has neither the 'arg:' nor the "
                             "'aux:' prefix of a checkpoint")
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) saved by `save_checkpoint`."""
    from mxcy import symbol as sym
    symbol = sym.load(f'{prefix}-symbol.json')
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


def _shard(X, y, num_parts, part_index):
    """Rank `part_index`'s contiguous shard of (X, y): ceil(n / num_parts) rows each,
    wrapping around to the start, so every rank gets as many batches as the others
    (unequal batch counts would stall dist_sync) and every sample is used."""
    n = X.shape[0]
    per_part = -(-n // num_parts)
    rows = np.arange(part_index * per_part, (part_index + 1) * per_part) % max(n, 1)
    if isinstance(X, nd.NDArray):
        X = X.asnumpy()
    if isinstance(y, nd.NDArray):
        y = y.asnumpy()
    return X[rows], np.asarray(y)[rows]


def _as_iter(X, y, batch_size, shuffle=False, label_name='softmax_label', num_parts=1,
             part_index=0):
    from mxcy.io import DataIter, NDArrayIter
    if isinstance(X, DataIter):
        return X
    if isinstance(X, (np.ndarray, nd.NDArray)):
        if y is None:
            y = np.zeros(X.shape[0], dtype=np.float32)
        if num_parts > 1 and X.shape[0] > 0:
            X, y = _shard(X, y, num_parts, part_index)
        return NDArrayIter(X, y, min(X.shape[0], batch_size), shuffle=shuffle,
                           last_batch_handle='pad', label_name=label_name)
    raise TypeError(f"FeedForward: X must be a DataIter, NumPy array or NDArray, got "
                    f"{type(X).__name__}")


class FeedForward:
    """The classic MXNet model API: ``FeedForward(symbol, num_epoch=..., ...).fit(X)``.

    Data shapes come from the data given to `fit`/`predict`; nothing is declared up
    front. Training runs through `mx.mod.Module`; extra keyword arguments are optimizer
    parameters (``learning_rate``, ``momentum``, ``wd``...).
    """

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd',
                 initializer=None, numpy_batch_size=128, arg_params=None, aux_params=None,
                 allow_extra_params=False, begin_epoch=0, **kwargs):
        from mxcy import initializer as init
        self.symbol = symbol
        self.ctx = ctx if ctx is not None else cpu()
        if isinstance(self.ctx, list):
            if len(self.ctx) != 1:
                raise MXNetError("FeedForward: mxcy binds one executor; pass one context "
                                 "(the engine's workers already use every core)")
            self.ctx = self.ctx[0]
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.optimizer = optimizer
        self.initializer = initializer if initializer is not None else init.Uniform(0.01)
        self.numpy_batch_size = numpy_batch_size
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.begin_epoch = begin_epoch
        self.kwargs = dict(kwargs)
        self._module = None

    def _label_names(self, data_iter):
        names = [d[0] if isinstance(d, tuple) else d.name for d in data_iter.provide_label or []]
        return names or [n for n in self.symbol.list_arguments() if n.endswith('_label')]

    def _make_module(self, data_iter):
        from mxcy.module import Module
        data_names = [d[0] if isinstance(d, tuple) else d.name for d in data_iter.provide_data]
        label_names = [n for n in self._label_names(data_iter)
                       if n in self.symbol.list_arguments()]
        return Module(self.symbol, data_names=data_names, label_names=label_names,
                      context=self.ctx)

    def fit(self, X, y=None, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', logger=None, work_load_list=None,
            monitor=None, eval_end_callback=None, eval_batch_end_callback=None):
        from mxcy import kvstore as kvs
        from mxcy.callback import LogValidationMetricsCallback
        if isinstance(kvstore, str) and 'dist' in kvstore:
            kvstore = kvs.create(kvstore)     # one store: it shards X here and syncs fit
        parts = {}
        if kvstore is not None and not isinstance(kvstore, str) and kvstore.num_workers > 1:
            parts = {'num_parts': kvstore.num_workers, 'part_index': kvstore.rank}
        data = _as_iter(X, y, self.numpy_batch_size, shuffle=True, **parts)
        if isinstance(eval_data, tuple):
            eval_data = _as_iter(eval_data[0], eval_data[1], self.numpy_batch_size)
        if self.num_epoch is None:
            raise MXNetError("FeedForward.fit: num_epoch must be set")
        self._module = self._make_module(data)
        if logger is not None:
            self._module.logger = logger
        self._module.fit(
            data, eval_data=eval_data, eval_metric=eval_metric,
            epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
            kvstore=kvstore, optimizer=self.optimizer, optimizer_params=self.kwargs,
            eval_end_callback=eval_end_callback or LogValidationMetricsCallback(),
            eval_batch_end_callback=eval_batch_end_callback, initializer=self.initializer,
            arg_params=self.arg_params, aux_params=self.aux_params,
            allow_missing=True, begin_epoch=self.begin_epoch, num_epoch=self.num_epoch,
            monitor=monitor, epoch_size=self.epoch_size)
        self.arg_params, self.aux_params = self._module.get_params()

    def _bound_module(self, data_iter):
        mod = self._make_module(data_iter)
        mod.bind(data_iter.provide_data, data_iter.provide_label or None, for_training=False)
        if self.arg_params is None:
            raise MXNetError("FeedForward: the model has no parameters yet; call fit or load")
        mod.set_params(self.arg_params, self.aux_params or {},
                       allow_extra=self.allow_extra_params)
        return mod

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        data = _as_iter(X, None, self.numpy_batch_size)
        mod = self._bound_module(data)
        if not return_data:
            out = mod.predict(data, num_batch=num_batch, reset=reset)
            return out.asnumpy() if isinstance(out, nd.NDArray) else [o.asnumpy() for o in out]
        outputs, datas, labels = [], [], []
        for batch_out, _, batch in mod.iter_predict(data, num_batch=num_batch, reset=reset):
            pad = batch.pad or 0
            keep = lambda a, pad=pad: a[:a.shape[0] - pad].asnumpy()  # noqa: E731
            outputs.append([o.asnumpy() for o in batch_out])     # already without padding
            datas.append([keep(d) for d in batch.data])
            labels.append([keep(lab) for lab in batch.label or []])
        merge = lambda parts: [np.concatenate(p) for p in zip(*parts)]  # noqa: E731
        out, dat, lab = merge(outputs), merge(datas), merge(labels)
        return (out[0] if len(out) == 1 else out, dat[0] if len(dat) == 1 else dat,
                lab[0] if len(lab) == 1 else lab)

    def score(self, X, eval_metric='acc', num_batch=None, batch_end_callback=None,
              reset=True):
        if not hasattr(X, 'provide_label'):
            raise ValueError("FeedForward.score: X must be a DataIter that yields labels "
                             "(e.g. mx.io.NDArrayIter(X, y)); arrays alone carry no labels "
                             "to score against")
        data = X
        mod = self._bound_module(data)
        result = mod.score(data, eval_metric, num_batch=num_batch,
                           batch_end_callback=batch_end_callback, reset=reset)
        return result[0][1]

    def save(self, prefix, epoch=None):
        epoch = self.num_epoch if epoch is None else epoch
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params or {})

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd',
               initializer=None, eval_data=None, eval_metric='acc', epoch_end_callback=None,
               batch_end_callback=None, kvstore='local', logger=None, work_load_list=None,
               eval_end_callback=None, eval_batch_end_callback=None, **kwargs):
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                  kvstore=kvstore, logger=logger, eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model

    @classmethod
    def from_model(cls, model, **kwargs):
        """A FeedForward for a ``mx.nn`` model (a callable of layers) ending with softmax:
        the softmax becomes ``SoftmaxOutput`` named 'softmax' (label ``softmax_label``);
        any other ending raises MXNetError. The model's current parameter values become
        ``arg_params``/``aux_params`` (unless given); other keyword arguments go to
        ``FeedForward``."""
        from mxcy.nn.compiled import softmax_output_model
        symbol, arg_params, aux_params = softmax_output_model(model)
        kwargs.setdefault('arg_params', arg_params)
        kwargs.setdefault('aux_params', aux_params)
        return cls(symbol, **kwargs)
