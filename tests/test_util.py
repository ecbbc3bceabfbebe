"""mx.util: NumPy-semantics switches (shape and array, per thread), their scopes and
decorators, environment helpers and the ufunc-keyword wrappers."""
import os
import threading

import pytest

import mxcy as mx
from mxcy import util


@pytest.fixture(autouse=True)
def _reset():
    yield
    util.reset_np()


def test_np_shape_switch_scope_and_thread_locality():
    assert not util.is_np_shape()
    assert util.set_np_shape(True) is False and util.is_np_shape()
    seen = []
    thread = threading.Thread(target=lambda: seen.append(util.is_np_shape()))
    thread.start()
    thread.join()
    assert seen == [False]                      # per thread, as in MXNet
    assert util.set_np_shape(False) is True
    with util.np_shape():
        assert util.is_np_shape()
        with util.np_shape(False):
            assert not util.is_np_shape()
        assert util.is_np_shape()
    assert not util.is_np_shape()
    assert mx.nd.zeros(()).shape == () and mx.nd.zeros((0, 3)).shape == (0, 3)


def test_np_array_switch_scope_and_thread_locality():
    assert not util.is_np_array()
    util.set_np()
    assert util.is_np_array() and util.is_np_shape()
    seen = []
    thread = threading.Thread(target=lambda: seen.append(util.is_np_array()))
    thread.start()
    thread.join()
    assert seen == [False]                      # per thread, as in MXNet
    assert mx.npx.is_np_array() and mx.npx.set_np is util.set_np
    with pytest.raises(ValueError, match='need NumPy shape semantics'):
        util.set_np(shape=False, array=True)
    util.set_np(shape=True, array=False)
    assert util.is_np_shape() and not util.is_np_array()
    util.reset_np()
    assert not util.is_np_shape() and not util.is_np_array()
    with util.np_array():
        assert util.is_np_array()
        with util.np_array(False):
            assert not util.is_np_array()
        assert util.is_np_array()
    assert not util.is_np_array()


def test_decorators_act_when_the_code_runs():
    @util.use_np_shape
    def shape_on():
        return util.is_np_shape()
    assert shape_on() is True and not util.is_np_shape()

    @util.use_np_shape
    class Block:
        def forward(self):
            return util.is_np_shape()
    assert Block().forward() is True

    @util.use_np
    def both():
        return util.is_np_shape(), util.is_np_array()
    assert both() == (True, True)
    assert not util.is_np_shape() and not util.is_np_array()     # unwound

    @util.use_np_array
    def fails():
        assert util.is_np_array()
        raise KeyError('inside')
    with pytest.raises(KeyError):
        fails()
    assert not util.is_np_array()               # unwound after an exception too


def test_env_module_and_small_helpers():
    util.setenv('MXCY_UTIL_TEST', 3)
    assert util.getenv('MXCY_UTIL_TEST') == '3' == os.environ['MXCY_UTIL_TEST']
    util.setenv('MXCY_UTIL_TEST', None)
    assert util.getenv('MXCY_UTIL_TEST') is None

    @util.set_module('mxcy.somewhere')
    def f():
        pass
    assert f.__module__ == 'mxcy.somewhere'
    assert util.get_gpu_count() == 0 and util.py_str(b'ab') == 'ab'


def test_ufunc_options_and_wrappers_match_mxnet():
    legal = util.np_ufunc_legal_option
    assert legal('casting', 'unsafe') and not legal('casting', 'x')
    assert legal('dtype', 'float32') and not legal('dtype', None)
    assert not legal('dtype', 'bool') and legal('order', 'F') and not legal('out', None)

    @util.wrap_np_binary_func
    def add(x, y, out=None):
        return x + y
    assert add(1, 2, casting='same_kind', where=True, order='K', subok=True) == 3
    with pytest.raises(ValueError, match=r"add: casting=unsafe is not supported"):
        add(1, 2, casting='unsafe')
    with pytest.raises(TypeError, match="foo is an invalid keyword to function 'add'"):
        add(1, 2, foo=1)

    @util.wrap_np_unary_func
    def neg(x, out=None):
        return -x
    assert neg(2) == -2
    with pytest.raises(ValueError, match='where=False'):
        neg(2, where=False)
