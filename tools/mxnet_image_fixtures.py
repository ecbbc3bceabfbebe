#!/usr/bin/env python3
"""Write the image-pipeline fixtures that mxcy's tests read, with MXNet 1.9.1 itself.

Run in the MXNet peer venv (never in CI; it needs opencv-python-headless there):

    /work/mxnet_venv/bin/python tools/mxnet_image_fixtures.py

tests/mxnet_files/image/ gets:
- folder/{a,b}/*.jpg and one .png: tiny synthetic images (OpenCV-encoded, fixed seed);
- images.rec + images.idx: those images packed by MXNet's ``recordio.pack_img``
  (labels 0..4, ids 0..4);
- im2rec.lst + im2rec.rec + im2rec.idx: MXNet's ``tools/im2rec.py`` run over folder/
  (``--recursive --no-shuffle`` to list, then ``--resize 20 --quality 90`` to pack);
- split_{train,val,test}.lst: its shuffled lists (``--train-ratio 0.6 --test-ratio 0.2``);
- expected.npz: what MXNet returns for mx.image functions on those files and for
  ImageRecordIter / ImageIter batches (augmentation off, or seeded where named).
The output is deterministic: a rerun reproduces the committed files.
"""
import os
import random
import shutil
import subprocess
import sys

import cv2
import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'mxnet_files',
                   'image')


def synth(h, w, seed):
    rng = np.random.RandomState(seed)
    y, x = np.mgrid[0:h, 0:w]
    a = np.stack([(x * 255 // w), (y * 255 // h), ((x + y) * 7 + seed * 40) % 256], -1)
    a = np.clip(a + rng.randint(-40, 40, a.shape), 0, 255).astype(np.uint8)
    return cv2.GaussianBlur(a, (3, 3), 0)


def write_images():
    shutil.rmtree(os.path.join(OUT, 'folder'), ignore_errors=True)
    files = []
    for i, (h, w) in enumerate([(26, 30), (30, 24), (28, 28), (27, 33), (32, 26)]):
        sub = 'a' if i < 3 else 'b'
        os.makedirs(os.path.join(OUT, 'folder', sub), exist_ok=True)
        ext = '.png' if i == 2 else '.jpg'
        name = os.path.join('folder', sub, f'img{i}{ext}')
        params = [cv2.IMWRITE_JPEG_QUALITY, 90] if ext == '.jpg' else []
        cv2.imwrite(os.path.join(OUT, name), synth(h, w, i), params)
        files.append(name)
    return files


def write_rec(files):
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, 'images.idx'),
                                        os.path.join(OUT, 'images.rec'), 'w')
    for i, name in enumerate(files):
        img = cv2.imread(os.path.join(OUT, name))
        rec.write_idx(i, mx.recordio.pack_img(mx.recordio.IRHeader(0, float(i), i, 0), img,
                                              quality=90))
    rec.close()


def run_im2rec():
    tool = os.path.join(os.path.dirname(mx.__file__), 'tools', 'im2rec.py')
    prefix = os.path.join(OUT, 'im2rec')
    folder = os.path.join(OUT, 'folder')
    subprocess.check_call([sys.executable, tool, '--list', '--recursive', '--no-shuffle',
                           prefix, folder])
    subprocess.check_call([sys.executable, tool, '--resize', '20', '--quality', '90',
                           '--num-thread', '1', prefix, folder])
    subprocess.check_call([sys.executable, tool, '--list', '--recursive', '--train-ratio',
                           '0.6', '--test-ratio', '0.2', os.path.join(OUT, 'split'), folder])


def image_functions(files, exp):
    for i, name in enumerate(files):
        buf = open(os.path.join(OUT, name), 'rb').read()
        exp[f'decode{i}'] = mx.image.imdecode(buf).asnumpy()
        exp[f'decode_gray{i}'] = mx.image.imdecode(buf, flag=0).asnumpy()
        exp[f'decode_bgr{i}'] = mx.image.imdecode(buf, to_rgb=False).asnumpy()
    src = mx.image.imdecode(open(os.path.join(OUT, files[0]), 'rb').read())
    for interp in range(5):
        exp[f'imresize_up{interp}'] = mx.image.imresize(src, 41, 37, interp=interp).asnumpy()
        exp[f'imresize_down{interp}'] = mx.image.imresize(src, 17, 13, interp=interp).asnumpy()
    exp['resize_short'] = mx.image.resize_short(src, 20).asnumpy()
    out, rect = mx.image.center_crop(src, (16, 12))
    exp['center_crop'], exp['center_crop_rect'] = out.asnumpy(), np.array(rect)
    exp['fixed_crop'] = mx.image.fixed_crop(src, 3, 4, 20, 15, size=(10, 12)).asnumpy()
    for t in range(5):
        exp[f'border{t}'] = mx.image.copyMakeBorder(src, 2, 3, 1, 4, type=t,
                                                    value=7).asnumpy()
    f32 = src.astype('float32')
    exp['color_normalize'] = mx.image.color_normalize(
        f32, mx.nd.array([10, 20, 30]), mx.nd.array([2, 4, 5])).asnumpy()
    random.seed(3)
    exp['random_crop'] = mx.image.random_crop(src, (12, 10))[0].asnumpy()
    exp['random_size_crop'] = mx.image.random_size_crop(src, (12, 10), 0.3,
                                                        (0.75, 1.33))[0].asnumpy()


def batches(it, n=None):
    data, label, pad = [], [], []
    for i, b in enumerate(it):
        if n is not None and i >= n:
            break
        data.append(b.data[0].asnumpy())
        label.append(b.label[0].asnumpy())
        pad.append(b.pad)
    return np.stack(data), np.stack(label), np.array(pad)


def iterators(exp):
    rec = os.path.join(OUT, 'images.rec')
    idx = os.path.join(OUT, 'images.idx')
    runs = {
        'rec_plain': dict(data_shape=(3, 20, 20), batch_size=2),
        'rec_norm': dict(data_shape=(3, 20, 20), batch_size=2, mean_r=10, mean_g=20,
                         mean_b=30, std_r=2, std_g=4, std_b=5, scale=0.5),
        'rec_resize': dict(data_shape=(3, 18, 18), batch_size=3, resize=22),
        'rec_gray': dict(data_shape=(1, 20, 20), batch_size=2),
        'rec_part0': dict(data_shape=(3, 20, 20), batch_size=2, num_parts=2, part_index=0),
        'rec_part1': dict(data_shape=(3, 20, 20), batch_size=2, num_parts=2, part_index=1),
    }
    for key, kw in runs.items():
        d, lab, pad = batches(mx.io.ImageRecordIter(path_imgrec=rec, **kw))
        exp[key + '_data'], exp[key + '_label'], exp[key + '_pad'] = d, lab, pad
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 20, 20), batch_size=2)
    for _ in it:
        pass
    it.reset()
    d, lab, pad = batches(it)
    exp['rec_epoch2_label'], exp['rec_epoch2_pad'] = lab, pad
    d, lab, pad = batches(mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 20, 20),
                                                     batch_size=2))
    exp['rec_uint8_data'] = d
    it = mx.image.ImageIter(2, (3, 20, 20), path_imgrec=rec, path_imgidx=idx)
    exp['imageiter_data'], exp['imageiter_label'], exp['imageiter_pad'] = batches(it)
    it = mx.image.ImageIter(2, (3, 20, 20), path_imgrec=os.path.join(OUT, 'im2rec.rec'))
    exp['im2rec_data'], exp['im2rec_label'], exp['im2rec_pad'] = batches(it)


def main():
    os.makedirs(OUT, exist_ok=True)
    files = write_images()
    write_rec(files)
    run_im2rec()
    exp = {'files': np.array(files)}
    image_functions(files, exp)
    iterators(exp)
    np.savez_compressed(os.path.join(OUT, 'expected.npz'), **exp)
    print('wrote', OUT)


if __name__ == '__main__':
    main()
