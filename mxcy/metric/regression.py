"""Regression metrics: MAE, MSE, RMSE (each the mean of per-batch values, as MXNet 1.x)
and PearsonCorrelation."""
import numpy

from mxcy.metric.base import EvalMetric, alias, pairs, register, shape_error


def _matched(metric, label, pred):
    """label and pred as float64 arrays of one shape: (batch, k), 1-d arrays as (batch, 1).

    A label may have another shape than the prediction only when the batch size and the
    number of elements agree (e.g. (n,) against (n, 1)); anything else is an error
    rather than a silent broadcast.
    """
    given_label, given_pred = label, pred
    label = numpy.asarray(label, numpy.float64)
    pred = numpy.asarray(pred, numpy.float64)
    if label.ndim <= 1:
        label = label.reshape(-1, 1)
    if pred.ndim <= 1:
        pred = pred.reshape(-1, 1)
    if label.shape != pred.shape:
        if label.size != pred.size or label.shape[0] != pred.shape[0]:
            raise shape_error(metric, given_label, given_pred,
                              "the same batch size and number of elements")
        label = label.reshape(pred.shape)
    return label, pred


class _BatchMeanMetric(EvalMetric):
    """A metric whose value is the mean over updates of ``_batch_value(label, pred)``."""
    def __init__(self, name, output_names, label_names):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds):
        for label, pred in pairs(self, labels, preds):
            label, pred = _matched(self, label, pred)
            self._add(float(self._batch_value(label - pred)), 1)


@register
class MAE(_BatchMeanMetric):
    """Mean absolute error mean(|label - pred|), averaged over (label, pred) pairs."""
    def __init__(self, name='mae', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch_value(diff):
        return numpy.abs(diff).mean()


@register
class MSE(_BatchMeanMetric):
    """Mean squared error mean((label - pred)**2), averaged over (label, pred) pairs."""
    def __init__(self, name='mse', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch_value(diff):
        return (diff ** 2).mean()


@register
class RMSE(_BatchMeanMetric):
    """Root mean squared error sqrt(mean((label - pred)**2)), averaged over pairs."""
    def __init__(self, name='rmse', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch_value(diff):
        return numpy.sqrt((diff ** 2).mean())


class _Moments:
    """Count, means and co-moments of (label, pred) pairs, merged batch by batch
    (Chan et al.'s pairwise update, exact for any batch sizes)."""
    def __init__(self):
        self.n = 0
        self.mean_l = self.mean_p = 0.0
        self.m2_l = self.m2_p = self.c_lp = 0.0

    def add(self, label, pred):
        nb = label.size
        if nb == 0:
            return
        mean_l, mean_p = label.mean(), pred.mean()
        dl, dp = label - mean_l, pred - mean_p
        n = self.n + nb
        delta_l, delta_p = mean_l - self.mean_l, mean_p - self.mean_p
        weight = self.n * nb / n
        self.m2_l += (dl * dl).sum() + delta_l * delta_l * weight
        self.m2_p += (dp * dp).sum() + delta_p * delta_p * weight
        self.c_lp += (dl * dp).sum() + delta_l * delta_p * weight
        self.mean_l += delta_l * nb / n
        self.mean_p += delta_p * nb / n
        self.n = n

    def corr(self):
        return float(self.c_lp / numpy.sqrt(self.m2_l * self.m2_p))


@register
@alias('pearsonr')
class PearsonCorrelation(EvalMetric):
    """The Pearson correlation cov(label, pred) / (std(label) std(pred)).

    `average` 'macro' averages the correlation of each (label, pred) pair; 'micro'
    computes one correlation over all samples.
    """
    def __init__(self, name='pearsonr', output_names=None, label_names=None,
                 average='macro'):
        if average not in ('macro', 'micro'):
            raise ValueError(f"PearsonCorrelation: average must be 'macro' or 'micro', got "
                             f"{average!r}")
        self.average = average
        self._local, self._global = _Moments(), _Moments()
        super().__init__(name, average=average, output_names=output_names,
                         label_names=label_names, has_global_stats=True)

    def update(self, labels, preds):
        for label, pred in pairs(self, labels, preds):
            label, pred = _matched(self, label, pred)
            label, pred = label.ravel(), pred.ravel()
            if self.average == 'macro':
                self._add(float(numpy.corrcoef(pred, label)[0, 1]), 1)
            else:
                self._local.add(label, pred)
                self._global.add(label, pred)
                self.num_inst += 1
                self.global_num_inst += 1

    def reset(self):
        super().reset()
        self._local, self._global = _Moments(), _Moments()

    def reset_local(self):
        super().reset_local()
        self._local = _Moments()

    def get(self):
        if self.average == 'macro' or self.num_inst == 0:
            return super().get()
        return (self.name, self._local.corr())

    def get_global(self):
        if self.average == 'macro' or self.global_num_inst == 0:
            return super().get_global()
        return (self.name, self._global.corr())
