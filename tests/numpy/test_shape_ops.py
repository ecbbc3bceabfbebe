"""mx.np shape functions and products: values against NumPy, gradients through autograd."""
import numpy as onp
import pytest

from mxcy import autograd
from mxcy import numpy as np

A = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4)


def _check(got, want):
    assert type(got) is np.ndarray
    assert got.shape == want.shape
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


@pytest.mark.parametrize('fn,args', [
    ('reshape', ((4, -1),)), ('transpose', ()), ('transpose', ((1, 0, 2),)),
    ('swapaxes', (0, 2)), ('moveaxis', (0, -1)), ('expand_dims', (1,)),
    ('ravel', ()), ('flip', ()), ('flip', (1,)), ('tile', ((1, 2, 1),)),
    ('repeat', (2,)), ('broadcast_to', ((5, 2, 3, 4),)),
])
def test_shape_functions(fn, args):
    _check(getattr(np, fn)(np.array(A), *args), getattr(onp, fn)(A, *args))


def test_squeeze_concat_stack_split():
    a = np.array(A.reshape(2, 1, 12))
    _check(np.squeeze(a), A.reshape(2, 12))
    _check(np.concatenate([np.array(A), np.array(A)], axis=1), onp.concatenate([A, A], 1))
    _check(np.concatenate([np.array(A), np.array(A)], axis=None),
           onp.concatenate([A, A], None))
    _check(np.stack([np.array(A), np.array(A)], axis=-1), onp.stack([A, A], -1))
    _check(np.vstack([np.ones(3), np.zeros(3)]), onp.vstack([onp.ones(3), onp.zeros(3)]))
    _check(np.hstack([np.ones(3), np.zeros(2)]), onp.hstack([onp.ones(3), onp.zeros(2)]))
    for got, want in zip(np.split(np.array(A), 2, axis=2), onp.split(A, 2, axis=2)):
        _check(got, want)
    for got, want in zip(np.split(np.array(A), [1, 3], axis=2), onp.split(A, [1, 3], 2)):
        _check(got, want)
    with pytest.raises(ValueError, match='split: array split does not result in an equal'):
        np.split(np.array(A), 3, axis=2)


def test_where_clip():
    a = np.array(A)
    _check(np.where(a > 10, a, 0), onp.where(A > 10, A, 0))
    _check(np.where(a > 10, a, np.zeros((4,))), onp.where(A > 10, A, onp.zeros(4)))
    _check(np.clip(a, 3, 7), onp.clip(A, 3, 7))
    _check(np.clip(a, None, 7), onp.clip(A, None, 7))


@pytest.mark.parametrize('sa,sb', [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                                   ((3,), (3, 4)), ((2, 2, 3), (3, 5))])
def test_dot(sa, sb):
    a = onp.random.RandomState(0).rand(*sa).astype(onp.float32)
    b = onp.random.RandomState(1).rand(*sb).astype(onp.float32)
    _check(np.dot(np.array(a), np.array(b)), onp.dot(a, b))


@pytest.mark.parametrize('sa,sb', [((3,), (3,)), ((2, 3), (3, 4)), ((4, 2, 3), (3, 5)),
                                   ((4, 2, 3), (4, 3, 5)), ((1, 2, 3), (4, 3, 2))])
def test_matmul(sa, sb):
    a = onp.random.RandomState(0).rand(*sa).astype(onp.float32)
    b = onp.random.RandomState(1).rand(*sb).astype(onp.float32)
    _check(np.matmul(np.array(a), np.array(b)), onp.matmul(a, b))
    _check(np.array(a) @ np.array(b), a @ b)


def test_tensordot_inner_outer():
    a = onp.random.RandomState(0).rand(2, 3, 4).astype(onp.float32)
    b = onp.random.RandomState(1).rand(4, 3, 2).astype(onp.float32)
    _check(np.tensordot(np.array(a), np.array(b), ([1, 2], [1, 0])),
           onp.tensordot(a, b, ([1, 2], [1, 0])))
    _check(np.inner(np.array(a), np.array(b[:, :, 0].T)), onp.inner(a, b[:, :, 0].T))
    _check(np.outer(np.ones(2), np.arange(3)), onp.outer(onp.ones(2), onp.arange(3)))


def test_products_record_gradients():
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = np.array([0.5, -1.0])
    w.attach_grad()
    with autograd.record():
        y = np.matmul(w, x).sum() + np.concatenate([w, w]).sum()
    y.backward()
    onp.testing.assert_allclose(w.grad.asnumpy(), onp.array([[0.5, -1.0], [0.5, -1.0]]) + 2)


def test_take_modes_and_errors():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert np.take(a, [0, -1], axis=1).tolist() == [[1, 3], [4, 6]]
    assert np.take(a, [5, 7], mode='wrap').tolist() == [6, 2]
    assert np.take(a, [9], mode='clip').tolist() == [6]
    with pytest.raises(IndexError, match='take: index 3 is out of bounds for axis 1'):
        np.take(a, [3], axis=1)
    assert np.tril(a).tolist() == [[1, 0, 0], [4, 5, 0]]
    assert np.trace(a).item() == 6 and np.diag(a, 1).tolist() == [2, 6]
