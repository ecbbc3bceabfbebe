"""Big GEMMs are shared part by part with idle workers (rows or columns of C): every part
layout must equal the unshared product, sharing must really happen when a worker is idle,
and many shared GEMMs pushed from several threads at once must neither hang nor mix up."""
import threading

import numpy as np
import pytest

import mxcy as mx
from mxcy import _ndarray


@pytest.fixture
def two_workers():
    old_split = mx.engine.set_kernel_split(True)
    old_workers = mx.engine.num_workers()
    mx.engine.set_num_workers(2)
    yield
    mx.engine.set_num_workers(old_workers)
    mx.engine.set_kernel_split(old_split)


def _gemm(a, b, c0, trans_a, trans_b, alpha=0.5, beta=1.0):
    m, k = a.shape[::-1] if trans_a else a.shape
    n = b.shape[0] if trans_b else b.shape[1]
    c = mx.nd.array(c0)
    _ndarray.gemm(mx.nd.array(a), mx.nd.array(b), c, m, n, k, trans_a, trans_b, 1, alpha, beta)
    return c


def _operands(shape, trans_a, trans_b, seed=0):
    m, n, k = shape
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    return a, b, rng.standard_normal((m, n)).astype(np.float32)


# (m, n, k): rows split (m >= n), columns split in 16-aligned blocks (m < n), a ragged last
# column block (65 columns), all above the threshold
SHAPES = [(512, 520, 600), (96, 1200, 700), (1000, 70, 40), (70, 1000, 40), (64, 65, 600)]


@pytest.mark.parametrize('shape', SHAPES)
@pytest.mark.parametrize('trans_a', [False, True])
@pytest.mark.parametrize('trans_b', [False, True])
def test_shared_gemm_matches_numpy(two_workers, shape, trans_a, trans_b):
    a, b, c0 = _operands(shape, trans_a, trans_b)
    c = _gemm(a, b, c0, trans_a, trans_b)
    ref = 0.5 * (a.T if trans_a else a) @ (b.T if trans_b else b) + c0
    np.testing.assert_allclose(c.asnumpy(), ref, rtol=2e-3, atol=2e-2)


def test_an_idle_worker_helps(two_workers):
    a, b, c0 = _operands((256, 512, 512), False, True)
    before = mx.engine.stats()
    for _ in range(30):            # one at a time: the other worker is idle each time
        c = _gemm(a, b, c0, False, True)
        c.wait_to_read()
    after = mx.engine.stats()
    assert after['shared_kernels'] - before['shared_kernels'] >= 1
    assert after['helped_parts'] > before['helped_parts'], (before, after)
    np.testing.assert_allclose(c.asnumpy(), 0.5 * a @ b.T + c0, rtol=2e-3, atol=2e-2)


def test_switched_off_nothing_is_shared(two_workers):
    mx.engine.set_kernel_split(False)
    assert mx.engine.kernel_split() is False
    a, b, c0 = _operands((256, 512, 512), False, False)
    before = mx.engine.stats()['shared_kernels']
    for _ in range(5):
        c = _gemm(a, b, c0, False, False)
        c.wait_to_read()
    assert mx.engine.stats()['shared_kernels'] == before
    np.testing.assert_allclose(c.asnumpy(), 0.5 * a @ b + c0, rtol=2e-3, atol=2e-2)


def test_shared_gemms_from_many_threads(two_workers):
    """Four threads push chains of big GEMMs and small ops together: all results exact."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((200, 300)).astype(np.float32) / 10
    w = rng.standard_normal((300, 300)).astype(np.float32) / 20
    results, errors = {}, []

    def chain(tid):
        try:
            x, wn = mx.nd.array(a), mx.nd.array(w)
            for _ in range(6):
                x = mx.nd.dot(x, wn) + 0.01 * tid
            results[tid] = x.asnumpy()
        except BaseException as exc:       # reported below, with the thread's id
            errors.append((tid, exc))
    threads = [threading.Thread(target=chain, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors
    for tid in range(4):
        ref = a
        for _ in range(6):
            ref = ref @ w + np.float32(0.01 * tid)
        np.testing.assert_allclose(results[tid], ref, rtol=1e-3, atol=1e-4)


def test_naive_engine_runs_every_part_itself():
    a, b, c0 = _operands((512, 512, 512), False, False)
    mx.engine.set_engine_type('NaiveEngine')
    try:
        before = mx.engine.stats()['shared_kernels']
        c = _gemm(a, b, c0, False, False)
        assert mx.engine.stats()['shared_kernels'] == before
    finally:
        mx.engine.set_engine_type('ThreadedEngine')
    np.testing.assert_allclose(c.asnumpy(), 0.5 * a @ b + c0, rtol=2e-3, atol=2e-2)
