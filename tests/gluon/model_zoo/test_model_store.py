"""gluon.model_zoo.model_store and ``pretrained=True``: MXNet's file names under `root`,
no download (a missing file raises naming what to put where)."""
import hashlib
import os
import warnings

import numpy as np
import pytest

import mxcy as mx
from mxcy.gluon.model_zoo import model_store, vision

# MXNet 1.9.1's model_store.get_model_file: <root>/<name>-<sha1[:8]>.params
MXNET_FILES = {
    'alexnet': 'alexnet-44335d1f.params',
    'densenet169': 'densenet169-2603f878.params',
    'inceptionv3': 'inceptionv3-ed47ec45.params',
    'mobilenet0.75': 'mobilenet0.75-529b2c7f.params',
    'mobilenet1.0': 'mobilenet1.0-6b8c5106.params',
    'mobilenetv2_0.5': 'mobilenetv2_0.5-aabd26cd.params',
    'resnet50_v2': 'resnet50_v2-ecdde353.params',
    'resnet18_v1': 'resnet18_v1-a0666292.params',
    'squeezenet1.0': 'squeezenet1.0-264ba497.params',
    'vgg16_bn': 'vgg16_bn-7f01cf05.params',
    'vgg19': 'vgg19-ad2f660d.params',
}


def test_every_model_has_mxnets_hash():
    assert sorted(model_store._model_sha1) == sorted(vision._MODELS)
    assert model_store.short_hash('resnet18_v1') == 'a0666292'
    with pytest.raises(ValueError, match='Pretrained model for resnet19_v1 is not available'):
        model_store.short_hash('resnet19_v1')


@pytest.mark.parametrize('name', sorted(MXNET_FILES))
def test_missing_file_raises_naming_the_path(name, tmp_path):
    """Each model function asks for MXNet's file name (the multiplier spelled as MXNet's
    '1.0' / '0.5' / '0.75'), in `root`."""
    path = os.path.join(str(tmp_path), MXNET_FILES[name])
    with pytest.raises(FileNotFoundError) as info:
        vision.get_model(name, pretrained=True, root=str(tmp_path))
    message = str(info.value)
    assert path in message
    assert f"{MXNET_FILES[name][:-len('.params')]}.zip" in message   # what MXNet fetched
    assert 'root=' in message


def test_default_root_is_mxnets(monkeypatch):
    home = os.getenv('MXNET_HOME', os.path.join(os.path.expanduser('~'), '.mxnet'))
    assert model_store.default_root == os.path.join(home, 'models')
    path = os.path.join(model_store.default_root, 'squeezenet1.1-33ba0f93.params')
    if os.path.exists(path):
        pytest.skip(f'{path} exists on this machine')
    with pytest.raises(FileNotFoundError, match=path.replace('.', r'\.')):
        vision.squeezenet1_1(pretrained=True)


def test_present_file_loads(tmp_path):
    """A file put in root loads (with a warning when it is not MXNet's published file)."""
    src = vision.mobilenet0_25(prefix='src_')
    src.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).uniform(size=(1, 3, 32, 32)))
    expected = src(x).asnumpy()
    src.save_parameters(str(tmp_path / 'mobilenet0.25-9f83e440.params'))
    with pytest.warns(UserWarning, match="SHA-1 is not the one MXNet published"):
        net = vision.get_model('mobilenet0.25', pretrained=True, root=str(tmp_path),
                               ctx=mx.cpu())
    np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-6, atol=1e-6)


def test_published_file_loads_silently_in_either_format(tmp_path, monkeypatch):
    """A file with the published SHA-1 loads without a warning, whether it holds
    save_parameters keys ('features.0.weight') or, as older MXNet files, the
    prefix-stripped names save_params wrote ('conv0_weight')."""
    src = vision.squeezenet1_1(prefix='src_')
    src.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).uniform(size=(1, 3, 224, 224)))
    expected = src(x).asnumpy()
    for i, save in enumerate((src.save_parameters, src.save_params)):
        root = tmp_path / str(i)
        root.mkdir()
        save(str(root / 'file'))
        sha1 = hashlib.sha1((root / 'file').read_bytes()).hexdigest()
        (root / 'file').rename(root / f'squeezenet1.1-{sha1[:8]}.params')
        monkeypatch.setitem(model_store._model_sha1, 'squeezenet1.1', sha1)
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            net = vision.squeezenet1_1(pretrained=True, root=str(root))
        np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-6, atol=1e-6)


def test_root_with_tilde_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv('HOME', str(tmp_path))
    (tmp_path / 'zoo').mkdir()
    target = tmp_path / 'zoo' / 'alexnet-44335d1f.params'
    target.write_bytes(b'')
    with pytest.warns(UserWarning):
        assert model_store.get_model_file('alexnet', root='~/zoo') == str(target)


def test_purge_removes_params_files_only(tmp_path):
    (tmp_path / 'a.params').write_bytes(b'')
    (tmp_path / 'b.txt').write_bytes(b'')
    model_store.purge(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ['b.txt']
