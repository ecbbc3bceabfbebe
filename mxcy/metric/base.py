"""``EvalMetric`` (the base of every metric), the registry, ``create``, the composite and
custom metrics, and the helpers that turn labels/predictions into NumPy arrays.

See ``mxcy.metric`` for the contract.
"""
from collections import OrderedDict
import functools
import numbers
import threading

import numpy

from mxcy import engine, registry
from mxcy._ndarray import NDArray


# ---------------------------------------------------------------- asynchronous updates
# `update_async` pushes the update as an engine op, so a training loop never waits for
# its metric; every async update writes one shared variable (they run in push order) and
# any other call on any metric (get, reset, update...) first waits for that variable.
_ASYNC = {'var': None, 'pending': False}
_IN_OP = threading.local()
_SYNCED = ('get', 'get_global', 'get_name_value', 'get_global_name_value', 'reset',
           'reset_local', 'update', 'update_dict')


def sync():
    """Wait until every pushed metric update has run (raising its error, if any)."""
    if _ASYNC['pending'] and not getattr(_IN_OP, 'active', False):
        _ASYNC['pending'] = False
        engine.wait(_ASYNC['var'])


def _synced(fn):
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        sync()
        self._fold_pending()
        return fn(self, *args, **kwargs)
    wrapper._metric_synced = True
    return wrapper


def _wrap_methods(cls):
    for name in _SYNCED:
        fn = cls.__dict__.get(name)
        if fn is not None and not getattr(fn, '_metric_synced', False):
            setattr(cls, name, _synced(fn))


def to_numpy(x, what):
    """`x` (an NDArray, which is waited for, or array-like) as a NumPy array."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, numpy.ndarray):
        return x
    try:
        return numpy.asarray(x)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be an NDArray or a NumPy array, got "
                        f"{type(x).__name__}") from None


def as_list(x):
    """A single array as a one-element list; lists and tuples as lists."""
    if isinstance(x, (NDArray, numpy.ndarray)):
        return [x]
    return list(x)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """MXNet's helper: check that the lists (or, with ``shape=True``, the arrays) match.

    With ``wrap=True`` a single array is wrapped in a list first. Raises ValueError
    naming both lengths or shapes.
    """
    if wrap:
        labels, preds = as_list(labels), as_list(preds)
    if shape:
        label_shape, pred_shape = tuple(labels.shape), tuple(preds.shape)
        if label_shape != pred_shape:
            raise ValueError(f"shape of labels {label_shape} does not match shape of "
                             f"predictions {pred_shape}")
    elif len(labels) != len(preds):
        raise ValueError(f"got {len(labels)} label arrays but {len(preds)} prediction "
                         "arrays; they pair up one to one")
    return labels, preds


def pairs(metric, labels, preds):
    """[(label, pred)] as NumPy arrays, after checking the list lengths match."""
    labels, preds = as_list(labels), as_list(preds)
    if len(labels) != len(preds):
        raise ValueError(f"{metric.name}.update: got {len(labels)} label arrays but "
                         f"{len(preds)} prediction arrays; they pair up one to one")
    return [(to_numpy(label, f"{metric.name}.update: a label"),
             to_numpy(pred, f"{metric.name}.update: a prediction"))
            for label, pred in zip(labels, preds)]


def shape_error(metric, label, pred, expected):
    return ValueError(f"{metric.name}.update: label shape {tuple(label.shape)} does not "
                      f"match prediction shape {tuple(pred.shape)}; expected {expected}")


def _builtin_update(cls):
    """True when `cls.update` is one of ours, which reads NumPy views on the engine; a
    user's override (even of a built-in metric) is called with NDArrays, as in MXNet."""
    return getattr(cls.update, '__module__', '').startswith('mxcy.metric.')


class EvalMetric:
    """Base class of the evaluation metrics.

    ``update(labels, preds)`` adds a batch; ``get()`` returns ``(name, value)`` for the
    batches since the last ``reset_local`` / ``reset``, ``get_global()`` for those since
    the last ``reset``. `output_names` / `label_names` choose the arrays ``update_dict``
    passes on (default: all, in order).
    """
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _wrap_methods(cls)

    def update_async(self, labels, preds):
        """Like ``update``, pushed to the engine: returns at once; the next call on any
        metric waits for it. NumPy inputs are updated synchronously."""
        labels, preds = as_list(labels), as_list(preds)
        arrays = labels + preds
        if (not arrays or not all(isinstance(a, NDArray) for a in arrays)
                or not _builtin_update(type(self))):
            # a user's update gets the NDArrays themselves (labels[0].asnumpy() works)
            self.update(labels, preds)
            return
        if _ASYNC['var'] is None:
            _ASYNC['var'] = engine.new_var()
        nlab = len(labels)
        update = type(self).update

        def run():
            views = [numpy.array(a._np_view()) for a in arrays]
            _IN_OP.active = True
            try:
                update(self, views[:nlab], views[nlab:])
            finally:
                _IN_OP.active = False
        _ASYNC['pending'] = True
        engine.push(run, arrays, [_ASYNC['var']], name=f'{self.name}.update')

    def _fold_pending(self):
        """Add results that C kernels accumulated on the engine (see Accuracy)."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop('has_global_stats', False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        """The metric's configuration; ``mx.metric.create(**config)`` recreates it."""
        config = self._kwargs.copy()
        config.update({'metric': self.__class__.__name__, 'name': self.name,
                       'output_names': self.output_names, 'label_names': self.label_names})
        return config

    def update_dict(self, label, pred):
        """Update with name -> array dicts, picking `label_names` / `output_names`."""
        pred = _pick(self, pred, self.output_names, 'output')
        label = _pick(self, label, self.label_names, 'label')
        self.update(label, pred)

    def update(self, labels, preds):
        """Add one batch: lists of label and prediction arrays (NDArray or NumPy)."""
        raise NotImplementedError(f"{type(self).__name__} must override update")

    def _add(self, sum_metric, num_inst):
        """Add to both the local and the global sums."""
        self.sum_metric += sum_metric
        self.global_sum_metric += sum_metric
        self.num_inst += num_inst
        self.global_num_inst += num_inst

    def reset(self):
        """Reset the local and the global results."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Reset the local results only (``get``), keeping the global ones."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """``(name, value)`` over the batches since the last reset (nan if none)."""
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        """``(name, value)`` over the batches since the last ``reset``."""
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, self.global_sum_metric / self.global_num_inst)

    def get_name_value(self):
        """``[(name, value)]`` pairs (several for composite metrics)."""
        return _zip_name_value(*self.get())

    def get_global_name_value(self):
        """``[(name, value)]`` pairs of the global results."""
        if not self._has_global_stats:
            return self.get_name_value()
        return _zip_name_value(*self.get_global())


def _zip_name_value(name, value):
    if not isinstance(name, list):
        name = [name]
    if not isinstance(value, list):
        value = [value]
    return list(zip(name, value))


def _pick(metric, arrays, names, kind):
    if names is None:
        return list(arrays.values())
    missing = [n for n in names if n not in arrays]
    if missing:
        raise KeyError(f"{metric.name}.update_dict: {kind} names {missing} not found; "
                       f"available: {list(arrays)}")
    return [arrays[n] for n in names]


register = registry.get_register_func(EvalMetric, 'metric')
alias = registry.get_alias_func(EvalMetric, 'metric')
_create = registry.get_create_func(EvalMetric, 'metric')


def create(metric, *args, **kwargs):
    """Create a metric from a name (``'acc'``), an ``EvalMetric`` instance, a list of
    those (a ``CompositeEvalMetric``), a config dict from ``get_config``, or a callable
    ``feval(label, pred)`` (a ``CustomMetric``). `args` / `kwargs` go to the constructor.
    """
    if isinstance(metric, EvalMetric):
        return _create(metric, *args, **kwargs)
    if isinstance(metric, (list, tuple)):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, dict) and 'metric' in metric:
        config = dict(metric)
        return create(config.pop('metric'), *args, **{**config, **kwargs})
    if isinstance(metric, (str, dict)):
        return _create(metric, *args, **kwargs)
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    raise TypeError(f"metric.create: expected a metric name, an EvalMetric, a list of "
                    f"them or a callable, got {type(metric).__name__}")


@register
@alias('composite')
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns lists of names and values."""
    def __init__(self, metrics=None, name='composite', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        """Add a child metric (anything ``create`` accepts)."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at `index`."""
        try:
            return self.metrics[index]
        except IndexError:
            raise IndexError(f"CompositeEvalMetric.get_metric: index {index} is out of "
                             f"range for {len(self.metrics)} metrics") from None

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict((k, v) for k, v in labels.items() if k in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict((k, v) for k, v in preds.items() if k in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, 'metrics', ()):   # reset() runs before metrics exist
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def _collect(self, getter):
        names, values = [], []
        for metric in self.metrics:
            name, value = getter(metric)
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return (names, values)

    def get(self):
        return self._collect(lambda m: m.get())

    def get_global(self):
        return self._collect(lambda m: m.get_global())

    def get_config(self):
        config = super().get_config()
        config['metrics'] = [m.get_config() for m in self.metrics]
        return config


@register
class CustomMetric(EvalMetric):
    """A metric computed by ``feval(label, pred)`` on NumPy arrays, per (label, pred) pair.

    `feval` returns a value (averaged over pairs) or a ``(sum_metric, num_inst)`` tuple.
    With `allow_extra_outputs`, extra predictions (e.g. RNN states) are ignored.
    """
    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if not callable(feval):
            raise TypeError(f"CustomMetric: feval must be callable, got "
                            f"{type(feval).__name__}")
        if name is None:
            name = getattr(feval, '__name__', type(feval).__name__)
            if '<' in name:
                name = f'custom({name})'
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        labels, preds = as_list(labels), as_list(preds)
        if not self._allow_extra_outputs and len(labels) != len(preds):
            raise ValueError(f"{self.name}.update: got {len(labels)} label arrays but "
                             f"{len(preds)} prediction arrays; pass allow_extra_outputs=True "
                             "to ignore extra predictions")
        for label, pred in zip(labels, preds):
            reval = self._feval(to_numpy(label, f"{self.name}.update: a label"),
                                to_numpy(pred, f"{self.name}.update: a prediction"))
            if isinstance(reval, tuple):
                sum_metric, num_inst = reval
                self._add(sum_metric, num_inst)
            elif isinstance(reval, (numbers.Number, numpy.number, numpy.ndarray)):
                self._add(reval, 1)
            else:
                raise TypeError(f"{self.name}: feval must return a number or a "
                                f"(sum_metric, num_inst) tuple, got {type(reval).__name__}")

    def get_config(self):
        raise TypeError("CustomMetric cannot be serialized: its feval is code; "
                        "recreate it with mx.metric.CustomMetric(feval)")


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A ``CustomMetric`` from ``numpy_feval(label, pred)`` on NumPy arrays."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = getattr(numpy_feval, '__name__', 'custom')
    return CustomMetric(feval, name, allow_extra_outputs)


_wrap_methods(EvalMetric)
