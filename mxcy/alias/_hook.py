"""The import hook behind the ``mxnet`` alias: ``mxnet`` is a thin module over mxcy and
every ``mxnet.X.Y`` is the module object ``mxcy.X.Y`` itself.

The ``mxnet/__init__.py`` that ``python -m mxcy.alias install`` writes calls
``activate(globals())``, which

- puts one ``AliasFinder`` at the front of ``sys.meta_path`` (once per process). It answers
  only for names under ``mxnet.``: it imports ``mxcy.<rest>`` and leaves that very module in
  ``sys.modules['mxnet.<rest>']``, so ``import mxnet.gluon.nn`` neither runs a file twice nor
  makes a second copy of a class (``mxnet.gluon is mxcy.gluon``; ``isinstance`` and pickles
  work across both names);
- copies mxcy's top-level names into the ``mxnet`` module (``mx.nd is mxcy.nd``) and adds a
  module ``__getattr__`` that reads anything mxcy gains later from mxcy itself.

invariant: no module is ever executed under an ``mxnet.`` name; the finder only maps names.

``mxnet`` is a module of its own (``__name__ == 'mxnet'``) rather than ``mxcy`` itself put
under a second name, so that a from-import of a name mxcy lacks reaches this finder and gets
Python's usual error. MXNet's NumPy interface comes through like the rest:
``from mxnet import np, npx`` gives ``mxcy.numpy`` and ``mxcy.numpy_extension`` (attributes
of mxcy), and ``import mxnet.numpy`` / ``mxnet.numpy_extension`` the same modules.
"""
import importlib
import importlib.abc
import importlib.util
import sys

PREFIX = 'mxnet.'

class AliasLoader(importlib.abc.Loader):
    """Loads ``mxnet.<rest>`` by importing ``mxcy.<rest>`` and putting that module in
    ``sys.modules`` under the alias name (the import system returns what is there)."""

    def __init__(self, real_name):
        self.real_name = real_name

    def create_module(self, spec):
        return None   # a throwaway module; exec_module replaces it in sys.modules

    def exec_module(self, module):
        real = importlib.import_module(self.real_name)
        sys.modules[module.__spec__.name] = real


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``mxnet.<rest>`` as ``mxcy.<rest>``; every other name is left to the next
    finder."""

    _mxcy_alias = True   # how activate() recognises an installed finder across reloads

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(PREFIX):
            return None
        rest = fullname[len(PREFIX):]
        real_name = 'mxcy.' + rest
        try:
            real_spec = importlib.util.find_spec(real_name)
        except ModuleNotFoundError:
            real_spec = None
        if real_spec is None:
            return None   # Python raises its usual "No module named 'mxnet.<rest>'"
        return importlib.util.spec_from_loader(fullname, AliasLoader(real_name),
                                               is_package=real_spec.submodule_search_locations
                                               is not None)


def install_finder():
    """Put an AliasFinder first on ``sys.meta_path`` unless one is there; return it."""
    for finder in sys.meta_path:
        if getattr(finder, '_mxcy_alias', False):
            return finder
    finder = AliasFinder()
    sys.meta_path.insert(0, finder)
    return finder


def activate(namespace):
    """Make the module whose globals are `namespace` the ``mxnet`` alias of mxcy."""
    import mxcy
    install_finder()
    for key, value in vars(mxcy).items():
        if not (key.startswith('__') and key.endswith('__')):
            namespace.setdefault(key, value)
    namespace['__version__'] = mxcy.__version__

    def __getattr__(name):
        try:
            return getattr(mxcy, name)
        except AttributeError:
            pass
        raise AttributeError(f"module 'mxnet' (the mxcy alias) has no attribute {name!r}: "
                             f"mxcy {mxcy.__version__} has no mx.{name}")

    def __dir__():
        return sorted(set(namespace) | set(dir(mxcy)))

    namespace['__getattr__'] = __getattr__
    namespace['__dir__'] = __dir__
