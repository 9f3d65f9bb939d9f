"""Every allgather algorithm against ``MPI.Allgather``, in the same run, over sizes per rank.

For each size (float64 elements per rank), every algorithm is timed in the modes of
``--modes`` (``default``: ``allgather(comm, x, algorithm, out=out)`` with its argument
check; ``check=False``; ``executor``: copy x into its block and run the cached
executor), interleaved round-robin with the bare ``comm.Allgather(x, out)``; each call
follows a barrier and is timed with ``MPI.Wtime``; a call's time is the slowest
rank's.  k-prefix, k-prefix-lb and k-shift use ``--k`` (default: their default k).
Prints the median per variant and, per mode, the best of ours as a ratio to
``MPI.Allgather``.

    mpiexec -n 4 python -m mpi_exercises bench-allgather --sizes 1,128k --json bench.json
"""

from __future__ import annotations

import sys

import numpy as np

from . import _bench

DEFAULT_SIZES = [1, 8, 64, 512, 4096, 32768, 131072]


def add_arguments(p) -> None:
    from .multicast import ALGORITHMS

    p.add_argument("--sizes", type=_bench.size_list, default=DEFAULT_SIZES,
                   help="comma-separated float64 elements per rank, suffix k/M allowed "
                        "(default 1,8,64,512,4k,32k,128k: 8 B to 1 MiB per rank)")
    p.add_argument("--algorithms", type=_bench.name_list(ALGORITHMS, always=['mpi']), default=list(ALGORITHMS),
                   help="comma-separated subset of " + ",".join(ALGORITHMS) + " (mpi is always included)")
    p.add_argument("--k", type=_bench.positive_int, help="k of k-prefix, k-prefix-lb and k-shift")
    p.add_argument("--modes", type=_bench.name_list(_bench.MODES), default=list(_bench.MODES),
                   help="comma-separated subset of " + ",".join(_bench.MODES) + " (default: all)")
    p.add_argument("--iterations", type=_bench.positive_int, default=200,
                   help="timed calls per size for small sizes (default 200)")
    p.add_argument("--warmup", type=_bench.nonneg_int, default=10, help="untimed calls first (default 10)")
    p.add_argument("--budget-bytes", type=_bench.positive_int, default=256 * 2**20,
                   help="cap on calls x bytes gathered per size (default 256 MiB; at least 10 calls)")
    p.add_argument("--json", metavar="FILE", help="write the results to FILE as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def k_for(algorithm: str, k):
    from netmodels.algorithms import registry

    return k if registry.get(algorithm, "allgather").takes("k") else None


def measure(comm, sizes, algorithms, iterations, warmup, budget_bytes, k=None, progress=True,
            modes=_bench.MODES) -> list[dict]:
    """One result per (size, algorithm, mode) on every rank, all variants of one size interleaved."""
    from .multicast import _DOOR, _validate, allgather

    rank, size = comm.Get_rank(), comm.Get_size()
    outs = {}

    def prepare(n, algorithm, mode):
        x = np.random.default_rng(rank).random(n)
        ref = np.empty((size, n))
        # one out per algorithm, shared by its modes: they share its executor, whose persistent
        # requests stay bound to one array (alternating arrays would rebind them at every call)
        out = outs.setdefault((n, algorithm), np.empty((size, n)))
        out[...] = 0
        comm.Allgather(x, ref)
        if algorithm == "mpi":
            def call():
                comm.Allgather(x, out)
        elif mode == "default":
            def call():
                allgather(comm, x, algorithm, k_for(algorithm, k), out=out)
        elif mode == "check=False":
            def call():
                allgather(comm, x, algorithm, k_for(algorithm, k), out=out, check=False)
        else:
            plan = _DOOR.plan((algorithm, k_for(algorithm, k), x.dtype, x.shape, size), _validate)
            ex, mine = _DOOR.admit(comm, plan, check=False), out[rank]

            def call():
                np.copyto(mine, x)
                ex.run(out)
        call()
        return call, np.array_equal(out, ref)

    return _bench.compare(comm, sizes, algorithms, modes, prepare, lambda n: 8 * n * size,
                          iterations=iterations, warmup=warmup, budget_bytes=budget_bytes,
                          desc="bench-allgather", progress=progress)


def run(args) -> int:
    from mpi4py import MPI

    from netmodels.algorithms.allgather import check_k

    comm = MPI.COMM_WORLD
    if args.k is not None:
        try:
            for a in args.algorithms:
                if a != "mpi":
                    check_k(a, comm.Get_size(), k_for(a, args.k))
        except ValueError as exc:
            if comm.Get_rank() == 0:
                print(f"error: {exc}", file=sys.stderr)
            return 2
    oversubscribed = _bench.warn_if_oversubscribed(comm)
    results = measure(comm, args.sizes, args.algorithms, args.iterations, args.warmup, args.budget_bytes,
                      k=args.k, progress=not args.no_progress, modes=args.modes)
    correct = all(r["correct"] for r in results)
    if comm.Get_rank() == 0:
        print(f"allgather, float64, {comm.Get_size()} ranks; sizes in elements per rank (x 8 bytes)"
              + (" (oversubscribed: timings include OS scheduling)" if oversubscribed else ""))
        print(_bench.compare_report(results, "MPI.Allgather", unit="N/rank"), flush=True)
        if args.json:
            _bench.write_json(args.json, {
                "benchmark": "bench-allgather", "environment": _bench.environment(comm),
                "oversubscribed": oversubscribed, "load_average_1min": _bench.load_average(),
                "parameters": {"sizes": args.sizes, "algorithms": args.algorithms, "dtype": "float64",
                               "k": args.k, "modes": args.modes, "iterations": args.iterations,
                               "warmup": args.warmup, "budget_bytes": args.budget_bytes},
                "results": results, "ratios": {str(n): v for n, v in _bench.ratios(results).items()}})
            print(f"results written to {args.json}")
    return 0 if correct else 1
