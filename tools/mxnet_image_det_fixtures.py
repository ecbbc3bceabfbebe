#!/usr/bin/env python3
"""Write the detection / rotation fixtures that mxcy's tests read, with MXNet 1.9.1 itself.

Run in the MXNet peer venv (never in CI; it needs opencv-python-headless there):

    /work/mxnet_venv/bin/python tools/mxnet_image_det_fixtures.py

tests/mxnet_files/image_det/ gets:
- det.rec + det.idx: five small synthetic PNG images packed by MXNet's
  ``recordio.pack_img`` with packed detection labels ``[2, 5, (cls, xmin, ymin, xmax,
  ymax)*]`` (1-3 objects each; record 3 also holds one empty box that readers drop);
- expected.npz: what MXNet returns for imrotate / random_rotate / transforms.Rotate /
  RandomRotation on a small float32 image, for the detection augmenters on one image
  (flip, seeded crop and pad), for CreateDetAugmenter's ``dumps()``, and for ImageDetIter
  and ImageDetRecordIter batches on det.rec (augmentation off, or seeded where named).
The output is deterministic: a rerun reproduces the committed files.
"""
import json
import os
import random

import mxnet as mx
import numpy as np
from mxnet.gluon.data.vision import transforms

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'mxnet_files',
                   'image_det')
SIZES = [(30, 40, 1), (36, 28, 2), (32, 32, 3), (25, 35, 1), (40, 30, 2)]


def synth(h, w, seed):
    rng = np.random.RandomState(seed)
    y, x = np.mgrid[0:h, 0:w]
    a = np.stack([(x * 255 // w), (y * 255 // h), ((x + y) * 7 + seed * 40) % 256], -1)
    return np.clip(a + rng.randint(-40, 40, a.shape), 0, 255).astype(np.uint8)


def det_label(i, n):
    rng = np.random.RandomState(100 + i)
    objs = []
    for k in range(n):
        x0, y0 = rng.uniform(0, 0.5, 2)
        x1, y1 = x0 + rng.uniform(0.2, 0.5), y0 + rng.uniform(0.2, 0.5)
        objs += [k + i % 2, round(x0, 3), round(y0, 3), round(x1, 3), round(y1, 3)]
    if i == 3:
        objs += [5, 0.5, 0.5, 0.4, 0.9]          # empty box (xmax < xmin): dropped
    return np.array([2, 5] + objs, dtype=np.float32)


def write_rec():
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, 'det.idx'),
                                        os.path.join(OUT, 'det.rec'), 'w')
    for i, (h, w, n) in enumerate(SIZES):
        lab = det_label(i, n)
        header = mx.recordio.IRHeader(len(lab), lab, i, 0)
        rec.write_idx(i, mx.recordio.pack_img(header, synth(h, w, i), img_fmt='.png'))
    rec.close()


def rotations(exp):
    img = np.random.RandomState(1).rand(2, 9, 6).astype(np.float32) * 255
    exp['rot_src'] = img
    src = mx.nd.array(img)
    for deg in (30, -45, 90):
        exp[f'rot{deg}'] = mx.image.imrotate(src, deg).asnumpy()
        exp[f'rot{deg}_in'] = mx.image.imrotate(src, deg, zoom_in=True).asnumpy()
        exp[f'rot{deg}_out'] = mx.image.imrotate(src, deg, zoom_out=True).asnumpy()
    batch = mx.nd.array(np.stack([img, img[:, ::-1]]))
    exp['rot_batch'] = mx.image.imrotate(batch, mx.nd.array([15, -70])).asnumpy()
    np.random.seed(4)
    exp['random_rotate'] = mx.image.random_rotate(src, (-40, 40)).asnumpy()
    exp['random_rotate_batch'] = mx.image.random_rotate(batch, (-40, 40)).asnumpy()
    exp['transform_rotate'] = transforms.Rotate(25, zoom_out=True)(src).asnumpy()
    np.random.seed(5)
    rr = transforms.RandomRotation((-30, 30), rotate_with_proba=0.5)
    exp['random_rotation'] = np.stack([rr(src).asnumpy() for _ in range(6)])


def det_augmenters(exp):
    r = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, 'det.idx'),
                                      os.path.join(OUT, 'det.rec'), 'r')
    header, img = mx.recordio.unpack_img(r.read_idx(2))
    src = mx.nd.array(img[:, :, ::-1].copy(), dtype='uint8')
    label = np.array(header.label[2:]).reshape(-1, 5)
    exp['aug_src'], exp['aug_label'] = src.asnumpy(), label
    out, lab = mx.image.DetHorizontalFlipAug(1.0)(src, label.copy())
    exp['flip_img'], exp['flip_label'] = out.asnumpy(), lab
    for seed in range(3):
        random.seed(seed)
        out, lab = mx.image.DetRandomCropAug(min_object_covered=0.3,
                                             area_range=(0.3, 1.0))(src, label.copy())
        exp[f'crop{seed}_img'], exp[f'crop{seed}_label'] = out.asnumpy(), lab
        random.seed(seed)
        out, lab = mx.image.DetRandomPadAug(area_range=(1.2, 2.5),
                                            pad_val=(10, 20, 30))(src, label.copy())
        exp[f'pad{seed}_img'], exp[f'pad{seed}_label'] = out.asnumpy(), lab
    augs = mx.image.CreateDetAugmenter(
        (3, 30, 30), resize=40, rand_crop=0.5, rand_pad=0.5, rand_mirror=True, mean=True,
        std=True, brightness=0.1, contrast=0.1, saturation=0.1, hue=0.1, pca_noise=0.05,
        rand_gray=0.2, inter_method=1, min_object_covered=[0.3, 0.5], area_range=(0.3, 3.0))
    exp['create_det_dumps'] = np.array(json.dumps([a.dumps() for a in augs]))


def batches(it):
    data, label, pad = [], [], []
    for b in it:
        data.append(b.data[0].asnumpy())
        label.append(b.label[0].asnumpy())
        pad.append(b.pad)
    return np.stack(data), np.stack(label), np.array(pad)


def iterators(exp):
    rec, idx = os.path.join(OUT, 'det.rec'), os.path.join(OUT, 'det.idx')
    it = mx.image.ImageDetIter(2, (3, 20, 24), path_imgrec=rec, path_imgidx=idx)
    exp['detiter_label_shape'] = np.array(it.label_shape)
    exp['detiter_data'], exp['detiter_label'], exp['detiter_pad'] = batches(it)
    it = mx.image.ImageDetIter(3, (3, 16, 16), path_imgrec=rec, mean=True, std=True)
    exp['detiter_seq_data'], exp['detiter_seq_label'], exp['detiter_seq_pad'] = batches(it)
    runs = {
        'detrec_plain': dict(data_shape=(3, 20, 24), batch_size=2),
        'detrec_norm': dict(data_shape=(3, 20, 20), batch_size=2, mean_r=10, mean_g=20,
                            mean_b=30, std_r=2, std_g=4, std_b=5, scale=0.5),
        'detrec_resize': dict(data_shape=(3, 18, 18), batch_size=3, resize=22),
        'detrec_gray': dict(data_shape=(1, 20, 20), batch_size=2, label_pad_width=20,
                            label_pad_value=-2),
        'detrec_mirror': dict(data_shape=(3, 20, 20), batch_size=5, rand_mirror_prob=1.0),
    }
    for key, kw in runs.items():
        d, lab, pad = batches(mx.io.ImageDetRecordIter(path_imgrec=rec, verbose=False, **kw))
        exp[key + '_data'], exp[key + '_label'], exp[key + '_pad'] = d, lab, pad


def main():
    os.makedirs(OUT, exist_ok=True)
    write_rec()
    exp = {}
    rotations(exp)
    det_augmenters(exp)
    iterators(exp)
    np.savez_compressed(os.path.join(OUT, 'expected.npz'), **exp)
    print('wrote', OUT)


if __name__ == '__main__':
    main()
