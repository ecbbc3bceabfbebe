"""Classification metrics: Accuracy, TopKAccuracy, F1, MCC (binary) and PCC (multiclass)."""
import math

import numpy

from mxcy._ndarray import NDArray, zeros
from mxcy._ops import FLOAT_DTYPES, INDEX_DTYPES, push_accuracy_update
from mxcy.metric.base import (EvalMetric, _builtin_update, alias, as_list, pairs, register,
                              shape_error)


def _argmax(metric, pred, axis, label):
    try:
        return numpy.argmax(pred, axis=axis)
    except numpy.exceptions.AxisError:
        raise shape_error(metric, label, pred,
                          f"predictions with a class axis {axis}") from None


@register
@alias('acc')
class Accuracy(EvalMetric):
    """The fraction of samples whose predicted class equals the label.

    A prediction with the label's shape holds class indices; otherwise it holds class
    scores along `axis` and the predicted class is their argmax.
    """
    def __init__(self, axis=1, name='accuracy', output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.axis = axis

    def update_async(self, labels, preds):
        """(batch, classes) scores against one label per row are counted by a C kernel on
        the engine, into an accumulator folded in by the next synced call."""
        labels, preds = as_list(labels), as_list(preds)
        if (len(labels) != len(preds) or not _builtin_update(type(self))
                or not all(self._counted_in_c(lab, pred) for lab, pred in zip(labels, preds))):
            super().update_async(labels, preds)
            return
        if getattr(self, '_counts', None) is None:
            self._counts = zeros((2,), preds[0].context, dtype='float64')
        for label, pred in zip(labels, preds):
            push_accuracy_update(pred, label, self._counts)
        self._counts_pending = True

    def _counted_in_c(self, label, pred):
        return (isinstance(label, NDArray) and isinstance(pred, NDArray) and pred.ndim == 2
                and self.axis in (1, -1) and label.size == pred.shape[0]
                and pred.shape != label.shape and numpy.dtype(pred.dtype) in FLOAT_DTYPES
                and numpy.dtype(label.dtype) in INDEX_DTYPES)

    def _fold_pending(self):
        if getattr(self, '_counts_pending', False):
            self._counts_pending = False
            correct, seen = self._counts.asnumpy()
            self._counts[:] = 0
            self._add(int(correct), int(seen))

    def update(self, labels, preds):
        for label, pred in pairs(self, labels, preds):
            pred_label = pred if pred.shape == label.shape else \
                _argmax(self, pred, self.axis, label)
            pred_flat = pred_label.astype(numpy.int32).ravel()
            label_flat = label.astype(numpy.int32).ravel()
            if pred_flat.size != label_flat.size:
                raise shape_error(self, label, pred,
                                  f"one label per prediction (class axis {self.axis})")
            self._add(int((pred_flat == label_flat).sum()), label_flat.size)


@register
@alias('top_k_accuracy', 'top_k_acc')
class TopKAccuracy(EvalMetric):
    """The fraction of samples whose label is among the `top_k` highest-scored classes.

    Predictions are (batch, num_classes) scores; the name gets a ``_<top_k>`` suffix.
    """
    def __init__(self, top_k=1, name='top_k_accuracy', output_names=None, label_names=None):
        if not isinstance(top_k, int) or top_k <= 1:
            raise ValueError(f"TopKAccuracy: top_k must be an int greater than 1 (use "
                             f"Accuracy for top_k=1), got {top_k!r}")
        super().__init__(name, top_k=top_k, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.top_k = top_k
        self.name += f'_{top_k}'

    def update(self, labels, preds):
        for label, pred in pairs(self, labels, preds):
            if pred.ndim != 2:
                raise shape_error(self, label, pred, "(batch, num_classes) predictions")
            label_flat = label.astype(numpy.int64).ravel()
            if label_flat.size != pred.shape[0]:
                raise shape_error(self, label, pred, "one label per prediction row")
            k = min(self.top_k, pred.shape[1])
            top = numpy.argpartition(pred.astype(numpy.float32), -k, axis=1)[:, -k:]
            self._add(int((top == label_flat[:, None]).any(axis=1).sum()), pred.shape[0])


class _BinaryStats:
    """True/false positive/negative counts over batches (the F1 and MCC statistics)."""
    def __init__(self):
        self.reset()

    def reset(self):
        self.tp = self.fp = self.fn = self.tn = 0

    def add(self, metric, label, pred):
        if pred.ndim != 2:
            raise shape_error(metric, label, pred, "(batch, 2) class scores")
        if label.size != pred.shape[0]:
            raise shape_error(metric, label, pred, "one label per prediction row")
        label = label.astype(numpy.int32).ravel()
        if len(numpy.unique(label)) > 2:
            raise ValueError(f"{type(metric).__name__} only supports binary classification; "
                             f"labels hold {len(numpy.unique(label))} distinct values")
        pred_true = numpy.argmax(pred, axis=1) == 1
        label_true = label == 1
        self.tp += int((pred_true & label_true).sum())
        self.fp += int((pred_true & ~label_true).sum())
        self.fn += int((~pred_true & label_true).sum())
        self.tn += int((~pred_true & ~label_true).sum())

    def merge(self, other):
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        self.tn += other.tn

    @property
    def total(self):
        return self.tp + self.fp + self.fn + self.tn

    def fscore(self):
        """2PR / (P + R); 0 when there are no predicted or no actual positives."""
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        if precision + recall == 0:
            return 0.0
        return 2 * precision * recall / (precision + recall)

    def matthewscc(self):
        """(TP TN - FP FN) / sqrt(product of the margins), zero margins replaced by 1."""
        if not self.total:
            return 0.0
        denom = 1.0
        for t in (self.tp + self.fp, self.tp + self.fn, self.tn + self.fp, self.tn + self.fn):
            if t:
                denom *= t
        return (self.tp * self.tn - self.fp * self.fn) / math.sqrt(denom)


class _BinaryMetric(EvalMetric):
    """F1 and MCC: 'macro' averages the per-update score, 'micro' scores all samples."""
    def __init__(self, name, output_names, label_names, average):
        if average not in ('macro', 'micro'):
            raise ValueError(f"{type(self).__name__}: average must be 'macro' or 'micro', "
                             f"got {average!r}")
        self.average = average
        self._local, self._global = _BinaryStats(), _BinaryStats()
        super().__init__(name, average=average, output_names=output_names,
                         label_names=label_names, has_global_stats=True)

    def _score(self, stats):
        raise NotImplementedError(f"{type(self).__name__} must override _score")

    def update(self, labels, preds):
        batch = _BinaryStats()
        for label, pred in pairs(self, labels, preds):
            batch.add(self, label, pred)
        if self.average == 'macro':
            self._add(self._score(batch), 1)
            return
        self._local.merge(batch)
        self._global.merge(batch)
        self.sum_metric = self._score(self._local) * self._local.total
        self.num_inst = self._local.total
        self.global_sum_metric = self._score(self._global) * self._global.total
        self.global_num_inst = self._global.total

    def reset(self):
        super().reset()
        self._local.reset()
        self._global.reset()

    def reset_local(self):
        super().reset_local()
        self._local.reset()


@register
class F1(_BinaryMetric):
    """The F1 score 2PR / (P + R) of a binary classification (class 1 is positive).

    Predictions are (batch, 2) scores. With no predicted or no actual positives the
    score is 0. `average` 'macro' averages the scores of the updates; 'micro' scores
    all samples together.
    """
    def __init__(self, name='f1', output_names=None, label_names=None, average='macro'):
        super().__init__(name, output_names, label_names, average)

    def _score(self, stats):
        return stats.fscore()


@register
class MCC(_BinaryMetric):
    """The Matthews correlation coefficient of a binary classification:
    (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)), zero factors replaced by 1."""
    def __init__(self, name='mcc', output_names=None, label_names=None, average='macro'):
        super().__init__(name, output_names, label_names, average)

    def _score(self, stats):
        return stats.matthewscc()


@register
class PCC(EvalMetric):
    """The multiclass Matthews correlation (Pearson correlation of the K x K confusion
    matrix), over all samples since the last reset."""
    def __init__(self, name='pcc', output_names=None, label_names=None,
                 has_global_stats=True):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)))
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)))
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x, y = cmat.sum(axis=1), cmat.sum(axis=0)
        cov_xx, cov_yy = numpy.sum(x * (n - x)), numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float('nan')
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return float(cov_xy / (cov_xx * cov_yy) ** 0.5)

    def update(self, labels, preds):
        for label, pred in pairs(self, labels, preds):
            pred_label = pred if pred.shape == label.shape else _argmax(self, pred, 1, label)
            if pred_label.size != label.size:
                raise shape_error(self, label, pred, "one label per prediction")
            pred_label = pred_label.astype(numpy.int64).ravel()
            label = label.astype(numpy.int64).ravel()
            if label.size and min(pred_label.min(), label.min()) < 0:
                raise ValueError(f"{self.name}.update: class indices must be non-negative")
            n = int(max(pred_label.max(initial=0), label.max(initial=0)))
            if n >= self.k:
                self._grow(n + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (pred_label, label), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    def reset(self):
        self.global_num_inst = 0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0
        self.lcm = numpy.zeros((self.k, self.k))
