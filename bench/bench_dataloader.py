#!/usr/bin/env python3
"""DataLoader throughput on a decode-heavy dataset: 0 workers against 2 worker processes.

    python bench/bench_dataloader.py
    /work/mxnet_venv/bin/python bench/bench_dataloader.py --lib mxnet

Each sample costs a few ms of NumPy work in ``__getitem__`` (a stand-in for JPEG decoding
and augmentation: blur, normalise, crop, HWC->CHW of a 128x128x3 image) and returns
(float32 image (3, 112, 112), int label); batches of 16 through ``gluon.data.DataLoader``.

Figures (samples/s, higher is better), all timed in alternating rounds of one run:
- ``workers_0``: ``num_workers=0``; floor ("numpy"): the same decode and ``np.stack``
  in a plain loop.
- ``workers_2``: ``num_workers=2`` (worker processes); ``vs_workers_0`` is the median
  over rounds of (0-worker time / 2-worker time), the same-run speed-up (target >= 1.5
  on 2 cores).
- ``threads_2``: ``num_workers=2, thread_pool=True``, with its ``vs_workers_0``.

An epoch includes what the library does per pass (mxcy forks its workers per pass; MXNet
forks them once, in the DataLoader's constructor, which is not timed). The only check is
that every variant returns the same batches as the floor.
"""
import numpy as np

from _common import emit, interleaved_times, load, paired_median_ratio, parse

BENCH = 'dataloader'
FIGURES = ('workers',)
N_SAMPLES = 512
BATCH = 16
SIDE = 128
CROP = 112


def decode(idx):
    """A few ms of NumPy per sample, deterministic in `idx`."""
    rng = np.random.default_rng(idx)
    raw = rng.integers(0, 256, (SIDE, SIDE, 3), dtype=np.uint8)
    img = raw.astype(np.float32)
    for _ in range(3):                                      # 3x3 box blur, three times
        pad = np.pad(img, ((1, 1), (1, 1), (0, 0)), mode='edge')
        img = sum(pad[i:i + SIDE, j:j + SIDE] for i in range(3) for j in range(3)) / 9
    img = (img - img.mean(axis=(0, 1))) / (img.std(axis=(0, 1)) + 1e-5)
    off = idx % (SIDE - CROP)
    return np.ascontiguousarray(img[off:off + CROP, off:off + CROP].transpose(2, 0, 1)), \
        int(idx % 10)


def make_dataset(mx):
    class Decoding(mx.gluon.data.Dataset):
        def __len__(self):
            return N_SAMPLES

        def __getitem__(self, idx):
            return decode(idx)
    return Decoding()


def floor_epoch():
    out = []
    for start in range(0, N_SAMPLES, BATCH):
        items = [decode(i) for i in range(start, min(start + BATCH, N_SAMPLES))]
        out.append((np.stack([x for x, _ in items]), np.array([y for _, y in items])))
    return out


def check_same(what, batches, ref):
    if len(batches) != len(ref):
        raise SystemExit(f"{what}: {len(batches)} batches, expected {len(ref)}")
    for (x, y), (rx, ry) in zip(batches, ref):
        if not (np.array_equal(x.asnumpy(), rx) and np.array_equal(y.asnumpy(), ry)):
            raise SystemExit(f"{what}: a batch differs from the plain NumPy loop")


def fig_workers(mx, lib, reps):
    dataset = make_dataset(mx)
    loaders = {
        'workers_0': mx.gluon.data.DataLoader(dataset, batch_size=BATCH),
        'workers_2': mx.gluon.data.DataLoader(dataset, batch_size=BATCH, num_workers=2),
        'threads_2': mx.gluon.data.DataLoader(dataset, batch_size=BATCH, num_workers=2,
                                              thread_pool=True),
    }
    ref = floor_epoch()
    for name, loader in loaders.items():
        check_same(name, [(x, y) for x, y in loader], ref)

    def epoch(loader):
        def run():
            for x, _ in loader:
                x.wait_to_read()
        return run
    variants = {name: epoch(loader) for name, loader in loaders.items()}
    variants['numpy'] = floor_epoch
    times = interleaved_times(variants, reps, rotate=True)
    floor = N_SAMPLES / min(times['numpy'])
    for name in loaders:
        extra = {}
        if name != 'workers_0':
            extra['vs_workers_0'] = round(paired_median_ratio(times, 'workers_0', name), 3)
            extra['target_vs_workers_0'] = 1.5
        emit(BENCH, name, lib, round(N_SAMPLES / min(times[name]), 1), 'samples/s',
             round(floor, 1), better='higher', samples=N_SAMPLES, batch=BATCH,
             ms_per_sample_floor=round(1000 / floor, 3), reps=reps, **extra)


def main():
    args = parse(__doc__.splitlines()[0], FIGURES)
    mx = load(args.lib)
    for fig in FIGURES:
        if args.only in (None, fig):
            globals()['fig_' + fig](mx, args.lib, args.reps)


if __name__ == '__main__':
    main()
