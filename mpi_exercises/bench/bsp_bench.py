"""Measure BSP's g and l: supersteps of growing h-relations, then a least-squares line.

One superstep: every rank sends ``h`` units and receives ``h`` units in a balanced total
exchange (rank r sends its j-th share to ``r + 1 + j`` and receives the j-th share of
``r - 1 - j``, j = 0 .. P-2, all modulo P), waits for all of them, then enters a barrier.
So the superstep is an h-relation exactly: no rank sends or receives more than h.  What
a unit is (``--unit``):

* ``words`` (default): float64 elements (8 bytes); the h words are cut into P - 1 nearly
  equal shares, one message per destination.  g is then a time per word (BSP's usual g),
  and the per-message costs land in l;
* ``messages``: h one-word messages, dealt round-robin to the P - 1 others.  g is then a
  time per message, the survey's reading, closer to LogP's gap.

Each superstep is timed with ``MPI.Wtime`` on every rank from a barrier to the end of
the closing barrier; a sample is the largest time over the ranks (a superstep ends when its
last rank leaves; :data:`METHOD`).  The h values are measured in interleaved rounds of a
recorded random order (:mod:`mpi_exercises.bench.measure`), ``--warmup`` untimed supersteps
before each, ``--repetitions`` samples per h in the first rounds, then more rounds for the h
whose median's 95 % interval is wider than ``--target`` (within ``--time-budget``); every
sample is kept in the JSON.
:func:`netmodels.models.bsp.fit_bsp` fits ``T(h) = l + g h`` to the medians (``fit``) and
to the minima (``fit_min``, the better estimate on a shared machine), with 95 % confidence
intervals.  ``h = 0`` is the barrier alone: l's direct measurement.

    mpiexec -n 2 python -m mpi_exercises bsp --json bsp.json
"""

from __future__ import annotations

import sys

import numpy as np

from .. import pages
from . import arguments, placement, records, statistics
from . import measure as sampling

WORD = np.float64
DEFAULT_H = {"words": [0, 256, 1024, 4096, 16384, 65536, 262144],
             "messages": [0, 1, 2, 4, 8, 16, 32, 64]}

#: how a sample is taken, in words (printed and stored in the JSON)
METHOD = ("bsp: a barrier, the h-relation's nonblocking sends and receives, a closing barrier, timed on every "
          "rank, the slowest rank's time; separate send and receive buffers")


def add_arguments(p) -> None:
    p.add_argument("--unit", choices=("words", "messages"), default="words",
                   help="what h counts: 8-byte words (default) or one-word messages")
    p.add_argument("--h", type=arguments.size_list_of(8, 2), default=None,
                   help="comma-separated h values, suffix k/M allowed (default words "
                        "0,256,1k,4k,16k,64k,256k; messages 0,1,2,4,8,16,32,64)")
    arguments.add_options(p, repetitions=(100, "timed supersteps per h (default 100)"),
                     warmup=(10, "untimed supersteps first (default 10)"), json="write raw data and fits to FILE as JSON")
    sampling.add_options(p)


def plan(rank: int, nprocs: int, h: int, unit: str):
    """The messages of one superstep for ``rank``: (sends, receives), each a list of
    (peer, tag, start, count) in words of the rank's send or receive buffer of ``h`` words."""
    from netmodels.algorithms.combining import split

    others = nprocs - 1
    if unit == "words":
        shares = split(h, others)
        sends = [((rank + 1 + j) % nprocs, j, s, c) for j, (s, c) in enumerate(shares) if c]
        recvs = [((rank - 1 - j) % nprocs, j, s, c) for j, (s, c) in enumerate(shares) if c]
    else:
        sends = [((rank + 1 + i % others) % nprocs, i % others, i, 1) for i in range(h)]
        recvs = [((rank - 1 - i % others) % nprocs, i % others, i, 1) for i in range(h)]
    return sends, recvs


def superstep_times(comm, h: int, unit: str, reps: int, warmup: int) -> np.ndarray:
    """``reps`` superstep times (s) of an h-relation, the largest over the ranks, on every rank."""
    from mpi4py import MPI

    rank, size, wtime = comm.Get_rank(), comm.Get_size(), MPI.Wtime
    sends, recvs = plan(rank, size, h, unit)
    sbuf, rbuf = pages.allocate(h, WORD), pages.allocate(h, WORD)
    sbuf[:] = 1
    out = np.empty(reps)
    for i in range(-warmup, reps):
        comm.Barrier()
        t0 = wtime()
        reqs = [comm.Irecv([rbuf[s:s + c], MPI.DOUBLE], source=src, tag=tag) for src, tag, s, c in recvs]
        reqs += [comm.Isend([sbuf[s:s + c], MPI.DOUBLE], dest=dst, tag=tag) for dst, tag, s, c in sends]
        MPI.Request.Waitall(reqs)
        comm.Barrier()
        if i >= 0:
            out[i] = wtime() - t0
    comm.Allreduce(MPI.IN_PLACE, [out, MPI.DOUBLE], op=MPI.MAX)
    return out


def sweep(comm, hs, unit, reps, warmup, progress=True, **options) -> tuple[list[dict], dict]:
    """Per-h summaries of the superstep times (s), the same on every rank, taken in
    interleaved rounds, and the rounds' record.  Without ``target`` every h gets exactly
    ``reps`` samples.  ``options``: those of :func:`~mpi_exercises.bench.measure.interleaved_rounds`."""
    superstep_times(comm, max(hs), unit, 1, warmup)          # connections and pages, untimed
    taken, info = sampling.interleaved_rounds(
        comm, hs, lambda h, count: superstep_times(comm, h, unit, count, warmup), lambda h: reps,
        desc="h-relations", progress=progress, **options)
    return [{"h": h, **statistics.summarize(taken[h])} for h in hs], info


def measure(comm, hs, unit, reps, warmup, progress=True, **options) -> list[dict]:
    """:func:`sweep`'s per-h summaries (s), the same on every rank."""
    return sweep(comm, hs, unit, reps, warmup, progress, **options)[0]


def fit(results: list[dict], statistic: str = "median_s") -> dict:
    """g, l and their 95 % confidence intervals from the medians (or ``"min_s"``)."""
    from netmodels.models.bsp import fit_bsp

    f = fit_bsp([r["h"] for r in results], [r[statistic] for r in results])
    return {"statistic": statistic, "g_s": f.g, "l_s": f.l, "g_stderr_s": f.g_stderr,
            "l_stderr_s": f.l_stderr, "g_ci_s": list(f.g_ci), "l_ci_s": list(f.l_ci),
            "confidence": f.confidence, "max_relative_residual": f.max_relative_residual}


def report(results, fitted, unit) -> str:
    per = "word" if unit == "words" else "message"
    lines = [f"{'h':>8} {'min':>10} {'median':>10} {'max':>10}   (µs, h in {unit})", "-" * 46]
    lines += [f"{r['h']:>8} {r['min_s'] * 1e6:10.2f} {r['median_s'] * 1e6:10.2f} {r['max_s'] * 1e6:10.2f}"
              for r in results]
    for f in fitted:
        g_lo, g_hi = (v * 1e9 for v in f["g_ci_s"])
        l_lo, l_hi = (v * 1e6 for v in f["l_ci_s"])
        lines += ["", f"BSP fit T(h) = l + g h to the {f['statistic'][:-2]}s "
                      f"({100 * f['confidence']:.0f} % confidence intervals):",
                  f"  g = {f['g_s'] * 1e9:10.3f} ns per {per}   [{g_lo:.3f}, {g_hi:.3f}]",
                  f"  l = {f['l_s'] * 1e6:10.3f} µs            [{l_lo:.3f}, {l_hi:.3f}]"]
    return "\n".join(lines)


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    if comm.Get_size() < 2:
        placement.start("bsp")
        return 2
    hs = DEFAULT_H[args.unit] if args.h is None else args.h
    if len(hs) < 3:
        if comm.Get_rank() == 0:
            print("bsp needs at least 3 distinct h values to fit g and l with error bars", file=sys.stderr)
        return 2
    _, oversubscribed = placement.start("bsp")
    options = sampling.options_from(comm, args)
    results, rounds = sweep(comm, hs, args.unit, args.repetitions, args.warmup, not args.no_progress, **options)
    if comm.Get_rank() == 0:
        fits = [fit(results), fit(results, "min_s")]
        print(sampling.header(METHOD, rounds))
        print(report(results, fits, args.unit), flush=True)
        if oversubscribed:
            print("(oversubscribed: ranks outnumber cores, these times include OS scheduling)")
        records.save(comm, args.json, "bsp-h-relation", oversubscribed,
                  {"unit": args.unit, "word_bytes": np.dtype(WORD).itemsize, "h": hs,
                   "repetitions": args.repetitions, "warmup": args.warmup, **options},
                  timing_method=METHOD, rounds=rounds, results=results, fit=fits[0], fit_min=fits[1])
    return 0
