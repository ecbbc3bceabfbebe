"""mx.metric: each metric against a NumPy / hand computation, accumulation, reset,
local vs global results, shape errors, and create by name / list / callable / config."""
import json
import math
import os

import numpy as np
import pytest

import mxcy as mx

RNG = np.random.default_rng(1234)
PROBS = [[0.3, 0.7], [0, 1.0], [0.4, 0.6]]     # MXNet docstring example
LABELS = [0, 1, 1]


def nd(x):
    return mx.nd.array(np.asarray(x, np.float32))


def random_batch(n, classes):
    p = RNG.random((n, classes)).astype(np.float32)
    p /= p.sum(axis=1, keepdims=True)
    return RNG.integers(0, classes, n).astype(np.float32), p


# ---------------------------------------------------------------- accuracy family
def test_accuracy_docstring_example_and_accumulation():
    acc = mx.metric.Accuracy()
    assert acc.get()[0] == 'accuracy' and math.isnan(acc.get()[1])
    acc.update([nd(LABELS)], [nd(PROBS)])
    assert acc.get() == ('accuracy', pytest.approx(2 / 3))
    batches = [random_batch(n, 4) for n in (5, 9, 1)]
    correct, total = 2, 3
    for label, pred in batches:
        acc.update([nd(label)], [nd(pred)])
        correct += int((pred.argmax(1) == label).sum())
        total += label.size
    assert acc.get()[1] == pytest.approx(correct / total)
    acc.reset()
    assert math.isnan(acc.get()[1])


def test_accuracy_class_index_predictions_axis_and_numpy_inputs():
    acc = mx.metric.Accuracy()
    acc.update(np.array([1, 2, 3, 4.0]), np.array([1, 2, 0, 4.0]))   # same shape: indices
    assert acc.get()[1] == pytest.approx(0.75)
    acc0 = mx.metric.Accuracy(axis=0)
    label, pred = random_batch(8, 3)
    acc0.update([nd(label)], [nd(pred.T)])
    assert acc0.get()[1] == pytest.approx(np.mean(pred.argmax(1) == label))
    acc.reset()
    acc.update([nd(label), nd(label[:4])], [nd(pred), nd(pred[:4])])     # two outputs
    expected = (np.sum(pred.argmax(1) == label) + np.sum(pred[:4].argmax(1) == label[:4]))
    assert acc.get()[1] == pytest.approx(expected / 12)


def test_accuracy_shape_errors_name_both_shapes():
    with pytest.raises(ValueError, match=r'label shape \(4,\).*prediction shape \(3, 2\)'):
        mx.metric.Accuracy().update([nd([0, 1, 1, 0])], [nd(PROBS)])
    with pytest.raises(ValueError, match='2 label arrays but 1 prediction'):
        mx.metric.Accuracy().update([nd(LABELS), nd(LABELS)], [nd(PROBS)])
    with pytest.raises(ValueError, match=r'class axis 2'):
        mx.metric.Accuracy(axis=2).update([nd(LABELS)], [nd(PROBS)])


def test_top_k_accuracy_against_argsort():
    top3 = mx.metric.TopKAccuracy(top_k=3)
    assert top3.name == 'top_k_accuracy_3'
    hits = total = 0
    for n in (10, 7):
        label, pred = random_batch(n, 6)
        top3.update([nd(label)], [nd(pred)])
        ranked = np.argsort(-pred, axis=1)[:, :3]
        hits += int((ranked == label[:, None]).any(axis=1).sum())
        total += n
    assert top3.get()[1] == pytest.approx(hits / total)
    wide = mx.metric.TopKAccuracy(top_k=10)            # k above num_classes: all hit
    wide.update([nd(LABELS)], [nd(PROBS)])
    assert wide.get()[1] == 1.0
    with pytest.raises(ValueError, match='top_k must be an int greater than 1'):
        mx.metric.TopKAccuracy(top_k=1)
    with pytest.raises(ValueError, match=r'\(batch, num_classes\)'):
        top3.update([nd([1, 2])], [nd([0.3, 0.2])])


# ---------------------------------------------------------------- binary metrics
def binary_counts(label, pred):
    p, y = pred.argmax(1) == 1, label == 1
    return (np.sum(p & y), np.sum(p & ~y), np.sum(~p & y), np.sum(~p & ~y))


def f1_of(tp, fp, fn):
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return 2 * prec * rec / (prec + rec) if prec + rec else 0.0


def test_f1_docstring_example_no_positives_and_averaging():
    f1 = mx.metric.F1()
    f1.update([nd(LABELS)], [nd(PROBS)])
    assert f1.get() == ('f1', pytest.approx(0.8))
    none = mx.metric.F1()
    none.update([nd([0, 0, 0])], [nd([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4]])])
    assert none.get()[1] == 0.0
    batches = [random_batch(n, 2) for n in (12, 5, 9)]
    macro, micro = mx.metric.F1(), mx.metric.F1(average='micro')
    totals = np.zeros(4)
    per_batch = []
    for label, pred in batches:
        macro.update([nd(label)], [nd(pred)])
        micro.update([nd(label)], [nd(pred)])
        counts = np.array(binary_counts(label, pred))
        totals += counts
        per_batch.append(f1_of(*counts[:3]))
    assert macro.get()[1] == pytest.approx(np.mean(per_batch))
    assert micro.get()[1] == pytest.approx(f1_of(*totals[:3]))
    with pytest.raises(ValueError, match='binary'):
        macro.update([nd([0, 1, 2])], [nd(PROBS)])
    with pytest.raises(ValueError, match="'macro' or 'micro'"):
        mx.metric.F1(average='weighted')


def test_mcc_against_formula():
    label, pred = random_batch(40, 2)
    tp, fp, fn, tn = binary_counts(label, pred)
    expected = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    mcc = mx.metric.MCC()
    mcc.update([nd(label)], [nd(pred)])
    assert mcc.get() == ('mcc', pytest.approx(expected))
    # a constant predictor: zero factors in the denominator are replaced by 1
    const = mx.metric.MCC()
    const.update([nd([0, 1, 1, 0])], [nd([[0.2, 0.8]] * 4)])
    assert const.get()[1] == 0.0


def test_pcc_binary_matches_mcc():
    label, pred = random_batch(30, 2)
    pcc, mcc = mx.metric.PCC(), mx.metric.MCC()
    pcc.update([nd(label)], [nd(pred)])
    mcc.update([nd(label)], [nd(pred)])
    assert pcc.get()[1] == pytest.approx(mcc.get()[1])


# ---------------------------------------------------------------- regression
@pytest.mark.parametrize('cls,fn', [
    (mx.metric.MAE, lambda d: np.abs(d).mean()),
    (mx.metric.MSE, lambda d: (d ** 2).mean()),
    (mx.metric.RMSE, lambda d: np.sqrt((d ** 2).mean()))])
def test_regression_is_mean_of_batch_values(cls, fn):
    metric = cls()
    per_batch = []
    for n in (4, 10, 3):
        label = RNG.normal(size=n).astype(np.float32)
        pred = RNG.normal(size=(n, 1)).astype(np.float32)      # (n,) vs (n, 1) is fine
        metric.update([nd(label)], [nd(pred)])
        per_batch.append(fn(label.astype(np.float64) - pred[:, 0]))
    assert metric.get()[1] == pytest.approx(np.mean(per_batch), rel=1e-6)
    with pytest.raises(ValueError, match=r'\(4,\).*\(4, 3\)'):
        metric.update([nd(np.zeros(4))], [nd(np.zeros((4, 3)))])


def test_mse_docstring_example():
    label, pred = nd([[2.5], [0.0], [2], [8]]), nd([[3], [-0.5], [2], [7]])
    for cls, value in ((mx.metric.MAE, 0.5), (mx.metric.MSE, 0.375),
                       (mx.metric.RMSE, math.sqrt(0.375))):
        metric = cls()
        metric.update([label], [pred])
        assert metric.get()[1] == pytest.approx(value)


def test_pearson_macro_and_micro():
    xs = [RNG.normal(size=n) for n in (20, 7, 13)]
    ys = [x * 0.5 + RNG.normal(size=x.size) for x in xs]
    macro, micro = mx.metric.PearsonCorrelation(), mx.metric.create('pearsonr',
                                                                    average='micro')
    for x, y in zip(xs, ys):
        macro.update([nd(x)], [nd(y)])
        micro.update([nd(x)], [nd(y)])
    x32 = [x.astype(np.float32).astype(np.float64) for x in xs]
    y32 = [y.astype(np.float32).astype(np.float64) for y in ys]
    assert macro.get()[1] == pytest.approx(
        np.mean([np.corrcoef(x, y)[0, 1] for x, y in zip(x32, y32)]))
    overall = np.corrcoef(np.concatenate(x32), np.concatenate(y32))[0, 1]
    assert micro.get()[1] == pytest.approx(overall)
    assert micro.get_global()[1] == pytest.approx(overall)
    micro.reset_local()
    micro.update([nd(xs[0])], [nd(ys[0])])
    assert micro.get()[1] == pytest.approx(np.corrcoef(x32[0], y32[0])[0, 1])
    assert micro.get_global()[1] != pytest.approx(micro.get()[1])


# ---------------------------------------------------------------- likelihood
@pytest.mark.parametrize('cls,name', [(mx.metric.CrossEntropy, 'cross-entropy'),
                                      (mx.metric.NegativeLogLikelihood, 'nll-loss')])
def test_cross_entropy_and_nll(cls, name):
    metric = cls()
    logs = []
    for n in (6, 3):
        label, pred = random_batch(n, 5)
        metric.update([nd(label)], [nd(pred)])
        logs.extend(-np.log(pred[np.arange(n), label.astype(int)].astype(np.float64) + 1e-12))
    assert metric.get() == (name, pytest.approx(np.mean(logs), rel=1e-6))
    with pytest.raises(ValueError, match='label 5 is not a class index'):
        metric.update([nd([5, 0])], [nd(np.full((2, 5), 0.2))])


def test_perplexity_ignore_label_and_axis():
    perp = mx.metric.Perplexity(ignore_label=None)
    perp.update([nd(LABELS)], [nd(PROBS)])
    assert perp.get() == ('perplexity', pytest.approx(1.77109762852))
    label, pred = random_batch(12, 4)
    label[[1, 5, 6]] = 2
    ignored = mx.metric.Perplexity(ignore_label=2)
    ignored.update([nd(label)], [nd(pred)])
    keep = label != 2
    logs = np.log(np.maximum(1e-10, pred[np.arange(12), label.astype(int)][keep]))
    assert ignored.get()[1] == pytest.approx(np.exp(-logs.mean()), rel=1e-5)
    # (batch, time, classes) against a (batch, time) label; and classes on axis 1
    seq_label, seq_pred = random_batch(24, 3)
    seq = mx.metric.Perplexity(ignore_label=-1)
    seq.update([nd(seq_label.reshape(4, 6))], [nd(seq_pred.reshape(4, 6, 3))])
    axis1 = mx.metric.Perplexity(ignore_label=-1, axis=1)
    axis1.update([nd(seq_label.reshape(4, 6))],
                 [nd(seq_pred.reshape(4, 6, 3).transpose(0, 2, 1))])
    expected = np.exp(-np.log(seq_pred[np.arange(24), seq_label.astype(int)]).mean())
    assert seq.get()[1] == pytest.approx(expected, rel=1e-5)
    assert axis1.get()[1] == pytest.approx(expected, rel=1e-5)
    with pytest.raises(ValueError, match=r'label shape \(5,\).*\(3, 2\)'):
        perp.update([nd(np.zeros(5))], [nd(PROBS)])


def test_loss_metric_averages_outputs():
    loss = mx.metric.create('loss')
    loss.update(None, [nd([1, 2, 3]), nd([[4.0]])])
    loss.update([], nd([10, 20]))
    assert loss.get() == ('loss', pytest.approx(40 / 6))


# ---------------------------------------------------------------- custom and composite
def test_custom_metric_and_np_wrapper():
    metric = mx.metric.CustomMetric(lambda label, pred: float(np.abs(label - pred).sum()))
    assert metric.name == 'custom(<lambda>)'
    metric.update([nd([1, 2])], [nd([1, 4])])
    metric.update([nd([0])], [nd([1])])
    assert metric.get()[1] == pytest.approx(1.5)      # one value per pair, averaged

    def summed(label, pred):
        return float((label == pred).sum()), label.size
    counted = mx.metric.np(summed)
    assert counted.name == 'summed'
    counted.update([nd([1, 2, 3])], [nd([1, 0, 3])])
    assert counted.get() == ('summed', pytest.approx(2 / 3))
    extra = mx.metric.CustomMetric(summed, allow_extra_outputs=True)
    extra.update([nd([1, 2])], [nd([1, 2]), nd([9, 9, 9])])       # state output ignored
    assert extra.get()[1] == 1.0
    with pytest.raises(ValueError, match='allow_extra_outputs'):
        counted.update([nd([1, 2])], [nd([1, 2]), nd([9])])
    with pytest.raises(TypeError, match='cannot be serialized'):
        counted.get_config()


def test_composite_and_local_global():
    comp = mx.metric.create(['acc', 'f1', mx.metric.CrossEntropy()])
    assert isinstance(comp, mx.metric.CompositeEvalMetric)
    comp.update([nd(LABELS)], [nd(PROBS)])
    names, values = comp.get()
    assert names == ['accuracy', 'f1', 'cross-entropy']
    assert values == pytest.approx([2 / 3, 0.8, 0.5715994948])
    assert comp.get_name_value() == list(zip(names, values))
    assert isinstance(comp.get_metric(1), mx.metric.F1)
    with pytest.raises(IndexError, match='out of range'):
        comp.get_metric(5)
    comp.reset_local()
    comp.update([nd([1, 1, 0])], [nd(PROBS)])        # predicted classes are 1, 1, 1
    assert comp.get()[1][0] == pytest.approx(2 / 3)
    assert comp.get_global()[1][0] == pytest.approx(4 / 6)
    assert comp.get_global_name_value()[0] == ('accuracy', pytest.approx(4 / 6))
    comp.reset()
    assert all(math.isnan(v) for v in comp.get()[1])


def test_update_dict_picks_named_arrays():
    acc = mx.metric.Accuracy(output_names=['softmax_output'], label_names=['softmax_label'])
    preds = {'other_output': nd([[1.0, 0.0]] * 3), 'softmax_output': nd(PROBS)}
    labels = {'softmax_label': nd(LABELS), 'aux_label': nd([5, 5, 5])}
    acc.update_dict(labels, preds)
    assert acc.get()[1] == pytest.approx(2 / 3)
    comp = mx.metric.CompositeEvalMetric([acc], label_names=['softmax_label'])
    comp.update_dict(labels, preds)
    assert acc.get()[1] == pytest.approx(2 / 3)
    with pytest.raises(KeyError, match='softmax_output'):
        acc.update_dict(labels, {'x': nd(PROBS)})


# ---------------------------------------------------------------- create
@pytest.mark.parametrize('name,cls', [
    ('acc', 'Accuracy'), ('accuracy', 'Accuracy'), ('top_k_accuracy', 'TopKAccuracy'),
    ('top_k_acc', 'TopKAccuracy'), ('f1', 'F1'), ('mcc', 'MCC'), ('mae', 'MAE'),
    ('mse', 'MSE'), ('rmse', 'RMSE'), ('ce', 'CrossEntropy'),
    ('cross-entropy', 'CrossEntropy'), ('nll_loss', 'NegativeLogLikelihood'),
    ('perplexity', 'Perplexity'), ('pearsonr', 'PearsonCorrelation'), ('loss', 'Loss'),
    ('composite', 'CompositeEvalMetric'), ('pcc', 'PCC')])
def test_create_by_name(name, cls):
    kwargs = {'top_k': 2} if 'top_k' in name else \
        {'ignore_label': None} if name == 'perplexity' else {}
    metric = mx.metric.create(name, **kwargs)
    assert type(metric) is getattr(mx.metric, cls)


def test_create_instance_callable_config_and_errors():
    acc = mx.metric.Accuracy()
    assert mx.metric.create(acc) is acc
    custom = mx.metric.create(lambda label, pred: 1.0)
    assert isinstance(custom, mx.metric.CustomMetric)
    top = mx.metric.TopKAccuracy(top_k=3, output_names=['out'])
    again = mx.metric.create(**mx.metric.Perplexity(ignore_label=0, axis=1).get_config())
    assert (type(again), again.ignore_label, again.axis) == (mx.metric.Perplexity, 0, 1)
    config = top.get_config()
    assert config['metric'] == 'TopKAccuracy' and config['top_k'] == 3
    assert config['output_names'] == ['out']
    f1 = mx.metric.create(**mx.metric.F1(average='micro').get_config())
    assert (type(f1), f1.average) == (mx.metric.F1, 'micro')
    comp = mx.metric.create(mx.metric.CompositeEvalMetric(['acc', 'mse']).get_config())
    assert [type(m) for m in comp.metrics] == [mx.metric.Accuracy, mx.metric.MSE]
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        mx.metric.create('nope')
    with pytest.raises(TypeError, match='expected a metric name'):
        mx.metric.create(42)


def test_check_label_shapes_helper():
    labels, preds = mx.metric.check_label_shapes(nd([1, 2]), nd([3, 4]), wrap=True)
    assert len(labels) == len(preds) == 1
    with pytest.raises(ValueError, match=r'\(2,\).*\(3,\)'):
        mx.metric.check_label_shapes(nd([1, 2]), nd([1, 2, 3]), shape=True)


# ---------------------------------------------------------------- MXNet's local/global split
FIXTURE = os.path.join(os.path.dirname(__file__), 'mxnet_files', 'metric', 'fit_log.json')
with open(FIXTURE) as _f:
    MXNET_METRICS = json.load(_f)['metrics']


@pytest.mark.parametrize('name', sorted(MXNET_METRICS))
def test_local_and_global_after_reset_local_match_mxnet(name):
    """Two batches, reset_local, one batch: get() covers the last batch only and
    get_global() all three, with MXNet 1.9.1's values (tools/mxnet_fit_log_fixtures.py)."""
    case = MXNET_METRICS[name]
    metric = mx.metric.create(name.replace('f1_micro', 'f1'), **case['kwargs'])
    for i, (label, pred) in enumerate(case['batches']):
        if i == 2:
            metric.reset_local()
        metric.update([nd(label)], [nd(pred)])
    assert metric.get()[1] == pytest.approx(case['local'], rel=1e-5)
    assert metric.get_global()[1] == pytest.approx(case['global'], rel=1e-5)
    assert metric.get_global_name_value() == [(metric.name, metric.get_global()[1])]
    metric.reset()
    assert math.isnan(metric.get()[1]) and math.isnan(metric.get_global()[1])


class UserAccuracy(mx.metric.EvalMetric):
    """The common custom-metric pattern: NDArray in, .asnumpy() inside."""
    def __init__(self):
        super().__init__('user_acc')
        self.seen = []

    def update(self, labels, preds):
        self.seen.append((type(labels[0]), type(preds[0])))
        label = labels[0].asnumpy()
        pred = preds[0].asnumpy().argmax(axis=1)
        self.sum_metric += float((label == pred).sum())
        self.num_inst += label.size


class NoisyAccuracy(mx.metric.Accuracy):
    def update(self, labels, preds):
        self.seen = type(labels[0])
        super().update(labels, preds)


def scored_module():
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(net, name='softmax'))
    data = mx.io.NDArrayIter(np.eye(4, 6, dtype=np.float32), np.array([0, 1, 0, 0], 'f'),
                             batch_size=2)
    mod.bind(data.provide_data, data.provide_label)
    weight = np.zeros((2, 6), np.float32)
    weight[1, 1] = 1.0                        # predicts class 1 only for the second row
    mod.init_params(arg_params={'fc_weight': nd(weight), 'fc_bias': nd([0, 0])})
    return mod, data


def test_user_metric_update_receives_ndarrays_from_module():
    mod, data = scored_module()
    user = UserAccuracy()
    assert mod.score(data, user) == [('user_acc', 1.0)]
    assert user.seen == [(mx.nd.NDArray, mx.nd.NDArray)] * 2
    noisy = NoisyAccuracy()
    assert mod.score(data, noisy) == [('accuracy', 1.0)]
    assert noisy.seen is mx.nd.NDArray          # an override bypasses the C fast path
    got = []

    def feval(label, pred):
        got.append(type(label))
        return float((pred.argmax(axis=1) == label).mean())
    assert mod.score(data, mx.metric.np(feval)) == [('feval', 1.0)]
    assert got == [np.ndarray, np.ndarray]      # CustomMetric / np() get NumPy
