"""Every alltoall algorithm against ``MPI.Alltoall``, in the same run, over sizes per pair.

For each size (float64 elements per pair of ranks), every algorithm is timed in the
modes of ``--modes`` (``default``: ``alltoall(comm, x, algorithm, ppn, out=out)`` with
its argument check; ``check=False``; ``executor``: only the cached exchange: copy in,
run, copy out), interleaved round-robin with the bare ``comm.Alltoall(x, out)``; each
call follows a barrier and is timed with ``MPI.Wtime``; a call's time is the slowest
rank's.  ``--ppn`` emulates nodes; ``--inter-delay`` busy-waits per message sent to
another node (see :mod:`mpi_exercises.exchange`; the reference ``mpi`` then waits
as long as the direct exchange would).  The JSON output holds the messages each
rank sends inside and between nodes for every algorithm.

    mpiexec -n 8 python -m mpi_exercises bench-alltoall --ppn 4 --inter-delay 20e-6 --json a2a.json
"""

from __future__ import annotations

import numpy as np

from . import _bench

DEFAULT_SIZES = [1, 8, 64, 512, 4096, 8192]


def add_arguments(p) -> None:
    from .exchange import ALGORITHMS, delay_arg, ppn_arg

    p.add_argument("--sizes", type=_bench.size_list, default=DEFAULT_SIZES,
                   help="comma-separated float64 elements per pair, suffix k/M allowed "
                        "(default 1,8,64,512,4k,8k: 8 B to 64 KiB per pair)")
    p.add_argument("--algorithms", type=_bench.name_list(ALGORITHMS, always=['mpi']), default=list(ALGORITHMS),
                   help="comma-separated subset of " + ",".join(ALGORITHMS) + " (mpi is always included)")
    p.add_argument("--ppn", type=ppn_arg, help="emulate nodes of C consecutive ranks (C1,C2,...: levels)")
    p.add_argument("--inter-delay", type=delay_arg, default=0.0, metavar="SECONDS",
                   help="busy-wait per message sent to another node (default 0)")
    p.add_argument("--modes", type=_bench.name_list(_bench.MODES), default=list(_bench.MODES),
                   help="comma-separated subset of " + ",".join(_bench.MODES) + " (default: all)")
    p.add_argument("--iterations", type=_bench.positive_int, default=200,
                   help="timed calls per size for small sizes (default 200)")
    p.add_argument("--warmup", type=_bench.nonneg_int, default=10, help="untimed calls first (default 10)")
    p.add_argument("--budget-bytes", type=_bench.positive_int, default=256 * 2**20,
                   help="cap on calls x bytes sent per size (default 256 MiB; at least 10 calls)")
    p.add_argument("--json", metavar="FILE", help="write the results to FILE as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def measure(comm, sizes, algorithms, iterations, warmup, budget_bytes, ppn=None, inter_delay=0.0,
            progress=True, modes=_bench.MODES) -> list[dict]:
    """One result per (size, algorithm, mode) on every rank, all variants of one size interleaved."""
    from .exchange import alltoall, exchange_for

    rank, size = comm.Get_rank(), comm.Get_size()

    def prepare(n, algorithm, mode):
        x = np.random.default_rng(rank).random((size, n))
        out, ref = np.zeros((size, n)), np.empty((size, n))
        comm.Alltoall(x, ref)
        if algorithm == "mpi":
            ex = exchange_for(comm, "mpi", ppn, n, inter_delay=inter_delay)

            def call():
                if ex.delay:
                    from .executor import busy_wait
                    busy_wait(ex.delay)
                comm.Alltoall(x, out)
        elif mode == "default":
            def call():
                alltoall(comm, x, algorithm, ppn, out=out, inter_delay=inter_delay)
        elif mode == "check=False":
            def call():
                alltoall(comm, x, algorithm, ppn, out=out, check=False, inter_delay=inter_delay)
        else:
            ex = exchange_for(comm, algorithm, ppn, n, inter_delay=inter_delay)

            def call():
                ex.run(x, out)
        call()
        return call, np.array_equal(out, ref)

    return _bench.compare(comm, sizes, algorithms, modes, prepare, lambda n: 8 * n * size,
                          iterations=iterations, warmup=warmup, budget_bytes=budget_bytes,
                          desc="bench-alltoall", progress=progress)


def run(args) -> int:
    import sys

    from mpi4py import MPI

    from .exchange import check_ppn, message_summary

    comm = MPI.COMM_WORLD
    try:
        check_ppn(args.ppn, comm.Get_size())
    except ValueError as exc:
        if comm.Get_rank() == 0:
            print(f"error: ppn: {exc}", file=sys.stderr)
        return 2
    oversubscribed = _bench.warn_if_oversubscribed(comm)
    results = measure(comm, args.sizes, args.algorithms, args.iterations, args.warmup, args.budget_bytes,
                      ppn=args.ppn, inter_delay=args.inter_delay, progress=not args.no_progress,
                      modes=args.modes)
    messages = {}
    for a in args.algorithms:
        if a != "mpi":
            messages.update(message_summary(comm, a, args.ppn, 1))
    correct = all(r["correct"] for r in results)
    if comm.Get_rank() == 0:
        print(f"alltoall, float64, {comm.Get_size()} ranks, ppn={args.ppn or 'real nodes'}, "
              f"inter-node delay {args.inter_delay * 1e6:g} µs per message; sizes in elements per pair (x 8 bytes)"
              + (" (OVERSUBSCRIBED: timings include OS scheduling)" if oversubscribed else ""))
        print(_bench.compare_report(results, "MPI.Alltoall", unit="N/pair"), flush=True)
        for name, c in messages.items():
            print(f"messages sent, {name}: {c['total']} ({c['inside']} inside nodes, {c['between']} between nodes)")
        if args.json:
            _bench.write_json(args.json, {
                "benchmark": "bench-alltoall", "environment": _bench.environment(comm),
                "oversubscribed": oversubscribed, "load_average_1min": _bench.load_average(),
                "parameters": {"sizes": args.sizes, "algorithms": args.algorithms, "dtype": "float64",
                               "ppn": args.ppn, "inter_delay_s": args.inter_delay, "modes": args.modes,
                               "iterations": args.iterations, "warmup": args.warmup,
                               "budget_bytes": args.budget_bytes},
                "messages": messages, "results": results,
                "ratios": {str(n): v for n, v in _bench.ratios(results).items()}})
            print(f"results written to {args.json}")
    return 0 if correct else 1
