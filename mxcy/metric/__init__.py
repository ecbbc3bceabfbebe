"""``mx.metric``: online evaluation metrics (MXNet 1.x names, arguments and values).

Contract:

* ``update(labels, preds)`` takes lists of arrays (NDArray or NumPy; a single array is
  taken as a one-element list), one label array per prediction array, and adds one
  batch. NDArrays are read with ``asnumpy``: a metric update is where a training loop
  waits for its outputs, as in MXNet. Module hands a user's ``update`` override the
  NDArrays themselves (``labels[0].asnumpy()`` works); built-in metrics read them on the
  engine; ``CustomMetric`` / ``np()`` call `feval` with NumPy arrays. Mismatched list
  lengths or array shapes raise ValueError naming both; nothing is silently broadcast.
* Local and global results, as in MXNet: ``reset_local()`` restarts only what ``get()``
  reports (Speedometer does this per logging window), ``reset()`` both; fit's
  end-of-epoch ``Train-`` line is ``get_global_name_value()``, the whole epoch.
* ``get()`` returns ``(name, value)`` over the batches since the last ``reset`` or
  ``reset_local``, ``get_global()`` since the last ``reset`` (nan before any update);
  ``get_name_value()`` / ``get_global_name_value()`` return ``[(name, value)]`` pairs.
* Values follow MXNet 1.x, including its averaging rules: Accuracy, TopKAccuracy,
  CrossEntropy, NegativeLogLikelihood, Perplexity and Loss average over samples; MAE,
  MSE, RMSE and 'macro' F1 / MCC / PearsonCorrelation average per-update (per-pair)
  values; 'micro' variants score all samples together.
* ``create`` takes a registered name or alias (``'acc'``, ``'top_k_acc'``, ``'f1'``,
  ``'mcc'``, ``'mae'``, ``'mse'``, ``'rmse'``, ``'ce'``, ``'nll_loss'``, ``'perplexity'``,
  ``'pearsonr'``, ``'loss'``, ``'composite'``, ...), an instance, a list (a
  ``CompositeEvalMetric``), a ``get_config()`` dict, or a callable (a ``CustomMetric``).
  Padding is not handled here: the caller slices it off the batch before ``update``.
"""
from mxcy.metric.base import (CompositeEvalMetric, CustomMetric, EvalMetric, alias,
                              check_label_shapes, create, np, register)
from mxcy.metric.classification import F1, MCC, PCC, Accuracy, TopKAccuracy
from mxcy.metric.probability import (Caffe, CrossEntropy, Loss, NegativeLogLikelihood,
                                     Perplexity, Torch)
from mxcy.metric.regression import MAE, MSE, RMSE, PearsonCorrelation

__all__ = ['EvalMetric', 'CompositeEvalMetric', 'CustomMetric', 'register', 'alias',
           'create', 'np', 'check_label_shapes', 'Accuracy', 'TopKAccuracy', 'F1', 'MCC',
           'PCC', 'MAE', 'MSE', 'RMSE', 'PearsonCorrelation', 'CrossEntropy',
           'NegativeLogLikelihood', 'Perplexity', 'Loss', 'Torch', 'Caffe']
