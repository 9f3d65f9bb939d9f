"""The ``barrier-bench`` command: time every barrier algorithm (and ``MPI.Barrier``), rank them.

    mpiexec -n 4 python -m mpi_exercises barrier-bench --json barriers.json

A sample is ``--inner`` back-to-back barriers of one algorithm, timed on every rank
(``MPI.Wtime``), the mean time per barrier on the slowest rank (:data:`METHOD`).  The
algorithms are measured in interleaved rounds of a recorded random order
(:mod:`mpi_exercises.bench.measure`), so that load from other jobs hits them all alike:
``--warmup`` untimed barriers before each, ``--repetitions`` samples per algorithm in the first
rounds, then more rounds for those whose median's 95 % interval is wider than ``--target``
(within ``--time-budget``).  Median with its interval, min, ranking; every sample in the JSON.
The algorithms are :func:`mpi_exercises.collectives.barrier.choices` (the registry's).
"""

from __future__ import annotations

import numpy as np

from . import arguments, placement, records, statistics
from . import measure as sampling

#: how a sample is taken, in words (printed and stored in the JSON)
METHOD = ("barrier-bench: a tight loop of --inner barriers after one MPI barrier per batch, time / inner, "
          "slowest rank")


def add_arguments(p) -> None:
    from ..collectives.barrier import choices

    names = choices()
    p.add_argument("--algorithms", type=arguments.name_list(names), default=list(names),
                   help="comma-separated algorithms (default: all): " + ",".join(names))
    p.add_argument("--fan-in", type=arguments.int_at_least(2), default=4, help="combining tree fan-in (default 4)")
    p.add_argument("--n", type=arguments.positive_int, default=2,
                   help="messages per round of n-way dissemination (default 2)")
    p.add_argument("--inner", type=arguments.positive_int, default=20,
                   help="back-to-back barriers per sample (default 20)")
    arguments.add_options(p, repetitions=(50, "timed samples per algorithm (default 50)"),
                     warmup=(20, "untimed barriers before each algorithm in each round (default 20)"))
    sampling.add_options(p)


def options_for(algorithm: str, fan_in: int = 4, n: int = 2) -> dict:
    """The keyword options of ``algorithm`` from the command-line values (those it takes)."""
    from netmodels.algorithms import registry

    if algorithm == "mpi":
        return {}
    takes = registry.get(algorithm, "barrier").options
    return {k: v for k, v in (("fan_in", fan_in), ("n", n)) if k in takes}


def sweep(comm, algorithms, repetitions, inner, warmup, progress=False, **options) -> tuple[list[dict], dict]:
    """Time several barriers in interleaved rounds (collective): ``(per-algorithm summaries
    (s per barrier), the rounds' record)`` on rank 0, ``([], record)`` elsewhere.

    ``algorithms`` is a list of ``(name, options)``.  A batch of samples of one algorithm
    starts with one ``MPI.Barrier`` and ``warmup`` untimed barriers of its own; a sample is
    ``inner`` back-to-back barriers, the mean time per barrier on the slowest rank.  Without
    ``target`` every algorithm gets exactly ``repetitions`` samples.  ``options``: those of
    :func:`~mpi_exercises.bench.measure.interleaved_rounds`.
    """
    from mpi4py import MPI

    from ..collectives.barrier import Barrier

    rank = comm.Get_rank()
    bars = [Barrier(comm, name, **opts) for name, opts in algorithms]

    def run(j, reps):
        b = bars[j]
        samples = np.empty(reps)
        comm.Barrier()
        for _ in range(warmup):
            b()
        for i in range(reps):
            t0 = MPI.Wtime()
            for _ in range(inner):
                b()
            samples[i] = (MPI.Wtime() - t0) / inner
        comm.Allreduce(MPI.IN_PLACE, samples, op=MPI.MAX)
        return samples

    try:
        taken, info = sampling.interleaved_rounds(comm, range(len(bars)), run, lambda j: repetitions,
                                                  desc="barriers", progress=progress, **options)
    finally:
        for b in bars:
            b.free()
    if rank != 0:
        return [], info
    return [{"algorithm": name, "options": opts, **statistics.summarize(taken[j])}
            for j, (name, opts) in enumerate(algorithms)], info


def measure(comm, algorithms, repetitions, inner, warmup, progress=False, **options) -> list[dict]:
    """:func:`sweep`'s per-algorithm summaries (s per barrier) on rank 0 (empty elsewhere)."""
    return sweep(comm, algorithms, repetitions, inner, warmup, progress, **options)[0]


def report(results: list[dict]) -> str:
    lines = [f"{'rank':>4} {'algorithm':<26} {'min µs':>10} {'median µs':>10} {'95 % CI µs':>19}", "-" * 73]
    for i, r in enumerate(sorted(results, key=lambda r: r["median_s"]), 1):
        label = r["algorithm"] + "".join(f" {k}={v}" for k, v in r["options"].items())
        lo, hi = r["median_ci_s"]
        lines.append(f"{i:>4} {label:<26} {r['min_s'] * 1e6:10.2f} {r['median_s'] * 1e6:10.2f} "
                     f"{f'[{lo * 1e6:.2f}, {hi * 1e6:.2f}]':>19}")
    return "\n".join(lines)


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    placement.advise_ranks(comm, "barrier-bench", 2, placement.ONE_RANK_WHY, suggest=4)
    oversubscribed = placement.warn_if_oversubscribed(comm)
    rank = comm.Get_rank()
    algorithms = [(name, options_for(name, args.fan_in, args.n)) for name in args.algorithms]
    options = sampling.options_from(comm, args)
    results, rounds = sweep(comm, algorithms, args.repetitions, args.inner, args.warmup, not args.no_progress,
                            **options)
    if rank == 0:
        print(f"barrier times on {comm.Get_size()} ranks (per barrier; sample = max over ranks)")
        print(sampling.header(METHOD, rounds))
        print(report(results), flush=True)
        records.save(comm, args.json, "barrier", oversubscribed,
                  {"repetitions": args.repetitions, "inner": args.inner, "warmup": args.warmup,
                   "fan_in": args.fan_in, "n": args.n, **options},
                  timing_method=METHOD, rounds=rounds, results=results)
    return 0


