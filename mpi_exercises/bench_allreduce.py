"""Every allreduce algorithm against ``MPI.Allreduce``, in the same run, over vector lengths.

For each N (float64, MPI.SUM), every algorithm is timed in up to three modes, all
interleaved round-robin with the bare ``comm.Allreduce(x, out)`` so that every
variant sees the same machine conditions; each call follows a barrier and is timed
with ``MPI.Wtime``; a call's time is the slowest rank's.  Modes (``--modes``):

- ``default``: ``allreduce(comm, x, algorithm, out=out)``, as users call it, with
  its one-collective argument check;
- ``check=False``: the same without the check;
- ``executor``: only the algorithm: copy x into out and run the cached executor.

Prints the median per variant and, per mode, the best of ours as a ratio to
``MPI.Allreduce`` (of medians, and of minima in parentheses).

    mpiexec -n 4 python -m mpi_exercises bench-allreduce --json bench.json
"""

from __future__ import annotations

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
    p.add_argument("--modes", type=_bench.name_list(_bench.MODES), default=list(_bench.MODES),
                   help="comma-separated subset of " + ",".join(_bench.MODES) + " (default: all)")
    p.add_argument("--iterations", type=_bench.positive_int, default=200,
                   help="timed calls per size for small vectors (default 200)")
    p.add_argument("--warmup", type=_bench.nonneg_int, default=10, help="untimed calls first (default 10)")
    p.add_argument("--budget-bytes", type=_bench.positive_int, default=256 * 2**20,
                   help="cap on calls x bytes per size (default 256 MiB; at least 10 calls)")
    p.add_argument("--json", metavar="FILE", help="write the results to FILE as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def make_call(comm, algorithm, x, out, mode):
    """The function timed for one variant (``mode`` "mpi": the bare library call)."""
    from mpi4py import MPI

    from .combining import allreduce, executor_for

    if algorithm == "mpi" or mode == "mpi":
        return lambda: comm.Allreduce(x, out, op=MPI.SUM)
    if mode == "default":
        return lambda: allreduce(comm, x, algorithm, out=out)
    if mode == "check=False":
        return lambda: allreduce(comm, x, algorithm, out=out, check=False)
    ex = executor_for(comm, algorithm, x.size, x.dtype, MPI.SUM)

    def call():
        np.copyto(out, x)
        ex.run(out)
    return call


def measure(comm, sizes, algorithms, iterations, warmup, budget_bytes, progress=True,
            modes=_bench.MODES) -> list[dict]:
    """One result per (N, algorithm, mode) on every rank, all variants of one N interleaved."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    refs, outs = {}, {}

    def prepare(n, algorithm, mode):
        if n not in refs:
            x = np.random.default_rng(rank).random(n)
            ref = np.empty_like(x)
            comm.Allreduce(x, ref, op=MPI.SUM)
            refs.clear()
            refs[n] = x, ref
        x, ref = refs[n]
        # one out per algorithm, shared by its modes: they share its executor, whose persistent
        # requests stay bound to one array (alternating arrays would rebind them at every call)
        out = outs.setdefault((n, algorithm), np.empty_like(x))
        out[...] = 0
        call = make_call(comm, algorithm, x, out, mode)
        call()
        return call, np.allclose(out, ref, rtol=1e-12, atol=0)

    return _bench.compare(comm, sizes, algorithms, modes, prepare, lambda n: 8 * n, iterations=iterations,
                          warmup=warmup, budget_bytes=budget_bytes, desc="bench-allreduce", progress=progress)


ratios = _bench.ratios


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    oversubscribed = _bench.warn_if_oversubscribed(comm)
    results = measure(comm, args.sizes, args.algorithms, args.iterations, args.warmup, args.budget_bytes,
                      progress=not args.no_progress, modes=args.modes)
    correct = all(r["correct"] for r in results)
    if comm.Get_rank() == 0:
        print(f"allreduce, float64 SUM, {comm.Get_size()} ranks"
              + (" (oversubscribed: timings include OS scheduling)" if oversubscribed else ""))
        print(_bench.compare_report(results, "MPI.Allreduce"), flush=True)
        if args.json:
            _bench.write_json(args.json, {
                "benchmark": "bench-allreduce", "environment": _bench.environment(comm),
                "oversubscribed": oversubscribed, "load_average_1min": _bench.load_average(),
                "parameters": {"sizes": args.sizes, "algorithms": args.algorithms, "dtype": "float64",
                               "op": "sum", "modes": args.modes, "iterations": args.iterations,
                               "warmup": args.warmup, "budget_bytes": args.budget_bytes},
                "results": results, "ratios": {str(k): v for k, v in ratios(results).items()}})
            print(f"results written to {args.json}")
    return 0 if correct else 1
