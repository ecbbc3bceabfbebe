"""mx.monitor.Monitor against what MXNet 1.9.1 reports for a fixed small network
(tools/mxnet_monitor_fixtures.py), plus the executor hook it installs."""
import json
import logging
import os

import numpy as np
import pytest

import mxcy as mx

FILES = os.path.join(os.path.dirname(__file__), 'mxnet_files', 'monitor')


@pytest.fixture(scope='module')
def golden():
    with open(os.path.join(FILES, 'mlp.json')) as f:
        return json.load(f)


def network():
    data = mx.sym.Variable('data')
    fc1 = mx.sym.FullyConnected(data, num_hidden=4, name='fc1')
    bn = mx.sym.BatchNorm(fc1, fix_gamma=False, name='bn')
    act = mx.sym.Activation(bn, act_type='relu', name='relu1')
    fc2 = mx.sym.FullyConnected(act, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(fc2, name='softmax')


def module(golden, for_training=True):
    x, y = np.array(golden['x'], np.float32), np.array(golden['y'], np.float32)
    mod = mx.mod.Module(network())
    mod.bind(data_shapes=[('data', x.shape)], label_shapes=[('softmax_label', y.shape)],
             for_training=for_training)
    mod.set_params({k: mx.nd.array(v) for k, v in golden['params'].items()},
                   {'bn_moving_mean': mx.nd.zeros(4), 'bn_moving_var': mx.nd.ones(4)})
    return mod, mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])


def values(text):
    assert text.endswith('\t')
    return [float(v) for v in text.split('\t')[:-1]]


def assert_matches(got, want):
    assert [(s, n) for s, n, _ in got] == [(s, n) for s, n, _ in want]
    for (_, name, g), (_, _, w) in zip(got, want):
        np.testing.assert_allclose(values(g), values(w), rtol=1e-4, atol=1e-5, err_msg=name)


def test_training_step_matches_mxnet(golden):
    mod, batch = module(golden)
    mon = mx.mon.Monitor(1)
    mod.install_monitor(mon)
    mon.tic()
    mod.forward(batch, is_train=True)
    mod.backward()
    got = mon.toc()
    want = [tuple(r) for r in golden['train']]
    # mxcy does not compute gradients nobody asked for: MXNet also reports the gradient
    # of the input data (fc1_backward_output0), which has grad_req 'null' in a Module
    # (and that of the label, left out of the golden file)
    want = [r for r in want if r[1] != 'fc1_backward_output0']
    assert_matches(got, want)
    assert mon.toc() == []                          # one batch, one report


def test_prediction_pattern_sort_interval_and_list_stats(golden):
    mod, batch = module(golden, for_training=False)
    mon = mx.monitor.Monitor(2, stat_func=lambda x: [mx.nd.sum(x), mx.nd.max(x) * 2],
                             pattern='fc.*', sort=True)
    mod.install_monitor(mon)
    got = []
    for _ in range(3):
        mon.tic()
        mod.forward(batch, is_train=False)
        got.append(mon.toc())
    assert got[1] == []
    for g, w in zip(got, golden['predict']):
        assert_matches(g, [tuple(r) for r in w])


def test_toc_print_and_default_stat(caplog):
    x = mx.sym.Variable('x')
    net = mx.sym.relu(mx.sym._mul_scalar(x, scalar=2, name='twice'), name='r')
    exe = net.simple_bind(mx.cpu(), x=(2, 2))
    exe.arg_dict['x'][:] = np.array([[3, -4], [0, 0]], np.float32)
    mon = mx.monitor.Monitor(1)
    mon.install(exe)
    mon.tic()
    exe.forward()
    with caplog.at_level(logging.INFO):
        mon.toc_print()
    lines = [r.getMessage() for r in caplog.records]
    # default statistic: norm / sqrt(size); relu([6, -8, 0, 0]) -> 6 / 2
    assert lines == ['Batch:       1 twice_output                   5.0\t',
                     'Batch:       1 r_output                       3.0\t',
                     'Batch:       1 x                              2.5\t']


def test_buffers_reused_by_the_memory_plan_report_their_own_value():
    # a chain of elementwise ops: the plan reuses buffers, the statistic must not see a
    # later value
    x = mx.sym.Variable('x')
    y = x
    for i in range(6):
        y = mx.sym.elemwise_add(y, y, name=f'add{i}')
    exe = y.simple_bind(mx.cpu(), grad_req='null', x=(64,))
    exe.arg_dict['x'][:] = 1
    mon = mx.monitor.Monitor(1, stat_func=lambda a: mx.nd.max(a), pattern='add')
    mon.install(exe)
    mon.tic()
    exe.forward()
    assert mon.toc() == [(1, f'add{i}_output', f'{2.0 ** (i + 1)}\t') for i in range(6)]


def test_monitor_all_reports_inputs_and_the_hook_can_be_removed():
    x = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(x, num_hidden=2, name='fc')
    exe = net.simple_bind(mx.cpu(), data=(1, 3))
    seen = []
    exe.set_monitor_callback(lambda name, arr: seen.append(name), monitor_all=True)
    exe.forward()
    assert seen == ['fc_data', 'fc_weight', 'fc_bias', 'fc_output']
    exe.set_monitor_callback(None)
    exe.forward()
    assert len(seen) == 4
    with pytest.raises(TypeError, match='callback must be callable, got int'):
        exe.set_monitor_callback(3)


def test_bad_arguments():
    with pytest.raises(ValueError, match='interval must be a positive integer, got 0'):
        mx.monitor.Monitor(0)
    x = mx.sym.Variable('x')
    exe = mx.sym.relu(x, name='r').simple_bind(mx.cpu(), x=(2,))
    mon = mx.monitor.Monitor(1, stat_func=lambda a: 1.0)
    mon.install(exe)
    mon.tic()
    exe.forward()
    with pytest.raises(TypeError, match="stat_func must return an NDArray or a list of them, "
                       "got float for 'r_output'"):
        mon.toc()


def test_module_keeps_the_monitor_across_a_reshape(golden):
    mod, batch = module(golden, for_training=False)
    mon = mx.monitor.Monitor(1, pattern='fc2_output')
    mod.install_monitor(mon)
    x = np.array(golden['x'], np.float32)
    for n in (3, 2):
        mon.tic()
        mod.forward(mx.io.DataBatch([mx.nd.array(x[:n])], [mx.nd.zeros(n)]), is_train=False)
        out = mod.get_outputs()[0]
        assert out.shape == (n, 3)
        got = mon.toc()
        assert [name for _, name, _ in got] == ['fc2_output']
    assert len(mon.exes) == 1 and mon.exes[0] is mod._exec
