#!/usr/bin/env python3
"""Write what MXNet 1.9.1 computes for the deformable / region-pooling / Hawkes contrib
operators, for mxcy's tests.

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_deformable_fixtures.py

tests/operator/mxnet_files/ gets ``deformable_ops.json`` (per case: operator, parameters,
input names and which inputs have gradients) and ``deformable_ops.npz`` (per case ``<i>/in<j>``
inputs, ``<i>/out<j>`` outputs, ``<i>/dy`` the head gradient of output 0 and ``<i>/grad<j>``
MXNet's input gradients). Inputs come from fixed seeds, so a rerun writes the same files.
ModulatedDeformableConvolution and RROIAlign are forward only: MXNet's CPU build has no
backward for them ("only implemented in GPU"; RROIAlign declares no gradient).
"""
import io
import json
import os
import zipfile

os.environ['MXNET_SUBGRAPH_BACKEND'] = 'NONE'
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'operator',
                   'mxnet_files')


def cases():
    rng = np.random.RandomState(0)
    f4 = lambda *shape, scale=1.0: (rng.randn(*shape) * scale).astype('float32')
    conv = dict(kernel=(3, 3), num_filter=6, num_group=2, num_deformable_group=2,
                stride=(1, 2), pad=(1, 1), dilate=(2, 1))
    x, off, w, b = f4(2, 4, 5, 6), f4(2, 36, 3, 3, scale=1.5), f4(6, 2, 3, 3), f4(6)
    yield 'DeformableConvolution', [x, off, w, b], conv, [0, 1, 2, 3]
    yield ('DeformableConvolution', [f4(1, 3, 4, 4), f4(1, 18, 4, 4, scale=2.0),
                                     f4(2, 3, 3, 3)],
           dict(kernel=(3, 3), num_filter=2, pad=(1, 1), no_bias=True), [0, 1, 2])
    mask = rng.uniform(0, 1, (2, 18, 3, 3)).astype('float32')
    yield ('ModulatedDeformableConvolution', [x, off, mask, w, b],
           dict(conv, im2col_step=1), [])
    feat = f4(2, 18, 7, 8)
    rois = np.array([[0, 1, 1, 5, 4], [1, -2, 0.4, 9.6, 8], [1, 3.5, 2.5, 3.5, 2.5],
                     [0, 0, 0, 15, 12]], 'float32')
    yield 'PSROIPooling', [feat, rois], dict(spatial_scale=1.0, output_dim=2,
                                             pooled_size=3), [0]
    yield 'PSROIPooling', [feat, rois], dict(spatial_scale=0.6, output_dim=2, pooled_size=2,
                                             group_size=3), [0]
    yield ('DeformablePSROIPooling', [feat, rois, f4(4, 2, 2, 2, scale=0.7)],
           dict(spatial_scale=1.0, output_dim=2, group_size=3, pooled_size=3, part_size=2,
                sample_per_part=2, trans_std=0.3), [0, 2])
    yield ('DeformablePSROIPooling', [feat, rois, f4(4, 4, 3, 3, scale=0.7)],
           dict(spatial_scale=0.7, output_dim=2, group_size=3, pooled_size=3,
                sample_per_part=3, trans_std=0.2), [0, 2])
    yield ('DeformablePSROIPooling', [feat, rois],
           dict(spatial_scale=1.0, output_dim=2, group_size=3, pooled_size=2,
                sample_per_part=2, no_trans=True), [0])
    rrois = np.array([[0, 3, 3, 4, 2, 30], [1, 4.2, 2.7, 6, 3.3, -70], [0, 1, 6, 0.5, 9, 125],
                      [1, 7.5, 0.3, 5, 5, 0]], 'float32')
    yield 'RROIAlign', [feat, rrois], dict(pooled_size=(2, 3), spatial_scale=1.0), []
    yield 'RROIAlign', [feat, rrois], dict(pooled_size=(3, 2), spatial_scale=0.8,
                                           sampling_ratio=2), []
    n, k, t = 3, 3, 5
    hawkes = [rng.uniform(0.5, 2, (n, k)).astype('float32'),
              np.array([0.2, 0.5, 0.4], 'float32'), np.array([1.0, 2.0, 0.7], 'float32'),
              rng.uniform(0, 1, (n, k)).astype('float32'),
              rng.uniform(0.1, 1, (n, t)).astype('float32'),
              rng.randint(0, k, (n, t)).astype('int32'), np.array([3, 5, 0], 'float32'),
              np.array([5.0, 6.0, 2.0], 'float32')]
    yield 'hawkesll', hawkes, {}, [0, 1, 2, 3]


def run(i, op, inputs, params, grads, arrays):
    rng = np.random.RandomState(100 + i)
    nds = [mx.nd.array(v, dtype=v.dtype) for v in inputs]
    for j in grads:
        nds[j].attach_grad()
    with mx.autograd.record():
        outs = getattr(mx.nd.contrib, op)(*nds, **params)
    outs = outs if isinstance(outs, list) else [outs]
    dy = rng.randn(*outs[0].shape).astype('float32')
    if grads:
        heads = [mx.nd.array(dy)] + [mx.nd.zeros_like(o) for o in outs[1:]]
        mx.autograd.backward(outs, heads)
        arrays[f'{i}/dy'] = dy
        for j in grads:
            arrays[f'{i}/grad{j}'] = nds[j].grad.asnumpy()
    for j, v in enumerate(inputs):
        arrays[f'{i}/in{j}'] = v
    for j, o in enumerate(outs):
        arrays[f'{i}/out{j}'] = o.asnumpy()
    return {'op': op, 'params': {k: list(v) if isinstance(v, tuple) else v
                                 for k, v in params.items()}, 'grads': grads}


def _save_npz(path, arrays):
    """np.savez_compressed with fixed zip timestamps (a rerun writes the same bytes)."""
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arrays[name]))
            info = zipfile.ZipInfo(name + '.npy', date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays = {}
    meta = [run(i, *case, arrays) for i, case in enumerate(cases())]
    _save_npz(os.path.join(OUT, 'deformable_ops.npz'), arrays)
    with open(os.path.join(OUT, 'deformable_ops.json'), 'w') as f:
        json.dump(meta, f, indent=1)
        f.write('\n')
    print('wrote', len(meta), 'cases to', OUT)


if __name__ == '__main__':
    main()
