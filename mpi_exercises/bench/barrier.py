"""The ``barrier-bench`` command: time every barrier algorithm (and ``MPI.Barrier``), rank them.

    mpiexec -n 4 python -m mpi_exercises barrier-bench --json barriers.json

Warm-up barriers, then ``--repetitions`` rounds; in each round every algorithm in turn
runs ``--inner`` back-to-back barriers, timed on every rank (``MPI.Wtime``), and the sample
is the mean time per barrier on the slowest rank.  Interleaving the algorithms makes load
from other jobs hit them all alike.  min/median over the samples, ranking, JSON output.
The algorithms are :func:`mpi_exercises.collectives.barrier.choices` (the registry's).
"""

from __future__ import annotations

import sys

import numpy as np

from . import core


def add_arguments(p) -> None:
    from ..collectives.barrier import choices

    names = choices()
    p.add_argument("--algorithms", type=core.name_list(names), default=list(names),
                   help="comma-separated algorithms (default: all): " + ",".join(names))
    p.add_argument("--fan-in", type=core.int_at_least(2), default=4, help="combining tree fan-in (default 4)")
    p.add_argument("--n", type=core.positive_int, default=2,
                   help="messages per round of n-way dissemination (default 2)")
    p.add_argument("--inner", type=core.positive_int, default=20,
                   help="back-to-back barriers per sample (default 20)")
    core.add_options(p, repetitions=(50, "timed samples per algorithm (default 50)"),
                     warmup=(20, "untimed barriers first (default 20)"))


def options_for(algorithm: str, fan_in: int = 4, n: int = 2) -> dict:
    """The keyword options of ``algorithm`` from the command-line values (those it takes)."""
    from netmodels.algorithms import registry

    if algorithm == "mpi":
        return {}
    takes = registry.get(algorithm, "barrier").options
    return {k: v for k, v in (("fan_in", fan_in), ("n", n)) if k in takes}


def measure(comm, algorithms, repetitions, inner, warmup, progress=False) -> list[dict]:
    """Time several barriers, interleaved; per-algorithm summaries (s per barrier) on rank 0.

    ``algorithms`` is a list of ``(name, options)``.  Repetition i times ``inner``
    back-to-back barriers of every algorithm in turn (the order rotates with i), so that
    a burst of load from other jobs hits all algorithms alike instead of whichever was
    running.  A sample is the mean time per barrier on the slowest rank.
    """
    from mpi4py import MPI
    from tqdm import tqdm

    from ..collectives.barrier import Barrier

    rank = comm.Get_rank()
    bars = [Barrier(comm, name, **opts) for name, opts in algorithms]
    samples = np.empty((len(bars), repetitions))
    try:
        for b in bars:
            for _ in range(warmup):
                b()
        comm.Barrier()
        for i in tqdm(range(repetitions), desc="barriers", unit="rep", file=sys.stderr,
                      disable=(rank != 0) or not progress or None):
            for j in np.roll(np.arange(len(bars)), i):
                b = bars[j]
                t0 = MPI.Wtime()
                for _ in range(inner):
                    b()
                samples[j, i] = (MPI.Wtime() - t0) / inner
    finally:
        for b in bars:
            b.free()
    worst = np.empty_like(samples) if rank == 0 else None
    comm.Reduce(samples, worst, op=MPI.MAX, root=0)
    if rank != 0:
        return []
    return [{"algorithm": name, "options": opts, **core.summarize(w)}
            for (name, opts), w in zip(algorithms, worst)]


def report(results: list[dict]) -> str:
    lines = [f"{'rank':>4} {'algorithm':<26} {'min µs':>10} {'median µs':>10} {'p75 µs':>10}", "-" * 64]
    for i, r in enumerate(sorted(results, key=lambda r: r["median_s"]), 1):
        label = r["algorithm"] + "".join(f" {k}={v}" for k, v in r["options"].items())
        lines.append(f"{i:>4} {label:<26} {r['min_s'] * 1e6:10.2f} {r['median_s'] * 1e6:10.2f} "
                     f"{r['p75_s'] * 1e6:10.2f}")
    return "\n".join(lines)


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    core.advise_ranks(comm, "barrier-bench", 2, core.ONE_RANK_WHY, suggest=4)
    oversubscribed = core.warn_if_oversubscribed(comm)
    rank = comm.Get_rank()
    algorithms = [(name, options_for(name, args.fan_in, args.n)) for name in args.algorithms]
    results = measure(comm, algorithms, args.repetitions, args.inner, args.warmup,
                      progress=not args.no_progress)
    if rank == 0:
        print(f"barrier times on {comm.Get_size()} ranks (per barrier; sample = max over ranks)")
        print(report(results), flush=True)
        core.save(comm, args.json, "barrier", oversubscribed,
                  {"repetitions": args.repetitions, "inner": args.inner, "warmup": args.warmup,
                   "fan_in": args.fan_in, "n": args.n}, results=results)
    return 0


