"""Symbol attributes as MXNet 1.9.1 stores them, on the symbols of attr_cases.py.

attr_golden.json holds MXNet's answers (tools/mxnet_attr_fixtures.py): the ``tojson()``
string (mxcy's must be the same bytes), ``list_attr()``, ``attr_dict()``, ``attr(key)``,
and which constructions MXNet refuses (mxcy refuses them too, with an exception of the
same kind: MXNetError where MXNet raises it, else the same Python type).
"""
import importlib.util
import json
import pathlib

import pytest

import mxcy as mx

HERE = pathlib.Path(__file__).resolve().parent


def _load_cases():
    spec = importlib.util.spec_from_file_location('_attr_cases', HERE / 'attr_cases.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = _load_cases()
GOLDEN = json.loads((HERE / 'attr_golden.json').read_text())['cases']


def _build(name):
    with mx.name.NameManager():
        return CASES.CASES[name](mx)


def test_cases_match_the_golden_file():
    assert sorted(CASES.CASES) == sorted(GOLDEN)


@pytest.mark.parametrize('name', sorted(GOLDEN))
def test_attributes_match_mxnet(name):
    want = GOLDEN[name]
    if 'error' in want:
        kind = mx.MXNetError if want['error'] == 'MXNetError' else getattr(
            __builtins__, want['error'], None) or __import__('builtins').__dict__[want['error']]
        with pytest.raises(kind):
            _build(name)
        return
    sym = _build(name)
    assert sym.tojson() == want['tojson']
    assert sym.attr_dict() == want['attr_dict']
    if 'list_attr' in want:
        assert sym.list_attr() == want['list_attr']
        assert {k: sym.attr(k) for k in CASES.KEYS} == want['attr']


@pytest.mark.parametrize('name', sorted(n for n, c in GOLDEN.items() if 'error' not in c))
def test_json_round_trip_is_byte_identical(name):
    text = GOLDEN[name]['tojson']
    loaded = mx.sym.load_json(text)
    assert loaded.tojson() == text
    assert loaded.attr_dict() == GOLDEN[name]['attr_dict']
