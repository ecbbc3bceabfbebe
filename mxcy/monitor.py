"""``mx.monitor``: statistics of every operator output (and of the arguments) of bound
executors, every `interval` batches (MXNet 1.9.1's ``Monitor``).

``install(exe)`` sets the executor's monitor callback; ``tic()`` before a batch turns
collection on every `interval` calls; while on, every output the executor pushes
(``fc1_output``, ``fc1_backward_output1``, ...) whose name matches `pattern` (``re.match``,
from the start) gets ``stat_func(array)`` pushed right after it, so the statistic sees that
value even where a later operator reuses the buffer. ``toc()`` adds the statistics of the
arguments and auxiliary states, waits, and returns ``(step, name, text)`` triples, where
text is each statistic's value followed by a tab (a 1-element result as a scalar).
"""
import logging
import math
import re

from mxcy import ndarray
from mxcy._ndarray import NDArray

__all__ = ['Monitor']


def _default_stat(x):
    """norm(x) / sqrt(x.size): the root mean square of `x` (pushed, not waited for)."""
    return ndarray.norm(x) / math.sqrt(x.size)


class Monitor:
    """Collects ``stat_func`` of the outputs of installed executors every `interval`
    batches. `stat_func` maps an NDArray to an NDArray or a list of them (default: its
    root mean square); `sort` orders ``toc()``'s result by name; `monitor_all` also
    reports each operator's inputs."""

    def __init__(self, interval, stat_func=None, pattern='.*', sort=False, monitor_all=False):
        if int(interval) < 1:
            raise ValueError(f"Monitor: interval must be a positive integer, got {interval!r}")
        self.interval = int(interval)
        self.stat_func = _default_stat if stat_func is None else stat_func
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []

    def stat_helper(self, name, array):
        """The executor callback: queue ``stat_func(array)`` while collecting."""
        if self.activated and self.re_prog.match(name):
            self.queue.append((self.step, name, self.stat_func(array)))

    def install(self, exe):
        """Monitor executor `exe` (from now on its forward and backward report here)."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def _wait_params(self):
        for exe in self.exes:
            for array in list(exe.arg_arrays) + list(exe.aux_arrays):
                array.wait_to_read()

    def tic(self):
        """Start a batch: collection turns on for every `interval`-th call."""
        if self.step % self.interval == 0:
            self._wait_params()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """End a batch: ``[(step, name, text), ...]`` collected since ``tic`` (empty when
        this batch was not monitored), arguments and auxiliary states last."""
        if not self.activated:
            return []
        self._wait_params()
        for exe in self.exes:
            names = exe._symbol.list_arguments() + exe._symbol.list_auxiliary_states()
            arrays = list(exe.arg_arrays) + list(exe.aux_arrays)
            for name, array in zip(names, arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        queue, self.queue = self.queue, []
        if self.sort:
            queue.sort(key=lambda item: item[1])
        return [(step, name, _as_text(name, values)) for step, name, values in queue]

    def toc_print(self):
        """``toc()`` written to the log, one ``Batch: <step> <name> <stat>`` line each."""
        for step, name, text in self.toc():
            logging.info('Batch: {:7d} {:30s} {:s}'.format(step, name, text))


def _as_text(name, values):
    if isinstance(values, NDArray):
        values = [values]
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"Monitor: stat_func must return an NDArray or a list of them, got "
                        f"{type(values).__name__} for {name!r}")
    text = ''
    for v in values:
        if not isinstance(v, NDArray):
            raise TypeError(f"Monitor: stat_func returned a {type(v).__name__} for {name!r}; "
                            "expected NDArrays")
        text += (str(v.asscalar()) if v.shape in ((1,), ()) else str(v.asnumpy())) + '\t'
    return text
