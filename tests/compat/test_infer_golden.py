"""Shape and type inference as MXNet 1.9.1 does it, on the graphs of infer_cases.py.

infer_golden.json holds MXNet's answers (tools/mxnet_infer_fixtures.py): the complete
forms return ``(None, None, None)`` and warn, naming the undecided arguments, when too
little is known; the partial forms return what is known (``()``/0 for unknown shapes and
dimensions, None for unknown dtypes); backward inference fills inputs from outputs and
from other inputs; where MXNet raises, mxcy raises an MXNetError too.
"""
import importlib.util
import json
import pathlib
import warnings

import numpy as np
import pytest

import mxcy as mx

HERE = pathlib.Path(__file__).resolve().parent


def _load_cases():
    spec = importlib.util.spec_from_file_location('_infer_cases', HERE / 'infer_cases.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASES


CASES = _load_cases()
GOLDEN = json.loads((HERE / 'infer_golden.json').read_text())['cases']
QUERIES = [(name, i) for name, case in sorted(GOLDEN.items())
           for i in range(len(case['queries']))]

_CAT = "MXNet's Concat counts an unknown input's size along `dim` as 0"
# Where MXNet 1.9.1 raises on a valid graph or answers wrongly, mxcy answers correctly:
# (case, query index) -> (mxcy's answer in the golden file's encoding, why).
DEVIATIONS = {
    ('concat_then_add', 1): ([[[2, 3], [2, 4], [2, 7]], [[2, 7]], []],
                             _CAT + " and then finds the output (2, 3) incompatible with c "
                             "(2, 7); b = (2, 4) is the one answer"),
    ('concat_then_add', 2): ([[[2, 3], [2, 0], [2, 0]], [[2, 0]], []],
                             _CAT + " and so claims the output is (2, 3) while b is "
                             "unknown"),
    ('concat_then_add', 3): ([[[2, 3], [2, 4], [2, 7]], [[2, 7]], []],
                             "the output (2, 7) and b (2, 4) decide a = (2, 3); MXNet "
                             "leaves it unknown"),
    ('concat_then_add', 4): (None, _CAT + " and raises 'Incompatible output shape: "
                             "expected [2,0], got [2,7]'; the inputs are simply undecided"),
    ('concat_then_add', 5): ([[[2, 0], [2, 0], [2, 7]], [[2, 7]], []],
                             "the same, in the partial form"),
    ('activation_then_add', 2): ([['float64', 'float64'], ['float64'], []],
                                 "MXNet's Dropout raises 'input type to dropout is not "
                                 "specified' when its type comes from its output; the "
                                 "dtype passes through it unchanged"),
    ('stack', 0): ([[[2, 3], [2, 3]], [[2, 2, 3]], []],
                   "stack's inputs share one shape; MXNet's stack does not pass it from one "
                   "input to the other"),
    ('stack', 1): ([[[2, 3], [2, 3]], [[2, 2, 3]], []], "the same, in the partial form"),
    ('stack', 2): (None, "MXNet stacks (2, 3) with (2, 4) without a word (and says the "
                   "output is (2, 2, 3)); mxcy raises naming the argument and both shapes"),
    ('embedding', 4): ([[None, 'float16'], ['float16'], []],
                       "MXNet raises 'First input must have specified type' in the partial "
                       "form, whose point is to answer with what is known"),
    ('instancenorm', 1): ([[[], [], []], [[]], []],
                          "MXNet fails an internal index check ('index = 1 must be in range "
                          "[0, -1)') when nothing is known; nothing is the answer"),
    ('softmax_label', 2): ([[[2, 5, 3], [2]], [[2, 5, 3]], []],
                           "MXNet's inference asks for a label (2, 5) for data (2, 5, 3), "
                           "but its forward flattens the data to (2, 15) and reads one label "
                           "per row, as mxcy's does"),
}


def _encode(kind, result):
    if result is None or result == (None, None, None):
        return None
    if kind.startswith('shape'):
        return [[list(s) for s in group] for group in result]
    return [[None if t is None else np.dtype(t).name for t in group] for group in result]


def _build(name):
    with mx.name.NameManager():
        return CASES[name][0](mx)


def test_cases_match_the_golden_file():
    assert sorted(CASES) == sorted(GOLDEN)
    for name, (_, queries) in CASES.items():
        assert len(queries) == len(GOLDEN[name]['queries']), name


@pytest.mark.parametrize('name', sorted(GOLDEN))
def test_graph_lists_the_same_inputs(name):
    sym = _build(name)
    assert sym.list_arguments() == GOLDEN[name]['arguments']
    assert sym.list_auxiliary_states() == GOLDEN[name]['aux_states']


@pytest.mark.parametrize('name,index', QUERIES)
def test_inference_matches_mxnet(name, index):
    want = GOLDEN[name]['queries'][index]
    kind, given = want['kind'], {k: tuple(v) if isinstance(v, list) else v
                                 for k, v in want['given'].items()}
    sym = _build(name)
    fn = getattr(sym, f"infer_{kind}")
    if (name, index) in DEVIATIONS:
        result, _ = DEVIATIONS[name, index]
        with warnings.catch_warnings(record=True):
            warnings.simplefilter('always')
            if result is None and not want['error']:
                with pytest.raises(mx.MXNetError):
                    fn(**given)
            else:
                assert _encode(kind, fn(**given)) == result
        return
    if want['error']:
        with pytest.raises(mx.MXNetError):
            fn(**given)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        got = _encode(kind, fn(**given))
    assert got == want['result'], f"{name} {kind}({given})"
    texts = '\n'.join(str(w.message) for w in caught) or None
    assert texts == want['warning']
