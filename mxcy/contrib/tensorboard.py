"""``mx.contrib.tensorboard.LogMetricsCallback``: write metrics to TensorBoard event
files, as a batch-end or evaluation-end callback.

The event writer comes from ``mxboard`` (what MXNet used), else ``tensorboardX``, else
``torch.utils.tensorboard``; without any of them the constructor raises ImportError
naming them.
"""
import importlib

__all__ = ['LogMetricsCallback']


def _summary_writer(logging_dir):
    for module in ('mxboard', 'tensorboardX', 'torch.utils.tensorboard'):
        try:
            return importlib.import_module(module).SummaryWriter(logging_dir)
        except ImportError:
            continue
    raise ImportError("LogMetricsCallback needs a TensorBoard event writer: install "
                      "mxboard, tensorboardX or torch")


class LogMetricsCallback:
    """Log each ``(name, value)`` of ``param.eval_metric`` as a scalar named
    ``prefix + name`` at step ``param.epoch`` under `logging_dir`."""

    def __init__(self, logging_dir, prefix=None):
        self.prefix = prefix
        self.summary_writer = _summary_writer(logging_dir)

    def __call__(self, param):
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            if self.prefix is not None:
                name = f'{self.prefix}-{name}'
            self.summary_writer.add_scalar(name, value, global_step=param.epoch)
