"""Every allreduce algorithm against ``MPI.Allreduce``, in the same run, over vector lengths.

For each N (float64, MPI.SUM): warm-up calls, then timed calls of every algorithm,
interleaved round-robin so that all see the same machine conditions; each call
follows a barrier and is timed with ``MPI.Wtime``; a call's time is the slowest
rank's.  ``--mode front-door`` (default) times ``allreduce(comm, x, algorithm,
out=out)``, including its one-collective argument check; ``--mode executor`` times
only the algorithm (copy x into out, run the cached executor).  The reference is
always the bare ``comm.Allreduce(x, out)``.  Prints the median per algorithm and the best of ours as a
ratio to ``MPI.Allreduce`` (of medians, and of minima in parentheses).

    mpiexec -n 4 python -m mpi_exercises bench-allreduce --json bench.json
"""

from __future__ import annotations

import sys

import numpy as np

from . import _bench

DEFAULT_SIZES = [1, 8, 64, 512, 4096, 32768, 262144, 1048576]


def add_arguments(p) -> None:
    from .combining import ALGORITHMS

    p.add_argument("--sizes", type=_bench.size_list, default=DEFAULT_SIZES,
                   help="comma-separated vector lengths in elements (float64), suffix k/M allowed "
                        "(default 1,8,64,512,4k,32k,256k,1M)")
    p.add_argument("--algorithms", type=_bench.name_list(ALGORITHMS, always=['mpi']), default=list(ALGORITHMS),
                   help="comma-separated subset of " + ",".join(ALGORITHMS) + " (mpi is always included)")
    p.add_argument("--iterations", type=_bench.positive_int, default=200,
                   help="timed calls per size for small vectors (default 200)")
    p.add_argument("--warmup", type=_bench.nonneg_int, default=10, help="untimed calls first (default 10)")
    p.add_argument("--budget-bytes", type=_bench.positive_int, default=256 * 2**20,
                   help="cap on calls x bytes per size (default 256 MiB; at least 10 calls)")
    p.add_argument("--mode", choices=("front-door", "executor"), default="front-door",
                   help="time the front door allreduce() (default; includes its one-collective argument "
                        "check) or only the algorithm: copy x into out and run the cached executor")
    p.add_argument("--json", metavar="FILE", help="write the results to FILE as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def time_interleaved(comm, calls: list, iters: int, warmup: int) -> np.ndarray:
    """Per-call times (s), shape (len(calls), iters): round-robin over ``calls``, so every
    algorithm sees the same machine conditions (other processes, frequency changes); each
    call follows a barrier; a call's time is the slowest rank's."""
    from mpi4py import MPI

    samples = np.empty((len(calls), iters))
    for i in range(-warmup, iters):
        for k, fn in enumerate(calls):
            comm.Barrier()
            t0 = MPI.Wtime()
            fn()
            if i >= 0:
                samples[k, i] = MPI.Wtime() - t0
    comm.Allreduce(MPI.IN_PLACE, samples, op=MPI.MAX)
    return samples


def make_call(comm, algorithm, x, out, mode):
    """The function timed for one algorithm: the front door, or only the algorithm itself."""
    from mpi4py import MPI

    from .combining import allreduce, executor_for

    if algorithm == "mpi":                      # the reference is always the bare library call
        return lambda: comm.Allreduce(x, out, op=MPI.SUM)
    if mode == "front-door":
        return lambda: allreduce(comm, x, algorithm, out=out)
    ex = executor_for(comm, algorithm, x.size, x.dtype, MPI.SUM, None, tuple(MPI.Compute_dims(comm.Get_size(), 2)))

    def call():
        np.copyto(out, x)
        ex.run(out)
    return call


def measure(comm, sizes, algorithms, iterations, warmup, budget_bytes, progress=True,
            mode="front-door") -> list[dict]:
    """One result per (N, algorithm) on every rank; the algorithms of one N are interleaved."""
    from mpi4py import MPI
    from tqdm import tqdm

    from .combining import allreduce

    rank = comm.Get_rank()
    results = []
    for n in tqdm(sizes, desc="bench-allreduce", unit="size", file=sys.stderr,
                  disable=(rank != 0) or (not progress) or None):
        x = np.random.default_rng(rank).random(n)
        ref = np.empty_like(x)
        comm.Allreduce(x, ref, op=MPI.SUM)
        outs, calls, oks = [], [], []
        for algorithm in algorithms:
            out = np.empty_like(x)
            allreduce(comm, x, algorithm, out=out)
            oks.append(bool(np.allclose(out, ref, rtol=1e-12, atol=0)))
            outs.append(out)
            calls.append(make_call(comm, algorithm, x, out, mode))
        samples = time_interleaved(comm, calls, _bench.capped_iterations(8 * n, iterations, budget_bytes, at_least=10), warmup)
        for algorithm, ok, row in zip(algorithms, oks, samples):
            stats = _bench.summarize(row)
            stats.update(nelems=n, algorithm=algorithm, correct=comm.allreduce(ok, op=MPI.LAND))
            results.append(stats)
    return results


def ratios(results: list[dict]) -> dict:
    """``{N: {algorithm: median / MPI median}}`` and the best of ours per N (by median and by min)."""
    med, low = {}, {}
    for r in results:
        med.setdefault(r["nelems"], {})[r["algorithm"]] = r["median_s"]
        low.setdefault(r["nelems"], {})[r["algorithm"]] = r["min_s"]
    table = {}
    for n in med:
        row = {a: t / med[n]["mpi"] for a, t in med[n].items() if a != "mpi"}
        by_min = {a: t / low[n]["mpi"] for a, t in low[n].items() if a != "mpi"}
        if row:
            best, best_min = min(row, key=row.get), min(by_min, key=by_min.get)
            row.update(best=best, best_ratio=row[best], best_by_min=best_min, best_min_ratio=by_min[best_min])
        table[n] = row
    return table


def report(results: list[dict], algorithms: list[str]) -> str:
    ours = [a for a in algorithms if a != "mpi"]
    med = {(r["nelems"], r["algorithm"]): r["median_s"] for r in results}
    sizes = sorted({r["nelems"] for r in results})
    width = 9
    lines = ["Median time per call (µs), float64 SUM; best of ours: median ratio (min ratio) to MPI.Allreduce",
             f"{'N':>8} " + " ".join(f"{a[:width]:>{width}}" for a in ["mpi"] + ours) + "  best of ours",
             "-" * (10 + (width + 1) * (len(ours) + 1) + 24)]
    tab = ratios(results)
    for n in sizes:
        row = [f"{med[(n, 'mpi')] * 1e6:>{width}.1f}"] + [f"{med[(n, a)] * 1e6:>{width}.1f}" for a in ours]
        best = (f"  {tab[n]['best']} x{tab[n]['best_ratio']:.2f} ({tab[n]['best_by_min']} "
                f"x{tab[n]['best_min_ratio']:.2f})") if ours else ""
        lines.append(f"{n:>8} " + " ".join(row) + best)
    bad = sorted({(r["nelems"], r["algorithm"]) for r in results if not r["correct"]})
    if bad:
        lines.append(f"WRONG RESULTS: {bad}")
    return "\n".join(lines)


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    oversubscribed = _bench.warn_if_oversubscribed(comm)
    results = measure(comm, args.sizes, args.algorithms, args.iterations, args.warmup, args.budget_bytes,
                      progress=not args.no_progress, mode=args.mode)
    correct = all(r["correct"] for r in results)
    if comm.Get_rank() == 0:
        print(f"mode: {args.mode}", flush=True)
        print(report(results, args.algorithms), flush=True)
        if args.json:
            _bench.write_json(args.json, {
                "benchmark": "bench-allreduce", "environment": _bench.environment(comm),
                "oversubscribed": oversubscribed,
                "parameters": {"sizes": args.sizes, "algorithms": args.algorithms, "dtype": "float64",
                               "op": "sum", "mode": args.mode, "iterations": args.iterations, "warmup": args.warmup,
                               "budget_bytes": args.budget_bytes},
                "results": results, "ratios": {str(k): v for k, v in ratios(results).items()}})
            print(f"results written to {args.json}")
    return 0 if correct else 1
