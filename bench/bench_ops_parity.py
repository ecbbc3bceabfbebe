#!/usr/bin/env python3
"""Operator parity (issue 13): every ``mx.nd`` operator against MXNet 1.9.1 on the same call.

    python bench/bench_ops_parity.py                          # mxcy alone, JSON lines
    OMP_NUM_THREADS=2 /work/mxnet_venv/bin/python bench/bench_ops_parity.py --lib mxnet
    python bench/bench_ops_parity.py --compare mxcy.jsonl mxnet.jsonl   # the ratio table
    python bench/bench_ops_parity.py --both --out both.jsonl  # one driver, libs alternated

The calls come from ``bench/_ops_parity_table.py`` (realistic sizes; identical for both
libraries: the same table, ``import mxnet as mx`` vs ``import mxcy as mx``). Per call two
figures: ``fwd`` (the call, waited for) and, for a differentiable one, ``fwd_bwd`` (the call
under ``autograd.record`` + ``autograd.backward`` with head gradients of ones, input
gradients waited for); ms per call, best of ``--reps`` rounds, each round timing ``inner``
back-to-back calls (sized to ~20 ms). ``fwd`` carries the NumPy floor where the table has
one, measured in the same rounds. ``--both`` starts one worker process per library (mxcy in
this interpreter's venv, MXNet in ``--mxnet-python`` with ``OMP_NUM_THREADS=2``) and
alternates them round by round (the first to run swaps each round), so the shared
machine's load falls on both; then it prints the table. A figure a library cannot produce
is ``"value": null`` with the error in ``note``.
"""
import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import BLAS_SPIN_GAP, emit  # noqa: E402
from _ops_parity_table import CASES, FLOORS, SIZED  # noqa: E402

BENCH = 'ops_parity'
TARGET_S = 0.02
HERE = os.path.dirname(os.path.abspath(__file__))


# ------------------------------------------------------------------ one library (worker)
def make_input(spec, rng):
    """NumPy array (or a Python scalar) for one golden-table input spec."""
    g = spec['g']
    if g == 's':
        return spec['v']
    shape = tuple(spec.get('shape', ()))
    if g == 'u':
        x = rng.uniform(-1, 1, shape) * spec['s']
    elif g == 'p':
        x = rng.uniform(0.5, 2.0, shape)
    elif g == 'q':
        x = rng.uniform(1.2, 3.0, shape)
    elif g == 'i':
        x = rng.randint(spec['lo'], spec['hi'], shape)
    elif g == 'z':
        x = np.zeros(shape)
    elif g == 'l':
        x = np.array(spec['v'])
    elif g == 'spd':
        n = shape[-1]
        a = rng.uniform(-1, 1, shape[:-1] + (n, n))
        x = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    elif g == 'tri':
        n = shape[-1]
        x = np.tril(rng.uniform(-1, 1, shape[:-1] + (n, n))) + 2 * np.eye(n)
    else:
        raise ValueError(f'unknown input kind {g!r}')
    return x.astype(spec['dt'])


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


class Call:
    """One table case bound to a library: its arrays, and ``fwd``/``fwd_bwd``/``np`` runners."""

    def __init__(self, mx, key):
        self.mx, self.key, self.case = mx, key, CASES[key]
        rng = np.random.RandomState(zlib.crc32(key.encode()))
        self.raw = [make_input(s, rng) for s in self.case['i']]
        self.args, self.grad_args = [], []
        for spec, x in zip(self.case['i'], self.raw):
            if spec['g'] == 's':
                self.args.append(x)
                continue
            a = mx.nd.array(x, dtype=x.dtype)
            self.args.append(a)
            wants = spec['g'] in ('u', 'p', 'q', 'spd', 'tri') or spec.get('grad', False)
            if self.case['g'] and wants:
                self.grad_args.append(a)
        fn = mx.nd
        for part in key.split('/')[0].split('.'):
            fn = getattr(fn, part)
        self.fn = fn
        self.params = {k: tuple(v) if isinstance(v, list) else v
                       for k, v in self.case['p'].items()}
        self.heads = None

    def call(self):
        if self.case['call'] == 'list':
            return as_list(self.fn(list(self.args), **self.params))
        return as_list(self.fn(*self.args, **self.params))

    def fwd(self):
        for o in self.call():
            o.wait_to_read()

    def fwd_bwd(self):
        mx = self.mx
        if self.heads is None:
            for a in self.grad_args:
                a.attach_grad()
        with mx.autograd.record(train_mode=self.case['train']):
            outs = self.call()
        if self.heads is None:
            self.heads = [mx.nd.ones(o.shape, dtype=o.dtype) for o in outs]
        mx.autograd.backward(outs, self.heads, train_mode=self.case['train'])
        for a in self.grad_args:
            a.grad.wait_to_read()

    def np(self):
        return FLOORS[self.key](self.raw, self.params)

    def runner(self, mode):
        return {'fwd': self.fwd, 'fwd_bwd': self.fwd_bwd, 'np': self.np}[mode]


def time_inner(fn, inner):
    """(wall, process CPU) seconds per call of ``inner`` back-to-back calls; the CPU time
    counts every thread of the process (engine workers, OpenMP/BLAS threads, spinning
    included), a steadier figure than the wall time on a loaded host."""
    t, c = time.perf_counter(), time.process_time()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t) / inner, (time.process_time() - c) / inner


def calibrate(fn):
    """Warm up; the number of calls that takes about TARGET_S."""
    fn()
    one = time_inner(fn, 1)[0]
    return max(1, min(200, int(TARGET_S / max(one, 1e-7))))


def modes(key):
    case = CASES[key]
    out = ['fwd']
    if case['g'] and any(s['g'] in ('u', 'p', 'q', 'spd', 'tri') or s.get('grad')
                         for s in case['i']):
        out.append('fwd_bwd')
    return out


class Worker:
    """Answers ``prep``/``run`` requests for one library; keeps the current Call."""

    def __init__(self, lib):
        import importlib
        self.lib = lib
        self.mx = importlib.import_module(lib)
        self.calls = {}

    def prep(self, key, mode):
        if key not in self.calls:
            self.calls = {key: Call(self.mx, key)}
        fn = self.calls[key].runner(mode)
        inner = calibrate(fn)
        if mode == 'np':
            time.sleep(BLAS_SPIN_GAP)
        return inner

    def run(self, key, mode, inner):
        t = time_inner(self.calls[key].runner(mode), inner)
        if mode == 'np':
            time.sleep(BLAS_SPIN_GAP)
        return t

    def serve(self):
        """Line protocol on stdin/stdout: one JSON request, one JSON answer."""
        out = sys.stdout
        sys.stdout = sys.stderr          # library chatter must not corrupt the protocol
        for line in sys.stdin:
            req = json.loads(line)
            try:
                if req['op'] == 'prep':
                    ans = {'inner': self.prep(req['key'], req['mode'])}
                else:
                    wall, cpu = self.run(req['key'], req['mode'], req['inner'])
                    ans = {'s': wall, 'cpu': cpu}
            except Exception as err:  # noqa: BLE001 -- reported as the figure's note
                ans = {'error': error_note(err)}
            out.write(json.dumps(ans) + '\n')
            out.flush()


def error_note(err):
    """One line for a failed figure: MXNet's message is the last 'Error' line of its
    C++ traceback."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    named = [ln for ln in lines if 'Error' in ln or 'error' in ln]
    text = (named or lines or [''])[-1]
    return f'{type(err).__name__}: {text}'[:200]


def figure_line(key, mode, lib, ms, floor_ms=None, note=None, cpu_ms=None):
    extra = {'small': True} if key not in SIZED else {}
    if note:
        extra['note'] = note
    if cpu_ms is not None:
        extra['cpu_ms'] = round(cpu_ms, 4)
    emit(BENCH, f'{key}:{mode}', lib, None if ms is None else round(ms, 4), 'ms',
         None if floor_ms is None else round(floor_ms, 4), **extra)


def run_alone(lib, keys, reps):
    """One library in this process: every figure, best of ``reps`` rounds."""
    w = Worker(lib)
    for key in keys:
        for mode in modes(key):
            variants = [mode] + (['np'] if mode == 'fwd' and key in FLOORS else [])
            best, note = {}, None
            try:
                inner = {v: w.prep(key, v) for v in variants}
                for _ in range(reps):
                    for v in variants:
                        wall, cpu = w.run(key, v, inner[v])
                        best[v] = min(best.get(v, 1e9), wall)
                        best[v + ':cpu'] = min(best.get(v + ':cpu', 1e9), cpu)
            except Exception as err:  # noqa: BLE001
                note = error_note(err)
            figure_line(key, mode, lib, best[mode] * 1e3 if mode in best else None,
                        best['np'] * 1e3 if 'np' in best else None, note,
                        best[mode + ':cpu'] * 1e3 if mode + ':cpu' in best else None)


# ------------------------------------------------------------------ both libraries (driver)
class Remote:
    def __init__(self, lib, python, env):
        self.lib = lib
        self.proc = subprocess.Popen(
            [python, os.path.abspath(__file__), '--lib', lib, '--serve'], env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def ask(self, **req):
        self.proc.stdin.write(json.dumps(req) + '\n')
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f'{self.lib} worker died (exit {self.proc.wait()})')
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def run_both(keys, reps, mxnet_python, out):
    env_mx = dict(os.environ, OMP_NUM_THREADS='2')
    env_cy = dict(os.environ, PYTHONPATH=os.path.join(HERE, '..'))
    libs = [Remote('mxcy', sys.executable, env_cy), Remote('mxnet', mxnet_python, env_mx)]
    sink = open(out, 'w') if out else None
    try:
        for key in keys:
            for mode in modes(key):
                for lib, ms, floor, note, cpu in measure_both(libs, key, mode, reps):
                    buf = io.StringIO()
                    with contextlib.redirect_stdout(buf):
                        figure_line(key, mode, lib, ms, floor, note, cpu)
                    sys.stdout.write(buf.getvalue())
                    sys.stdout.flush()
                    if sink:
                        sink.write(buf.getvalue())
                        sink.flush()
    finally:
        for r in libs:
            r.close()
        if sink:
            sink.close()


def measure_both(libs, key, mode, reps):
    """[(lib, ms, floor_ms, note, cpu_ms)]: the two libraries alternate round by round;
    the mxcy worker also times the NumPy floor (its own venv's NumPy) in the same rounds.
    ms and cpu_ms are each the best round's."""
    floor = mode == 'fwd' and key in FLOORS
    inner, notes = {}, {}
    for r in libs:
        ans = r.ask(op='prep', key=key, mode=mode)
        if 'error' in ans:
            notes[r.lib] = ans['error']
        else:
            inner[r.lib] = ans['inner']
    if floor and 'mxcy' in inner:
        ans = libs[0].ask(op='prep', key=key, mode='np')
        floor = 'error' not in ans and ans['inner']
    n = min(inner.values()) if inner else 0
    best = {}
    for rnd in range(reps):
        order = libs if rnd % 2 == 0 else libs[::-1]
        for r in order:
            if r.lib in inner:
                ans = r.ask(op='run', key=key, mode=mode, inner=n)
                best[r.lib] = min(best.get(r.lib, 1e9), ans.get('s', 1e9))
                cpu = r.lib + ':cpu'
                best[cpu] = min(best.get(cpu, 1e9), ans.get('cpu', 1e9))
        if floor:
            ans = libs[0].ask(op='run', key=key, mode='np', inner=floor)
            best['np'] = min(best.get('np', 1e9), ans.get('s', 1e9))
    fl = best['np'] * 1e3 if 'np' in best else None
    return [(r.lib, best[r.lib] * 1e3 if r.lib in best else None, fl, notes.get(r.lib),
             best[r.lib + ':cpu'] * 1e3 if best.get(r.lib + ':cpu', 1e9) < 1e9 else None)
            for r in libs]


# ------------------------------------------------------------------ the table
def load_lines(paths):
    """{(figure, lib): line} from JSON-lines files (the last line of a figure wins)."""
    got = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith('{'):
                    d = json.loads(line)
                    if d.get('bench') == BENCH:
                        got[(d['figure'], d['lib'])] = d
    return got


def compare(paths, limit=1.5):
    got = load_lines(paths)
    figures = sorted({f for f, _ in got}, key=lambda f: (f.split(':')[0].lower(), f))
    slow, rows = [], []
    print(f"| op | figure | mxcy ms | MXNet ms | mxcy ÷ MXNet | NumPy ms |\n|{'---|' * 6}")
    for fig in figures:
        cy, mn = got.get((fig, 'mxcy'), {}), got.get((fig, 'mxnet'), {})
        a, b = cy.get('value'), mn.get('value')
        ratio = a / b if a and b else None
        floor = cy.get('numpy') or mn.get('numpy')
        op, mode = fig.rsplit(':', 1)
        op = op + (' (small)' if cy.get('small') or mn.get('small') else '')
        rows.append((op, mode, a, b, ratio))
        print(f"| {op} | {mode} | {_fmt(a)} | {_fmt(b)} | {_fmt(ratio, 2)} | {_fmt(floor)} |"
              + (f" {cy.get('note') or mn.get('note')}" if cy.get('note') or mn.get('note')
                 else ''))
        if ratio is not None and ratio > limit:
            slow.append((ratio, fig, a, b, cy.get('cpu_ms'), mn.get('cpu_ms')))
    ratios = [r[4] for r in rows if r[4]]
    if ratios:
        print(f"\n{len(ratios)} figures with both libraries; geometric mean mxcy ÷ MXNet "
              f"{np.exp(np.mean(np.log(ratios))):.3f}; median {np.median(ratios):.3f}")
    print(f"slower than MXNet by more than {limit}x: {len(slow)}")
    for ratio, fig, a, b, ca, cb in sorted(slow, reverse=True):
        cpu = f" (CPU {ca:.4f} vs {cb:.4f} ms = {ca / cb:.2f}x)" if ca and cb else ''
        print(f"  {fig}: {a:.4f} ms vs {b:.4f} ms = {ratio:.2f}x{cpu}")
    return slow


def _fmt(v, digits=4):
    if v is None:
        return '—'
    return f'{v:.{digits}g}' if digits != 4 else (f'{v:.4f}' if v < 10 else f'{v:.1f}')


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--lib', default='mxcy', help='mxcy (default) or mxnet')
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--only', default=None, help='comma-separated table keys (or prefixes '
                    'ending in *)')
    ap.add_argument('--serve', action='store_true', help=argparse.SUPPRESS)
    ap.add_argument('--both', action='store_true')
    ap.add_argument('--mxnet-python', default='/work/mxnet_venv/bin/python')
    ap.add_argument('--out', default=None, help='--both: also write the JSON lines here')
    ap.add_argument('--compare', nargs='+', default=None, metavar='JSONL')
    args = ap.parse_args()
    if args.compare:
        compare(args.compare)
        return
    if args.serve:
        Worker(args.lib).serve()
        return
    keys = select(args.only)
    if args.both:
        run_both(keys, args.reps, args.mxnet_python, args.out)
        if args.out:
            compare([args.out])
    else:
        run_alone(args.lib, keys, args.reps)


def select(only):
    if not only:
        return list(CASES)
    keys = []
    for pat in only.split(','):
        if pat.endswith('*'):
            keys += [k for k in CASES if k.startswith(pat[:-1])]
        elif pat in CASES:
            keys.append(pat)
        else:
            raise SystemExit(f'--only: no table key {pat!r}')
    return keys


if __name__ == '__main__':
    main()
