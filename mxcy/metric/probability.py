"""Likelihood metrics (CrossEntropy, NegativeLogLikelihood, Perplexity) and the loss
metrics (Loss, Torch, Caffe) that average a network's loss outputs."""
import math

import numpy

from mxcy._ndarray import NDArray
from mxcy.metric.base import EvalMetric, alias, pairs, register, shape_error, to_numpy


def _class_indices(metric, label, pred, num_classes, valid=None):
    """label as int64 class indices, checked to lie in [0, num_classes) where `valid`."""
    indices = label.astype(numpy.int64)
    checked = indices if valid is None else indices[valid]
    if checked.size and (checked.min() < 0 or checked.max() >= num_classes):
        bad = checked[(checked < 0) | (checked >= num_classes)][0]
        raise ValueError(f"{metric.name}.update: label {bad} is not a class index in "
                         f"[0, {num_classes}) (label shape {tuple(label.shape)}, prediction "
                         f"shape {tuple(pred.shape)})")
    return indices


class _PickedLogMetric(EvalMetric):
    """-sum(log(p[label] + eps)) / num_samples, for (batch, num_classes) probabilities."""
    def __init__(self, eps, name, output_names, label_names):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        for label, pred in pairs(self, labels, preds):
            if pred.ndim != 2 or label.size != pred.shape[0]:
                raise shape_error(self, label, pred,
                                  "(batch, num_classes) probabilities and one label per row")
            indices = _class_indices(self, label.ravel(), pred, pred.shape[1])
            prob = pred[numpy.arange(pred.shape[0]), indices].astype(numpy.float64)
            self._add(float((-numpy.log(prob + self.eps)).sum()), pred.shape[0])


@register
@alias('ce', 'cross-entropy')
class CrossEntropy(_PickedLogMetric):
    """Cross-entropy -mean(log(p[label] + eps)) of predicted class probabilities."""
    def __init__(self, eps=1e-12, name='cross-entropy', output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias('nll_loss', 'nll-loss')
class NegativeLogLikelihood(_PickedLogMetric):
    """Negative log-likelihood -mean(log(p[label] + eps)) of class probabilities."""
    def __init__(self, eps=1e-12, name='nll-loss', output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
class Perplexity(EvalMetric):
    """Perplexity exp(-mean(log p[label])) of class probabilities along `axis`.

    Labels equal to `ignore_label` (None: none) are left out of the mean; each picked
    probability is clipped below at 1e-10. Labels have the prediction's shape without
    `axis` (or any shape with as many elements).
    """
    def __init__(self, ignore_label, axis=-1, name='perplexity', output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, axis=axis, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        loss, num = 0.0, 0
        for label, pred in pairs(self, labels, preds):
            if pred.ndim == 0 or not -pred.ndim <= self.axis < pred.ndim:
                raise shape_error(self, label, pred, f"predictions with a class axis "
                                                     f"{self.axis}")
            num_classes = pred.shape[self.axis]
            if num_classes == 0 or label.size != pred.size // num_classes:
                raise shape_error(self, label, pred, f"one label per prediction along axis "
                                                     f"{self.axis}")
            probs = numpy.moveaxis(pred, self.axis, -1).reshape(-1, num_classes)
            label = label.ravel()
            ignore = (label == self.ignore_label) if self.ignore_label is not None else \
                numpy.zeros(label.shape, bool)
            indices = _class_indices(self, label, pred, num_classes, valid=~ignore)
            picked = probs[numpy.arange(label.size), numpy.where(ignore, 0, indices)]
            picked = numpy.where(ignore, 1.0, picked.astype(numpy.float64))
            loss -= float(numpy.log(numpy.maximum(1e-10, picked)).sum())
            num += int(label.size - ignore.sum())
        self._add(loss, num)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


@register
class Loss(EvalMetric):
    """The mean of the loss values in the predictions (labels are ignored)."""
    def __init__(self, name='loss', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _, preds):
        if isinstance(preds, (NDArray, numpy.ndarray)):
            preds = [preds]
        for pred in preds:
            pred = to_numpy(pred, f"{self.name}.update: a prediction")
            self._add(float(pred.sum(dtype=numpy.float64)), pred.size)


@register
class Torch(Loss):
    """Loss metric for Torch criterions (MXNet name)."""
    def __init__(self, name='torch', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """Loss metric for Caffe criterions (MXNet name)."""
    def __init__(self, name='caffe', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
