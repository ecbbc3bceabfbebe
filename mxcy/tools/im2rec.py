"""``python -m mxcy.tools.im2rec``: make image lists and pack images into RecordIO files.

The command line is MXNet 1.9.1's ``tools/im2rec.py``:

- ``--list prefix root``: walk `root` (``--recursive``: every sub-folder holding images
  gets the next label, folders and files in sorted order; otherwise the images directly
  in `root`, label 0), shuffle (unless ``--no-shuffle``; Python's ``random`` seeded with
  100, so the lists are MXNet's), split into ``--chunks`` and by ``--train-ratio`` /
  ``--test-ratio``, and write ``prefix[_i][_train|_val|_test].lst`` with lines
  ``index<TAB>label...<TAB>relative path``.
- ``prefix root`` (no ``--list``): for every ``prefix*.lst`` (or each .lst in the
  folder `prefix`), write ``.rec`` + ``.idx`` next to it: each image read with OpenCV
  (``--color``), optionally center-cropped to a square (``--center-crop``) and its
  shorter edge resized to ``--resize``, encoded as ``--encoding`` at ``--quality``
  (or copied as is with ``--pass-through``) behind an IRHeader whose label is the first
  label, or all of them with ``--pack-label``. ``--num-thread`` threads encode; the
  records keep the list's order. An unreadable image is reported and skipped.
"""
import argparse
import os
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

from mxcy import recordio
from mxcy.image.image_iter import list_entries

__all__ = ['list_image', 'make_list', 'read_list', 'image_encode', 'make_record', 'parse_args',
           'main']


def list_image(root, recursive, exts):
    """Yield (index, relative path, label) for the images under `root`."""
    exts = tuple(e.lower() for e in exts)
    i = 0
    if recursive:
        cat = {}
        for path, dirs, files in os.walk(root, followlinks=True):
            dirs.sort()
            for fname in sorted(files):
                if os.path.splitext(fname)[1].lower() not in exts:
                    continue
                if path not in cat:
                    cat[path] = len(cat)
                yield i, os.path.relpath(os.path.join(path, fname), root), cat[path]
                i += 1
        for path, label in sorted(cat.items(), key=lambda kv: kv[1]):
            print(os.path.relpath(path, root), label)
        return
    for fname in sorted(os.listdir(root)):
        if os.path.isfile(os.path.join(root, fname)) and \
                os.path.splitext(fname)[1].lower() in exts:
            yield i, fname, 0
            i += 1


def write_list(path_out, image_list):
    with open(path_out, 'w') as fout:
        for index, path, *labels in image_list:
            fout.write(f"{index}\t" + ''.join(f"{float(v):f}\t" for v in labels) + f"{path}\n")


def make_list(args):
    """Write the .lst files for `args` (see the module docstring)."""
    image_list = list(list_image(args.root, args.recursive, args.exts))
    if args.shuffle:
        random.seed(100)
        random.shuffle(image_list)
    n = len(image_list)
    chunk_size = (n + args.chunks - 1) // args.chunks if n else 0
    for i in range(args.chunks):
        chunk = image_list[i * chunk_size:(i + 1) * chunk_size]
        tag = f'_{i}' if args.chunks > 1 else ''
        sep = int(chunk_size * args.train_ratio)
        sep_test = int(chunk_size * args.test_ratio)
        if args.train_ratio == 1.0:
            write_list(args.prefix + tag + '.lst', chunk)
            continue
        if args.test_ratio:
            write_list(args.prefix + tag + '_test.lst', chunk[:sep_test])
        if args.train_ratio + args.test_ratio < 1.0:
            write_list(args.prefix + tag + '_val.lst', chunk[sep_test + sep:])
        write_list(args.prefix + tag + '_train.lst', chunk[sep_test:sep_test + sep])


def read_list(path_in):
    """Yield [index, path, label, ...] for each line of the list file `path_in`."""
    for lineno, entry, error in list_entries(path_in):
        if error is not None:
            print(f"im2rec: {path_in}, line {lineno}: {error}; skipped", file=sys.stderr)
            continue
        index, labels, path = entry
        yield [index, path] + labels


def image_encode(args, item):
    """The packed record for list item `item`, or None (reported) if it cannot be read."""
    fullpath = os.path.join(args.root, item[1])
    if len(item) > 3 and args.pack_label:
        header = recordio.IRHeader(len(item) - 2, np.array(item[2:], np.float32), item[0], 0)
    else:
        header = recordio.IRHeader(0, item[2], item[0], 0)
    if args.pass_through:
        try:
            with open(fullpath, 'rb') as fin:
                return recordio.pack(header, fin.read())
        except OSError as err:
            print(f"im2rec: cannot read {fullpath}: {err}; skipped", file=sys.stderr)
            return None
    img = cv2.imread(fullpath, args.color)
    if img is None:
        print(f"im2rec: cannot decode {fullpath} (missing, corrupt or not an image); skipped",
              file=sys.stderr)
        return None
    if args.center_crop:
        h, w = img.shape[:2]
        if h > w:
            margin = (h - w) // 2
            img = img[margin:margin + w]
        elif w > h:
            margin = (w - h) // 2
            img = img[:, margin:margin + h]
    if args.resize:
        h, w = img.shape[:2]
        size = (args.resize, h * args.resize // w) if h > w else \
            (w * args.resize // h, args.resize)
        img = cv2.resize(img, size)
    return recordio.pack_img(header, img, quality=args.quality, img_fmt=args.encoding)


def make_record(args, path_lst):
    """Pack the images of list `path_lst` into .rec/.idx beside it; the record count."""
    stem = os.path.splitext(path_lst)[0]
    items = list(read_list(path_lst))
    rec = recordio.MXIndexedRecordIO(stem + '.idx', stem + '.rec', 'w')
    count, tic = 0, time.time()
    try:
        with ThreadPoolExecutor(max(1, args.num_thread)) as pool:
            for item, packed in zip(items, pool.map(lambda it: image_encode(args, it), items)):
                if packed is None:
                    continue
                rec.write_idx(item[0], packed)
                count += 1
                if count % 1000 == 0:
                    print('time:', time.time() - tic, ' count:', count)
    finally:
        rec.close()
    return count


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description='Create an image list or make a record database by reading from an '
                    'image list')
    parser.add_argument('prefix', help='prefix of input/output lst and rec files.')
    parser.add_argument('root', help='path to folder containing images.')
    lst = parser.add_argument_group('Options for creating image lists')
    lst.add_argument('--list', action='store_true',
                     help='create image list(s) from root instead of a record database')
    lst.add_argument('--exts', nargs='+', default=['.jpeg', '.jpg', '.png'],
                     help='list of acceptable image extensions.')
    lst.add_argument('--chunks', type=int, default=1, help='number of chunks.')
    lst.add_argument('--train-ratio', type=float, default=1.0,
                     help='Ratio of images to use for training.')
    lst.add_argument('--test-ratio', type=float, default=0,
                     help='Ratio of images to use for testing.')
    lst.add_argument('--recursive', action='store_true',
                     help='walk subfolders, one label per folder')
    lst.add_argument('--no-shuffle', dest='shuffle', action='store_false',
                     help='keep the listing order')
    rec = parser.add_argument_group('Options for creating database')
    rec.add_argument('--pass-through', action='store_true',
                     help='store the image files as they are')
    rec.add_argument('--resize', type=int, default=0,
                     help='resize the shorter edge of image to the newsize')
    rec.add_argument('--center-crop', action='store_true',
                     help='crop the center to make the image square')
    rec.add_argument('--quality', type=int, default=95,
                     help='JPEG quality 1-100, or PNG compression 1-9')
    rec.add_argument('--num-thread', type=int, default=1,
                     help='number of threads to use for encoding')
    rec.add_argument('--color', type=int, default=1, choices=[-1, 0, 1],
                     help='1: colour, 0: grayscale, -1: as stored (with alpha)')
    rec.add_argument('--encoding', type=str, default='.jpg', choices=['.jpg', '.png'],
                     help='encoding of the stored images')
    rec.add_argument('--pack-label', action='store_true',
                     help='pack every label of a multi-label list line')
    args = parser.parse_args(argv)
    args.prefix = os.path.abspath(args.prefix)
    args.root = os.path.abspath(args.root)
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.list:
        make_list(args)
        return 0
    if os.path.isdir(args.prefix):
        working_dir, stem = args.prefix, ''
    else:
        working_dir, stem = os.path.dirname(args.prefix), os.path.basename(args.prefix)
    lists = sorted(f for f in os.listdir(working_dir)
                   if os.path.isfile(os.path.join(working_dir, f)) and f.startswith(stem)
                   and f.endswith('.lst'))
    if not lists:
        print(f"im2rec: no {stem}*.lst file in {working_dir}; make one with --list",
              file=sys.stderr)
        return 1
    for fname in lists:
        print('Creating .rec file from', os.path.join(working_dir, fname), 'in', working_dir)
        make_record(args, os.path.join(working_dir, fname))
    return 0


if __name__ == '__main__':
    sys.exit(main())
