#!/usr/bin/env python3
"""PyTorch eager peer for bench_engine.py: the same tiny ops and GEMMs, the same JSON keys.

    /work/peers/torch/bin/python bench/peer_torch_engine.py [--n 20000] [--only NAME]

PyTorch eager is synchronous on CPU, so "parallel" GEMMs are two Python threads
(torch.matmul releases the GIL); "waitall" is a no-op. There is no engine push API,
so the push_throughput figures print "value": null with a note, to keep tables aligned.
The NumPy floor is measured in this same process (the torch venv's NumPy).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_engine as be_mod  # noqa: E402  (helpers only; imports no library)

import torch  # noqa: E402


class TorchBackend:
    name = "torch"
    is_async = False

    def __init__(self):
        self.version = torch.__version__

    def array(self, x):
        return torch.from_numpy(np.array(x, dtype=np.float32, copy=True))

    def to_numpy(self, x):
        return x.detach().numpy()

    def waitall(self):
        pass

    def dot(self, a, b):
        return torch.matmul(a, b)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=20000, help="ops per repetition for tiny ops")
    p.add_argument("--reps", type=int, default=5, help="repetitions; the best is reported")
    p.add_argument("--only", choices=be_mod.FIGURES, help="run one figure")
    p.add_argument("--intra-op-threads", type=int, default=None,
                   help="torch.set_num_threads(N) first (default: torch's own, = cores)")
    args = p.parse_args(argv)

    torch.set_grad_enabled(False)
    if args.intra_op_threads:
        torch.set_num_threads(args.intra_op_threads)
    be = TorchBackend()
    floor_be = be_mod.NumpyBackend()
    meta = be_mod.meta_for(be)
    meta["intra_op_threads"] = torch.get_num_threads()
    figures = [args.only] if args.only else list(be_mod.FIGURES)
    for fig in figures:
        if fig in be_mod.TINY:
            be_mod.fig_tiny(fig, be, floor_be, args.n, args.reps, meta)
        elif fig == "inplace_guide":
            be_mod.fig_inplace_guide(be, floor_be, args.n, args.reps, meta)
        elif fig.startswith("push_throughput"):
            nthreads = 1 if fig.endswith("1thread") else 4
            t_np, _ = be_mod.best_of(be_mod.t_numpy_threads_iadd(nthreads, args.n), args.reps)
            floor = nthreads * args.n / t_np
            be_mod.emit(fig, "torch", None, "ops/s", floor, better="higher",
                        note="no engine push API in PyTorch eager",
                        n=nthreads * args.n, threads=nthreads, reps=args.reps,
                        floor_op="numpy a += 1 on 16 float32 (one array per thread)", **meta)
        elif fig == "gemm_parallel":
            be_mod.fig_gemm(be, floor_be, args.reps, meta, threaded=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
