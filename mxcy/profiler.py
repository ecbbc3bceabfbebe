"""``mx.profiler``: MXNet 1.9.1's profiler API over the engine's own records.

The engine stamps every op pushed while the profiler runs (and is not paused) with its push
time, and the thread that runs it takes its start and end times, all in C
(CLOCK_MONOTONIC), into a per-thread buffer (see ``_engine_prof.pxi``). Nothing becomes a
Python object until ``dump``/``dumps``. So the trace is exact: each op on the worker (or
client thread, for ops run inline and under NaiveEngine) that ran it, its reads and
writes as engine variable ids (``var_id(array)``), and beyond MXNet its wait from push
to start (``args.wait_us``); parts of a kernel shared between workers appear on each
worker that ran one (category ``kernel_part``); the kernels of a bulk group appear
inside the group. User objects (Domain, Task, Frame, Event, Counter, Marker) are
recorded on the same clock while the profiler runs and is not paused.

``set_config`` sets the whole configuration (keys it is not given return to their
defaults, as in MXNet). ``profile_symbolic``/``profile_imperative``/``profile_all``: the
engine does not tell executor ops from imperative ones, so any of them records every op.
``profile_memory``, ``profile_api`` and ``continuous_dump``/``dump_period`` are accepted
and validated but record nothing (mxcy has no C API layer and writes the file at
``dump`` only). ``dump()`` writes a complete JSON file every time.
"""
import itertools
import threading
import warnings

from mxcy import _engine
from mxcy import _profiler_out as out
from mxcy.base import MXNetError

__all__ = ['set_config', 'set_state', 'pause', 'resume', 'dump', 'dumps', 'Domain', 'Task',
           'Frame', 'Event', 'Counter', 'Marker', 'profiler_set_config',
           'profiler_set_state', 'dump_profile', 'var_id']

_DEFAULTS = {'profile_all': False, 'profile_symbolic': True, 'profile_imperative': True,
             'profile_memory': True, 'profile_api': True, 'filename': 'profile.json',
             'continuous_dump': True, 'dump_period': 1.0, 'aggregate_stats': False,
             'profile_process': 'worker'}
_TRACE_CAP = 1 << 20            # engine events kept in Python between dumps

_lock = threading.RLock()
_config = dict(_DEFAULTS)
_state = 'stop'
_paused = False
_trace = []                     # engine events collected, not yet written
_threads = {}                   # tid -> label
_user = []                      # user-object events
_agg = {}                       # (category, name) -> [count, total, min, max] ns
_dropped = 0
_categories = {}                # category -> pid of its track
_ids = itertools.count(1)
var_id = _engine.var_id


def _as_bool(key, value):
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    if isinstance(value, str) and value.lower() in ('0', '1', 'true', 'false'):
        return value.lower() in ('1', 'true')
    raise MXNetError(f"profiler.set_config: {key} expects a boolean, got {value!r}")


def _check_process(where, profile_process):
    if profile_process == 'worker':
        return
    if profile_process == 'server':
        raise MXNetError(f"profiler.{where}: profile_process='server' profiles a parameter "
                         "server; mxcy's distributed KVStore (MPI) has none")
    raise MXNetError(f"profiler.{where}: profile_process must be 'worker' or 'server', "
                     f"got {profile_process!r}")


def set_config(**kwargs):
    """Set the profiler's configuration (keyword arguments only; see the module doc)."""
    new = dict(_DEFAULTS)
    for key, value in kwargs.items():
        if key not in _DEFAULTS:
            raise MXNetError(f"profiler.set_config: unknown argument {key!r}; expected one "
                             f"of {', '.join(_DEFAULTS)}")
        if key == 'filename':
            if not isinstance(value, str) or not value:
                raise MXNetError(f"profiler.set_config: filename expects a non-empty "
                                 f"string, got {value!r}")
        elif key == 'dump_period':
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise MXNetError(f"profiler.set_config: dump_period expects a positive "
                                 f"number of seconds, got {value!r}")
            value = float(value)
        elif key == 'profile_process':
            _check_process('set_config', value)
        else:
            value = _as_bool(key, value)
        new[key] = value
    with _lock:
        _config.clear()
        _config.update(new)
        _apply()


def _records_ops():
    return _config['profile_all'] or _config['profile_symbolic'] \
        or _config['profile_imperative']


def _apply():
    _engine.prof_set_recording(_state == 'run' and not _paused and _records_ops())


def _recording():
    return _state == 'run' and not _paused


def set_state(state='stop', profile_process='worker'):
    """Start ('run') or stop ('stop') recording."""
    global _state, _paused
    if state not in ('run', 'stop'):
        raise MXNetError(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
    _check_process('set_state', profile_process)
    with _lock:
        _state = state
        _paused = False
        _apply()


def _set_paused(where, paused, profile_process):
    global _paused
    _check_process(where, profile_process)
    with _lock:
        _paused = paused
        _apply()


def pause(profile_process='worker'):
    """Stop recording until ``resume``: ops pushed meanwhile are not in the trace."""
    _set_paused('pause', True, profile_process)


def resume(profile_process='worker'):
    """Record again after ``pause``."""
    _set_paused('resume', False, profile_process)


def _collect():
    """Move the engine's records into the trace (and the aggregate table)."""
    global _dropped
    try:
        _engine._quiesce()      # ops pushed so far have run (their errors stay put)
    except RuntimeError:
        pass                    # called from inside an op: take what has finished
    agg = _config['aggregate_stats']
    for tid, worker, dropped, records in _engine.prof_collect(True):
        _dropped += dropped
        _threads[tid] = out.thread_label(tid, worker)
        if agg:
            for rec in records:
                if rec[0] != out.REC_PART:
                    out.aggregate_add(_agg, 'operator', rec[1], rec[4] - rec[3])
        room = _TRACE_CAP - len(_trace)
        if len(records) > room:
            _dropped += len(records) - max(room, 0)
            records = records[:max(room, 0)]
        _trace.extend(out.op_events(tid, records))


def dump(finished=True, profile_process='worker'):
    """Write everything recorded so far to the configured file (Chrome trace JSON).

    With `finished` (the default) the profiler stops and the written events are
    dropped; otherwise it keeps running and a later dump writes them again, with more."""
    global _dropped
    _check_process('dump', profile_process)
    with _lock:
        _collect()
        text = out.trace_json(_threads, _trace, _user,
                              {pid: cat for cat, pid in _categories.items()}, _dropped)
        with open(_config['filename'], 'w') as f:
            f.write(text)
        if finished:
            set_state('stop')
            _trace.clear()
            _user.clear()
            _dropped = 0


def dumps(reset=False, format='table', sort_by='total', ascending=False):
    """The aggregate statistics per operator (and user object) name, as a table or JSON;
    needs ``set_config(aggregate_stats=True)``. `reset` clears them afterwards."""
    if format not in out.FORMATS:
        raise MXNetError(f"profiler.dumps: format must be 'table' or 'json', got {format!r}")
    if sort_by not in out.SORT_KEYS:
        raise MXNetError(f"profiler.dumps: sort_by must be one of "
                         f"{', '.join(out.SORT_KEYS)}, got {sort_by!r}")
    with _lock:
        _collect()
        if not _config['aggregate_stats'] and not _agg:
            warnings.warn("profiler.dumps: no aggregate statistics were kept; call "
                          "profiler.set_config(aggregate_stats=True, ...) before running",
                          stacklevel=2)
            return ''
        text = (out.table if format == 'table' else out.table_json)(_agg, sort_by,
                                                                   bool(ascending))
        if reset:
            _agg.clear()
        return text


# ---------------------------------------------------------------- user objects
def _now_us():
    return _engine.prof_clock_ns() / 1000.0


def _pid(category):
    if category not in _categories:
        _categories[category] = 1000 + len(_categories)
    return _categories[category]


def _emit(category, name, ph, ts=None, **fields):
    """Record one user event (only while the profiler runs and is not paused)."""
    if not _recording():
        return False
    tid = threading.get_native_id()
    with _lock:
        ev = {'name': name, 'cat': category, 'ph': ph,
              'ts': _now_us() if ts is None else ts, 'pid': _pid(category), 'tid': tid}
        ev.update(fields)
        _user.append(ev)
        _threads.setdefault(tid, out.thread_label(tid, 0))
    return True


def _check_name(cls, name):
    if not isinstance(name, str) or not name:
        raise TypeError(f"profiler.{cls}: name must be a non-empty string, got {name!r}")
    return name


def _check_domain(cls, domain):
    if not isinstance(domain, Domain):
        raise TypeError(f"profiler.{cls}: domain must be a profiler.Domain, got "
                        f"{type(domain).__name__}")
    return domain


class Domain:
    """A named group of tasks, frames, counters and markers (a track in the trace)."""

    def __init__(self, name):
        self.name = _check_name('Domain', name)

    def __str__(self):
        return self.name

    def new_task(self, name):
        return Task(self, name)

    def new_frame(self, name):
        return Frame(self, name)

    def new_counter(self, name, value=None):
        return Counter(self, name, value)

    def new_marker(self, name):
        return Marker(self, name)


class _Span:
    """start()/stop() around a region; recorded as an async begin/end pair (by id)."""
    _kind = 'Span'

    def __init__(self, category, name):
        self.name = _check_name(self._kind, name)
        self._category = category
        self._id = next(_ids)
        self._t0 = None

    def __str__(self):
        return self.name

    def start(self):
        ts = _now_us()
        self._t0 = ts if _emit(self._category, self.name, 'b', ts, id=self._id) else None

    def stop(self):
        ts = _now_us()
        if _emit(self._category, self.name, 'e', ts, id=self._id) and self._t0 is not None:
            if _config['aggregate_stats']:
                with _lock:
                    out.aggregate_add(_agg, self._category, self.name,
                                      int((ts - self._t0) * 1000))
        self._t0 = None


class Task(_Span):
    """A task of `domain` (may start on one thread and stop on another)."""
    _kind = 'Task'

    def __init__(self, domain, name):
        self.domain = _check_domain('Task', domain)
        super().__init__(domain.name, name)


class Frame(_Span):
    """A frame of `domain` (a region such as one training iteration)."""
    _kind = 'Frame'

    def __init__(self, domain, name):
        self.domain = _check_domain('Frame', domain)
        super().__init__(f'{domain.name},frame', name)


class Event(_Span):
    """A named region of code outside any domain (category 'event')."""
    _kind = 'Event'

    def __init__(self, name):
        super().__init__('event', name)


class Counter:
    """An integer value tracked over time in `domain` (a counter track in the trace)."""

    def __init__(self, domain, name, value=None):
        self.domain = _check_domain('Counter', domain)
        self.name = _check_name('Counter', name)
        self._value = 0
        if value is not None:
            self.set_value(value)

    def __str__(self):
        return self.name

    @staticmethod
    def _int(what, value):
        if isinstance(value, bool) or not hasattr(value, '__index__'):
            raise TypeError(f"profiler.Counter.{what}: expects an integer, got {value!r}")
        return int(value.__index__())

    def _record(self):
        _emit(self.domain.name, self.name, 'C', args={self.name: self._value})

    def set_value(self, value):
        self._value = self._int('set_value', value)
        self._record()

    def increment(self, delta=1):
        self._value += self._int('increment', delta)
        self._record()

    def decrement(self, delta=1):
        self._value -= self._int('decrement', delta)
        self._record()

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self


_SCOPES = {'global': 'g', 'process': 'p', 'thread': 't', 'task': 't', 'marker': 't'}


class Marker:
    """An instant event of `domain`; ``mark(scope)`` records it now."""

    def __init__(self, domain, name):
        self.domain = _check_domain('Marker', domain)
        self.name = _check_name('Marker', name)

    def mark(self, scope='process'):
        if scope not in _SCOPES:
            raise MXNetError(f"profiler.Marker.mark: scope must be one of "
                             f"{', '.join(_SCOPES)}, got {scope!r}")
        _emit(f'{self.domain.name},instant_marker', self.name, 'i', s=_SCOPES[scope],
              args={'scope': scope})


# ---------------------------------------------------------------- MXNet's older names
def profiler_set_config(mode='symbolic', filename='profile.json'):
    """Deprecated (MXNet): use set_config. mode 'symbolic' or 'all'."""
    warnings.warn('profiler.profiler_set_config() is deprecated; use set_config()',
                  DeprecationWarning, stacklevel=2)
    if mode not in ('symbolic', 'all'):
        raise MXNetError(f"profiler.profiler_set_config: mode must be 'symbolic' or "
                         f"'all', got {mode!r}")
    set_config(profile_symbolic=True, profile_imperative=mode == 'all',
               profile_memory=mode == 'all', profile_api=mode == 'all', filename=filename)


def profiler_set_state(state='stop'):
    """Deprecated (MXNet): use set_state."""
    warnings.warn('profiler.profiler_set_state() is deprecated; use set_state()',
                  DeprecationWarning, stacklevel=2)
    set_state(state)


def dump_profile():
    """Deprecated (MXNet): use dump."""
    warnings.warn('profiler.dump_profile() is deprecated; use dump()', DeprecationWarning,
                  stacklevel=2)
    dump(True)
