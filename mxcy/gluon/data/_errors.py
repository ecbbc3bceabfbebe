"""Carrying a DataLoader worker's exception to the parent, with the batch it was loading.

The parent re-raises the worker's own exception type whenever it can, its message
extended with where it happened (worker, batch index), and chained to the worker's
traceback; MXNet re-raised it bare, so a user could not tell which batch failed.
"""
import pickle
import traceback

__all__ = ['describe', 'reraise', 'with_batch']


class RemoteTraceback(Exception):
    """The traceback text of an exception raised in a worker process (its __cause__)."""

    def __str__(self):
        return self.args[0]


def describe(exc):
    """What a worker sends back for `exc`: its pickle when it has one, and always its
    type, message and formatted traceback."""
    try:
        pickled = pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(pickled)           # an exception that does not round-trip is useless
    except Exception:                   # noqa: BLE001  (anything unpicklable)
        pickled = None
    return {'pickled': pickled, 'type': f"{type(exc).__module__}.{type(exc).__qualname__}",
            'text': _safe(str, exc),
            'traceback': _safe(lambda e: ''.join(traceback.format_exception(
                type(e), e, e.__traceback__)), exc)}


def _safe(fn, exc):
    """fn(exc), or a placeholder when the exception cannot even be printed."""
    try:
        return fn(exc)
    except Exception:                   # noqa: BLE001
        return f"<{type(exc).__name__} that cannot be printed>"


def with_batch(exc, where):
    """`exc` with `where` (e.g. 'DataLoader worker 1 (pid 7), batch 3') added to its
    message when that message is one string, and as a note otherwise."""
    note = f"[raised in {where}]"
    if isinstance(exc, OSError) and isinstance(exc.strerror, str):
        exc.strerror = f"{exc.strerror} {note}"     # what str() of '[Errno n] ...' shows
    elif len(exc.args) == 1 and isinstance(exc.args[0], str) and \
            not isinstance(exc, KeyError):          # a KeyError's argument is the key
        exc.args = (f"{exc.args[0]} {note}",)
    elif not exc.args:
        try:
            exc.args = (note,)
        except (AttributeError, TypeError):
            pass
    if note not in str(exc) and hasattr(exc, 'add_note'):
        exc.add_note(note)
    return exc


def reraise(info, where):
    """Raise the worker exception `info` (from `describe`) in the parent."""
    cause = RemoteTraceback(f"\n\nTraceback in {where}:\n{info['traceback']}")
    exc = None
    if info['pickled'] is not None:
        try:
            exc = pickle.loads(info['pickled'])
        except Exception:               # noqa: BLE001  (its class is not importable here)
            exc = None
    if not isinstance(exc, BaseException):
        exc = RuntimeError(f"{info['type']}: {info['text']}")
    raise with_batch(exc, where) from cause
