"""Callbacks: do_checkpoint, log_train_metric, Speedometer, ProgressBar, EarlyStopping."""
import io
import json
import logging
import os
import re

import numpy as np
import pytest

import mxcy as mx
from mxcy.model import BatchEndParam


class FakeMetric:
    def __init__(self, value):
        self.value = value
        self.resets = 0
        self.local_resets = 0

    def get_name_value(self):
        return [('accuracy', self.value)]

    def reset(self):
        self.resets += 1

    def reset_local(self):
        self.local_resets += 1


def test_do_checkpoint_saves_every_period(tmp_path):
    sym = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
    args = {'fc_weight': mx.nd.ones((2, 3)), 'fc_bias': mx.nd.zeros((2,))}
    callback = mx.callback.do_checkpoint(str(tmp_path / 'm'), period=2)
    for epoch in range(4):
        callback(epoch, sym, args, {})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        'm-0002.params', 'm-0004.params', 'm-symbol.json']


def test_log_train_metric_and_speedometer_log(caplog):
    metric = FakeMetric(0.5)
    speed = mx.callback.Speedometer(batch_size=10, frequent=2)
    log = mx.callback.log_train_metric(period=2, auto_reset=True)
    with caplog.at_level(logging.INFO):
        for nbatch in range(5):
            param = BatchEndParam(epoch=0, nbatch=nbatch, eval_metric=metric, locals={})
            speed(param)
            log(param)
    assert 'Speed:' in caplog.text and 'samples/sec' in caplog.text
    assert 'Train-accuracy=0.500000' in caplog.text
    assert metric.local_resets == 5 and metric.resets == 0    # Speedometer 2, log 3


def test_progress_bar_draws():
    stream = io.StringIO()
    bar = mx.callback.ProgressBar(total=4, length=8, stream=stream)
    bar(BatchEndParam(0, 2, None, {}))
    assert stream.getvalue() == '[====----] 50%\r'


def test_early_stopping_modes():
    stop = mx.callback.EarlyStopping(patience=2, mode='max')
    values = [0.5, 0.6, 0.6, 0.59]
    results = [stop(BatchEndParam(e, 0, FakeMetric(v), {})) for e, v in enumerate(values)]
    assert results == [True, True, True, False] and stop.stopped_epoch == 3
    with pytest.raises(ValueError, match='mode'):
        mx.callback.EarlyStopping(mode='up')


FIXTURE = os.path.join(os.path.dirname(__file__), 'mxnet_files', 'metric', 'fit_log.json')


@pytest.mark.parametrize('auto_reset', [True, False])
def test_fit_logs_the_lines_mxnet_logs(auto_reset):
    """Speedometer windows (`Batch [3-6]` or `Batch [0-6]`) and fit's whole-epoch
    `Train-` lines equal MXNet 1.9.1's (tools/mxnet_fit_log_fixtures.py)."""
    with open(FIXTURE) as f:
        fixture = json.load(f)
    expected = fixture['auto_reset' if auto_reset else 'no_auto_reset']
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
        mod = mx.mod.Module(mx.sym.SoftmaxOutput(net, name='softmax'), context=mx.cpu())
        x, y = np.array(fixture['x'], 'f'), np.array(fixture['y'], 'f')
        mod.fit(mx.io.NDArrayIter(x, y, batch_size=4, shuffle=False), num_epoch=2,
                eval_metric=['acc', 'ce'],
                arg_params={'fc_weight': mx.nd.array(fixture['weight']),
                            'fc_bias': mx.nd.zeros(2)},
                optimizer='sgd', optimizer_params={'learning_rate': 0.5},
                batch_end_callback=mx.callback.Speedometer(4, 3, auto_reset=auto_reset))
        score = mod.score(mx.io.NDArrayIter(x, y, batch_size=4), ['acc', 'ce'])
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    text = re.sub(r'Speed: [0-9.inf]+', 'Speed: X', stream.getvalue())
    text = re.sub(r'Time cost=[0-9.]+', 'Time cost=X', text)
    assert text.splitlines() == expected['lines']
    assert [n for n, _ in score] == [n for n, _ in expected['score']]
    assert [v for _, v in score] == pytest.approx([v for _, v in expected['score']], rel=1e-5)


def test_speedometer_keeps_the_epoch_value_of_a_real_metric(caplog):
    metric = mx.metric.Accuracy()
    speed = mx.callback.Speedometer(batch_size=2, frequent=1)
    probs = mx.nd.array([[0.9, 0.1], [0.2, 0.8]])
    with caplog.at_level(logging.INFO):
        for nbatch, label in enumerate(([0, 1], [1, 1], [1, 0])):
            metric.update([mx.nd.array(label)], [probs])
            speed(BatchEndParam(epoch=0, nbatch=nbatch, eval_metric=metric, locals={}))
    assert 'Batch [0-1]' in caplog.text and 'Batch [1-2]' in caplog.text
    assert metric.get_global() == ('accuracy', pytest.approx(3 / 6))
