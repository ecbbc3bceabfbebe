"""python -m mxcy.tools.im2rec: lists and records as MXNet 1.9.1's im2rec.py makes them."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import mxcy as mx
from mxcy.tools import im2rec

from tests.image._files import path

ROOT = os.path.join(os.path.dirname(__file__), '..', '..')


@pytest.fixture
def folder(tmp_path):
    shutil.copytree(path('folder'), tmp_path / 'folder')
    return tmp_path


def test_list_and_record_match_mxnet_im2rec(folder, capsys):
    prefix = str(folder / 'data')
    assert im2rec.main(['--list', '--recursive', '--no-shuffle', prefix,
                        str(folder / 'folder')]) == 0
    assert open(prefix + '.lst').read() == open(path('im2rec.lst')).read()
    assert 'a 0\nb 1' in capsys.readouterr().out
    assert im2rec.main(['--resize', '20', '--quality', '90', '--num-thread', '2', prefix,
                        str(folder / 'folder')]) == 0
    ours = mx.recordio.MXIndexedRecordIO(prefix + '.idx', prefix + '.rec', 'r')
    theirs = mx.recordio.MXIndexedRecordIO(path('im2rec.idx'), path('im2rec.rec'), 'r')
    assert ours.keys == theirs.keys == [0, 1, 2, 3, 4]
    for k in ours.keys:
        h1, img1 = mx.recordio.unpack_img(ours.read_idx(k))
        h2, img2 = mx.recordio.unpack_img(theirs.read_idx(k))
        assert (h1.flag, h1.label, h1.id) == (h2.flag, h2.label, h2.id)
        assert min(img1.shape[:2]) == 20
        assert np.abs(img1.astype(int) - img2).max() <= 2


def test_shuffled_split_lists_and_chunks(folder):
    prefix = str(folder / 'd')
    im2rec.main(['--list', '--recursive', '--train-ratio', '0.6', '--test-ratio', '0.2',
                 prefix, str(folder / 'folder')])
    rows = {s: open(f'{prefix}_{s}.lst').read().splitlines() for s in ('train', 'val', 'test')}
    assert [len(rows[s]) for s in ('train', 'val', 'test')] == [3, 1, 1]
    names = sorted(r.split('\t')[-1] for rs in rows.values() for r in rs)
    assert names == ['a/img0.jpg', 'a/img1.jpg', 'a/img2.png', 'b/img3.jpg', 'b/img4.jpg']
    # the shuffle is MXNet's (Python's random seeded with 100): the same lists
    for s in ('train', 'val', 'test'):
        assert open(f'{prefix}_{s}.lst').read() == open(path(f'split_{s}.lst')).read()
    im2rec.main(['--list', '--chunks', '2', prefix + 'c', str(folder / 'folder' / 'a')])
    assert [len(open(f'{prefix}c_{i}.lst').readlines()) for i in range(2)] == [2, 1]


def test_pack_label_center_crop_png_and_bad_image(folder, capsys):
    (folder / 'folder' / 'a' / 'broken.jpg').write_bytes(b'not an image')
    lst = folder / 'm.lst'
    lst.write_text('0\t1.0\t2.5\ta/img1.jpg\n1\t0.0\t7.0\ta/broken.jpg\n'
                   '2\t3.0\t4.0\tb/img3.jpg\n')
    assert im2rec.main(['--pack-label', '--center-crop', '--encoding', '.png',
                        str(folder / 'm'), str(folder / 'folder')]) == 0
    assert 'broken.jpg' in capsys.readouterr().err
    rec = mx.recordio.MXIndexedRecordIO(str(folder / 'm.idx'), str(folder / 'm.rec'), 'r')
    assert rec.keys == [0, 2]
    header, img = mx.recordio.unpack_img(rec.read_idx(2))
    assert header.flag == 2 and header.label.tolist() == [3.0, 4.0]
    assert img.shape == (27, 27, 3)
    it = mx.io.ImageRecordIter(path_imgrec=str(folder / 'm.rec'), data_shape=(3, 20, 20),
                               batch_size=2, label_width=2)
    assert it.next().label[0].asnumpy().tolist() == [[1.0, 2.5], [3.0, 4.0]]


def test_runs_as_a_module(folder):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(ROOT))
    out = subprocess.run([sys.executable, '-m', 'mxcy.tools.im2rec', '--help'], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and '--pack-label' in out.stdout and '--num-thread' in out.stdout
    out = subprocess.run([sys.executable, '-m', 'mxcy.tools.im2rec', str(folder / 'none'),
                          str(folder)], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and 'no none*.lst file' in out.stderr


def test_read_list_skips_bad_lines_and_says_which(tmp_path, capsys):
    lst = tmp_path / 'x.lst'
    lst.write_text("0\t1\ta.png\n\n3\tb.png\nx\t1\tc.png\n4\t2\t0.5\td.png\n")
    assert list(im2rec.read_list(str(lst))) == [[0, 'a.png', 1.0], [4, 'd.png', 2.0, 0.5]]
    err = capsys.readouterr().err
    assert "line 3: expected 'index<TAB>label...<TAB>path', got '3\\tb.png'; skipped" in err
    assert "line 4: invalid literal for int() with base 10: 'x'; skipped" in err
