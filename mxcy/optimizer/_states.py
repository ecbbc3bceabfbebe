"""The optimizer-states file: MXNet's NDArray file format with a JSON header, no pickle.

``dumps(states, optimizer, dump_optimizer) -> bytes`` writes a dict of arrays: every
NDArray of the states under ``'0'``, ``'1'``, ..., and under ``'__optimizer_states__'``
a uint8 array holding the JSON header::

    {"format": "mxcy-optimizer-states", "version": 1,
     "states": <value>,            # the Updater's dict index -> state
     "counts": <value> | null,     # update counts (per device, per index), num_update
     "optimizer": null | {"class": "module.QualName", "attrs": <value>}}

A ``<value>`` is None/bool/int/float/str, or a one-key object tagging a container:
``{"array": "3"}``, ``{"tuple": [...]}``, ``{"list": [...]}``, ``{"dict": [[k, v], ...]}``
(keys keep their int/str type) or ``{"object": "module.QualName", "attrs": <dict>}`` for
an lr scheduler. Classes are looked up among the already imported subclasses of
``Optimizer`` / ``LRScheduler`` and rebuilt without calling ``__init__`` (as unpickling
does), so reading a file runs no code named by the file and imports nothing.

The update counts are saved even without `dump_optimizer` and restored into an
``Optimizer``, so lr schedules and Adam's bias correction continue where they stopped
(MXNet lost them unless the whole optimizer was pickled).
"""
import io
import json
import numbers

import numpy as np

from mxcy._ndarray import NDArray
from mxcy.ndarray.io import load_frombuffer, save
from mxcy.ndarray.utils import array

HEADER_KEY = '__optimizer_states__'
FORMAT = 'mxcy-optimizer-states'
VERSION = 1
# Saved separately (counts) or never (param_dict holds the caller's Parameters).
_NOT_ATTRS = ('param_dict', 'num_update', '_all_index_update_counts',
              '_index_update_count')


def _class_path(klass):
    return f"{klass.__module__}.{klass.__qualname__}"


def _find_subclass(base, path):
    """The imported subclass of `base` (or `base` itself) whose path is `path`."""
    todo, seen = [base], set()
    while todo:
        klass = todo.pop()
        if klass in seen:
            continue
        seen.add(klass)
        if _class_path(klass) == path:
            return klass
        todo.extend(klass.__subclasses__())
    return None


class _Encoder:
    def __init__(self, arrays):
        self.arrays = arrays            # dict name -> NDArray, or None (no arrays allowed)

    def encode(self, value, where):
        from mxcy.lr_scheduler import LRScheduler
        if isinstance(value, np.generic):
            value = value.item()
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            return float(value)
        if isinstance(value, NDArray) and self.arrays is not None:
            name = str(len(self.arrays))
            self.arrays[name] = value
            return {'array': name}
        if isinstance(value, (tuple, list)):
            items = [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
            return {'tuple' if isinstance(value, tuple) else 'list': items}
        if isinstance(value, dict):
            return {'dict': [[self.encode(k, f"{where} key"),
                              self.encode(v, f"{where}[{k!r}]")] for k, v in value.items()]}
        if isinstance(value, LRScheduler):
            return {'object': _class_path(type(value)),
                    'attrs': self.encode(vars(value), f"{where}.__dict__")}
        raise TypeError(
            f"get_states: cannot save {where}, a {type(value).__name__}; the states file "
            "holds only NDArrays, numbers, strings, None, lists, tuples, dicts and "
            "lr schedulers (dump_optimizer=True needs plain-data hyperparameters)")


def _decode(value, arrays):
    """The Python value of an encoded `value` (ValueError on anything malformed)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if not (isinstance(value, dict) and value):
        raise ValueError(f"bad value {value!r}")
    if 'array' in value:
        name = value['array']
        if not isinstance(name, str) or name not in arrays:
            raise ValueError(f"reference to a missing array {name!r}")
        return arrays[name]
    if 'tuple' in value or 'list' in value:
        items = value.get('tuple', value.get('list'))
        if not isinstance(items, list):
            raise ValueError(f"bad sequence {items!r}")
        items = [_decode(v, arrays) for v in items]
        return tuple(items) if 'tuple' in value else items
    if 'dict' in value:
        pairs = value['dict']
        if not isinstance(pairs, list) or \
                not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise ValueError(f"bad dict {pairs!r}")
        try:
            return {_decode(k, arrays): _decode(v, arrays) for k, v in pairs}
        except TypeError as e:        # an unhashable key
            raise ValueError(f"bad dict key ({e})") from None
    if 'object' in value:
        from mxcy.lr_scheduler import LRScheduler
        return _rebuild(LRScheduler, value, arrays)
    raise ValueError(f"unknown tag in {value!r}")


def _rebuild(base, spec, arrays):
    """An instance of the imported `base` subclass named in `spec`, without __init__."""
    path = spec.get('class', spec.get('object'))
    klass = _find_subclass(base, path) if isinstance(path, str) else None
    if klass is None:
        raise ValueError(f"{path!r} is not an imported {base.__name__} class")
    attrs = _decode(spec.get('attrs'), arrays)
    if not isinstance(attrs, dict) or not all(isinstance(k, str) for k in attrs):
        raise ValueError(f"bad attributes for {path}")
    obj = klass.__new__(klass)
    obj.__dict__.update(attrs)
    return obj


def _encode_counts(optimizer, encoder):
    counts = getattr(optimizer, '_all_index_update_counts', None)
    if not isinstance(counts, dict):
        return None
    current = next((dev for dev, c in counts.items()
                    if c is getattr(optimizer, '_index_update_count', None)), 0)
    return encoder.encode({'per_device': counts, 'current_device': current,
                           'num_update': getattr(optimizer, 'num_update', 0)}, 'counts')


def _restore_counts(optimizer, counts, rebuilt):
    if counts is None:
        if rebuilt:
            raise ValueError("a saved optimizer without its update counts")
        return
    if not (rebuilt or hasattr(optimizer, '_all_index_update_counts')):
        return
    per_device = counts.get('per_device') if isinstance(counts, dict) else None
    num_update = counts.get('num_update') if isinstance(counts, dict) else None
    if not isinstance(per_device, dict) or isinstance(num_update, bool) or \
            not isinstance(num_update, int) or \
            not all(isinstance(c, dict) for c in per_device.values()):
        raise ValueError("bad update counts")
    optimizer._all_index_update_counts = per_device
    optimizer._index_update_count = per_device.setdefault(counts.get('current_device'), {})
    optimizer.num_update = num_update


def dumps(states, optimizer, dump_optimizer):
    """The bytes of a states file (see the module docstring)."""
    from mxcy.optimizer.optimizer import Optimizer
    for index in states:
        if isinstance(index, bool) or not isinstance(index, (numbers.Integral, str)):
            raise TypeError(f"get_states: state indices must be int or str to be saved, "
                            f"got {type(index).__name__} {index!r}")
    arrays = {}
    encoder = _Encoder(arrays)
    header = {'format': FORMAT, 'version': VERSION,
              'states': encoder.encode(states, 'the states'),
              'counts': _encode_counts(optimizer, encoder), 'optimizer': None}
    if dump_optimizer:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"get_states: dump_optimizer=True saves only mxcy Optimizer subclasses as "
                f"data (never a pickle), got {type(optimizer).__name__}")
        attrs = {k: v for k, v in vars(optimizer).items() if k not in _NOT_ATTRS}
        header['optimizer'] = {'class': _class_path(type(optimizer)),
                               'attrs': _Encoder(None).encode(attrs, 'the optimizer')}
    text = json.dumps(header).encode('utf-8')
    arrays[HEADER_KEY] = array(np.frombuffer(text, np.uint8), dtype=np.uint8)
    buf = io.BytesIO()
    save(buf, arrays)
    return buf.getvalue()


def loads(buf, current_optimizer):
    """``(states, optimizer or None)`` from a states file; the saved update counts are
    restored into the returned optimizer, or else into `current_optimizer`."""
    from mxcy.optimizer.optimizer import Optimizer
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"set_states: expected the bytes of get_states, got "
                        f"{type(buf).__name__}")
    loaded = load_frombuffer(bytes(buf))
    if not isinstance(loaded, dict) or HEADER_KEY not in loaded:
        raise ValueError("set_states: not an mxcy optimizer-states file (no "
                         f"{HEADER_KEY!r} entry); MXNet's pickled .states files are not "
                         "read, by design")
    try:
        header = json.loads(loaded.pop(HEADER_KEY).asnumpy().tobytes().decode('utf-8'))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"set_states: corrupt header ({e})") from None
    if not isinstance(header, dict) or header.get('format') != FORMAT:
        raise ValueError("set_states: corrupt header (not an mxcy optimizer-states header)")
    if header.get('version') != VERSION:
        raise ValueError(f"set_states: states file version {header.get('version')!r} is "
                         f"not supported; this mxcy reads version {VERSION}")
    try:
        states = _decode(header.get('states'), loaded)
        if not isinstance(states, dict):
            raise ValueError("the states are not a dict")
        optimizer = None
        if header.get('optimizer') is not None:
            optimizer = _rebuild(Optimizer, header['optimizer'], {})
            optimizer.param_dict = {}
        counts = header.get('counts')
        _restore_counts(optimizer if optimizer is not None else current_optimizer,
                        _decode(counts, loaded) if counts is not None else None,
                        rebuilt=optimizer is not None)
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"set_states: corrupt states file ({e})") from None
    return states, optimizer
