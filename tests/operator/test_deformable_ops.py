"""mx.nd.contrib deformable convolutions, region pooling and hawkesll: forward and
gradients against MXNet 1.9.1's recorded values (tools/mxnet_deformable_fixtures.py),
gradients by float64 finite differences, shapes through mx.sym, and bad input."""
import json
import pathlib

import numpy as np
import pytest

import mxcy as mx
from mxcy.test_utils import check_op_backward, finite_difference

FILES = pathlib.Path(__file__).resolve().parent / 'mxnet_files'
CASES = json.loads((FILES / 'deformable_ops.json').read_text())
RNG = np.random.default_rng(5)


@pytest.fixture(scope='module')
def recorded():
    with np.load(FILES / 'deformable_ops.npz') as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize('i', range(len(CASES)),
                         ids=[f"{c['op']}-{i}" for i, c in enumerate(CASES)])
def test_matches_mxnet(i, recorded):
    case = CASES[i]
    n_in = sum(1 for k in recorded if k.startswith(f'{i}/in'))
    ins = [mx.nd.array(recorded[f'{i}/in{j}'], dtype=recorded[f'{i}/in{j}'].dtype)
           for j in range(n_in)]
    for j in case['grads']:
        ins[j].attach_grad()
    with mx.autograd.record():
        outs = getattr(mx.nd.contrib, case['op'])(*ins, **case['params'])
    outs = outs if isinstance(outs, list) else [outs]
    for j, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), recorded[f'{i}/out{j}'], rtol=1e-4, atol=1e-5)
    if case['grads']:
        heads = [mx.nd.array(recorded[f'{i}/dy'])] + [mx.nd.zeros(o.shape) for o in outs[1:]]
        mx.autograd.backward(outs, heads)
        for j in case['grads']:
            np.testing.assert_allclose(ins[j].grad.asnumpy(), recorded[f'{i}/grad{j}'],
                                       rtol=1e-4, atol=1e-5, err_msg=f'input {j}')


def _conv_inputs(modulated, dg=2):
    x = RNG.standard_normal((2, 4, 5, 5))
    off = RNG.uniform(-1.3, 1.3, (2, 2 * dg * 9, 3, 3))
    mask = [RNG.uniform(0.2, 1, (2, dg * 9, 3, 3))] if modulated else []
    return [x, off] + mask + [RNG.standard_normal((4, 2, 3, 3)), RNG.standard_normal(4)]


@pytest.mark.parametrize('op', ['_contrib_DeformableConvolution',
                                '_contrib_ModulatedDeformableConvolution'])
def test_deformable_convolution_gradients(op):
    params = dict(kernel=(3, 3), num_filter=4, num_group=2, num_deformable_group=2,
                  pad=(1, 1), stride=(2, 2))
    check_op_backward(op, params, _conv_inputs('Modulated' in op), rtol=1e-4, atol=1e-6)


def test_modulated_with_unit_mask_inside_image_equals_deformable():
    # the two sample alike away from the border (they differ only outside [0, H-1])
    x = RNG.standard_normal((1, 2, 6, 6))
    # offsets that move every tap (oh + i, ow + j) to a point inside [0, 5) x [0, 5)
    base = (np.arange(4)[None, :] + np.arange(3)[:, None]).astype(float)     # (tap, o)
    grid = np.stack([np.broadcast_to(base[:, None, :, None], (3, 3, 4, 4)),
                     np.broadcast_to(base[None, :, None, :], (3, 3, 4, 4))], 2)
    off = (RNG.uniform(0.05, 4.95, grid.shape) - grid).reshape(1, 18, 4, 4)
    w = RNG.standard_normal((3, 2, 3, 3))
    a = mx.nd.contrib.DeformableConvolution(mx.nd.array(x), mx.nd.array(off), mx.nd.array(w),
                                            kernel=(3, 3), num_filter=3, no_bias=True)
    b = mx.nd.contrib.ModulatedDeformableConvolution(
        mx.nd.array(x), mx.nd.array(off), mx.nd.ones((1, 9, 4, 4)), mx.nd.array(w),
        kernel=(3, 3), num_filter=3, no_bias=True)
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)


def test_psroi_gradients():
    data = RNG.standard_normal((1, 8, 6, 6))
    rois = np.array([[0, 0.2, 1, 4, 5], [0, 2, 0, 5, 3]])
    check_op_backward('_contrib_PSROIPooling', dict(spatial_scale=1.0, output_dim=2,
                                                    pooled_size=2), [data, rois],
                      grad_nodes=['data'])
    # inside the image nothing is clamped, so MXNet's trans slope is the true derivative
    params = dict(spatial_scale=1.0, output_dim=2, group_size=2, pooled_size=2,
                  sample_per_part=2, trans_std=0.1)
    trans = RNG.uniform(-0.5, 0.5, (2, 2, 2, 2))
    check_op_backward('_contrib_DeformablePSROIPooling', params,
                      [RNG.standard_normal((1, 8, 9, 9)),
                       np.array([[0, 2, 2, 6, 5], [0, 3, 1, 6, 6]]), trans],
                      grad_nodes=['data', 'trans'], rtol=1e-4, atol=1e-6)


def test_hawkesll_gradient_by_finite_differences():
    n, k, t = 2, 2, 4
    values = [RNG.uniform(0.5, 2, (n, k)), np.array([0.3, 0.6]), np.array([1.5, 0.8]),
              RNG.uniform(0, 1, (n, k)), RNG.uniform(0.1, 1, (n, t))]
    marks = np.array([[0, 1, 1, 0], [1, 1, 0, 0]], 'int32')
    rest = [np.array([4.0, 3.0]), np.array([5.0, 4.0])]
    head = RNG.standard_normal(n)

    def run(arrays):
        nds = [mx.nd.array(v, dtype='float64') for v in arrays]
        nds += [mx.nd.array(marks, dtype='int32')] + [mx.nd.array(v, dtype='float64')
                                                       for v in rest]
        return nds

    def loss():
        return float((mx.nd.contrib.hawkesll(*run(values))[0].asnumpy() * head).sum())
    nds = run(values)
    for a in nds[:3]:
        a.attach_grad()
    with mx.autograd.record():
        ll, _ = mx.nd.contrib.hawkesll(*nds)
    ll.backward(mx.nd.array(head, dtype='float64'))
    for j in range(3):
        np.testing.assert_allclose(nds[j].grad.asnumpy(), finite_difference(loss, values[j]),
                                   rtol=1e-6, atol=1e-8)


def test_symbol_shapes_and_arguments():
    d = mx.sym.Variable('data')
    s = mx.sym.contrib.DeformableConvolution(d, mx.sym.Variable('offset'), kernel=(3, 3),
                                             num_filter=4, no_bias=True, name='dc')
    assert s.list_arguments() == ['data', 'offset', 'dc_weight']
    args, outs, _ = s.infer_shape(data=(1, 8, 6, 6))
    assert args == [(1, 8, 6, 6), (1, 18, 4, 4), (4, 8, 3, 3)] and outs == [(1, 4, 4, 4)]
    m = mx.sym.contrib.ModulatedDeformableConvolution(d, kernel=(3, 3), num_filter=4,
                                                      num_deformable_group=2, stride=(2, 2),
                                                      name='m')
    assert m.list_arguments() == ['data', 'm_offset', 'm_mask', 'm_weight', 'm_bias']
    assert m.infer_shape(data=(1, 8, 7, 7))[0][1:3] == [(1, 36, 3, 3), (1, 18, 3, 3)]
    p = mx.sym.contrib.DeformablePSROIPooling(d, mx.sym.Variable('rois'), spatial_scale=1,
                                              output_dim=2, group_size=2, pooled_size=2,
                                              no_trans=True)
    assert p.list_arguments() == ['data', 'rois'] and len(p.list_outputs()) == 1
    h = mx.sym.contrib.hawkesll(*[mx.sym.Variable(c) for c in 'abcdefgh'], name='h')
    assert h.list_outputs() == ['h_output', 'h_out_state']
    r = mx.sym.contrib.RROIAlign(d, mx.sym.Variable('rois'), spatial_scale=1,
                                 pooled_size=(2, 3))
    assert r.infer_shape(data=(1, 8, 6, 6), rois=(3, 6))[1] == [(3, 8, 2, 3)]


def test_bad_input_names_operator_and_argument():
    x = mx.nd.zeros((1, 4, 5, 5))
    with pytest.raises(ValueError, match=r"DeformableConvolution: .*'offset': expected "
                                         r"\(1, 18, 3, 3\), given \(1, 18, 4, 4\)"):
        mx.nd.contrib.DeformableConvolution(x, mx.nd.zeros((1, 18, 4, 4)),
                                            mx.nd.zeros((2, 4, 3, 3)), kernel=(3, 3),
                                            num_filter=2, no_bias=True)
    with pytest.raises(ValueError, match=r"ModulatedDeformableConvolution: .*'data'.*"
                                         r"im2col_step=2"):
        mx.nd.contrib.ModulatedDeformableConvolution(
            mx.nd.zeros((3, 4, 5, 5)), mx.nd.zeros((3, 18, 3, 3)), mx.nd.zeros((3, 9, 3, 3)),
            mx.nd.zeros((2, 4, 3, 3)), kernel=(3, 3), num_filter=2, no_bias=True,
            im2col_step=2)
    with pytest.raises(ValueError, match=r"PSROIPooling: .*'data': expected \(N, 8, H, W\), "
                                         r"given \(1, 4, 5, 5\)"):
        mx.nd.contrib.PSROIPooling(x, mx.nd.zeros((1, 5)), spatial_scale=1, output_dim=2,
                                   pooled_size=2)
    with pytest.raises(ValueError, match=r"RROIAlign: .*'rois': expected \(num_rois, 6\), "
                                         r"given \(1, 5\)"):
        mx.nd.contrib.RROIAlign(x, mx.nd.zeros((1, 5)), spatial_scale=1, pooled_size=(2, 2))
    f = mx.nd.ones((1, 2))
    with pytest.raises(TypeError, match=r"hawkesll: argument 'marks' has dtype float32, "
                                        r"expected int32"):
        mx.nd.contrib.hawkesll(f, mx.nd.ones(2), mx.nd.ones(2), f, f, f, mx.nd.ones(1),
                               mx.nd.ones(1))
    with pytest.raises(ValueError, match=r"hawkesll: marks must lie in \[0, 2\)"):
        mx.nd.contrib.hawkesll(f, mx.nd.ones(2), mx.nd.ones(2), f, f,
                               mx.nd.array([[0, 2]], dtype='int32'), mx.nd.array([2]),
                               mx.nd.array([5]))[0].asnumpy()
