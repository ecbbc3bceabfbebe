"""UpSampling, Crop, L2Normalization, LRN, SVMOutput, SoftmaxActivation, im2col/col2im:
NumPy references, finite-difference gradients, and MXNet 1.9.1's values for a fixed input
(checked once against it; the tests need no MXNet)."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.test_utils import check_op_backward, check_op_forward

X = np.linspace(-1, 1, 24).reshape(1, 4, 2, 3)
HEAD = lambda shape: np.cos(np.arange(int(np.prod(shape)))).reshape(shape)


def _fwd_bwd(f, *arrays):
    nds = [mx.nd.array(a, dtype='float64') for a in arrays]
    for a in nds:
        a.attach_grad()
    with mx.autograd.record():
        y = f(*nds)
    y.backward(mx.nd.array(HEAD(y.shape), dtype='float64'))
    return y.asnumpy().ravel()[:4], nds[0].grad.asnumpy().ravel()[:4]


@pytest.mark.parametrize('name,f,y_ref,g_ref', [
    ('LRN', lambda a: mx.nd.LRN(a, nsize=3, alpha=0.1, beta=0.75, knorm=2),
     [-0.58563161, -0.53629738, -0.48648867, -0.43625674],
     [0.56469667, 0.30696264, -0.24041322, -0.57428718]),
    ('L2Normalization', lambda a: mx.nd.L2Normalization(a, mode='spatial'),
     [-0.512505, -0.46793934, -0.42337369, -0.37880804],
     [0.49206314, 0.25824333, -0.23016408, -0.5224853]),
    ('SVMOutput', lambda a, lab: mx.nd.SVMOutput(a, lab, margin=0.5,
                                                 regularization_coefficient=2.0),
     [-1.0, -0.91304348, -0.82608696, -0.73913043], [0, -5.65217391, 0, 0]),
    ('SVMOutput-linear', lambda a, lab: mx.nd.SVMOutput(a, lab, margin=0.5, use_linear=True),
     [-1.0, -0.91304348, -0.82608696, -0.73913043], [0, -1.0, 0, 0])])
def test_matches_mxnet(name, f, y_ref, g_ref):
    args = [X] if not name.startswith('SVM') else [X.reshape(6, 4),
                                                   np.array([1., 0, 2, 3, 1, 0])]
    y, g = _fwd_bwd(f, *args)
    np.testing.assert_allclose(y, y_ref, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(g, g_ref, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize('name,params', [
    ('LRN', {'nsize': 3, 'alpha': 0.1}), ('L2Normalization', {'mode': 'instance'}),
    ('L2Normalization', {'mode': 'channel'}), ('SoftmaxActivation', {'mode': 'channel'}),
    ('SoftmaxActivation', {}), ('im2col', {'kernel': (2, 2), 'pad': (1, 0), 'stride': (1, 2)})])
def test_gradients(name, params):
    check_op_backward(name, params, [X])


def test_upsampling():
    a = X
    up = np.repeat(np.repeat(X, 2, 2), 2, 3)
    check_op_forward('UpSampling', {'scale': 2, 'num_args': 1}, [a], [up])
    check_op_backward('UpSampling', {'scale': 2, 'num_args': 1}, [a])
    two = mx.nd.UpSampling(mx.nd.array(X), mx.nd.ones((1, 2, 1, 3)), scale=2, num_args=2)
    assert two.shape == (1, 6, 4, 6)
    check_op_backward('UpSampling', {'scale': 2, 'num_args': 2, 'multi_input_mode': 'sum'},
                      [X, X[:, :, :1, :]])
    w = np.linspace(0, 1, 64).reshape(4, 1, 4, 4)
    s = mx.sym.UpSampling(mx.sym.var('x'), scale=2, sample_type='bilinear', num_filter=4,
                          name='up')
    assert s.list_arguments() == ['x', 'up_weight']
    check_op_backward('UpSampling', {'scale': 2, 'sample_type': 'bilinear', 'num_filter': 4,
                                     'num_args': 1}, [X, w], rtol=1e-4)


def test_crop():
    d = np.arange(32.0).reshape(1, 2, 4, 4)
    check_op_forward('Crop', {'num_args': 1, 'h_w': (2, 2), 'center_crop': True}, [d],
                     [d[:, :, 1:3, 1:3]])
    check_op_forward('Crop', {'num_args': 2, 'offset': (1, 0)}, [d, np.zeros((1, 1, 2, 3))],
                     [d[:, :, 1:3, 0:3]])
    check_op_backward('Crop', {'num_args': 1, 'h_w': (3, 2), 'offset': (1, 2)}, [d])
    with pytest.raises(ValueError, match=r"Crop: .*'arg0': expected room for a \(3, 3\) crop"):
        mx.nd.Crop(mx.nd.array(d), num_args=1, h_w=(3, 3), offset=(2, 2))


def test_im2col_col2im_match_mxnet():
    d = mx.nd.array(np.arange(16.).reshape(1, 1, 4, 4))
    cols = mx.nd.im2col(d, kernel=(2, 2))
    assert cols.shape == (1, 4, 9)
    back = mx.nd.col2im(cols, output_size=(4, 4), kernel=(2, 2))
    assert back.asnumpy()[0, 0, 1].tolist() == [8, 20, 24, 14]      # MXNet's values
    check_op_backward('col2im', {'output_size': (4, 4), 'kernel': (2, 2)},
                      [np.random.default_rng(0).standard_normal((1, 4, 9))])


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_lrn_forward_every_dtype_and_req(dtype):
    # float32/float64 by the C kernel (mxcy/_lrn.pyx) straight into the output, float16 by
    # NumPy (the backward's scale comes from the kernel too: test_gradients)
    x = np.random.default_rng(5).standard_normal((2, 6, 3, 5)).astype(dtype)
    xd = x.astype(np.float64)
    sq = np.pad(xd ** 2, ((0, 0), (2, 2), (0, 0), (0, 0)))
    s = 2.0 + 1e-2 / 5 * sum(sq[:, d:d + 6] for d in range(5))
    want = xd * s ** -0.75
    got = mx.nd.LRN(mx.nd.array(x, dtype=dtype), nsize=5, alpha=1e-2)
    assert got.dtype == np.dtype(dtype)
    tol = 2e-3 if dtype == 'float16' else 2e-6
    np.testing.assert_allclose(got.asnumpy(), want, rtol=tol)
    out = mx.nd.ones(x.shape, dtype=dtype)
    mx.nd.LRN(mx.nd.array(x, dtype=dtype), nsize=5, alpha=1e-2, out=out)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=tol)
