"""Devices: ``mx.cpu(i)``, ``mx.Context`` and the per-thread default context."""
import threading

from mxcy.base import MXNetError


class Context:
    """A device. This build runs on CPUs only; ``mx.gpu(i)`` names a device it cannot use."""

    devtype2str = {1: 'cpu', 2: 'gpu', 3: 'cpu_pinned', 5: 'cpu_shared'}
    devstr2type = {'cpu': 1, 'gpu': 2, 'cpu_pinned': 3, 'cpu_shared': 5}
    _local = threading.local()

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            self.device_typeid = device_type.device_typeid
            self.device_id = device_type.device_id
        else:
            if device_type not in self.devstr2type:
                raise ValueError(f"unknown device type {device_type!r}; expected one of "
                                 f"{sorted(self.devstr2type)}")
            self.device_typeid = self.devstr2type[device_type]
            self.device_id = int(device_id)

    @property
    def device_type(self):
        return self.devtype2str[self.device_typeid]

    def __hash__(self):
        return hash((self.device_typeid, self.device_id))

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_typeid == other.device_typeid
                and self.device_id == other.device_id)

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self):
        # a per-thread stack, not a field on self: the same Context may be entered in
        # several threads at once, or nested (`with c: with c:`)
        _saved_stack().append(current_context())
        Context._local.value = self
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        Context._local.value = _saved_stack().pop()

    def empty_cache(self):
        """Nothing to do on CPU: freed chunks already return to the engine's pool."""


def _saved_stack():
    stack = getattr(Context._local, 'saved', None)
    if stack is None:
        stack = Context._local.saved = []
    return stack


def check_usable(ctx, what):
    """Raise a clear error when an op is asked to run on a device this build lacks."""
    if not isinstance(ctx, Context):
        raise TypeError(f"{what}: ctx must be a Context such as mx.cpu(), got "
                        f"{type(ctx).__name__} {ctx!r}")
    if ctx.device_type == 'gpu':
        raise MXNetError(f"{what}: this mxcy build has no GPU support; got context {ctx}. "
                         "Use mx.cpu().")


def cpu(device_id=0):
    return Context('cpu', device_id)


def cpu_pinned(device_id=0):
    return Context('cpu_pinned', device_id)


def gpu(device_id=0):
    """A GPU context; any array or executor placed on it raises: this build is CPU-only."""
    return Context('gpu', device_id)


def num_gpus():
    return 0


def current_context():
    ctx = getattr(Context._local, 'value', None)
    if ctx is None:
        ctx = Context._local.value = Context('cpu', 0)
    return ctx
