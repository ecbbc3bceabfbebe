#!/usr/bin/env python3
"""Per-op engine costs: tiny ops, the in-place guide, raw push throughput, two GEMMs.

Runs unchanged against mxcy (default), MXNet 1.x, or NumPy alone:

    python bench/bench_engine.py                      # mxcy
    /work/peers/mxnet/bin/python bench/bench_engine.py --lib mxnet
    python bench/bench_engine.py --lib numpy-only     # just the NumPy floor
    python bench/bench_engine.py --only iadd_small

Prints one JSON line per figure on stdout (nothing else goes to stdout). Every
figure carries the same arithmetic done by NumPy in the same run ("numpy") and
"ratio_vs_numpy" = value / numpy; "better" says which direction is good.
Timings are time.perf_counter, best of --reps repetitions after one warm-up.
Nothing here asserts on time; the only assertions are correctness checks of the
final values, so a broken library cannot post a fast number.

bench/peer_torch_engine.py imports the helpers below for the PyTorch peer.
"""
import argparse
import importlib
import json
import os
import sys
import threading
import time

import numpy as np

BENCH = "engine"

FIGURES = (
    "iadd_small",
    "add_small",
    "rebind_small",
    "inplace_guide",            # emits inplace_guide_normal_op, _inplace_op, _normal_over_inplace
    "push_throughput_1thread",
    "push_throughput_4threads",
    "gemm_parallel",
)

# MXNet.jl user guide, "performance tips" / in-place operations, translated to Python.
GUIDE_SHAPE = (128, 64)
GUIDE_N = 1000
GUIDE_LR = 0.1

GEMM_N = 1024


# --------------------------------------------------------------------------- backends

class NumpyBackend:
    """The floor: the same arithmetic on NumPy arrays; nothing is asynchronous."""
    name = "numpy"
    is_async = False

    def __init__(self):
        self.version = np.__version__

    def array(self, x):
        return np.array(x, dtype=np.float32, copy=True)

    def to_numpy(self, x):
        return np.asarray(x)

    def waitall(self):
        pass

    def dot(self, a, b):
        return a @ b


class MxBackend:
    """mxcy or MXNet: every op is pushed to the engine and returns at once."""
    is_async = True

    def __init__(self, mod, name):
        self.mx = mod
        self.name = name
        self.version = getattr(mod, "__version__", "unknown")
        self._waitall = mod.nd.waitall

    def array(self, x):
        return self.mx.nd.array(np.asarray(x, dtype=np.float32), dtype=np.float32)

    def to_numpy(self, x):
        return x.asnumpy()

    def waitall(self):
        self._waitall()

    def dot(self, a, b):
        return self.mx.nd.dot(a, b)


# --------------------------------------------------------------------------- timing

def best_of(run_once, reps):
    """run_once() -> (seconds, result). One untimed warm-up, then best of `reps`."""
    return best_interleaved({"x": run_once}, reps)["x"]


def best_interleaved(variants, reps):
    """{name: run_once} -> {name: (best seconds, result of its last run)}.

    Each variant is warmed up once; then `reps` rounds run every variant once, in turn,
    so that a library and its NumPy floor see the same machine load (the 2-core machines
    are shared with builds and tests). Keeps the best time of each.
    """
    for k, once in variants.items():
        once()
        _settle(k)
    best = {k: None for k in variants}
    result = {}
    for _ in range(reps):
        for k, once in variants.items():
            dt, result[k] = once()
            if best[k] is None or dt < best[k]:
                best[k] = dt
            _settle(k)
    return {k: (best[k], result[k]) for k in variants}


def _settle(name):
    """NumPy's OpenBLAS threads spin for ~0.1-0.2 s after a multithreaded GEMM and take a
    core from whatever runs next: after the NumPy floor, pause before the next variant."""
    if str(name).startswith(("np", "numpy")):
        time.sleep(0.25)


def check_close(name, got, ref, rtol=1e-4):
    """Correctness check (not a timing assertion): relative to the reference's scale."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        raise AssertionError("%s: shape %s != reference %s" % (name, got.shape, ref.shape))
    scale = max(float(np.max(np.abs(ref))), 1e-30)
    err = float(np.max(np.abs(got - ref)))
    if not err <= rtol * scale:
        raise AssertionError("%s: max abs error %.3g exceeds %.1g x %.3g"
                             % (name, err, rtol, scale))


def emit(figure, lib, value, unit, floor, better="lower", **extra):
    rec = {"bench": BENCH, "figure": figure, "lib": lib, "value": value, "unit": unit,
           "numpy": floor,
           "ratio_vs_numpy": (value / floor) if (value is not None and floor) else None,
           "better": better}
    rec.update(extra)
    rec["loadavg_1m"] = _loadavg()   # other work on the machine makes figures noisy
    for k in ("value", "numpy", "ratio_vs_numpy"):
        if isinstance(rec.get(k), float):
            rec[k] = float("%.4g" % rec[k])
    print(json.dumps(rec), flush=True)
    return rec


# --------------------------------------------------------------------------- tiny ops

def t_iadd(be, n):
    def once():
        a = be.array(np.zeros(16, np.float32))
        be.waitall()
        t0 = time.perf_counter()
        for _ in range(n):
            a += 1
        be.waitall()
        dt = time.perf_counter() - t0
        return dt, be.to_numpy(a)
    return once


def t_add(be, n):
    def once():
        a = be.array(np.arange(16, dtype=np.float32))
        b = be.array(np.full(16, 0.5, np.float32))
        c = None
        be.waitall()
        t0 = time.perf_counter()
        for _ in range(n):
            c = a + b
        be.waitall()
        dt = time.perf_counter() - t0
        return dt, be.to_numpy(c)
    return once


def t_rebind(be, n):
    def once():
        x = be.array(np.zeros(16, np.float32))
        be.waitall()
        t0 = time.perf_counter()
        for _ in range(n):
            x = x + 1
        be.waitall()
        dt = time.perf_counter() - t0
        return dt, be.to_numpy(x)
    return once


TINY = {
    # figure: (timer factory, reference of the final value)
    "iadd_small": (t_iadd, lambda n: np.full(16, n, np.float32)),
    "add_small": (t_add, lambda n: np.arange(16, dtype=np.float32) + np.float32(0.5)),
    "rebind_small": (t_rebind, lambda n: np.full(16, n, np.float32)),
}


def fig_tiny(figure, be, floor_be, n, reps, meta):
    factory, ref = TINY[figure]
    variants = {"numpy": factory(floor_be, n)}
    if be is not None:
        variants["lib"] = factory(be, n)
    res = best_interleaved(variants, reps)
    t_np, r_np = res["numpy"]
    check_close(figure + " (numpy)", r_np, ref(n))
    floor = t_np / n * 1e6
    if be is None:
        return emit(figure, "numpy", floor, "us/op", floor, n=n, reps=reps, **meta)
    t, r = res["lib"]
    check_close(figure, r, ref(n))
    return emit(figure, be.name, t / n * 1e6, "us/op", floor, n=n, reps=reps, **meta)


# --------------------------------------------------------------------------- in-place guide

def _guide_inputs():
    rng = np.random.RandomState(0)
    a0 = rng.uniform(0, 1, GUIDE_SHAPE).astype(np.float32)
    b0 = rng.uniform(0, 1, GUIDE_SHAPE).astype(np.float32)
    return a0, b0


def t_guide(be, kind, n):
    a0, b0 = _guide_inputs()
    lr = GUIDE_LR

    def once():
        a = be.array(a0)
        b = be.array(b0)
        be.waitall()
        t0 = time.perf_counter()
        if kind == "normal":
            for _ in range(n):
                a = a - lr * b          # allocates a new array each rep
        else:
            for _ in range(n):
                a -= lr * b             # one temporary (lr * b), then an in-place update
        be.waitall()
        dt = time.perf_counter() - t0
        return dt, be.to_numpy(a)      # the final read of `a`
    return once


def _guide_reference(kind, n):
    a, b = _guide_inputs()
    for _ in range(n):
        if kind == "normal":
            a = a - GUIDE_LR * b
        else:
            a -= GUIDE_LR * b
    return a


def fig_inplace_guide(be, floor_be, n_unused, reps, meta):
    n = GUIDE_N
    variants = {}
    for kind in ("normal", "inplace"):
        variants[("numpy", kind)] = t_guide(floor_be, kind, n)
        if be is not None:
            variants[("lib", kind)] = t_guide(be, kind, n)
    res = best_interleaved(variants, reps)
    out = {}
    for kind in ("normal", "inplace"):
        t_np, r_np = res[("numpy", kind)]
        check_close("inplace_guide %s (numpy)" % kind, r_np, _guide_reference(kind, n))
        out[kind] = [t_np / n * 1e6, None]
        if be is not None:
            t, r = res[("lib", kind)]
            check_close("inplace_guide %s" % kind, r, _guide_reference(kind, n))
            out[kind][1] = t / n * 1e6
    lib = "numpy" if be is None else be.name
    common = dict(n=n, reps=reps, shape=list(GUIDE_SHAPE), lr=GUIDE_LR, **meta)
    recs = []
    for kind, label in (("normal", "normal_op"), ("inplace", "inplace_op")):
        floor, val = out[kind]
        recs.append(emit("inplace_guide_" + label, lib, floor if be is None else val,
                         "us/rep", floor,
                         op="a = a - LR * b" if kind == "normal" else "a -= LR * b", **common))
    np_ratio = out["normal"][0] / out["inplace"][0]
    lib_ratio = np_ratio if be is None else out["normal"][1] / out["inplace"][1]
    recs.append(emit("inplace_guide_normal_over_inplace", lib, lib_ratio, "x", np_ratio,
                     better="higher", **common))
    return recs


# --------------------------------------------------------------------------- push throughput

def _engine_api(mx):
    """Return (push_one, new_var, wait_all, kind) or None when there is no public push."""
    eng = getattr(mx, "engine", None)
    if eng is None:
        return None
    new_var = getattr(eng, "new_var", None)
    push = getattr(eng, "push", None)
    push_noop = getattr(eng, "push_noop", None)
    wait_all = getattr(eng, "wait_all", None) or getattr(getattr(mx, "nd", None), "waitall", None)
    if new_var is None or wait_all is None or (push is None and push_noop is None):
        return None
    if push_noop is not None:
        def push_one(var):
            push_noop((), (var,))
        return push_one, new_var, wait_all, "push_noop"

    def noop(*args, **kwargs):
        return None

    def push_one(var):
        push(noop, (), (var,))
    return push_one, new_var, wait_all, "python_callable"


def t_push(api, nthreads, n):
    push_one, new_var, wait_all, _ = api

    def once():
        vars_ = [new_var() for _ in range(nthreads)]
        wait_all()
        errors = []
        barrier = threading.Barrier(nthreads + 1)

        def worker(var):
            try:
                barrier.wait()
                for _ in range(n):
                    push_one(var)
            except BaseException as e:  # reported after the run
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(v,)) for v in vars_]
        for th in threads:
            th.start()
        barrier.wait()
        t0 = time.perf_counter()
        for th in threads:
            th.join()
        wait_all()
        dt = time.perf_counter() - t0
        if errors:
            raise errors[0]
        return dt, None
    return once


def t_numpy_threads_iadd(nthreads, n):
    """Floor for push throughput: NumPy's own `a += 1` on 16 floats, one array per thread."""
    def once():
        arrays = [np.zeros(16, np.float32) for _ in range(nthreads)]
        barrier = threading.Barrier(nthreads + 1)

        def worker(a):
            barrier.wait()
            for _ in range(n):
                a += 1

        threads = [threading.Thread(target=worker, args=(a,)) for a in arrays]
        for th in threads:
            th.start()
        barrier.wait()
        t0 = time.perf_counter()
        for th in threads:
            th.join()
        dt = time.perf_counter() - t0
        for a in arrays:
            check_close("numpy threads iadd", a, np.full(16, n, np.float32))
        return dt, None
    return once


def fig_push(figure, be, n, reps, meta):
    nthreads = 1 if figure.endswith("1thread") else 4
    total = n * nthreads
    common = dict(n=total, threads=nthreads, reps=reps,
                  floor_op="numpy a += 1 on 16 float32 (one array per thread)", **meta)
    api = None if be is None else _engine_api(be.mx)
    variants = {"numpy": t_numpy_threads_iadd(nthreads, n)}
    if api is not None:
        variants["lib"] = t_push(api, nthreads, n)
    res = best_interleaved(variants, reps)
    floor = total / res["numpy"][0]
    if be is None:
        return emit(figure, "numpy", floor, "ops/s", floor, better="higher", **common)
    if api is None:
        note = ("no public push API in mxnet" if be.name == "mxnet"
                else "%s.engine has no push/new_var yet" % be.name)
        return emit(figure, be.name, None, "ops/s", floor, better="higher", note=note, **common)
    t = res["lib"][0]
    return emit(figure, be.name, total / t, "ops/s", floor, better="higher",
                push_kind=api[3], op="empty op writing one variable per thread", **common)


# --------------------------------------------------------------------------- two GEMMs

def _gemm_inputs():
    rng = np.random.RandomState(1)
    return [rng.standard_normal((GEMM_N, GEMM_N)).astype(np.float32) for _ in range(4)]


def t_gemm(be, mode, threaded=False):
    """mode 'parallel': both GEMMs issued, then one wait; 'sequential': wait after each.

    For an asynchronous library, issuing is just calling dot twice. For a synchronous one
    (NumPy, PyTorch eager) 'parallel' means two Python threads, one GEMM each.
    """
    host = _gemm_inputs()
    a, b, c, d = [be.array(x) for x in host]
    be.waitall()

    def once():
        be.waitall()
        if mode == "sequential":
            t0 = time.perf_counter()
            e = be.dot(a, b)
            be.waitall()
            f = be.dot(c, d)
            be.waitall()
            dt = time.perf_counter() - t0
        elif not threaded:
            t0 = time.perf_counter()
            e = be.dot(a, b)
            f = be.dot(c, d)
            be.waitall()
            dt = time.perf_counter() - t0
        else:
            res = [None, None]

            def run(i, x, y):
                res[i] = be.dot(x, y)
            ths = [threading.Thread(target=run, args=(0, a, b)),
                   threading.Thread(target=run, args=(1, c, d))]
            t0 = time.perf_counter()
            for th in ths:
                th.start()
            for th in ths:
                th.join()
            be.waitall()
            dt = time.perf_counter() - t0
            e, f = res
        return dt, (e, f)
    return once, host


def _check_gemm(name, be, ef, host):
    a, b, c, d = host
    e, f = ef
    # float32 GEMM of length 1024: summation order differs between BLAS builds.
    check_close(name + " dot(a, b)", be.to_numpy(e), a.astype(np.float64) @ b, rtol=1e-3)
    check_close(name + " dot(c, d)", be.to_numpy(f), c.astype(np.float64) @ d, rtol=1e-3)


def fig_gemm(be, floor_be, reps, meta, threaded=False):
    """gemm_parallel as the issue specifies it (each GEMM on one core: mxcy's kernel
    sharing, which lets idle workers join a big GEMM, is switched off), then the same with
    sharing on, for information."""
    eng = getattr(getattr(be, "mx", None), "engine", None) if be is not None else None
    if eng is None or not hasattr(eng, "set_kernel_split"):
        return _fig_gemm(be, floor_be, reps, meta, threaded)
    old = eng.set_kernel_split(False)
    try:
        _fig_gemm(be, floor_be, reps, meta, threaded)
    finally:
        eng.set_kernel_split(True)
    rec = _fig_gemm(be, floor_be, reps, meta, threaded, figure="gemm_parallel_split_on")
    eng.set_kernel_split(old)
    return rec


def _fig_gemm(be, floor_be, reps, meta, threaded=False, figure="gemm_parallel"):
    """gemm_parallel with ratio_vs_numpy = parallel wall time / NumPy two sequential GEMMs."""
    once_np, host = t_gemm(floor_be, "sequential")
    variants = {"numpy": once_np}
    if be is None:
        # Reference only: NumPy's matmul releases the GIL, so two Python threads can overlap.
        variants["par"] = t_gemm(floor_be, "parallel", threaded=True)[0]
        how, lib = "two Python threads", "numpy"
    else:
        variants["seq"] = t_gemm(be, "sequential", threaded)[0]
        variants["par"] = t_gemm(be, "parallel", threaded)[0]
        how = "two Python threads" if threaded else "both pushed, one waitall"
        lib = be.name
    res = best_interleaved(variants, reps)
    t_np, r = res["numpy"]
    _check_gemm("gemm (numpy)", floor_be, r, host)
    t_par, r = res["par"]
    _check_gemm("gemm parallel", floor_be if be is None else be, r, host)
    if be is None:
        t_seq = t_np
    else:
        t_seq, r = res["seq"]
        _check_gemm("gemm sequential", be, r, host)
    common = dict(n=GEMM_N, reps=reps, target="<= 0.6", **meta)
    rec = {"bench": BENCH, "figure": figure, "lib": lib,
           "value": float("%.4g" % (t_par / t_seq)), "unit": "x",
           "numpy": float("%.4g" % (t_np * 1e3)),
           "ratio_vs_numpy": float("%.4g" % (t_par / t_np)),
           "better": "lower",
           "value_is": "parallel wall time / sequential wall time (two GEMMs)",
           "numpy_is": "ms for NumPy a @ b twice, sequentially",
           "ratio_vs_numpy_is": "parallel wall time / NumPy two sequential GEMMs",
           "parallel_ms": float("%.4g" % (t_par * 1e3)),
           "sequential_ms": float("%.4g" % (t_seq * 1e3)),
           "parallel_how": how}
    rec.update(common)
    rec["loadavg_1m"] = _loadavg()
    print(json.dumps(rec), flush=True)
    return rec


# --------------------------------------------------------------------------- main

def load_backend(lib):
    if lib == "numpy-only":
        return None
    try:
        mod = importlib.import_module(lib)
    except ImportError as e:
        sys.stderr.write("bench_engine: cannot import %r (%s). Build/install it, or use "
                         "--lib mxnet from the peer venv, or --lib numpy-only.\n" % (lib, e))
        sys.exit(2)
    return MxBackend(mod, lib)


ENV_KEYS = ("MXCY_ENGINE_TYPE", "MXCY_CPU_WORKER_NTHREADS", "MXNET_ENGINE_TYPE",
            "MXNET_CPU_WORKER_NTHREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
            "MKL_NUM_THREADS")


def meta_for(be):
    """Context stored on every line: versions, thread settings, and how busy the machine was."""
    m = {"numpy_version": np.__version__}
    if be is not None:
        m["lib_version"] = be.version
    env = {k: os.environ[k] for k in ENV_KEYS if k in os.environ}
    if env:
        m["env"] = env
    m["cpus"] = os.cpu_count()
    return m


def _loadavg():
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lib", default="mxcy",
                   help="mxcy (default), mxnet, or numpy-only (just the NumPy floor)")
    p.add_argument("--n", type=int, default=20000, help="ops per repetition for tiny ops/push")
    p.add_argument("--reps", type=int, default=5, help="repetitions; the best is reported")
    p.add_argument("--only", choices=FIGURES, help="run one figure")
    args = p.parse_args(argv)

    be = load_backend(args.lib)
    floor_be = NumpyBackend()
    meta = meta_for(be)
    figures = [args.only] if args.only else list(FIGURES)
    for fig in figures:
        if fig in TINY:
            fig_tiny(fig, be, floor_be, args.n, args.reps, meta)
        elif fig == "inplace_guide":
            fig_inplace_guide(be, floor_be, args.n, args.reps, meta)
        elif fig.startswith("push_throughput"):
            fig_push(fig, be, args.n, args.reps, meta)
        elif fig == "gemm_parallel":
            fig_gemm(be, floor_be, args.reps, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
