"""mx.cpu / mx.gpu / mx.Context / mx.current_context (MXNet 1.x `mxnet.context`).

MXNet 1.x contract: a Context is (device_type, device_id), compared by value; the default
context is per thread (`Context._default_ctx` is a threading.local) and `with ctx:`
switches it for the block. This build is CPU-only: naming mx.gpu(0) is fine, putting an
array on it raises MXNetError saying there is no GPU.
"""
import threading

import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError


def test_cpu_context_fields_and_repr_like_mxnet():
    ctx = mx.cpu(1)
    assert ctx.device_type == 'cpu'
    assert ctx.device_id == 1
    assert ctx.device_typeid == 1
    assert repr(ctx) == 'cpu(1)' and str(ctx) == 'cpu(1)'
    assert mx.cpu().device_id == 0
    assert repr(mx.gpu(2)) == 'gpu(2)'
    assert repr(mx.cpu_pinned(0)) == 'cpu_pinned(0)'


def test_device_type_codes_are_mxnets():
    assert mx.Context.devtype2str == {1: 'cpu', 2: 'gpu', 3: 'cpu_pinned', 5: 'cpu_shared'}
    assert {v: k for k, v in mx.Context.devtype2str.items()} == mx.Context.devstr2type


def test_contexts_compare_and_hash_by_value():
    assert mx.cpu(0) == mx.Context('cpu', 0) == mx.Context('cpu')
    assert mx.cpu(0) != mx.cpu(1)
    assert mx.cpu(0) != mx.gpu(0)
    assert mx.cpu(0) != 'cpu(0)'
    assert len({mx.cpu(0), mx.Context('cpu', 0), mx.cpu(1)}) == 2


def test_context_from_context_copies_it():
    src = mx.cpu(3)
    ctx = mx.Context(src)
    assert ctx == src and ctx is not src


def test_unknown_device_type_raises_naming_it():
    with pytest.raises(ValueError, match='tpu'):
        mx.Context('tpu', 0)


def test_default_context_is_cpu0():
    assert mx.current_context() == mx.cpu(0)
    assert mx.nd.zeros((1,)).context == mx.cpu(0)


def test_with_context_sets_default_for_new_arrays_and_restores():
    with mx.Context('cpu', 2) as ctx:
        assert ctx == mx.cpu(2)
        assert mx.current_context() == mx.cpu(2)
        assert mx.nd.zeros((2,)).context == mx.cpu(2)
        assert mx.nd.array([1, 2]).context == mx.cpu(2)
        assert mx.nd.arange(3).ctx == mx.cpu(2)
    assert mx.current_context() == mx.cpu(0)


def test_with_context_restores_after_an_exception():
    with pytest.raises(KeyError):
        with mx.cpu(4):
            raise KeyError('boom')
    assert mx.current_context() == mx.cpu(0)


def test_nested_with_of_one_context_object_restores_the_outer_default():
    # MXNet kept the old context on the object, so `with c: with c:` lost cpu(0).
    c = mx.cpu(1)
    with c:
        with mx.cpu(2):
            with c:
                assert mx.current_context() == mx.cpu(1)
            assert mx.current_context() == mx.cpu(2)
        assert mx.current_context() == mx.cpu(1)
    assert mx.current_context() == mx.cpu(0)


def test_default_context_is_per_thread():
    entered = threading.Event()
    release = threading.Event()
    seen = {}

    def worker():
        seen['before'] = mx.current_context()
        with mx.cpu(7):
            seen['inside'] = mx.current_context()
            seen['array'] = mx.nd.zeros((1,)).context
            entered.set()
            release.wait(10)
        seen['after'] = mx.current_context()

    shared = mx.cpu(5)
    with shared:
        t = threading.Thread(target=worker)
        t.start()
        assert entered.wait(10)
        # the other thread's `with` does not leak into this one, nor ours into it
        assert mx.current_context() == mx.cpu(5)
        release.set()
        t.join(10)
    assert not t.is_alive()
    assert seen == {'before': mx.cpu(0), 'inside': mx.cpu(7), 'array': mx.cpu(7),
                    'after': mx.cpu(0)}
    assert mx.current_context() == mx.cpu(0)


def test_one_context_object_entered_by_two_threads_at_once():
    shared = mx.cpu(6)
    barrier = threading.Barrier(2, timeout=10)
    seen = []

    def worker(own):
        with own:
            barrier.wait()
            with shared:
                barrier.wait()
            seen.append(mx.current_context() == own)

    threads = [threading.Thread(target=worker, args=(mx.cpu(i),)) for i in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [True, True]


def test_num_gpus_is_zero():
    assert mx.num_gpus() == 0


@pytest.mark.parametrize('make', [
    lambda: mx.nd.zeros((2,), ctx=mx.gpu(0)),
    lambda: mx.nd.ones((2,), ctx=mx.gpu(0)),
    lambda: mx.nd.empty((2,), ctx=mx.gpu(0)),
    lambda: mx.nd.full((2,), 3, ctx=mx.gpu(0)),
    lambda: mx.nd.array([1, 2], ctx=mx.gpu(0)),
    lambda: mx.nd.array(np.ones(2), ctx=mx.gpu(1)),
    lambda: mx.nd.arange(3, ctx=mx.gpu(0)),
    lambda: mx.nd.ones((2,)).copyto(mx.gpu(0)),
    lambda: mx.nd.ones((2,)).as_in_context(mx.gpu(0)),
], ids=['zeros', 'ones', 'empty', 'full', 'array_list', 'array_numpy', 'arange', 'copyto',
        'as_in_context'])
def test_arrays_on_gpu_raise_mxneterror_saying_no_gpu(make):
    with pytest.raises(MXNetError, match='no GPU'):
        make()


def test_default_gpu_context_raises_at_array_creation_and_is_restored():
    with mx.gpu(0):
        with pytest.raises(MXNetError, match=r'no GPU.*gpu\(0\)'):
            mx.nd.zeros((2,))
    assert mx.nd.zeros((2,)).context == mx.cpu(0)


@pytest.mark.parametrize('bad', ['cpu', 'cpu(0)', 0])
def test_ctx_that_is_not_a_context_raises_typeerror(bad):
    with pytest.raises(TypeError, match='ctx must be a Context'):
        mx.nd.zeros((2,), ctx=bad)
