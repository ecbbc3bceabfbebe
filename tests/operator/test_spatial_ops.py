"""GridGenerator, BilinearSampler, SpatialTransformer, ROIPooling: MXNet 1.9.1's values
for fixed inputs (checked once against it; no MXNet needed) and finite differences."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.test_utils import check_op_backward

RNG = np.random.RandomState(0)
DATA = RNG.uniform(-1, 1, (2, 2, 4, 5))
THETA = np.array([[0.9, 0.1, 0.05, -0.1, 0.8, 0.1], [1.1, 0, -0.2, 0.05, 1.2, 0.0]])
FLOW = RNG.uniform(-1, 1, (1, 2, 3, 4))
ROIS = np.array([[0, 0, 0, 3, 2], [1, 1, 1, 4, 3.]])


def _run(f, arrays):
    nds = [mx.nd.array(a, dtype='float32') for a in arrays]
    for a in nds:
        a.attach_grad()
    with mx.autograd.record():
        y = f(*nds)
    y.backward(mx.nd.array(np.cos(np.arange(y.size)).reshape(y.shape)))
    return y.asnumpy().ravel()[:5], [a.grad.asnumpy().ravel()[:5] for a in nds]


GRID = mx.nd.GridGenerator(mx.nd.array(THETA), transform_type='affine',
                           target_shape=(3, 4)).asnumpy()
CASES = [
    (lambda t: mx.nd.GridGenerator(t, transform_type='affine', target_shape=(3, 4)), [THETA],
     [-0.95, -0.35, 0.25, 0.85, -0.85], [[-0.50181, -2.02544, -0.41302, -0.69391, -2.80079]]),
    (lambda d, g: mx.nd.BilinearSampler(d, g), [DATA, GRID],
     [0.20244, 0.2553, 0.43076, -0.02146, 0.37396],
     [[0.36, 0.22911, -0.0438, -0.33274, -0.4851], [-1.48171, 1.21076, 0.02214, 2.53175,
                                                    -0.5228]]),
    (lambda d, t: mx.nd.SpatialTransformer(d, t, target_shape=(3, 4), transform_type='affine',
                                           sampler_type='bilinear'), [DATA, THETA],
     [0.20244, 0.2553, 0.43076, -0.02146, 0.37396],
     [[0.36, 0.22911, -0.0438, -0.33274, -0.4851], [1.23888, -6.13998, -4.7273, -2.21051,
                                                    0.50169]]),
    (lambda d, r: mx.nd.ROIPooling(d, r, pooled_size=(2, 2), spatial_scale=1.0), [DATA, ROIS],
     [0.43038, 0.92733, 0.58345, 0.92733, 0.95724], [[0, 1, 0, 0, 0], [0, 0, 0, 0, 0]]),
    (lambda f: mx.nd.GridGenerator(f, transform_type='warp'), [FLOW],
     [-1.24269, -0.44765, -0.2478, 1.25663, -0.9112], [[0.66667, 0.3602, -0.27743, -0.66,
                                                        -0.43576]]),
]


@pytest.mark.parametrize('f,arrays,y_ref,g_ref', CASES)
def test_matches_mxnet(f, arrays, y_ref, g_ref):
    y, grads = _run(f, arrays)
    np.testing.assert_allclose(y, y_ref, atol=2e-5)
    for g, ref in zip(grads, g_ref):
        np.testing.assert_allclose(g, ref, atol=5e-5)


def test_finite_differences():
    check_op_backward('GridGenerator', {'transform_type': 'affine', 'target_shape': (3, 4)},
                      [THETA])
    # grid points away from pixel boundaries (bilinear weights are piecewise linear)
    grid = np.random.default_rng(1).uniform(-0.9, 0.9, (2, 2, 3, 3))
    check_op_backward('BilinearSampler', {}, [DATA, grid], rtol=1e-4)
    check_op_backward('ROIPooling', {'pooled_size': (2, 2), 'spatial_scale': 1.0},
                      [DATA, ROIS], grad_nodes=['data'])


def test_errors_name_op_and_argument():
    with pytest.raises(ValueError, match=r"BilinearSampler: .*'grid': expected \(2, 2, H, W\)"):
        mx.nd.BilinearSampler(mx.nd.array(DATA), mx.nd.ones((2, 3, 2, 2)))
    with pytest.raises(ValueError, match=r"ROIPooling: .*'rois': expected \(R, 5\)"):
        mx.nd.ROIPooling(mx.nd.array(DATA), mx.nd.ones((2, 4)), pooled_size=(2, 2),
                         spatial_scale=1.0)


@pytest.mark.parametrize('kw,shape,y_ref,g1_ref,g2_ref', [   # MXNet 1.9.1's values
    (dict(kernel_size=1, max_displacement=2, stride1=1, stride2=1, pad_size=2),
     (2, 25, 7, 8), [0.12126, -0.04012, 0.11184, -0.45096], [-1.49776, 0.19621, 1.27941],
     [-0.15058, -0.65398, -0.34174]),
    (dict(kernel_size=3, max_displacement=2, stride1=2, stride2=2, pad_size=3),
     (2, 9, 4, 4), [0.0, 0.08979, 0.07978, -0.01064], [0.01738, 0.00753, -0.03629],
     [0.03166, -0.03896, -0.02206]),
    (dict(kernel_size=3, max_displacement=1, pad_size=1, is_multiply=False),
     (2, 9, 5, 6), [0.70017, 0.70894, 0.6032, 0.66653], [-0.03, 0.2591, 0.59081],
     [0.00346, -0.13739, -0.23611])])
def test_correlation_matches_mxnet(kw, shape, y_ref, g1_ref, g2_ref):
    rng = np.random.RandomState(0)
    a, b = (mx.nd.array(rng.uniform(-1, 1, (2, 3, 7, 8))) for _ in range(2))
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        out = mx.nd.Correlation(a, b, **kw)
    out.backward(mx.nd.array(np.cos(np.arange(out.size)).reshape(out.shape)))
    assert out.shape == shape
    np.testing.assert_allclose(out.asnumpy().ravel()[100:104], y_ref, atol=2e-5)
    np.testing.assert_allclose(a.grad.asnumpy().ravel()[20:23], g1_ref, atol=2e-5)
    np.testing.assert_allclose(b.grad.asnumpy().ravel()[20:23], g2_ref, atol=2e-5)
    s = mx.sym.Correlation(mx.sym.var('a'), mx.sym.var('b'), **kw)
    assert s.list_outputs() == ['correlation0_output'] or len(s.list_outputs()) == 1
