"""Automatic names exactly as MXNet 1.x gives them; NameManager and Prefix scopes;
per-thread counters (mx.name)."""
import threading

import pytest

import mxcy as mx


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.name.NameManager():
        yield


def test_auto_names_and_parameter_names():
    data = mx.sym.var('data')
    fc0 = mx.sym.FullyConnected(data, num_hidden=4)
    fc1 = mx.sym.FullyConnected(fc0, num_hidden=4)
    act = mx.sym.Activation(fc1, act_type='relu')
    assert (fc0.name, fc1.name, act.name) == ('fullyconnected0', 'fullyconnected1',
                                              'activation0')
    assert fc1.list_arguments() == ['data', 'fullyconnected0_weight', 'fullyconnected0_bias',
                                    'fullyconnected1_weight', 'fullyconnected1_bias']
    named = mx.sym.FullyConnected(data, num_hidden=4, name='fc1')
    assert named.list_arguments() == ['data', 'fc1_weight', 'fc1_bias']
    # a given name does not advance the counter
    assert mx.sym.FullyConnected(data, num_hidden=4).name == 'fullyconnected2'
    conv = mx.sym.Convolution(mx.sym.var('img'), kernel=(3, 3), num_filter=2)
    assert conv.list_arguments() == ['img', 'convolution0_weight', 'convolution0_bias']


def test_softmax_label_names():
    fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')
    # the label is named after the node: 'softmax' only when the node is named so
    assert mx.sym.SoftmaxOutput(fc, name='softmax').list_arguments()[-1] == 'softmax_label'
    assert mx.sym.SoftmaxOutput(fc).list_arguments()[-1] == 'softmaxoutput0_label'
    assert mx.sym.SoftmaxOutput(fc).list_arguments()[-1] == 'softmaxoutput1_label'
    # the deprecated alias names its node after the alias, as MXNet does
    assert mx.sym.Softmax(fc).list_arguments()[-1] == 'softmax0_label'
    assert mx.sym.LinearRegressionOutput(fc).list_arguments()[-1] == \
        'linearregressionoutput0_label'


def test_fresh_manager_restarts_counters_and_restores_outer():
    data = mx.sym.var('data')
    assert mx.sym.FullyConnected(data, num_hidden=2).name == 'fullyconnected0'
    assert mx.sym.FullyConnected(data, num_hidden=2).name == 'fullyconnected1'
    with mx.name.NameManager() as manager:
        assert mx.name.NameManager.current() is manager
        assert mx.sym.FullyConnected(data, num_hidden=2).name == 'fullyconnected0'
    # the outer manager's counter goes on where it stopped
    assert mx.sym.FullyConnected(data, num_hidden=2).name == 'fullyconnected2'
    a = mx.sym.var('a')
    with mx.name.NameManager():
        assert (a + a).name == '_plus0'
        assert (a + a).name == '_plus1'
    with mx.name.NameManager():
        assert (a + a).name == '_plus0'


def test_prefix():
    data = mx.sym.var('data')
    with mx.name.Prefix('mynet_'):
        fc = mx.sym.FullyConnected(data, num_hidden=2)
        named = mx.sym.FullyConnected(data, num_hidden=2, name='out')
        v = mx.sym.var('v')
    assert fc.name == 'mynet_fullyconnected0'
    assert fc.list_arguments() == ['data', 'mynet_fullyconnected0_weight',
                                   'mynet_fullyconnected0_bias']
    assert named.name == 'mynet_out'
    # variables are named by the user, never prefixed (as in MXNet)
    assert v.name == 'v'
    with mx.name.Prefix('a_'), mx.name.Prefix('b_'):
        inner = mx.sym.FullyConnected(data, num_hidden=2)
    assert inner.name == 'b_fullyconnected0'     # the innermost manager names


def test_each_thread_has_its_own_counters():
    data = mx.sym.var('data')
    for _ in range(3):
        mx.sym.FullyConnected(data, num_hidden=2)
    names, errors = {}, []

    def worker(key):
        try:
            names[key] = [mx.sym.FullyConnected(data, num_hidden=2).name for _ in range(2)]
            with mx.name.Prefix('t_'):
                names[key].append(mx.sym.Activation(data, act_type='relu').name)
        except Exception as e:     # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and not any(t.is_alive() for t in threads)
    for i in range(4):
        assert names[i] == ['fullyconnected0', 'fullyconnected1', 't_activation0']
    # the main thread's counter was not touched by the workers
    assert mx.sym.FullyConnected(data, num_hidden=2).name == 'fullyconnected3'


def test_names_survive_json_round_trip_without_collisions():
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=2)
    loaded = mx.sym.load_json(net.tojson())
    assert loaded.name == 'fullyconnected0'
    # new nodes after a load keep counting in this manager: no duplicate names
    more = mx.sym.FullyConnected(loaded, num_hidden=2)
    assert more.list_arguments() == ['data', 'fullyconnected0_weight', 'fullyconnected0_bias',
                                     'fullyconnected1_weight', 'fullyconnected1_bias']
