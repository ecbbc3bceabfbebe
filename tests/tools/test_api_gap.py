"""tools/api_gap.py's coverage table: the README holds exactly its output, and new
namespaces (mx.np, mx.npx ...) get rows without edits to the tool."""
import importlib.util
import pathlib
import types

import mxcy as mx

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_gap = _load('_api_gap_tool', ROOT / 'tools' / 'api_gap.py')


def test_readme_table_is_the_tools_output():
    table = api_gap.markdown(mx, api_gap.load_manifest(), api_gap.load_exclusions())
    readme = (ROOT / 'README.md').read_text(encoding='utf-8')
    section = readme.split(api_gap.BEGIN, 1)[1].split(api_gap.END, 1)[0]
    assert section == '\n' + table, (
        "README.md's API coverage table is stale: run python tools/api_gap.py --write "
        "README.md")
    assert api_gap.replace_section(readme, table) == readme


def _fn(*names):
    code = f"def f({', '.join(names)}): pass"
    scope = {}
    exec(code, scope)       # noqa: S102  (a function with exactly these parameter names)
    return scope['f']


def test_new_namespaces_get_rows_without_edits():
    manifest = {
        'np': {'zeros': {'kind': 'function', 'params': ['shape', 'dtype'], 'varargs': False},
               'ones': {'kind': 'function', 'params': ['shape'], 'varargs': False},
               'fancy': {'kind': 'function', 'params': ['x'], 'varargs': False}},
        'np.random': {'uniform': {'kind': 'function', 'params': ['low', 'high'],
                                  'varargs': False}},
        'npx': {'relu': {'kind': 'function', 'params': ['data'], 'varargs': False},
                'gpu_thing': {'kind': 'function', 'params': [], 'varargs': False}},
    }
    fake = types.SimpleNamespace(
        np=types.SimpleNamespace(zeros=_fn('shape', 'dtype'), ones=_fn('size'),
                                 random=types.SimpleNamespace(uniform=_fn('low', 'high'))),
        npx=types.SimpleNamespace(relu=_fn('data')))
    exclusions = {'npx:gpu_thing': 'GPU-only in MXNet 1.9.1', 'np:fancy': 'a brand new why'}
    rows, reasons = api_gap.coverage(fake, manifest, exclusions)
    assert rows['np'] == {'modules': ['np', 'np.random'], 'names': 4, 'ok': 2,
                          'excluded': 1, 'todo': 1}        # ones() names other parameters
    assert rows['npx'] == {'modules': ['npx'], 'names': 2, 'ok': 1, 'excluded': 1, 'todo': 0}
    assert reasons == {api_gap.reason_summary('GPU-only'): 1, 'a brand new why': 1}
    table = api_gap.markdown(fake, manifest, exclusions)
    assert "| `mx.np` (with `np.random`) | 4 | 2 | 1 | 1 | 50.0% |" in table
    assert "| `mx.npx` | 2 | 1 | 1 | 0 | 50.0% |" in table
    assert "| **all** | 6 | 3 | 2 | 1 | 50.0% |" in table
    assert "| a brand new why | 1 |" in table


def test_reasons_are_summarised_by_keyword():
    assert api_gap.reason_summary("deprecated _v1 operator (MXNet keeps it)") == \
        api_gap.reason_summary("deprecated _v1 iterator (the pre-1.0 decoder)")
    assert 'sparse' in api_gap.reason_summary("sparse storage (row_sparse/csr) (DGL ops)")
    assert api_gap.family('NDArray') == 'nd' and api_gap.family('nd.contrib') == 'nd'
    assert api_gap.family('gluon.model_zoo.vision') == 'gluon'
