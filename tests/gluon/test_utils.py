"""gluon.utils; expected values are MXNet 1.9.1's (recorded from it). No test touches the
network: `download` is checked with sockets disabled."""
import hashlib
import socket
import warnings

import numpy as np
import pytest

import mxcy as mx
from mxcy.gluon import utils


def values(arrays):
    return [a.asnumpy().tolist() for a in arrays]


def test_split_data_even_and_uneven():
    x = mx.nd.arange(6)
    assert values(utils.split_data(x, 3)) == [[0, 1], [2, 3], [4, 5]]
    assert values(utils.split_data(x, 1)) == [[0, 1, 2, 3, 4, 5]]
    # MXNet 1.9.1: [0,1,2] [3,4] [5,6]; and [0] [1] [] for 2 rows in 3 slices
    assert values(utils.split_data(mx.nd.arange(7), 3, even_split=False)) == \
        [[0, 1, 2], [3, 4], [5, 6]]
    assert values(utils.split_data(mx.nd.arange(2), 3, even_split=False)) == [[0], [1], []]


def test_split_data_uneven_raises_with_mxnet_message():
    with pytest.raises(ValueError) as err:
        utils.split_data(mx.nd.arange(7), 3)
    # MXNet 1.9.1's message, word for word
    assert str(err.value) == (
        "data with shape (7,) cannot be evenly split into 3 slices along axis 0. Use a "
        "batch size that's multiple of 3 or set even_split=False to allow uneven "
        "partitioning of data.")


def test_split_data_other_axis():
    x = mx.nd.arange(6).reshape((2, 3))
    parts = utils.split_data(x, 3, batch_axis=1)
    assert values(parts) == [[[0], [3]], [[1], [4]], [[2], [5]]]      # MXNet 1.9.1


def test_split_and_load():
    parts = utils.split_and_load([[1, 2], [3, 4]], [mx.cpu(0), mx.cpu(1)])
    assert values(parts) == [[[1, 2]], [[3, 4]]]                      # MXNet 1.9.1
    assert [p.context for p in parts] == [mx.cpu(0), mx.cpu(1)]
    one = utils.split_and_load(mx.nd.ones((4, 2)), [mx.cpu(0)])
    assert len(one) == 1 and one[0].shape == (4, 2)
    with pytest.raises(ValueError, match='cannot be evenly split'):
        utils.split_and_load(mx.nd.ones((3, 2)), [mx.cpu(0), mx.cpu(1)])


def test_clip_global_norm_scales_in_place():
    arrays = [mx.nd.array([3., 4.]), mx.nd.array([[12.]])]
    norm = utils.clip_global_norm(arrays, 1.0)
    # MXNet 1.9.1: 13.0, [0.23076925 0.30769232], [[0.923077]]
    assert norm == pytest.approx(13.0) and isinstance(norm, (float, np.floating))
    np.testing.assert_allclose(arrays[0].asnumpy(), [0.23076925, 0.30769232], rtol=1e-6)
    np.testing.assert_allclose(arrays[1].asnumpy(), [[0.923077]], rtol=1e-6)


def test_clip_global_norm_leaves_small_norms_and_can_skip_the_check():
    small = [mx.nd.array([0.3, 0.4])]
    assert utils.clip_global_norm(small, 1.0) == pytest.approx(0.5)
    np.testing.assert_allclose(small[0].asnumpy(), [0.3, 0.4], rtol=1e-6)
    big = [mx.nd.array([3., 4.])]
    norm = utils.clip_global_norm(big, 1.0, check_isfinite=False)
    # MXNet 1.9.1: an NDArray of shape (1,) holding 5, the array scaled to [0.6 0.8]
    assert isinstance(norm, mx.nd.NDArray) and norm.shape == (1,)
    assert norm.asscalar() == pytest.approx(5.0)
    np.testing.assert_allclose(big[0].asnumpy(), [0.6, 0.8], rtol=1e-6)


def test_clip_global_norm_warns_on_nan():
    arrays = [mx.nd.array([float('nan'), 1.0])]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        norm = utils.clip_global_norm(arrays, 1.0)
    assert np.isnan(norm)
    assert any('nan or inf is detected' in str(w.message) for w in caught)
    with pytest.raises(ValueError, match='non-empty'):
        utils.clip_global_norm([], 1.0)


def test_check_sha1(tmp_path):
    path = tmp_path / 'f.bin'
    path.write_bytes(b'mxcy' * 1000)
    digest = hashlib.sha1(b'mxcy' * 1000).hexdigest()
    assert utils.check_sha1(str(path), digest)
    assert not utils.check_sha1(str(path), '0' * 40)


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError('download tried to use the network')
    monkeypatch.setattr(socket, 'socket', refuse)
    monkeypatch.setattr(socket, 'create_connection', refuse)


def test_download_returns_a_file_in_place(tmp_path, no_network):
    url = 'https://example.com/data/file.bin'
    (tmp_path / 'file.bin').write_bytes(b'abc')
    assert utils.download(url, path=str(tmp_path)) == str(tmp_path / 'file.bin')
    assert utils.download(url, path=str(tmp_path / 'file.bin'),
                          sha1_hash=hashlib.sha1(b'abc').hexdigest()) == \
        str(tmp_path / 'file.bin')


def test_download_offline_names_url_and_path(tmp_path, no_network):
    url = 'https://example.com/data/missing.bin'
    with pytest.raises(RuntimeError) as err:
        utils.download(url, path=str(tmp_path))
    text = str(err.value)
    assert url in text and str(tmp_path / 'missing.bin') in text and 'not there' in text
    (tmp_path / 'missing.bin').write_bytes(b'abc')
    with pytest.raises(RuntimeError, match='does not have SHA-1 ' + '1' * 40):
        utils.download(url, path=str(tmp_path), sha1_hash='1' * 40)
    with pytest.raises(RuntimeError, match='overwrite=True'):
        utils.download(url, path=str(tmp_path), overwrite=True)
    with pytest.raises(ValueError, match="Can't construct file-name"):
        utils.download('https://example.com/dir/')


def test_shape_is_known():
    # MXNet 1.9.1: False False False True, and an error for -1
    assert [utils.shape_is_known(s) for s in (None, (), (2, 0), (2, 3))] == \
        [False, False, False, True]
    with pytest.raises(ValueError, match='cannot be less than 0'):
        utils.shape_is_known((2, -1))


def test_hook_handle():
    from collections import OrderedDict
    hooks = OrderedDict()

    def hook():
        pass
    handle = utils.HookHandle()
    handle.attach(hooks, hook)
    assert list(hooks.values()) == [hook]
    with pytest.raises(RuntimeError, match='attached twice'):
        handle.attach(hooks, hook)
    with handle:
        pass
    assert not hooks
    handle.detach()                     # detaching twice is harmless
