"""``import mxnet`` as an opt-in alias of mxcy, so legacy MXNet scripts run with no edit.

    python -m mxcy.alias install   [--target DIR]   # write DIR/mxnet (default: site-packages)
    python -m mxcy.alias status    [--target DIR]
    python -m mxcy.alias uninstall [--target DIR]   # remove exactly what install wrote

The mxcy wheel ships no ``mxnet`` package: nothing answers to ``import mxnet`` until
``install`` writes one, into the site-packages of the interpreter that runs it (or ``DIR``).
It writes two files, ``mxnet/__init__.py`` and the marker ``mxnet/MXCY_ALIAS`` (JSON: who
wrote the package, the SHA-256 of ``__init__.py``). ``__init__.py`` turns on the import hook
of ``mxcy.alias._hook``: ``mxnet`` is a thin module holding mxcy's names, and every
``mxnet.X.Y`` is the module ``mxcy.X.Y`` itself (``mxnet.gluon is mxcy.gluon``), so classes
exist once, ``isinstance`` holds across both names and pickles load back. No ``.pth`` file is
used: nothing runs at interpreter start-up, only when a script imports ``mxnet``. A symlink
``mxnet -> mxcy`` was not chosen because it would run every module a second time under the
other name (two ``NDArray`` classes, two engines).

``install`` refuses, and writes nothing, where a real MXNet is installed: a distribution whose
metadata names ``mxnet`` (``mxnet-1.9.1.dist-info``, ``mxnet_cu112``, ``mxnet-mkl`` ...), an
``mxnet`` directory without the marker, or an ``mxnet.py``; without ``--target`` also when
another ``mxnet`` is importable from this interpreter's ``sys.path``. ``uninstall`` removes the
two files (and the byte-code Python compiled from ``__init__.py``) only when the marker is
there and ``__init__.py`` is unchanged; anything else in the directory stays.

``mxnet.__version__`` is ``mxcy.__version__`` (``'0.1.0'`` today), not MXNet's ``'1.9.1'``: the
alias does not claim to be a release of MXNet. A script that compares versions
(``if mx.__version__ >= '1.6'``) sees an old version and takes its old-MXNet branch.
MXNet's NumPy interface comes along: ``from mxnet import np, npx`` gives ``mxcy.numpy`` and
``mxcy.numpy_extension``, so code written for ``npx.set_np()`` (the d2l book's) runs unchanged.
"""
import hashlib
import importlib.machinery
import json
import os
import re
import sysconfig

import mxcy

PACKAGE = 'mxnet'
MARKER = 'MXCY_ALIAS'
WRITER = 'mxcy.alias'

INIT_SOURCE = '''\
"""mxnet: the opt-in alias of mxcy, written by ``python -m mxcy.alias install``.

This is not Apache MXNet: ``import mxnet`` gives mxcy's API under MXNet's name, and every
``mxnet.X`` is the module ``mxcy.X``. Remove it with ``python -m mxcy.alias uninstall``.
"""
try:
    from mxcy.alias._hook import activate as _activate
except ImportError as _err:
    raise ImportError("this 'mxnet' is the alias of mxcy (python -m mxcy.alias install), but "
                      "mxcy cannot be imported (" + str(_err) + "); install mxcy, or run "
                      "python -m mxcy.alias uninstall") from _err
_activate(globals())
del _activate
'''

# the distributions MXNet was published as: mxnet, mxnet-mkl, mxnet-native, mxnet-cu112,
# mxnet-cu102mkl ... (used only when a distribution lists neither top_level.txt nor RECORD)
_MXNET_DIST = re.compile(r'^mxnet(-(cu\d+|cu\d+mkl|mkl|native))?$')


class AliasError(RuntimeError):
    """install/uninstall cannot proceed; the message says why and what to do."""


def default_target():
    """The site-packages directory of the running interpreter."""
    return sysconfig.get_paths()['purelib']


def _sha256(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def _read_marker(pkg_dir):
    """The marker's JSON dict, None when there is no marker; AliasError when unreadable."""
    path = os.path.join(pkg_dir, MARKER)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding='utf-8') as f:
            marker = json.load(f)
    except (OSError, ValueError) as err:
        raise AliasError(f"{path}: the alias marker cannot be read ({err}); remove "
                         f"{pkg_dir} by hand") from err
    if not isinstance(marker, dict) or marker.get('written_by') != WRITER:
        raise AliasError(f"{path}: not a marker written by {WRITER}; remove {pkg_dir} by hand")
    return marker


def _dist_provides_mxnet(info_dir):
    """Whether the .dist-info/.egg-info `info_dir` is a distribution that installs `mxnet`."""
    def read(name):
        path = os.path.join(info_dir, name)
        if not os.path.isfile(path):
            return None
        with open(path, encoding='utf-8', errors='replace') as f:
            return f.read()
    top_level = read('top_level.txt')
    if top_level is not None:
        return PACKAGE in top_level.split()
    record = read('RECORD')
    if record is not None:
        return any(line.split('/')[0].split(',')[0] in (PACKAGE, PACKAGE + '.py')
                   for line in record.splitlines())
    meta = read('METADATA') or read('PKG-INFO') or ''
    found = re.search(r'^Name:\s*(\S+)', meta, re.MULTILINE)
    name = found.group(1) if found else os.path.basename(info_dir).split('-')[0]
    return bool(_MXNET_DIST.match(re.sub(r'[-_.]+', '-', name).lower()))


def find_real_mxnet(target):
    """Descriptions of every MXNet (or other foreign ``mxnet``) installed in `target`."""
    found = []
    if not os.path.isdir(target):
        return found
    for entry in sorted(os.listdir(target)):
        path = os.path.join(target, entry)
        if entry.endswith(('.dist-info', '.egg-info')) and os.path.isdir(path):
            if _dist_provides_mxnet(path):
                found.append(f"the distribution {entry} ({path})")
        elif entry == PACKAGE and os.path.isdir(path):
            if not os.path.isfile(os.path.join(path, MARKER)):
                found.append(f"the package directory {path} (not written by {WRITER}: no "
                             f"{MARKER} marker)")
        elif entry.split('.')[0] == PACKAGE and entry.endswith(('.py', '.so', '.pyd')):
            found.append(f"the module {path}")
    return found


def _importable_elsewhere(target):
    """Where this interpreter would import another ``mxnet`` from (None if nowhere)."""
    spec = importlib.machinery.PathFinder.find_spec(PACKAGE)
    if spec is None:
        return None
    where = (spec.submodule_search_locations or [None])[0] or spec.origin
    if where and os.path.isfile(os.path.join(where, MARKER)):
        return None   # an alias written by us (here or in another directory)
    return where or repr(spec)


def status(target=None):
    """The alias's state in `target`: a dict with ``target``, ``state`` (``'installed'``,
    ``'absent'``, ``'blocked'`` by a real MXNet, or ``'modified'``) and ``detail``."""
    target = os.path.abspath(target or default_target())
    pkg_dir = os.path.join(target, PACKAGE)
    real = find_real_mxnet(target)
    if real:
        return {'target': target, 'state': 'blocked',
                'detail': 'a real mxnet is installed here: ' + '; '.join(real)}
    marker = _read_marker(pkg_dir)
    if marker is None:
        return {'target': target, 'state': 'absent',
                'detail': f'no mxnet alias in {target}'}
    changed = [name for name, digest in marker.get('files', {}).items()
               if os.path.isfile(os.path.join(pkg_dir, name))
               and _sha256(os.path.join(pkg_dir, name)) != digest]
    if changed:
        return {'target': target, 'state': 'modified',
                'detail': f"{pkg_dir} has the alias marker but {', '.join(changed)} changed "
                          "since install (another mxnet installed over it?)"}
    return {'target': target, 'state': 'installed',
            'detail': f"{pkg_dir}: import mxnet gives mxcy (mxnet.__version__ == "
                      f"{mxcy.__version__!r}); written by mxcy "
                      f"{marker.get('mxcy_version', '?')}"}


def install(target=None):
    """Write the ``mxnet`` alias package into `target` (default: site-packages); return
    its directory. Raises AliasError, writing nothing, where a real MXNet is installed."""
    explicit = target is not None
    target = os.path.abspath(target or default_target())
    real = find_real_mxnet(target)
    if real:
        raise AliasError(f"refusing to install the mxnet alias into {target}: a real mxnet is "
                         f"installed there ({'; '.join(real)}). Uninstall it first "
                         "(pip uninstall mxnet), or use another environment or --target")
    if not explicit:
        other = _importable_elsewhere(target)
        if other is not None:
            raise AliasError(f"refusing to install the mxnet alias into {target}: this "
                             f"interpreter already imports a real mxnet from {other}; "
                             "uninstall it first, or use another environment")
    pkg_dir = os.path.join(target, PACKAGE)
    current = status(target)
    if current['state'] == 'modified':
        raise AliasError(f"refusing to install: {current['detail']}")
    init_path = os.path.join(pkg_dir, '__init__.py')
    marker = {'written_by': WRITER, 'mxcy_version': mxcy.__version__,
              'files': {'__init__.py': hashlib.sha256(INIT_SOURCE.encode()).hexdigest()}}
    try:
        os.makedirs(pkg_dir, exist_ok=True)
        # the marker first: a package directory that holds our __init__.py always says so
        with open(os.path.join(pkg_dir, MARKER), 'w', encoding='utf-8') as f:
            json.dump(marker, f, indent=1)
        with open(init_path, 'w', encoding='utf-8') as f:
            f.write(INIT_SOURCE)
    except OSError as err:
        raise AliasError(f"cannot write the mxnet alias into {target}: {err}; use a "
                         "virtual environment you can write to, or --target DIR") from err
    return pkg_dir


def uninstall(target=None):
    """Remove what ``install`` wrote in `target` (default: site-packages); return the
    removed paths (empty when there was no alias). Anything the alias did not write stays."""
    target = os.path.abspath(target or default_target())
    pkg_dir = os.path.join(target, PACKAGE)
    if not os.path.isdir(pkg_dir):
        return []
    marker = _read_marker(pkg_dir)
    if marker is None:
        raise AliasError(f"{pkg_dir} was not written by {WRITER} (no {MARKER} marker): left "
                         "untouched; if it is MXNet, use pip uninstall mxnet")
    current = status(target)
    if current['state'] != 'installed':
        raise AliasError(f"nothing removed: {current['detail']}")
    removed = []
    for name in marker.get('files', {}):
        path = os.path.join(pkg_dir, name)
        if os.path.isfile(path):
            os.remove(path)
            removed.append(path)
    cache = os.path.join(pkg_dir, '__pycache__')
    if os.path.isdir(cache):
        for entry in os.listdir(cache):
            if entry.startswith('__init__.') and entry.endswith('.pyc'):
                os.remove(os.path.join(cache, entry))
                removed.append(os.path.join(cache, entry))
        if not os.listdir(cache):
            os.rmdir(cache)
    os.remove(os.path.join(pkg_dir, MARKER))
    removed.append(os.path.join(pkg_dir, MARKER))
    if not os.listdir(pkg_dir):
        os.rmdir(pkg_dir)
        removed.append(pkg_dir)
    return removed
