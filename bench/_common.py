"""Helpers shared by the bench scripts: pick the library, time fairly, print JSON lines."""
import argparse
import importlib
import json
import os
import time

import numpy as np


def parse(description, figures):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('--lib', default='mxcy', help="mxcy (default) or mxnet")
    parser.add_argument('--only', default=None, choices=figures)
    parser.add_argument('--reps', type=int, default=5)
    return parser.parse_args()


def load(lib):
    mx = importlib.import_module(lib)
    return mx


# NumPy's OpenBLAS threads spin for ~0.1-0.2 s after a multithreaded call, taking a core
# from whatever runs next; a variant that follows a NumPy one waits this long first.
BLAS_SPIN_GAP = 0.25


def seconds(fn):
    """Wall-clock seconds of one call ``fn()``."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def best_interleaved(variants, reps, rotate=False):
    """{name: fn} -> {name: best seconds}; each variant runs once per round, in turn, so a
    library and its NumPy floor see the same machine load. Variants named 'np...' or
    'numpy...' are the NumPy floor: the next variant starts only after BLAS_SPIN_GAP.

    With `rotate`, the library variants take turns going first (the floors stay last):
    the variant that runs first after the gap (engine workers asleep, caches cold) is
    measurably slower on a short run, so a fixed order biases a comparison of two
    library variants against the first one."""
    times = interleaved_times(variants, reps, rotate)
    return {k: min(ts) for k, ts in times.items()}


def interleaved_times(variants, reps, rotate=False):
    """{name: [seconds of each round]}: the rounds of `best_interleaved`."""
    def is_floor(name):
        return name.startswith(('np', 'numpy'))

    def settle(name):
        if is_floor(name):
            time.sleep(BLAS_SPIN_GAP)
    for k, fn in variants.items():
        fn()
        settle(k)
    times = {k: [] for k in variants}
    libs = [k for k in variants if not is_floor(k)] if rotate else list(variants)
    floors = [k for k in variants if k not in libs]
    for round_ in range(reps):
        shift = round_ % len(libs) if libs else 0
        for k in libs[shift:] + libs[:shift] + floors:
            fn = variants[k]
            t = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t)
            settle(k)
    return times


def paired_median_ratio(times, num, den):
    """Median over rounds of times[num][i] / times[den][i]: two variants run back to back
    share the machine's load of the moment, so on a busy machine this ratio is steadier
    than the ratio of the two bests."""
    return float(np.median([a / b for a, b in zip(times[num], times[den])]))


def _cpu_ticks():
    """(steal, total) jiffies of all CPUs, or None where /proc/stat is missing."""
    try:
        with open('/proc/stat') as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal [guest guest_nice: inside user]
    return fields[7] if len(fields) > 7 else 0, sum(fields[:8])


_last_ticks = _cpu_ticks()


def _steal_pct():
    """Share of CPU time the hypervisor took since the previous figure (or the start): on a
    shared host the figures of one run are only comparable when this stays low."""
    global _last_ticks
    now = _cpu_ticks()
    before, _last_ticks = _last_ticks, now
    if now is None or before is None or now[1] <= before[1]:
        return None
    return round(100.0 * (now[0] - before[0]) / (now[1] - before[1]), 1)


def emit(bench, figure, lib, value, unit, numpy_value=None, better='lower', **extra):
    line = {'bench': bench, 'figure': figure, 'lib': lib, 'value': value, 'unit': unit}
    if numpy_value is not None:
        line['numpy'] = numpy_value
        line['ratio_vs_numpy'] = round(value / numpy_value, 4) if numpy_value else None
    line['better'] = better
    line.update(extra)
    line['cpus'] = len(os.sched_getaffinity(0))
    line['loadavg_1m'] = round(os.getloadavg()[0], 2)
    line['steal_pct'] = _steal_pct()
    print(json.dumps(line), flush=True)


def check_close(what, got, ref, rtol=1e-3, atol=1e-4):
    """Correctness guard: a broken library must not post a fast number."""
    if not np.allclose(got, ref, rtol=rtol, atol=atol):
        raise SystemExit(f"{what}: result differs from NumPy (max abs err "
                         f"{np.max(np.abs(np.asarray(got) - ref))})")
