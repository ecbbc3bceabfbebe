#!/usr/bin/env python3
"""Image pipeline throughput: ImageRecordIter and a DataLoader over ImageRecordDataset.

    python bench/bench_image.py
    OMP_NUM_THREADS=2 /work/mxnet_venv/bin/python bench/bench_image.py --lib mxnet

A ``.rec`` of N_IMAGES synthetic 300x260 JPEGs (quality 90, fixed seed; written once per
run with the library's own ``recordio.pack`` and OpenCV, which both venvs need) is read
into batches of 32 images of 3x224x224 float32.

Figures (images/s, higher is better), each the best of --reps epochs:
- ``imagerecorditer``: ``mx.io.ImageRecordIter`` with rand_crop, rand_mirror, mean/std
  and ``preprocess_threads=2``; floor ("numpy"): a plain one-thread loop doing the same
  OpenCV decode, crop and normalisation with NumPy.
- ``imagerecorditer_plain``: the same iterator with augmentation off, after a check that
  its first batch equals the floor's (within 2 per pixel).
- ``dataloader``: ``gluon.data.DataLoader`` (2 worker processes) over
  ``ImageRecordDataset`` with ``transforms`` CenterCrop(224), ToTensor, Normalize.
"""
import os
import tempfile

import cv2
import numpy as np

from _common import emit, load, parse, seconds

BENCH = 'image'
FIGURES = ('imagerecorditer', 'imagerecorditer_plain', 'dataloader')
N_IMAGES = 320
BATCH = 32
SHAPE = (3, 224, 224)
MEAN = np.array([123.68, 116.28, 103.53], np.float32)
STD = np.array([58.395, 57.12, 57.375], np.float32)


def synth(i):
    rng = np.random.RandomState(i)
    y, x = np.mgrid[0:260, 0:300]
    img = np.stack([x * 255 // 300, y * 255 // 260, (x + y + 40 * i) % 256], -1)
    img = np.clip(img + rng.randint(-25, 25, img.shape), 0, 255).astype(np.uint8)
    return cv2.GaussianBlur(img, (3, 3), 0)


def make_rec(mx, folder):
    rec_path = os.path.join(folder, 'bench.rec')
    idx_path = os.path.join(folder, 'bench.idx')
    rec = mx.recordio.MXIndexedRecordIO(idx_path, rec_path, 'w')
    for i in range(N_IMAGES):
        buf = cv2.imencode('.jpg', synth(i), [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i % 10), i, 0), buf))
    rec.close()
    return rec_path


def floor_epoch(mx, rec_path):
    """One epoch of decode + centre crop + normalise in a plain loop; the batches."""
    rec = mx.recordio.MXRecordIO(rec_path, 'r')
    out, batch = [], np.empty((BATCH,) + SHAPE, np.float32)
    n = 0
    while True:
        s = rec.read()
        if s is None:
            break
        _, payload = mx.recordio.unpack(s)
        img = cv2.imdecode(np.frombuffer(payload, np.uint8), cv2.IMREAD_COLOR)
        h, w = img.shape[:2]
        y0, x0 = (h - SHAPE[1]) // 2, (w - SHAPE[2]) // 2
        crop = img[y0:y0 + SHAPE[1], x0:x0 + SHAPE[2], ::-1].astype(np.float32)
        batch[n % BATCH] = ((crop - MEAN) / STD).transpose(2, 0, 1)
        n += 1
        if n % BATCH == 0:
            out.append(batch.copy())
    rec.close()
    return out


def make_iter(mx, rec_path, augment):
    kw = dict(rand_crop=True, rand_mirror=True) if augment else {}
    return mx.io.ImageRecordIter(
        path_imgrec=rec_path, data_shape=SHAPE, batch_size=BATCH, preprocess_threads=2,
        mean_r=MEAN[0], mean_g=MEAN[1], mean_b=MEAN[2], std_r=STD[0], std_g=STD[1],
        std_b=STD[2], **kw)


def iter_epoch(it):
    it.reset()
    n = 0
    for batch in it:
        batch.data[0].wait_to_read()
        n += 1
    return n


def best_rate(fn, reps, images):
    fn()
    best = min(seconds(fn) for _ in range(reps))
    return images / best


def main():
    args = parse(__doc__, FIGURES)
    mx = load(args.lib)
    cv2.setNumThreads(1)
    folder = tempfile.mkdtemp(prefix='bench_image_')
    rec_path = make_rec(mx, folder)
    images = N_IMAGES // BATCH * BATCH
    want = lambda f: args.only in (None, f)
    floor = best_rate(lambda: floor_epoch(mx, rec_path), args.reps, images)
    if want('imagerecorditer'):
        it = make_iter(mx, rec_path, True)
        rate = best_rate(lambda: iter_epoch(it), args.reps, images)
        emit(BENCH, 'imagerecorditer', args.lib, round(rate, 1), 'images/s',
             numpy_value=round(floor, 1), better='higher', batch=BATCH, threads=2)
    if want('imagerecorditer_plain'):
        it = make_iter(mx, rec_path, False)
        it.reset()
        first = it.next().data[0].asnumpy()
        ref = floor_epoch(mx, rec_path)[0]
        err = float(np.abs(first - ref).max() * STD.min())
        if err > 2.0 + 1e-3:
            raise SystemExit(f"imagerecorditer_plain: first batch differs from the floor by "
                             f"{err:.2f} pixel levels")
        rate = best_rate(lambda: iter_epoch(it), args.reps, images)
        emit(BENCH, 'imagerecorditer_plain', args.lib, round(rate, 1), 'images/s',
             numpy_value=round(floor, 1), better='higher', batch=BATCH, threads=2,
             max_pixel_err=round(err, 3))
    if want('dataloader'):
        from importlib import import_module
        T = import_module(f'{args.lib}.gluon.data.vision.transforms')
        vision = import_module(f'{args.lib}.gluon.data.vision')
        tf = T.Compose([T.CenterCrop(224), T.ToTensor(),
                        T.Normalize(tuple(MEAN / 255), tuple(STD / 255))])
        ds = vision.ImageRecordDataset(rec_path).transform_first(tf)
        loader = mx.gluon.data.DataLoader(ds, batch_size=BATCH, num_workers=2,
                                          last_batch='discard')

        def epoch():
            for data, _ in loader:
                data.wait_to_read()
        rate = best_rate(epoch, max(1, args.reps // 2), images)
        emit(BENCH, 'dataloader', args.lib, round(rate, 1), 'images/s', better='higher',
             batch=BATCH, workers=2)


if __name__ == '__main__':
    main()
