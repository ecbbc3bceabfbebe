"""mx.nd.contrib / mx.sym.contrib detection operators (MultiBoxTarget, MultiBoxDetection,
Proposal, MultiProposal) against outputs recorded from MXNet 1.9.1
(tools/mxnet_detection_fixtures.py writes mxnet_files/detection.npz); no gradient;
bad shapes name the operator, argument, expected and given shapes."""
import json
import os

import numpy as np
import pytest

import mxcy as mx

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), 'mxnet_files', 'detection.npz'))
CASES = sorted({int(k.split('/')[0]) for k in FIXTURE.files})


def _case(k):
    op = str(FIXTURE[f'{k}/op'])
    params = json.loads(str(FIXTURE[f'{k}/params']))
    ins = [FIXTURE[f'{k}/in{i}'] for i in range(3)]
    outs = [FIXTURE[f'{k}/out{i}'] for i in range(3) if f'{k}/out{i}' in FIXTURE.files]
    return op, params, ins, outs


def test_fixture_covers_every_operator():
    ops = {_case(k)[0] for k in CASES}
    assert ops == {'MultiBoxTarget', 'MultiBoxDetection', 'Proposal', 'MultiProposal'}


@pytest.mark.parametrize('k', CASES)
def test_matches_mxnet(k):
    op, params, ins, refs = _case(k)
    outs = getattr(mx.nd.contrib, op)(*[mx.nd.array(x) for x in ins], **params)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    assert len(outs) == len(refs)
    for got, ref in zip(outs, refs):
        got = got.asnumpy()
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5, err_msg=f'{op} {params}')


@pytest.mark.parametrize('k', [k for k in CASES if _case(k)[0] == 'MultiBoxDetection'])
def test_detection_ids_and_order_exact(k):
    """Class ids (incl. -1 for suppressed and padding rows) and the row order are exact."""
    op, params, ins, (ref,) = _case(k)
    got = mx.nd.contrib.MultiBoxDetection(*[mx.nd.array(x) for x in ins], **params)
    np.testing.assert_array_equal(got.asnumpy()[..., :2], ref[..., :2])


def test_detection_nms_suppresses_at_equal_iou():
    # recorded from MXNet 1.9.1: IoU == nms_threshold suppresses (>=), ties keep order
    anchors = mx.nd.array([[[0, 0, .5, .5]] * 3])
    prob = mx.nd.array([[[0.1, 0.2, 0.3], [0.9, 0.8, 0.7]]])
    out = mx.nd.contrib.MultiBoxDetection(prob, mx.nd.zeros((1, 12)), anchors,
                                          nms_threshold=1.0).asnumpy()
    assert out[0, :, 0].tolist() == [0, -1, -1]
    np.testing.assert_allclose(out[0, :, 1], [0.9, 0.8, 0.7], rtol=1e-6)
    tied = mx.nd.array([[[0.1, 0.2, 0.3], [0.5, 0.5, 0.5]]])
    loc = mx.nd.array([[0, 0, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0]])
    out = mx.nd.contrib.MultiBoxDetection(tied, loc, anchors).asnumpy()
    np.testing.assert_allclose(out[0], [[0, .5, 0, 0, .5, .5], [-1, .5, .05, .05, .55, .55],
                                        [0, .5, .1, .1, .6, .6]], rtol=1e-5, atol=1e-6)


def test_target_hand_case():
    # recorded from MXNet 1.9.1; the third label overlaps no anchor and matches nothing
    anchors = mx.nd.array([[[0, 0, .5, .5], [.25, .25, .75, .75], [.5, .5, 1, 1],
                            [0, .5, .5, 1], [.1, .1, .3, .3]]])
    label = mx.nd.array([[[1, .05, .05, .45, .5], [0, .5, .45, .9, .95], [2, 2, 2, 3, 3]]])
    cls = mx.nd.array(np.log([[[.7922, .1785, .4701, .8223, .6785],
                               [.0511, .3093, .1518, .0789, .1581],
                               [.1568, .5122, .3781, .0988, .1634]]]))
    loc, mask, target = mx.nd.contrib.MultiBoxTarget(anchors, label, cls,
                                                     negative_mining_ratio=1, ignore_label=-2)
    assert target.asnumpy().tolist() == [[2, 0, 1, -2, 0]]
    assert mask.asnumpy().reshape(5, 4)[:, 0].tolist() == [1, 0, 1, 0, 0]
    np.testing.assert_allclose(loc.asnumpy().reshape(5, 4)[[0, 2]],
                               [[0, .5, -1.115718, -.5268027], [-1, -1, -1.115718, 0]],
                               rtol=1e-5, atol=1e-6)


def test_symbol_path_and_names():
    k = next(k for k in CASES if _case(k)[0] == 'MultiProposal')
    op, params, ins, refs = _case(k)
    names = ['cls_prob', 'bbox_pred', 'im_info']
    sym = mx.sym.contrib.MultiProposal(*[mx.sym.var(n) for n in names], **params)
    assert sym.list_outputs() == ['multiproposal0_output', 'multiproposal0_score']
    _, out_shapes, _ = sym.infer_shape(**{n: x.shape for n, x in zip(names, ins)})
    assert out_shapes == [r.shape for r in refs]
    exe = sym.bind(mx.cpu(), {n: mx.nd.array(x) for n, x in zip(names, ins)})
    for got, ref in zip(exe.forward(), refs):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    target = mx.sym.contrib.MultiBoxTarget(mx.sym.var('a'), mx.sym.var('l'), mx.sym.var('c'))
    assert target.list_outputs() == ['multiboxtarget0_loc_target', 'multiboxtarget0_loc_mask',
                                     'multiboxtarget0_cls_target']
    assert mx.sym.contrib.Proposal(mx.sym.var('a'), mx.sym.var('b'),
                                   mx.sym.var('c')).list_outputs() == ['proposal0_output']


def test_no_gradient():
    k = next(k for k in CASES if _case(k)[0] == 'MultiBoxDetection')
    _, params, ins, _ = _case(k)
    xs = [mx.nd.array(x) for x in ins]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.MultiBoxDetection(*xs, **params)
        loss = (y * y).sum() + (xs[0] * 2).sum()
    loss.backward()
    assert float(np.abs(xs[1].grad.asnumpy()).sum()) == 0
    assert float(np.abs(xs[2].grad.asnumpy()).sum()) == 0
    assert np.all(xs[0].grad.asnumpy() == 2)      # only through the other branch


def test_bad_inputs_name_operator_argument_and_shapes():
    c = mx.nd.contrib
    with pytest.raises(ValueError, match=r"MultiBoxTarget: .*'anchor': expected \(1, "
                                         r"num_anchors, 4\).*given \(2, 5, 4\)"):
        c.MultiBoxTarget(mx.nd.zeros((2, 5, 4)), mx.nd.zeros((2, 3, 5)),
                         mx.nd.zeros((2, 3, 5)))
    with pytest.raises(ValueError, match=r"MultiBoxDetection: .*'loc_pred': expected "
                                         r"\(2, 20\), given \(2, 16\)"):
        c.MultiBoxDetection(mx.nd.zeros((2, 3, 5)), mx.nd.zeros((2, 16)),
                            mx.nd.zeros((1, 5, 4)))
    with pytest.raises(ValueError, match=r"Proposal: .*'cls_prob'.*one image.*"
                                         r"given \(2, 24, 3, 4\)"):
        c.Proposal(mx.nd.zeros((2, 24, 3, 4)), mx.nd.zeros((2, 48, 3, 4)),
                   mx.nd.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"MultiProposal: .*'cls_prob': expected "
                                         r"\(batch, 2 \* 12 anchors"):
        c.MultiProposal(mx.nd.zeros((2, 10, 3, 4)), mx.nd.zeros((2, 48, 3, 4)),
                        mx.nd.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"MultiBoxDetection: parameter 'variances' "
                                         r"expects 4 positive numbers, got \(0.1, 0.2\)"):
        c.MultiBoxDetection(mx.nd.zeros((1, 3, 5)), mx.nd.zeros((1, 20)),
                            mx.nd.zeros((1, 5, 4)), variances=(0.1, 0.2))
