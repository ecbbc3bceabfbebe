"""bool (MXNet's type code 7) has no C kernel: every op on a bool array must take a
correct path (NumPy's values), never a kernel that skips the dtype and leaves garbage."""
import numpy as onp
import pytest

import mxcy as mx
from mxcy import numpy as np

B = onp.array([[True, False, True], [False, False, True]])


@pytest.mark.parametrize('name,fn,ref', [
    ('broadcast_add', lambda b: mx.nd.broadcast_add(b, b), lambda b: b + b),
    ('add', lambda b: b + b, lambda b: b + b),
    ('multiply', lambda b: b * b, lambda b: b * b),
    ('transpose', lambda b: mx.nd.transpose(b), lambda b: b.T),
    ('concat', lambda b: mx.nd.concat(b, b, dim=1), lambda b: onp.concatenate([b, b], 1)),
    ('flip', lambda b: mx.nd.flip(b, axis=1), lambda b: b[:, ::-1]),
    ('take', lambda b: mx.nd.take(b, mx.nd.array([1, 0])), lambda b: b[[1, 0]]),
    ('where', lambda b: mx.nd.where(b, b, mx.nd.zeros(b.shape, dtype=bool)), lambda b: b),
    ('max', lambda b: mx.nd.max(b, axis=1), lambda b: b.max(axis=1)),
    ('sort', lambda b: mx.nd.sort(b), lambda b: onp.sort(b)),
    ('fill', lambda b: mx.nd.zeros(b.shape, dtype=bool) + True, lambda b: onp.ones_like(b)),
    ('astype', lambda b: b.astype('int32'), lambda b: b.astype('int32')),
])
def test_nd_ops_on_bool_give_numpy_values(name, fn, ref):
    got = fn(mx.nd.array(B, dtype=bool)).asnumpy()
    want = ref(B)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


def test_np_reductions_of_bool_count():
    b = np.array(B)
    assert b.dtype == onp.bool_
    assert np.sum(b).item() == 3 and np.sum(b, axis=0).tolist() == [1, 0, 2]
    assert np.prod(b, axis=1).tolist() == [0, 0] and np.mean(b).item() == 0.5
    assert np.cumsum(b).tolist() == [1, 1, 2, 2, 2, 3]


def test_bool_round_trips_through_save_and_load(tmp_path):
    path = str(tmp_path / 'b.nd')
    mx.nd.save(path, {'mask': mx.nd.array(B, dtype=bool)})
    loaded = mx.nd.load(path)['mask']
    assert loaded.dtype == onp.bool_ and loaded.asnumpy().tolist() == B.tolist()
