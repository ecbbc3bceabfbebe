# Included by _ndarray.pyx: the hooks through which NDArray's own syntax (a + b, -a, a[i],
# reshape, a[i] = v) is recorded by autograd. mx.nd functions record in ndarray/_gen.py;
# the arithmetic dunders and views bypass the registry for speed, so while any thread
# records they ask mxcy.autograd (`_AG`) first. One C int is the only cost otherwise.

cdef int g_recording_threads = 0       # threads inside autograd.record() (GIL held)
cdef object _AG = None                 # mxcy.autograd's hook object


def _set_autograd_hook(hook):
    global _AG
    _AG = hook


def _add_recording_thread(int delta):
    """autograd.record() entered (+1) or left (-1) on some thread."""
    global g_recording_threads
    g_recording_threads += delta


cdef object _arith(NDArray x, other, int op, int rop, object out):
    """The arithmetic dunders: recorded by autograd when it records and an operand (or
    the in-place target) belongs to a graph, else straight to the kernel."""
    cdef object r
    if g_recording_threads:
        r = _AG.binary(x, other, op, out)
        if r is not NotImplemented:
            return r
    return _binary(x, other, op, rop, out)


def _autograd():
    from mxcy import autograd
    return autograd
