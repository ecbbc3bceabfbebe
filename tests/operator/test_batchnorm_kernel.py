"""BatchNorm's C kernels (mxcy/_ops_bn.pxi) against its NumPy path (norm.py: forward_numpy and
the shared _NormBase.backward, which float16 data still takes): every axis, both float
dtypes, training and inference, fix_gamma, use_global_stats, the ReLU variant, req 'add',
in-place and overlapping arrays, channels last, and cases big enough to be split by
channels."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _ops
from mxcy.operator import get_op
from mxcy.operator.norm import _NormBase

CASES = [((4, 3, 5), 1), ((2, 3, 4, 5), 1), ((4, 5, 3), -1), ((6, 4), 0), ((6, 4), 1),
         ((2, 3, 4, 5), 2), ((4, 8, 48, 48), 1),
         # channels last (inner 1): channel blocks of 128, a partial one, and split in parts
         ((40, 300), 1), ((20, 20, 200), -1)]


def _inputs(shape, axis, dtype, seed=0):
    rng = np.random.default_rng(seed)
    c = shape[axis]
    arrays = (rng.standard_normal(shape) * 2 + 1, rng.uniform(0.5, 1.5, c),
              rng.standard_normal(c), rng.standard_normal(c), rng.uniform(0.5, 2, c))
    return [a.astype(dtype) for a in arrays]


def _run(op, params, arrays, is_train, numpy_path, req='write', seed=1):
    """Forward then backward; returns outputs, moving statistics and gradients (NumPy)."""
    spec = get_op(op)
    p = spec.params.parse(op, params)
    x, gamma, beta, mm, mv = arrays
    dtype = x.dtype
    ins = [mx.nd.array(a, dtype=dtype) for a in (x, gamma, beta)]
    aux = [mx.nd.array(a, dtype=dtype) for a in (mm, mv)]
    c = gamma.shape[0]
    rng = np.random.default_rng(seed)
    start = [rng.standard_normal(s).astype(dtype) for s in (x.shape, (c,), (c,))]
    outs = [mx.nd.array(a, dtype=dtype) for a in start]
    reqs = [req, 'write', 'write']
    if numpy_path:
        spec.forward_numpy(p, is_train and not p.use_global_stats, reqs, ins, outs, aux)
    else:
        spec.forward(p, is_train, reqs, ins, outs, aux)
    dy = mx.nd.array(rng.standard_normal(x.shape), dtype=dtype)
    grads = [mx.nd.array(rng.standard_normal(a.shape), dtype=dtype) for a in (x, gamma, beta)]
    backward = _NormBase.backward if numpy_path else type(spec).backward
    backward(spec, p, [req] * 3, [dy, None, None], ins, outs, grads, aux)
    return [a.asnumpy() for a in outs + aux + grads]


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('shape,axis', CASES)
@pytest.mark.parametrize('params,is_train', [
    ({'fix_gamma': False}, True), ({'fix_gamma': True}, True),
    ({'fix_gamma': False}, False), ({'fix_gamma': False, 'use_global_stats': True}, True),
])
def test_kernel_matches_numpy_path(shape, axis, dtype, params, is_train):
    arrays = _inputs(shape, axis, dtype)
    params = dict(params, axis=axis, momentum=0.8, eps=1e-4)
    got = _run('BatchNorm', params, arrays, is_train, numpy_path=False)
    want = _run('BatchNorm', params, arrays, is_train, numpy_path=True)
    tol = 2e-4 if dtype == np.float32 else 1e-10
    names = ['output', 'mean', 'invstd', 'moving_mean', 'moving_var', 'dx', 'dgamma', 'dbeta']
    for name, g, w in zip(names, got, want):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * 10, err_msg=name)


@pytest.mark.parametrize('req', ['write', 'add'])
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('shape,axis', [((4, 3, 5), 1), ((4, 5, 3), -1), ((4, 8, 48, 48), 1),
                                        ((20, 20, 200), -1)])
def test_relu_variant_and_req_add_match_numpy_path(shape, axis, dtype, req):
    arrays = _inputs(shape, axis, dtype, seed=2)
    params = {'fix_gamma': False, 'axis': axis}
    got = _run('_contrib_BatchNormWithReLU', params, arrays, True, False, req)
    want = _run('_contrib_BatchNormWithReLU', params, arrays, True, True, req)
    tol = 2e-4 if dtype == np.float32 else 1e-10
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * 10)
    if req == 'write':                                      # the mask does something
        assert (got[0] == 0).any() and (got[0] > 0).any()


def test_in_place_forward_and_backward():
    """y over x and dx over dy (exactly the same memory): each element is read before it
    is written, so the results equal those of separate arrays."""
    x, gamma, beta, mm, mv = _inputs((4, 3, 6), 1, np.float64)
    spec = get_op('BatchNorm')
    p = spec.params.parse('BatchNorm', {'fix_gamma': False})
    separate = _run('BatchNorm', {'fix_gamma': False}, [x, gamma, beta, mm, mv], True, False)
    xs = mx.nd.array(x, dtype=np.float64)
    g, b = mx.nd.array(gamma, dtype=np.float64), mx.nd.array(beta, dtype=np.float64)
    aux = [mx.nd.array(a, dtype=np.float64) for a in (mm, mv)]
    stats = [mx.nd.zeros((3,), dtype=np.float64) for _ in range(2)]
    x_keep = xs.copy()
    spec.forward(p, True, ['write'] * 3, [xs, g, b], [xs] + stats, aux)
    np.testing.assert_allclose(xs.asnumpy(), separate[0], rtol=1e-12)
    rng = np.random.default_rng(1)
    rng.standard_normal(x.shape), rng.standard_normal(3), rng.standard_normal(3)   # as _run
    dy = mx.nd.array(rng.standard_normal(x.shape), dtype=np.float64)
    gg, gb = mx.nd.zeros((3,), dtype=np.float64), mx.nd.zeros((3,), dtype=np.float64)
    spec.backward(p, ['write'] * 3, [dy, None, None], [x_keep, g, b], [xs] + stats,
                  [dy, gg, gb], aux)
    np.testing.assert_allclose(dy.asnumpy(), separate[5], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gg.asnumpy(), separate[6], rtol=1e-10)


def test_output_overlapping_the_input_reads_the_old_input():
    """y a shifted view of x's own chunk: the kernel normalises x as it was."""
    rng = np.random.default_rng(7)
    base = mx.nd.array(rng.standard_normal((3, 2, 5)))
    x, y = base[0:2], base[1:3]
    xn = x.asnumpy()
    mean, var = xn.mean(axis=(0, 2)), xn.var(axis=(0, 2))
    spec = get_op('BatchNorm')
    p = spec.params.parse('BatchNorm', {'eps': 1e-5})
    stats = [mx.nd.zeros((2,)) for _ in range(2)]
    spec.forward(p, True, ['write'] * 3, [x, mx.nd.ones((2,)), mx.nd.zeros((2,))],
                 [y] + stats, [mx.nd.zeros((2,)), mx.nd.ones((2,))])
    want = (xn - mean.reshape(1, 2, 1)) / np.sqrt(var.reshape(1, 2, 1) + 1e-5)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-4, atol=1e-5)


def test_which_dtypes_take_the_kernels():
    f32, f64, f16 = (mx.nd.zeros((2,), dtype=d) for d in (np.float32, np.float64, np.float16))
    assert _ops.batchnorm_supported(f32, f32) and _ops.batchnorm_supported(f64, f64)
    assert not _ops.batchnorm_supported(f16, f16)
    assert not _ops.batchnorm_supported(f32, f64)


def test_float16_takes_the_numpy_path_with_training_statistics():
    x, gamma, beta, mm, mv = _inputs((4, 3, 5), 1, np.float64)
    # as MXNet: float16 data takes float32 gamma, beta and moving statistics
    args = [mx.nd.array(x, dtype=np.float16)] + [mx.nd.array(a, dtype=np.float32)
                                                 for a in (gamma, beta, mm, mv)]
    for a in args[:3]:
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.BatchNorm(*args, fix_gamma=False, momentum=0.5)
    y.backward()
    xh = args[0].asnumpy().astype(np.float64)
    np.testing.assert_allclose(args[3].asnumpy(), 0.5 * mm + 0.5 * xh.mean(axis=(0, 2)),
                               rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(args[2].grad.asnumpy(), np.full(3, 20.0), rtol=1e-3)
    assert y.dtype == np.float16 and args[0].grad.dtype == np.float16
