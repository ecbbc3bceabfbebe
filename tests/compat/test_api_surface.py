"""mxcy has every public name of MXNet 1.9.1 with MXNet's parameter names.

The manifest (mxnet191_api.json) is written by tools/mxnet_api.py in the MXNet venv; the
comparison is tools/api_gap.py's, so this test and the gap report agree. One test per
namespace: a namespace that is not complete fails, listing what is missing or differs.
Names that mxcy deliberately does not provide are in exclusions.py, each with its reason.
"""
import importlib.util
import pathlib

import pytest

import mxcy as mx

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_gap = _load('_api_gap', ROOT / 'tools' / 'api_gap.py')
EXCLUSIONS = _load('_exclusions', HERE / 'exclusions.py').EXCLUSIONS
MANIFEST = api_gap.load_manifest(HERE / 'mxnet191_api.json')


@pytest.mark.parametrize('module', sorted(MANIFEST))
def test_namespace_matches_mxnet(module):
    missing, mismatched = api_gap.gaps(mx, MANIFEST, module)
    missing = [n for n in missing if f'{module}:{n}' not in EXCLUSIONS]
    mismatched = {n: r for n, r in mismatched.items() if f'{module}:{n}' not in EXCLUSIONS}
    lines = []
    if missing:
        lines.append(f"{len(missing)} missing: {' '.join(missing)}")
    lines += [f"{n}: {r}" for n, r in sorted(mismatched.items())]
    assert not lines, f"mx.{module} differs from MXNet 1.9.1 in {len(lines)} ways:\n" + \
        '\n'.join(lines)


def test_exclusions_within_budget():
    total = sum(len(v) for v in MANIFEST.values())
    assert len(EXCLUSIONS) <= 0.05 * total, (len(EXCLUSIONS), total)


def test_exclusions_name_real_entries_with_reasons():
    for key, reason in EXCLUSIONS.items():
        module, _, name = key.partition(':')
        assert name in MANIFEST.get(module, {}), f"{key} is not in the manifest"
        assert isinstance(reason, str) and len(reason) > 10, key
