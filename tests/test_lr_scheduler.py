"""mx.lr_scheduler: schedule values against MXNet 1.x's (stateful) formulas, warmup,
purity in num_update (correct after a resume, mx#3251), argument checks, create."""
import math

import pytest

import mxcy as mx
from mxcy import lr_scheduler as lrs


class MXNetFactor:
    """MXNet 1.x's FactorScheduler, transcribed: state advanced by a while loop."""

    def __init__(self, step, factor, stop_factor_lr, base_lr):
        self.step, self.factor, self.stop, self.base_lr, self.count = \
            step, factor, stop_factor_lr, base_lr, 0

    def __call__(self, num_update):
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop:
                self.base_lr = self.stop
        return self.base_lr


class MXNetMultiFactor:
    def __init__(self, step, factor, base_lr):
        self.step, self.factor, self.base_lr, self.cur = step, factor, base_lr, 0

    def __call__(self, num_update):
        while self.cur < len(self.step) and num_update > self.step[self.cur]:
            self.cur += 1
            self.base_lr *= self.factor
        return self.base_lr


def test_factor_matches_mxnet_when_called_in_order():
    ref = MXNetFactor(step=7, factor=0.5, stop_factor_lr=1e-3, base_lr=0.1)
    sched = lrs.FactorScheduler(step=7, factor=0.5, stop_factor_lr=1e-3, base_lr=0.1)
    for n in range(0, 120):
        assert sched(n) == pytest.approx(ref(n), rel=1e-12), n
    assert sched(119) == 1e-3                           # floored at stop_factor_lr


def test_factor_is_a_pure_function_of_num_update():
    incremental = lrs.FactorScheduler(step=10, factor=0.9, base_lr=1.0)
    for n in range(1, 1001):
        last = incremental(n)
    direct = lrs.FactorScheduler(step=10, factor=0.9, base_lr=1.0)
    assert direct(1000) == last
    assert direct(1000) == pytest.approx(0.9 ** 99)
    assert direct(5) == 1.0                             # going back works too (resume)
    assert direct(11) == pytest.approx(0.9) and direct(10) == 1.0


def test_multifactor_matches_mxnet_and_is_pure():
    ref = MXNetMultiFactor(step=[3, 8, 20], factor=0.1, base_lr=1.0)
    sched = lrs.MultiFactorScheduler(step=[3, 8, 20], factor=0.1, base_lr=1.0)
    for n in range(0, 30):
        assert sched(n) == pytest.approx(ref(n), rel=1e-12), n
    fresh = lrs.MultiFactorScheduler(step=[3, 8, 20], factor=0.1, base_lr=1.0)
    assert fresh(25) == pytest.approx(1e-3) and fresh(4) == pytest.approx(0.1)
    assert fresh(3) == 1.0


def test_poly_values():
    sched = lrs.PolyScheduler(max_update=100, base_lr=0.5, pwr=2, final_lr=0.1)
    for n in (0, 1, 37, 99, 100):
        assert sched(n) == pytest.approx(0.1 + 0.4 * (1 - n / 100) ** 2), n
    assert sched(100) == pytest.approx(0.1) and sched(5000) == pytest.approx(0.1)
    assert sched(50) == sched(50)                       # no hidden state


def test_cosine_values():
    sched = lrs.CosineScheduler(max_update=50, base_lr=1.0, final_lr=0.2)
    for n in (0, 10, 25, 49, 50):
        assert sched(n) == pytest.approx(0.2 + 0.8 * (1 + math.cos(math.pi * n / 50)) / 2)
    assert sched(25) == pytest.approx(0.6) and sched(10 ** 6) == pytest.approx(0.2)


@pytest.mark.parametrize('make', [
    lambda **kw: lrs.FactorScheduler(step=100, factor=0.5, **kw),
    lambda **kw: lrs.MultiFactorScheduler(step=[100], factor=0.5, **kw),
    lambda **kw: lrs.PolyScheduler(max_update=200, **kw),
    lambda **kw: lrs.CosineScheduler(max_update=200, **kw),
], ids=['factor', 'multifactor', 'poly', 'cosine'])
def test_warmup_linear_and_constant(make):
    linear = make(base_lr=1.0, warmup_steps=10, warmup_begin_lr=0.1)
    assert [linear(n) for n in (0, 5, 9)] == pytest.approx([0.1, 0.55, 0.91])
    assert linear(10) == pytest.approx(1.0)             # warmup ends at base_lr
    constant = make(base_lr=1.0, warmup_steps=10, warmup_begin_lr=0.1,
                    warmup_mode='constant')
    assert [constant(n) for n in (0, 9)] == [0.1, 0.1] and constant(10) == 1.0


def test_poly_and_cosine_decay_after_warmup():
    poly = lrs.PolyScheduler(max_update=30, base_lr=1.0, pwr=1, warmup_steps=10)
    assert [poly(n) for n in (10, 20, 30)] == pytest.approx([1.0, 0.5, 0.0])
    cos = lrs.CosineScheduler(max_update=30, base_lr=1.0, warmup_steps=10)
    assert cos(20) == pytest.approx(0.5)


def test_optimizer_learning_rate_sets_base_lr_everywhere():
    """The optimizer's rate is the start of every schedule, warmup's end included."""
    poly = lrs.PolyScheduler(max_update=10, pwr=1, warmup_steps=2)
    opt = mx.optimizer.SGD(learning_rate=2.0, lr_scheduler=poly)
    assert poly.base_lr == 2.0 and poly.warmup_final_lr == 2.0
    assert poly(1) == pytest.approx(1.0) and poly(2) == pytest.approx(2.0)
    assert poly(6) == pytest.approx(1.0)
    opt.num_update = 6
    assert opt.learning_rate == pytest.approx(1.0)


def test_argument_checks_name_the_argument():
    with pytest.raises(ValueError, match='FactorScheduler: step must be >= 1, got 0'):
        lrs.FactorScheduler(step=0)
    with pytest.raises(ValueError, match=r'factor must be in \(0, 1\]'):
        lrs.FactorScheduler(step=1, factor=1.5)
    with pytest.raises(ValueError, match='strictly increasing'):
        lrs.MultiFactorScheduler(step=[5, 5])
    with pytest.raises(TypeError, match='non-empty list'):
        lrs.MultiFactorScheduler(step=5)
    with pytest.raises(TypeError, match='PolyScheduler: max_update must be an int'):
        lrs.PolyScheduler(max_update=10.5)
    with pytest.raises(ValueError, match=r'max_update \(5\) must exceed warmup_steps'):
        lrs.CosineScheduler(max_update=5, warmup_steps=5)
    with pytest.raises(ValueError, match='warmup_begin_lr .* must not exceed base_lr'):
        lrs.LRScheduler(base_lr=0.1, warmup_begin_lr=0.2)
    with pytest.raises(ValueError, match='warmup_mode must be one of'):
        lrs.LRScheduler(warmup_mode='exp')
    with pytest.raises(ValueError, match='warmup_steps must be >= 0'):
        lrs.LRScheduler(warmup_steps=-1)
    with pytest.raises(NotImplementedError, match='must override __call__'):
        lrs.LRScheduler()(0)


def test_defaults_are_mxnets():
    f = lrs.FactorScheduler(step=5)
    assert (f.factor, f.stop_factor_lr, f.base_lr, f.warmup_steps, f.warmup_begin_lr,
            f.warmup_mode) == (1.0, 1e-8, 0.01, 0, 0.0, 'linear')
    p = lrs.PolyScheduler(max_update=5)
    assert (p.power, p.final_lr, p.max_steps) == (2.0, 0.0, 5)


def test_create_by_name():
    sched = lrs.create('factor', step=3, factor=0.5)
    assert type(sched) is lrs.FactorScheduler and sched(4) == pytest.approx(0.005)
    assert type(lrs.create('CosineScheduler', max_update=10)) is lrs.CosineScheduler
    assert mx.lr_scheduler is lrs
