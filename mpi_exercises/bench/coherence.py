"""Cache coherence between two ranks' cores, with no message: what a write or a read costs when
the other core has just touched the same memory.

Two ranks of one node share a window of memory (``MPI.Win.Allocate_shared``).  Rank 0 writes
it right after rank 1 has read it (the write must take every cache line back from the other
core), then writes it again (the lines are its own now); rank 1 reads it right after rank 0 has
written it (every line comes from the other core's cache, modified), then reads it again.  The
ratios of the first to the second are the price of sharing: 1 where the two cores share a cache
that keeps coherence cheap, several times more where every line crosses between caches.  On the
course's VM the ratio moves between about 1 and 4 from one minute to the next with nothing else
changed, and MPI's long messages move with it (``benchmarks/coherence.py``).

    mpiexec -n 2 python -m mpi_exercises.bench.coherence
"""

from __future__ import annotations

import numpy as np

#: what is timed, in words (stored with the readings)
METHOD = ("a window of shared memory (MPI.Win.Allocate_shared) on ranks 0 and 1, no message: rank 0 "
          "writes it (np.copyto) right after rank 1 read it (np.sum), then writes it again; rank 1 reads "
          "it right after rank 0 wrote it, then reads it again; each time the best of the samples, MPI.Wtime, "
          "a barrier between the two ranks' turns")
#: the readings of :func:`probe`, each a best time (s)
KINDS = ("write, peer read", "write, own lines", "read, peer wrote", "read, own copy")
#: a write ratio above this says the two cores' caches are apart (on the course's VM the ratio is
#: 1.0 to 1.4 in some minutes and 3 to 5 in others: ``benchmarks/coherence.py``)
APART_ABOVE = 2.0
#: the length (bytes) probed by default: as long as the launch mode's messages
PROBE_BYTES = 1 << 20


def on_pair(comm, nbytes: int, samples: int, what: str, measure):
    """``measure(pair)`` on ranks 0 and 1 of ``comm`` (a communicator of those two; the other ranks
    wait), its result broadcast to every rank (collective).  ``nbytes`` (a positive multiple of 8)
    and ``samples`` (>= 1) are checked first, ``what`` naming the caller in the refusal of a
    communicator of one rank."""
    from mpi4py import MPI

    if nbytes <= 0 or nbytes % 8:
        raise ValueError(f"nbytes must be a positive multiple of 8, got {nbytes}")
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if comm.Get_size() < 2:
        raise ValueError(f"{what} needs a communicator of 2 ranks or more")
    pair = comm.Split(0 if comm.Get_rank() < 2 else MPI.UNDEFINED, comm.Get_rank())
    result = None
    if pair != MPI.COMM_NULL:
        result = measure(pair)
        pair.Free()
    return comm.bcast(result, root=0)


def probe(comm, nbytes: int = PROBE_BYTES, samples: int = 5) -> dict:
    """One reading (collective on ``comm``, 2 ranks of one node or more; ranks 0 and 1 probe, the
    others wait): the best of ``samples`` times (s) of each of :data:`KINDS` on ``nbytes`` of
    shared memory, and ``write_ratio`` (write after the peer read over write of own lines) and
    ``read_ratio`` (read after the peer wrote over read again), on every rank."""
    return on_pair(comm, nbytes, samples, "coherence.probe", lambda pair: _probe_pair(pair, nbytes // 8, samples))


def _probe_pair(pair, n: int, samples: int) -> dict:
    """:func:`probe` on a communicator of exactly two ranks of one node."""
    from mpi4py import MPI

    rank = pair.Get_rank()
    win = MPI.Win.Allocate_shared(n * 8 if rank == 0 else 0, 8, comm=pair)
    try:
        memory, _ = win.Shared_query(0)
        shared = np.ndarray((n,), np.float64, buffer=memory)
        source = np.full(n, 1.0 + rank)
        best = dict.fromkeys(KINDS, np.inf)

        def timed(kind, fn):
            t0 = MPI.Wtime()
            fn()
            best[kind] = min(best[kind], MPI.Wtime() - t0)
        for _ in range(samples):
            if rank == 1:
                shared.sum()
            pair.Barrier()
            if rank == 0:
                timed("write, peer read", lambda: np.copyto(shared, source))
                timed("write, own lines", lambda: np.copyto(shared, source))
            pair.Barrier()
            if rank == 1:
                timed("read, peer wrote", shared.sum)
                timed("read, own copy", shared.sum)
            pair.Barrier()
        times = np.array([best[k] for k in KINDS])
        pair.Allreduce(MPI.IN_PLACE, times, op=MPI.MIN)         # inf where a rank did not time
    finally:
        win.Free()
    out = {"bytes": int(n * 8), **{k: float(t) for k, t in zip(KINDS, times)}}
    out["write_ratio"] = out["write, peer read"] / out["write, own lines"]
    out["read_ratio"] = out["read, peer wrote"] / out["read, own copy"]
    return out


def main(argv=None) -> int:
    from mpi4py import MPI

    from netmodels.commandline import OneLineParser

    from . import arguments

    p = OneLineParser(prog="python -m mpi_exercises.bench.coherence", description=__doc__.split("\n\n")[0])
    p.add_argument("--bytes", type=arguments.positive_int, default=PROBE_BYTES, help="length probed (default 1 MiB)")
    p.add_argument("--samples", type=arguments.positive_int, default=5, help="samples of each kind (default 5)")
    args = p.parse_args(argv)
    comm = MPI.COMM_WORLD
    if comm.Get_size() < 2:
        p.error("run it on 2 ranks: mpiexec -n 2 python -m mpi_exercises.bench.coherence")
    r = probe(comm, args.bytes - args.bytes % 8 or 8, args.samples)
    if comm.Get_rank() == 0:
        print("; ".join(f"{k} {r[k] * 1e6:.1f} µs" for k in KINDS)
              + f"; write ratio {r['write_ratio']:.2f}, read ratio {r['read_ratio']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
