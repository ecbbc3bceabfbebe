"""The ``import mxnet`` opt-in (mxcy.alias): install into a temporary --target, import the
alias in a child interpreter, refuse a real MXNet, remove exactly what was written."""
import json
import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

import mxcy
import mxcy.alias as alias
from mxcy.alias.__main__ import main

REPO = pathlib.Path(mxcy.__file__).resolve().parent.parent

# Runs in a child interpreter with the alias on PYTHONPATH; prints one JSON line.
CHILD = r'''
import json, pickle, sys
import numpy as np
import mxnet as mx
from mxnet import gluon, autograd, nd, sym
import mxnet.gluon.nn
from mxnet.gluon import nn
import mxnet.ndarray as ndarray_mod
import mxcy

out = {}
out['name'] = mx.__name__
out['version'] = mx.__version__
out['mxcy_version'] = mxcy.__version__
out['identity'] = {
    'nd': nd is mxcy.nd, 'sym': sym is mxcy.sym, 'gluon': gluon is mxcy.gluon,
    'autograd': autograd is mxcy.autograd, 'ndarray_mod': ndarray_mod is mxcy.ndarray,
    'mxnet.gluon': mxnet.gluon is mxcy.gluon, 'mxnet.gluon.nn': mxnet.gluon.nn is mxcy.gluon.nn,
    'nn': nn is mxcy.gluon.nn, 'Dense': nn.Dense is mxcy.gluon.nn.Dense,
    'sys.modules': sys.modules['mxnet.gluon.nn'] is mxcy.gluon.nn,
    'mod': mx.mod.Module is mxcy.module.Module,
    'NDArray': isinstance(mx.nd.ones((1,)), mxcy.nd.NDArray),
}
# the alias names modules, it never runs one a second time or relabels it
out['mxcy_spec'] = mxcy.gluon.nn.__spec__.name
out['mxnet_files'] = sorted(m for m in sys.modules if m.startswith('mxnet')
                            and getattr(sys.modules[m], '__name__', '').startswith('mxnet'))
out['dir_has_nd'] = 'nd' in dir(mx)

errors = {}
for stmt in ('from mxnet import np', 'from mxnet import npx', 'import mxnet.numpy',
             'import mxnet.nonexistent_module'):
    try:
        exec(stmt, {})
        errors[stmt] = None
    except ImportError as err:
        errors[stmt] = [type(err).__name__, str(err)]
out['errors'] = errors
out['np_is_mxcy'] = mx.np is mxcy.numpy and sys.modules['mxnet.numpy'] is mxcy.numpy
from mxnet import np as mnp, npx as mnpx
import mxnet.numpy_extension
mnpx.set_np()
z = mnpx.relu(mnp.array([[-1., 2.]]) @ mnp.ones((2, 2)))
out['npx'] = [mnpx is mxcy.numpy_extension, mxnet.numpy_extension is mxcy.numpy_extension,
              type(z).__name__, z.asnumpy().tolist()]
mnpx.reset_np()

# one Gluon training step, values checked by the parent
net = nn.Dense(1, in_units=2)
net.initialize(mx.init.One())
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
x = nd.array([[1, 2], [3, 4]])
y = nd.array([[1], [2]])
with autograd.record():
    loss = gluon.loss.L2Loss()(net(x), y)
loss.backward()
trainer.step(2)
out['dense_weight'] = net.weight.data().asnumpy().tolist()
out['dense_bias'] = net.bias.data().asnumpy().tolist()

# mx.mod.Module fit on a separable problem
rng = np.random.RandomState(0)
data = rng.randn(64, 2).astype('float32')
label = (data[:, 0] + data[:, 1] > 0).astype('float32')
it = mx.io.NDArrayIter(data, label, batch_size=16, shuffle=False)
net_sym = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2),
                               name='softmax')
mod = mx.mod.Module(net_sym, data_names=['data'], label_names=['softmax_label'])
mx.random.seed(0)
mod.fit(it, num_epoch=20, optimizer='sgd', optimizer_params={'learning_rate': 0.5},
        initializer=mx.init.Xavier())
out['module_accuracy'] = dict(mod.score(it, 'acc'))['accuracy']

# pickles written under the alias
blob = pickle.dumps((mx.nd.array([[1.5, -2.0]]), net))
back_arr, back_net = pickle.loads(blob)
out['pickle_roundtrip'] = back_arr.asnumpy().tolist()
out['pickle_net_weight'] = back_net.weight.data().asnumpy().tolist()
out['pickle_hex'] = blob.hex()
print(json.dumps(out))
'''


def _run_child(tmp_path, site):
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join([str(site), str(REPO)])
    env.pop('PYTHONDONTWRITEBYTECODE', None)   # let Python compile mxnet/__init__.py
    script = tmp_path / 'child.py'
    script.write_text(CHILD)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in pathlib.Path(root).rglob('*'))


def test_the_package_ships_no_mxnet():
    from setuptools import find_packages
    packages = find_packages(str(REPO), include=['mxcy*'])
    assert 'mxcy.alias' in packages
    assert not any(p == 'mxnet' or p.startswith('mxnet.') for p in packages)
    assert not (REPO / 'mxnet').exists() and not (REPO / 'mxcy' / 'mxnet').exists()
    assert 'include = ["mxcy*"]' in (REPO / 'pyproject.toml').read_text()


def test_alias_imports_train_pickle_and_uninstall(tmp_path, capsys):
    site = tmp_path / 'site'
    assert main(['install', '--target', str(site)]) == 0
    assert _tree(site) == ['mxnet', 'mxnet/MXCY_ALIAS', 'mxnet/__init__.py']
    out = _run_child(tmp_path, site)

    assert out['name'] == 'mxnet'
    assert out['version'] == out['mxcy_version'] == mxcy.__version__
    assert out['identity'] == dict.fromkeys(out['identity'], True)
    assert out['mxcy_spec'] == 'mxcy.gluon.nn'
    assert out['mxnet_files'] == ['mxnet']          # only the thin top-level module
    assert out['dir_has_nd']

    assert out['errors']['from mxnet import np'] is None       # mx.np is mxcy.numpy
    assert out['errors']['import mxnet.numpy'] is None
    assert out['np_is_mxcy']
    assert out['errors']['from mxnet import npx'] is None
    assert out['npx'] == [True, True, 'ndarray', [[1.0, 1.0]]]
    kind, msg = out['errors']['import mxnet.nonexistent_module']
    assert kind == 'ModuleNotFoundError' and 'mxnet.nonexistent_module' in msg

    # w = 1, b = 0; pred = [3, 7]; L2Loss gradient (pred - y) = [2, 5], step(2) halves it
    x = np.array([[1., 2.], [3., 4.]])
    diff = x @ np.ones(2) - np.array([1., 2.])
    np.testing.assert_allclose(out['dense_weight'], [1 - 0.1 * (diff @ x) / 2], rtol=1e-6)
    np.testing.assert_allclose(out['dense_bias'], [-0.1 * diff.sum() / 2], rtol=1e-6)
    assert out['module_accuracy'] >= 0.95

    # the pickle names mxcy's modules, so it loads where the alias is not installed
    blob = bytes.fromhex(out['pickle_hex'])
    assert b'mxnet' not in blob
    arr, net = pickle.loads(blob)
    np.testing.assert_array_equal(arr.asnumpy(), [[1.5, -2.0]])
    assert out['pickle_roundtrip'] == [[1.5, -2.0]]
    np.testing.assert_allclose(net.weight.data().asnumpy(), out['dense_weight'])
    assert out['pickle_net_weight'] == out['dense_weight']

    # the child compiled mxnet/__init__.py; uninstall takes that too and leaves nothing
    assert any(p.startswith('mxnet/__pycache__/__init__.') for p in _tree(site))
    capsys.readouterr()
    assert main(['uninstall', '--target', str(site)]) == 0
    assert 'removed the mxnet alias' in capsys.readouterr().out
    assert _tree(site) == []


def _fake_dist(site, dirname, name, top_level=None):
    info = site / dirname
    info.mkdir(parents=True)
    (info / 'METADATA').write_text(f'Metadata-Version: 2.1\nName: {name}\nVersion: 1.9.1\n')
    if top_level is not None:
        (info / 'top_level.txt').write_text(top_level + '\n')


@pytest.mark.parametrize('dirname,name,top_level', [
    ('mxnet-1.9.1.dist-info', 'mxnet', None),
    ('mxnet_cu112-1.9.1.dist-info', 'mxnet-cu112', None),
    ('mxnet_mkl-1.6.0.egg-info', 'mxnet-mkl', None),
    ('some_fork-2.0.dist-info', 'some-fork', 'mxnet'),
])
def test_install_refuses_a_real_mxnet_distribution(tmp_path, capsys, dirname, name, top_level):
    site = tmp_path / 'site'
    _fake_dist(site, dirname, name, top_level)
    before = _tree(site)
    assert main(['install', '--target', str(site)]) == 1
    err = capsys.readouterr().err
    assert 'refusing to install' in err and 'real mxnet' in err and dirname in err
    assert _tree(site) == before
    with pytest.raises(alias.AliasError, match='real mxnet is installed'):
        alias.install(str(site))
    assert main(['status', '--target', str(site)]) == 0
    out = capsys.readouterr().out
    assert 'mxnet alias: blocked' in out and dirname in out


def test_an_unrelated_distribution_named_like_mxnet_does_not_block(tmp_path):
    site = tmp_path / 'site'
    _fake_dist(site, 'mxnet_model_server-1.0.dist-info', 'mxnet-model-server', 'mms')
    assert alias.install(str(site)) == str(site / 'mxnet')
    assert alias.status(str(site))['state'] == 'installed'


def test_a_foreign_mxnet_directory_is_refused_and_never_removed(tmp_path, capsys):
    site = tmp_path / 'site'
    (site / 'mxnet').mkdir(parents=True)
    (site / 'mxnet' / '__init__.py').write_text('__version__ = "1.9.1"\n')
    before = _tree(site)
    with pytest.raises(alias.AliasError, match='no MXCY_ALIAS marker'):
        alias.install(str(site))
    assert main(['uninstall', '--target', str(site)]) == 1
    assert 'left untouched' in capsys.readouterr().err
    assert _tree(site) == before
    assert (site / 'mxnet' / '__init__.py').read_text() == '__version__ = "1.9.1"\n'


def test_uninstall_removes_only_what_install_wrote(tmp_path):
    site = tmp_path / 'site'
    alias.install(str(site))
    alias.install(str(site))                       # a second install refreshes the same files
    (site / 'mxnet' / 'notes.txt').write_text('mine')
    (site / 'other.py').write_text('x = 1\n')
    removed = alias.uninstall(str(site))
    assert sorted(os.path.basename(p) for p in removed) == ['MXCY_ALIAS', '__init__.py']
    assert _tree(site) == ['mxnet', 'mxnet/notes.txt', 'other.py']
    assert alias.uninstall(str(site / 'empty')) == []


def test_uninstall_refuses_when_the_alias_was_overwritten(tmp_path, capsys):
    site = tmp_path / 'site'
    alias.install(str(site))
    (site / 'mxnet' / '__init__.py').write_text('# another mxnet\n')
    assert main(['status', '--target', str(site)]) == 0
    assert 'mxnet alias: modified' in capsys.readouterr().out
    with pytest.raises(alias.AliasError, match='nothing removed.*__init__.py changed'):
        alias.uninstall(str(site))
    assert _tree(site) == ['mxnet', 'mxnet/MXCY_ALIAS', 'mxnet/__init__.py']
    with pytest.raises(alias.AliasError, match='refusing to install'):
        alias.install(str(site))


def test_status_output(tmp_path, capsys):
    site = tmp_path / 'site'
    assert main(['status', '--target', str(site)]) == 0
    assert capsys.readouterr().out == f'mxnet alias: absent\n  no mxnet alias in {site}\n'
    assert main(['install', '--target', str(site)]) == 0
    assert 'mxnet alias of mxcy' in capsys.readouterr().out
    assert main(['status', '--target', str(site)]) == 0
    out = capsys.readouterr().out
    assert out.startswith('mxnet alias: installed\n')
    assert f"mxnet.__version__ == {mxcy.__version__!r}" in out and str(site / 'mxnet') in out
    assert json.loads((site / 'mxnet' / 'MXCY_ALIAS').read_text())['written_by'] == 'mxcy.alias'
    assert main(['uninstall', '--target', str(site)]) == 0
    assert main(['uninstall', '--target', str(site)]) == 0
    assert 'nothing removed' in capsys.readouterr().out


def test_default_target_refuses_an_mxnet_importable_elsewhere(tmp_path, monkeypatch):
    site, other = tmp_path / 'site', tmp_path / 'other'
    site.mkdir()
    (other / 'mxnet').mkdir(parents=True)
    (other / 'mxnet' / '__init__.py').write_text('')
    monkeypatch.setattr(alias, 'default_target', lambda: str(site))
    monkeypatch.syspath_prepend(str(other))
    with pytest.raises(alias.AliasError, match=f'imports a real mxnet from {other}'):
        alias.install()
    assert _tree(site) == []
    monkeypatch.syspath_prepend(str(site))         # an alias of ours elsewhere is fine
    (other / 'mxnet' / '__init__.py').unlink()
    (other / 'mxnet').rmdir()
    assert alias.install() == str(site / 'mxnet')
    assert alias.status()['state'] == 'installed'
