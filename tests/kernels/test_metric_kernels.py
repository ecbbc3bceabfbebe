"""The accuracy kernel (a training loop's metric update without the GIL) against its
NumPy reference, directly and through the engine, and Accuracy's async path against its
synchronous one."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _ops, _reference


@pytest.mark.parametrize('pred_dtype', [np.float32, np.float64])
@pytest.mark.parametrize('label_dtype', [np.float32, np.float64, np.int32, np.int64])
def test_accuracy_kernel_matches_reference(pred_dtype, label_dtype):
    rng = np.random.default_rng(0)
    pred = rng.standard_normal((57, 7)).astype(pred_dtype)
    pred[3, 2] = pred[3, 5] = 9          # a tie: the first maximum wins
    pred[4, 6] = np.nan                  # NaN wins, as in NumPy's argmax
    pred[5, 0] = np.nan
    label = rng.integers(0, 7, 57).astype(label_dtype)
    label[3], label[4], label[5] = 2, 6, 0
    ref = _reference.accuracy_counts(pred, label)
    np.testing.assert_array_equal(_ops.accuracy_np(pred, label), ref)
    counts = mx.nd.zeros((2,), dtype='float64')
    _ops.push_accuracy_update(mx.nd.array(pred, dtype=pred_dtype),
                              mx.nd.array(label, dtype=label_dtype), counts)
    _ops.push_accuracy_update(mx.nd.array(pred, dtype=pred_dtype),
                              mx.nd.array(label, dtype=label_dtype), counts)
    np.testing.assert_array_equal(counts.asnumpy(), 2 * ref)


def test_accuracy_kernel_rejects_bad_input():
    counts = mx.nd.zeros((2,), dtype='float64')
    with pytest.raises(ValueError, match=r"Accuracy.update: label shape \(5,\).*\(4, 3\)"):
        _ops.push_accuracy_update(mx.nd.zeros((4, 3)), mx.nd.zeros((5,)), counts)
    with pytest.raises(ValueError, match=r"\(batch, classes\), got \(4,\)"):
        _ops.push_accuracy_update(mx.nd.zeros((4,)), mx.nd.zeros((4,)), counts)
    with pytest.raises(TypeError, match="uint8"):
        _ops.push_accuracy_update(mx.nd.zeros((4, 3)), mx.nd.zeros((4,), dtype='uint8'),
                                  counts)
    with pytest.raises(ValueError, match="accuracy_np"):
        _ops.accuracy_np(np.zeros((4, 3), np.float32), np.zeros(3, np.float32))


def test_accuracy_async_equals_sync_and_survives_reset():
    rng = np.random.default_rng(1)
    fast, slow = mx.metric.Accuracy(), mx.metric.Accuracy()
    for step in range(5):
        pred = rng.random((32, 10)).astype(np.float32)
        label = rng.integers(0, 10, 32).astype(np.float32)
        fast.update_async([mx.nd.array(label)], [mx.nd.array(pred)])
        slow.update([label], [pred])
        if step == 2:
            assert fast.get() == slow.get()
            fast.reset_local()
            slow.reset_local()
    assert fast.get() == slow.get()
    assert fast.get_global() == slow.get_global()
    fast.update_async([mx.nd.array(label)], [mx.nd.array(pred)])
    fast.reset()                          # a pending update counts before the reset
    assert fast.get()[1] != fast.get()[1]    # nan: nothing since the reset
    assert fast.num_inst == 0 and fast.global_num_inst == 0
