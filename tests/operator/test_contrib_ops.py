"""mx.nd.contrib / mx.sym.contrib: the contrib operators against NumPy (values checked
once against MXNet 1.9.1 where noted), gradients by finite differences, control flow."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(11)


def test_checks_and_allclose():
    x = mx.nd.array([np.nan, np.inf, 1.0])
    assert mx.nd.contrib.isnan(x).asnumpy().tolist() == [1, 0, 0]
    assert mx.nd.contrib.isinf(x).asnumpy().tolist() == [0, 1, 0]
    assert mx.nd.contrib.isfinite(x).asnumpy().tolist() == [0, 0, 1]
    a = mx.nd.ones((2, 3))
    assert mx.nd.contrib.allclose(a, a + 1e-9).asnumpy() == 1
    assert mx.nd.contrib.allclose(a, a + 1).shape == (1,)      # MXNet's (golden-checked)


def test_box_iou_matches_mxnet():
    iou = mx.nd.contrib.box_iou(mx.nd.array([[0, 0, 2, 2]]),
                                mx.nd.array([[1, 1, 3, 3], [0, 0, 1, 1]]))
    np.testing.assert_allclose(iou.asnumpy(), [[1 / 7, 0.25]], rtol=1e-6)   # MXNet's values
    center = mx.nd.contrib.box_iou(mx.nd.array([[1, 1, 2, 2]]), mx.nd.array([[1, 1, 2, 2]]),
                                   format='center')
    assert center.asnumpy().tolist() == [[1.0]]


def test_index_ops():
    ia = mx.nd.contrib.index_array(mx.nd.ones((2, 2)), axes=(1,))
    assert ia.asnumpy().tolist() == [[[0], [1]], [[0], [1]]] and ia.dtype == np.int64
    x = mx.nd.ones((2, 3))
    assert mx.nd.contrib.arange_like(x, start=1, axis=1).asnumpy().tolist() == [1, 2, 3]
    assert mx.nd.contrib.arange_like(x, repeat=2).asnumpy().ravel().tolist() == \
        [0, 0, 1, 1, 2, 2]
    old, new = RNG.standard_normal((4, 2)), RNG.standard_normal((2, 2))
    idx = np.array([3, 1])
    ref = old.copy()
    ref[idx] = new
    check_op_forward('_contrib_index_copy', {}, [old, idx, new], [ref])
    check_op_backward('_contrib_index_copy', {}, [old, idx, new],
                      grad_nodes=['old_tensor', 'new_tensor'])
    with pytest.raises(ValueError, match=r"index_copy: .*'new_tensor': expected \(2, 2\)"):
        mx.nd.contrib.index_copy(mx.nd.zeros((4, 2)), mx.nd.array(idx), mx.nd.zeros((3, 2)))


@pytest.mark.parametrize('name,params,ref', [
    ('div_sqrt_dim', {}, lambda x: x / 2.0),
    ('quadratic', {'a': 2.0, 'b': -1.0, 'c': 0.5}, lambda x: 2 * x * x - x + 0.5),
    ('gradientmultiplier', {'scalar': 3.0}, lambda x: x)])
def test_elementwise_contrib(name, params, ref):
    x = RNG.standard_normal((3, 4))
    check_op_forward('_contrib_' + name, params, [x], [ref(x)])
    if name != 'gradientmultiplier':
        check_op_backward('_contrib_' + name, params, [x])


def test_straight_through_and_multiplier_gradients():
    x = mx.nd.array([-1.6, 0.4, 2.5])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.round_ste(x) * 2 + mx.nd.contrib.gradientmultiplier(x, scalar=3.0)
    y.backward()
    assert x.grad.asnumpy().tolist() == [5, 5, 5]
    assert mx.nd.contrib.round_ste(x).asnumpy().tolist() == [-2, 0, 3]
    assert mx.nd.contrib.sign_ste(x).asnumpy().tolist() == [-1, 1, 1]


def test_control_flow_and_boolean_mask():
    x = mx.nd.array([[1, 2, 3], [4, 5, 6.]])
    out, states = mx.nd.contrib.foreach(lambda d, s: (d * 2, [s[0] + d]), x,
                                        [mx.nd.zeros(3)])
    assert out.asnumpy().tolist() == [[2, 4, 6], [8, 10, 12]]
    assert states[0].asnumpy().tolist() == [5, 7, 9]
    outs, i = mx.nd.contrib.while_loop(lambda i: i < 3, lambda i: (i * 10, i + 1),
                                       mx.nd.array([0]), max_iterations=5)
    assert outs[0].asnumpy().ravel().tolist() == [0, 10, 20, 0, 0] and i.asscalar() == 3
    assert mx.nd.contrib.cond(mx.nd.array([0]), lambda: 1, lambda: 2) == 2
    x.attach_grad()
    with mx.autograd.record():
        m = mx.nd.contrib.boolean_mask(x, mx.nd.array([0, 1]))
    m.backward()
    assert m.asnumpy().tolist() == [[4, 5, 6]]
    assert x.grad.asnumpy().tolist() == [[0, 0, 0], [1, 1, 1]]


def test_rand_zipfian_and_symbols():
    sampled, exp_true, exp_sampled = mx.nd.contrib.rand_zipfian(mx.nd.array([0, 5]), 6, 10)
    assert sampled.shape == (6,) and 0 <= sampled.asnumpy().min()
    assert sampled.asnumpy().max() < 10
    p0 = (np.log(2) - np.log(1)) / np.log(11) * 6
    np.testing.assert_allclose(exp_true.asnumpy()[0], p0, rtol=1e-6)
    s = mx.sym.contrib.quadratic(mx.sym.var('x'), a=1.0)
    assert s.eval(x=mx.nd.array([3.0]))[0].asscalar() == 9.0


def test_attention_and_resize_match_mxnet():
    rng = np.random.RandomState(0)
    qkv = rng.uniform(-1, 1, (3, 2, 12))
    att = rng.uniform(0, 1, (4, 3, 3))
    q, kv = rng.uniform(-1, 1, (3, 2, 4)), rng.uniform(-1, 1, (5, 2, 8))
    att2 = rng.uniform(0, 1, (4, 3, 5))
    x = rng.uniform(-1, 1, (1, 2, 5, 7))
    c = mx.nd.contrib
    cases = [  # MXNet 1.9.1's first values for these inputs (checked once against it)
        (c.interleaved_matmul_selfatt_qk(mx.nd.array(qkv), heads=2),
         [0.0415061, 0.22140601, -0.02767828, -0.09318906]),
        (c.interleaved_matmul_selfatt_valatt(mx.nd.array(qkv), mx.nd.array(att), heads=2),
         [0.59936166, -0.40661287, 0.13330722, -0.31492406]),
        (c.interleaved_matmul_encdec_qk(mx.nd.array(q), mx.nd.array(kv), heads=2),
         [0.02719945, 0.47100422, 0.0831811, 0.41818744]),
        (c.interleaved_matmul_encdec_valatt(mx.nd.array(kv), mx.nd.array(att2), heads=2),
         [-0.27773845, -0.13092865, -0.6505122, -0.11262856]),
        (c.AdaptiveAvgPooling2D(mx.nd.array(x), output_size=(2, 3)),
         [0.22339414, 0.13508971, -0.06505731, 0.08818287]),
        (c.BilinearResize2D(mx.nd.array(x), height=3, width=4),
         [-0.3236821, -0.5365968, 0.8827554, 0.26089588])]
    for got, ref in cases:
        np.testing.assert_allclose(got.asnumpy().ravel()[:4], ref, rtol=1e-5, atol=1e-7)
    assert c.BilinearResize2D(mx.nd.array(x), scale_height=2., scale_width=2.).shape == \
        (1, 2, 10, 14)
    check_op_backward('_contrib_interleaved_matmul_selfatt_qk', {'heads': 2}, [qkv])
    check_op_backward('_contrib_interleaved_matmul_selfatt_valatt', {'heads': 2}, [qkv, att])
    check_op_backward('_contrib_interleaved_matmul_encdec_qk', {'heads': 2}, [q, kv])
    check_op_backward('_contrib_interleaved_matmul_encdec_valatt', {'heads': 2}, [kv, att2])
    check_op_backward('_contrib_AdaptiveAvgPooling2D', {'output_size': (2, 3)}, [x])
    check_op_backward('_contrib_BilinearResize2D', {'height': 3, 'width': 9}, [x])


def test_multibox_prior_and_bipartite_matching_match_mxnet():
    c = mx.nd.contrib
    anchors = c.MultiBoxPrior(mx.nd.ones((1, 3, 2, 2)), sizes=(0.5, 0.25), ratios=(1, 2))
    assert anchors.shape == (1, 12, 4)
    np.testing.assert_allclose(anchors.asnumpy()[0, 2],            # MXNet 1.9.1's values
                               [-0.10355338, 0.07322331, 0.6035534, 0.4267767], rtol=1e-6)
    clipped = c.MultiBoxPrior(mx.nd.ones((1, 3, 2, 4)), sizes=(0.5,), ratios=(1, 2),
                              clip=True, steps=(0.3, 0.2), offsets=(0.4, 0.6))
    np.testing.assert_allclose(clipped.asnumpy()[0, 3], [0.14322333, 0, 0.4967767,
                                                         0.2967767], rtol=1e-6)
    d = mx.nd.array([[0.6, 0.2], [0.1, 0.8], [0.5, 0.5]])
    rows, cols = c.bipartite_matching(d, threshold=0.3)
    assert rows.asnumpy().tolist() == [0, 1, -1] and cols.asnumpy().tolist() == [0, 1]
    rows, cols = c.bipartite_matching(d, threshold=0.3, is_ascend=True)
    assert rows.asnumpy().tolist() == [1, 0, -1] and cols.asnumpy().tolist() == [1, 0]
    rows, _ = c.bipartite_matching(d, threshold=0.3, topk=1)
    assert rows.asnumpy().tolist() == [-1, 1, -1]


def test_box_nms_matches_mxnet():
    rows = np.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                     [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.9, 0.5, 0.5, 0.8, 0.8],
                     [0, 0.05, 0, 0, 1, 1]])
    x = mx.nd.array(rows)
    kw = dict(overlap_thresh=0.1, coord_start=2, score_index=1)
    out = mx.nd.contrib.box_nms(x, valid_thresh=0.1, id_index=0, **kw).asnumpy()
    np.testing.assert_allclose(out[:3], rows[[3, 0, 1]], rtol=1e-6)       # MXNet's result
    assert (out[3:] == -1).all()
    out = mx.nd.contrib.box_nms(x, id_index=0, force_suppress=True, topk=2, **kw).asnumpy()
    assert (out[2:] == -1).all() and out[1, 1] == np.float32(0.5)
    out = mx.nd.contrib.box_nms(x, id_index=-1, out_format='center', **kw).asnumpy()
    np.testing.assert_allclose(out[0, 2:], [0.65, 0.65, 0.3, 0.3], rtol=1e-6)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.box_non_maximum_suppression(x, id_index=0, **kw)
    y.backward(mx.nd.ones_like(y) * 2)
    assert x.grad.asnumpy()[:, 0].tolist() == [2, 2, 0, 2, 2]
    check_op_backward('_contrib_box_nms', dict(id_index=-1, out_format='center', **kw),
                      [rows])


@pytest.mark.parametrize('kw,y_ref,g_ref,g_sum', [   # MXNet 1.9.1's values (checked once)
    (dict(sample_ratio=2), [-0.19159, 0.2803, -0.1246, -0.10385],
     [0.64639, -0.0327, -0.0251, 0.0], 0.1169),
    (dict(sample_ratio=2, aligned=True), [0.4463, 0.0787, -0.50742, -0.16481],
     [-0.03319, -0.12948, 0.05894, 0.03581], -0.4447),
    (dict(sample_ratio=1, position_sensitive=True), [-0.143, 0.20503, -0.04444, -0.23788],
     [-0.1455, 0.0, 0.0, 0.0], -0.413)])
def test_roi_align_matches_mxnet(kw, y_ref, g_ref, g_sum):
    rng = np.random.RandomState(0)
    data = mx.nd.array(rng.uniform(-1, 1, (2, 4, 6, 7)))
    rois = mx.nd.array([[0, 0.5, 1.0, 4.2, 3.7], [1, 2, 0, 6.5, 5.5], [0, -1, -1, 2, 2]])
    data.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=0.9, **kw)
    y.backward(mx.nd.array(np.cos(np.arange(y.size)).reshape(y.shape)))
    np.testing.assert_allclose(y.asnumpy().ravel()[:4], y_ref, atol=2e-5)
    np.testing.assert_allclose(data.grad.asnumpy().ravel()[:4], g_ref, atol=2e-5)
    assert abs(data.grad.asnumpy().sum() - g_sum) < 1e-3


def test_box_encode_decode_match_mxnet():
    anchors = np.array([[[0.1, 0.1, 0.5, 0.6], [0.2, 0.3, 0.9, 0.8], [0.0, 0.0, 1.0, 1.0]]])
    refs = np.array([[[0.15, 0.1, 0.55, 0.5], [0.3, 0.2, 0.7, 0.9]]])
    means, stds = np.array([0, 0.1, 0, 0]), np.array([0.1, 0.1, 0.2, 0.2])
    t, mask = mx.nd.contrib.box_encode(mx.nd.array([[1, -1, 1]]), mx.nd.array([[1, 0, 0]]),
                                       mx.nd.array(anchors), mx.nd.array(refs),
                                       mx.nd.array(means), mx.nd.array(stds))
    a, g = anchors[0, 0], refs[0, 1]
    ac, gc = (a[:2] + a[2:]) / 2, (g[:2] + g[2:]) / 2
    aw, gw = a[2:] - a[:2], g[2:] - g[:2]
    ref = (np.r_[(gc - ac) / aw, np.log(gw / aw)] - means) / stds
    np.testing.assert_allclose(t.asnumpy()[0, 0], ref, rtol=1e-5, atol=1e-5)
    assert mask.asnumpy()[0].tolist() == [[1] * 4, [0] * 4, [1] * 4]
    assert t.asnumpy()[0, 1].tolist() == [0, 0, 0, 0]
    offsets = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (2, 3, 4)))
    boxes = mx.nd.contrib.box_decode(offsets, mx.nd.array(anchors), std0=0.1, std1=0.2,
                                     std2=0.3, std3=0.4, format='corner')
    # decoding an encoded target gives the reference back
    enc = mx.nd.array((ref * stds + means)[None, None].repeat(3, axis=1))
    dec = mx.nd.contrib.box_decode(enc, mx.nd.array(anchors[:, :1].repeat(3, axis=1)),
                                   format='corner')
    np.testing.assert_allclose(dec.asnumpy()[0, 0], g, rtol=1e-5)
    assert boxes.shape == (2, 3, 4)


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64', 'int32'])
def test_quadratic_written_into_the_output_and_in_place(dtype):
    # float dtypes: Horner's rule straight into the output; int32 through the NumPy op
    x = np.random.default_rng(6).uniform(-4, 4, (3, 257)).astype(dtype)
    want = (0.5 * x.astype(np.float64) ** 2 - x + 2.0).astype(dtype)
    tol = 2e-3 if dtype == 'float16' else 1e-6
    a = mx.nd.array(x, dtype=dtype)
    got = mx.nd.contrib.quadratic(a, a=0.5, b=-1.0, c=2.0)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=tol, atol=tol)
    mx.nd.contrib.quadratic(a, a=0.5, b=-1.0, c=2.0, out=a)            # in place
    np.testing.assert_allclose(a.asnumpy(), want, rtol=tol, atol=tol)
