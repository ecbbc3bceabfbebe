"""Training callbacks (``mx.callback``): progress, checkpoints, early stopping.

Batch-end callbacks receive ``BatchEndParam(epoch, nbatch, eval_metric, locals)``;
epoch-end callbacks ``(epoch, symbol, arg_params, aux_params)``. Any callback returning
``False`` stops training after the current batch or epoch.
"""
import logging
import math
import os
import sys
import time

from mxcy.model import save_checkpoint


def _secondary_rank():
    """True on MPI ranks other than 0 (launched by mpirun): they keep training quietly, so
    progress and validation lines appear once, from rank 0."""
    for var in ('OMPI_COMM_WORLD_RANK', 'PMIX_RANK', 'PMI_RANK'):
        value = os.environ.get(var)
        if value is not None:
            return value.strip() not in ('', '0')
    return False


def do_checkpoint(prefix, period=1):
    """Epoch-end callback saving ``prefix-symbol.json`` and ``prefix-%04d.params``
    (epoch numbers count from 1) every `period` epochs."""
    period = int(max(1, period))

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """Epoch-end callback calling ``mod.save_checkpoint`` every `period` epochs."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def log_train_metric(period, auto_reset=False):
    """Batch-end callback logging the training metric every `period` batches.

    With `auto_reset` the metric's local counters restart after each line (``reset_local``),
    so a line covers the last `period` batches; the epoch's global value is kept for fit.
    """
    def _callback(param):
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info('Iter[%d] Batch[%d] Train-%s=%f', param.epoch, param.nbatch,
                             name, value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """Logs samples/sec (and the metric) every `frequent` batches, as MXNet does.

    With ``auto_reset=True`` each line shows the metric over the last `frequent` batches
    (``Batch [a-b]``; the metric's local counters restart with ``reset_local``); with
    ``auto_reset=False`` it shows the running value since the epoch began (``Batch [0-b]``).
    The global (whole-epoch) value is never reset here, so fit's ``Train-`` line covers
    the whole epoch either way.
    """

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.auto_reset = auto_reset
        self.init = False
        self.tic = 0
        self.last_count = 0

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent == 0 and not _secondary_rank():
            # reading the metric waits for the batches pushed so far, so the clock is read
            # after the work is done, not when it was merely queued
            pairs = param.eval_metric.get_name_value() if param.eval_metric is not None \
                else None
            elapsed = max(time.time() - self.tic, 1e-9)
            speed = self.frequent * self.batch_size / elapsed
            if pairs is not None:
                first = 0
                if self.auto_reset:
                    param.eval_metric.reset_local()
                    first = count - self.frequent
                msg = 'Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec'
                msg += '\t%s=%f' * len(pairs)
                logging.info(msg, param.epoch, first, count, speed, *sum(pairs, ()))
            else:
                logging.info('Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec', param.epoch,
                             count, speed)
            self.tic = time.time()


class ProgressBar:
    """A text progress bar of `total` batches, redrawn on one line."""

    def __init__(self, total, length=80, stream=None):
        self.bar_len = length
        self.total = total
        self.stream = stream

    def __call__(self, param):
        count = param.nbatch
        filled = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        bar = '=' * filled + '-' * (self.bar_len - filled)
        stream = self.stream or sys.stdout
        stream.write(f'[{bar}] {percents}%\r')
        stream.flush()


class LogValidationMetricsCallback:
    """Evaluation-end callback logging every validation metric."""

    def __call__(self, param):
        if not param.eval_metric or _secondary_rank():
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info('Epoch[%d] Validation-%s=%f', param.epoch, name, value)


class EarlyStopping:
    """Evaluation-end callback that stops training when the validation metric has not
    improved by `min_delta` for `patience` evaluations (returns False then).

    ``mode`` is 'max' (accuracy-like) or 'min' (loss-like); 'auto' picks by name.
    """

    def __init__(self, patience=3, min_delta=0.0, mode='auto', metric_name=None):
        if mode not in ('auto', 'min', 'max'):
            raise ValueError(f"EarlyStopping: mode must be 'auto', 'min' or 'max', got {mode!r}")
        self.patience = patience
        self.min_delta = min_delta
        self.mode = mode
        self.metric_name = metric_name
        self.best = None
        self.wait = 0
        self.stopped_epoch = None

    def __call__(self, param):
        pairs = dict(param.eval_metric.get_name_value())
        name = self.metric_name or next(iter(pairs))
        value = pairs[name]
        mode = self.mode
        if mode == 'auto':
            lowered = name.lower()
            mode = 'min' if any(k in lowered for k in ('loss', 'error', 'mse', 'mae', 'rmse',
                                                         'perplexity', 'entropy')) else 'max'
        better = self.best is None or (value > self.best + self.min_delta if mode == 'max'
                                       else value < self.best - self.min_delta)
        if better:
            self.best = value
            self.wait = 0
            return True
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = param.epoch
            logging.info('EarlyStopping: %s has not improved for %d evaluations (best %f); '
                         'stopping', name, self.wait, self.best)
            return False
        return True
