"""Callbacks: do_checkpoint, log_train_metric, Speedometer, ProgressBar, EarlyStopping."""
import io
import logging

import pytest

import mxcy as mx
from mxcy.model import BatchEndParam


class FakeMetric:
    def __init__(self, value):
        self.value = value
        self.resets = 0

    def get_name_value(self):
        return [('accuracy', self.value)]

    def reset(self):
        self.resets += 1


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
    assert metric.resets >= 2


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
