"""box_nms, box_iou, box_encode and MultiBoxDetection at the weak points of their C kernels
(mxcy/_detect.pyx): batch > 1, topk, force_suppress, background_id, id_index -1, float64,
ties in score, no valid box, everything suppressed, empty and zero-area boxes, extra
leading axes; replayed against MXNet 1.9.1's outputs (tools/mxnet_detect_weak_fixtures.py
writes mxnet_files/detect_weak.npz); then cases MXNet cannot record (0 boxes, NaN)."""
import json
import os

import numpy as np
import pytest

import mxcy as mx

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), 'mxnet_files', 'detect_weak.npz'))
CASES = sorted({int(k.split('/')[0]) for k in FIXTURE.files})


def _case(k):
    op = str(FIXTURE[f'{k}/op'])
    params = json.loads(str(FIXTURE[f'{k}/params']))
    ins = [FIXTURE[f'{k}/in{i}'] for i in range(6) if f'{k}/in{i}' in FIXTURE.files]
    outs = [FIXTURE[f'{k}/out{i}'] for i in range(3) if f'{k}/out{i}' in FIXTURE.files]
    return op, params, str(FIXTURE[f'{k}/dtype']), ins, outs


def test_fixture_covers_the_weak_points():
    ops = [_case(k)[0] for k in CASES]
    assert {'box_nms', 'box_iou', 'box_encode', 'MultiBoxDetection'} <= set(ops)
    assert ops.count('box_nms') >= 12


@pytest.mark.parametrize('k', CASES)
def test_matches_mxnet(k):
    op, params, dtype, ins, refs = _case(k)
    outs = getattr(mx.nd.contrib, op)(*[mx.nd.array(x, dtype=dtype) for x in ins], **params)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    assert len(outs) == len(refs)
    for got, ref in zip(outs, refs):
        got = got.asnumpy()
        assert got.dtype == np.dtype(dtype) and got.shape == ref.shape
        if op in ('box_nms', 'MultiBoxDetection'):
            # which rows survive, their order and ids are exact
            np.testing.assert_array_equal(got[..., :2], ref[..., :2], err_msg=f'{op} {params}')
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6, err_msg=f'{op} {params}')


def _nms(x, **kw):
    kw = dict(dict(overlap_thresh=0.5, coord_start=2, score_index=1, id_index=0), **kw)
    return mx.nd.contrib.box_nms(mx.nd.array(x, dtype=x.dtype), **kw).asnumpy()


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_box_nms_zero_boxes_and_dtypes(dtype):
    assert _nms(np.zeros((2, 0, 6), dtype)).shape == (2, 0, 6)
    x = np.array([[[0, .9, 0, 0, 1, 1], [0, .8, 0, 0, 1, 1], [1, .7, 0, 0, 1, 1]]], dtype)
    out = _nms(x)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out[0, :, :2], np.array([[0, .9], [1, .7], [-1, -1]],
                                                          dtype))
    np.testing.assert_array_equal(_nms(x, force_suppress=True)[0, 1:], -1)


def test_box_nms_nan_box_suppresses_nothing():
    # a NaN coordinate makes every IoU with that box 0 (NumPy's NaN-propagating min/max)
    x = np.array([[[0, .9, np.nan, 0, 1, 1], [0, .8, 0, 0, 1, 1], [0, .7, 0, 0, 1, 1]]],
                 np.float32)
    out = _nms(x)
    assert out[0, :, 1].tolist() == pytest.approx([.9, .8, -1])


def test_box_iou_zero_boxes():
    out = mx.nd.contrib.box_iou(mx.nd.zeros((0, 4)), mx.nd.ones((3, 4))).asnumpy()
    assert out.shape == (0, 3)
    out = mx.nd.contrib.box_iou(mx.nd.zeros((2, 4)), mx.nd.zeros((2, 0, 4))).asnumpy()
    assert out.shape == (2, 2, 0)


def test_box_encode_refs_without_boxes_raises():
    z = mx.nd.zeros
    with pytest.raises(ValueError, match=r"box_encode: refs has no boxes"):
        mx.nd.contrib.box_encode(z((1, 2)), z((1, 2)), z((1, 2, 4)), z((1, 0, 4)), z((4,)),
                                 mx.nd.ones((4,)))[0].asnumpy()


@pytest.mark.parametrize('k', [1, 5, 37, 100, 200])
def test_proposal_partial_sort_equals_stable_argsort(k):
    from mxcy.operator.detection_ops import first_sorted
    rng = np.random.RandomState(k)
    key = rng.choice([-1.0, -0.5, 0.0, -0.0, 0.25, np.nan], 150).astype(np.float32)
    np.testing.assert_array_equal(first_sorted(key, k), np.argsort(key, kind='stable')[:k])
    key = rng.uniform(-1, 1, 150)
    np.testing.assert_array_equal(first_sorted(key, k), np.argsort(key, kind='stable')[:k])


def test_multibox_prior_cached_anchors_per_shape_dtype_and_req():
    kw = dict(sizes=(0.5, 0.25), ratios=(1, 2), clip=True)
    from mxcy.operator import get_op
    spec = get_op('_contrib_MultiBoxPrior')
    p = spec.params.parse(spec.name, kw)
    for shape in ((1, 3, 2, 3), (2, 1, 3, 2), (1, 3, 2, 3)):
        for dtype in ('float32', 'float64'):
            got = mx.nd.contrib.MultiBoxPrior(mx.nd.zeros(shape, dtype=dtype), **kw)
            want = spec._anchors(p, *shape[2:])
            assert got.dtype == np.dtype(dtype) and got.shape == want.shape
            np.testing.assert_array_equal(got.asnumpy(), want.astype(dtype))
    x = mx.nd.zeros((1, 3, 2, 3))
    x.attach_grad()
    with mx.autograd.record():      # recorded: no gradient flows, output as before
        y = mx.nd.contrib.MultiBoxPrior(x, **kw)
    out = mx.nd.ones(y.shape)
    mx.nd.contrib.MultiBoxPrior(x, out=out, **kw)
    np.testing.assert_array_equal(out.asnumpy(), y.asnumpy())
