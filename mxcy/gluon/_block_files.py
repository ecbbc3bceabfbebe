"""``Block.save(prefix)`` / ``Block.load(prefix)``: a model's structure and parameters in
MXNet 1.9.1's files ``<prefix>-model.json`` and ``<prefix>-model.params``.

The JSON nests one entry per block, keyed ``<class name, lower case><n>`` with n counted
over the blocks in depth-first order from 0: the block's name when saved
(``orig_name``), whether it was hybridized, its children as {child name: key in its
parent}, and for a hybridized block that has run, its traced graph (``symbol``, the input
variables as ``inputs``, ``in_format``/``out_format``). The parameters are saved by their
place in the tree, as ``save_parameters`` does. ``load`` takes a model built the same
way: it gives each block its saved name back (and its parameters the names that follow
from it), loads the parameters, and restores saved graphs.
"""
import json

from mxcy import symbol as _sym
from mxcy.base import MXNetError


def _entries(block, counter):
    """(key, entry) of `block` and, nested in the entry, its children's."""
    from mxcy.gluon.block import HybridBlock
    key = f'{type(block).__name__.lower()}{next(counter)}'
    entry = {'orig_name': block.name,
             'hybridized': bool(getattr(block, '_active', False)),
             'children': {child.name: name for name, child in block._children.items()}}
    graph = getattr(block, '_cached_graph', None) if isinstance(block, HybridBlock) \
        else None
    if graph is not None:
        inputs, out, out_format = graph
        entry.update(in_format=list(range(len(inputs))), out_format=out_format,
                     inputs=[i.tojson() for i in inputs], symbol=out.tojson())
    for child in block._children.values():
        child_key, child_entry = _entries(child, counter)
        entry[child_key] = child_entry
    return key, entry


def _counter():
    n = 0
    while True:
        yield n
        n += 1


def save_block(block, prefix):
    key, entry = _entries(block, _counter())
    with open(f'{prefix}-model.json', 'w') as f:
        json.dump({key: entry}, f)
    block.save_parameters(f'{prefix}-model.params')


def _rename(block, orig_name):
    """Give `block` its saved name; its own parameters' names follow it."""
    old = block.prefix
    new = orig_name + '_'
    renamed = {}
    for p in block._reg_params.values():
        if p.name.startswith(old):
            renamed[p.name] = new + p.name[len(old):]
    params = block.params._params
    for old_name, new_name in renamed.items():
        if old_name in params:
            p = params.pop(old_name)
            p.name = new_name
            p._var = None               # its traced variable carried the old name
            params[new_name] = p
    block._name = orig_name


def _restore(block, key, entry, where):
    kind = type(block).__name__.lower()
    if not (key.startswith(kind) and key[len(kind):].isdigit()):
        raise MXNetError(f"Block.load: {where} was saved from a {key!r}, the model has a "
                         f"{type(block).__name__} there; build the model as it was saved")
    saved_children = entry['children']
    if len(saved_children) != len(block._children):
        raise MXNetError(f"Block.load: {where} ({entry['orig_name']}) had "
                         f"{len(saved_children)} children when saved, the model's has "
                         f"{len(block._children)}")
    _rename(block, entry['orig_name'])
    nested = [(k, v) for k, v in entry.items() if isinstance(v, dict) and k != 'children']
    for (child_key, child_entry), child in zip(nested, block._children.values()):
        _restore(child, child_key, child_entry, f'{where}.{child_key}')
    if entry.get('symbol') is not None:
        inputs = [_sym.load_json(j) for j in entry['inputs']]
        block._cached_graph = (inputs, _sym.load_json(entry['symbol']), entry['out_format'])
        block._cached = None
    if entry.get('hybridized'):
        block._active = True


def load_block(block, prefix):
    with open(f'{prefix}-model.json') as f:
        saved = json.load(f)
    if len(saved) != 1:
        raise MXNetError(f"Block.load: {prefix}-model.json must hold one top-level block, "
                         f"got {list(saved)}")
    (key, entry), = saved.items()
    _restore(block, key, entry, key)
    block.load_parameters(f'{prefix}-model.params')
