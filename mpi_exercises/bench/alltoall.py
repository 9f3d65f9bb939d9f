"""Alltoall on the command line: one algorithm checked, timed and its messages counted
(``alltoall``), and every algorithm against ``MPI.Alltoall`` over sizes per pair
(``bench-alltoall``).

    mpiexec -n 16 python -m mpi_exercises alltoall --ppn 4 --json out.json
    mpiexec -n 8 python -m mpi_exercises bench-alltoall --ppn 4 --inter-delay 20e-6 --json a2a.json

``bench-alltoall``: for each size (float64 elements per pair of ranks), every algorithm
is timed in the modes of ``--modes`` (``default``: ``alltoall(comm, x, algorithm, ppn,
out=out)`` with its argument check; ``check=False``; ``executor``: only the cached
exchange: copy in, run, copy out), interleaved round-robin with the bare
``comm.Alltoall(x, out)``; a sample is ``--inner`` back-to-back calls after one barrier,
divided by their number (the barrier's exit skew is charged once per sample), the slowest
rank's.  ``--ppn`` emulates nodes; ``--inter-delay``
busy-waits per message sent to another node (see :mod:`mpi_exercises.collectives.alltoall`;
the reference ``mpi`` then waits as long as the direct exchange would).  The JSON output
holds the messages each rank sends inside and between nodes for every algorithm.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import pages
from . import arguments, placement, records, timing
from . import measure as sampling

DEFAULT_SIZES = [1, 8, 64, 512, 4096, 8192]


def ppn_arg(text: str):
    """argparse type: ``C`` or ``C1,C2,...`` (levels), integers >= 1."""
    import argparse

    try:
        levels = tuple(int(v) for v in text.split(","))
        if levels and all(c >= 1 for c in levels):
            return levels[0] if len(levels) == 1 else levels
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"ppn must be C or C1,C2,... with integers >= 1; got {text!r}")


def delay_arg(text: str) -> float:
    """argparse type: seconds >= 0."""
    import argparse

    from netmodels._check import positive

    try:
        return positive("inter-delay", float(text), allow_zero=True)
    except ValueError:
        raise argparse.ArgumentTypeError(f"inter-delay must be seconds >= 0, got {text!r}") from None


def _node_args(p) -> None:
    p.add_argument("--ppn", type=ppn_arg,
                   help="emulate nodes of C consecutive ranks (C1,C2,...: several levels); default: real nodes")
    p.add_argument("--inter-delay", type=delay_arg, default=0.0, metavar="SECONDS",
                   help="busy-wait per message sent to another node (default 0)")


# --------------------------------------------------------------------------- alltoall
def add_once_arguments(p) -> None:
    from ..collectives.alltoall import choices

    arguments.add_once_options(p, 1000, "elements per pair of ranks (default 1000)", all_ranks=True, algorithms=choices(), default="multilevel",
                               mpi_call="Alltoall")
    _node_args(p)


def test_rows(nprocs: int, n: int, dtype, rank: int) -> np.ndarray:
    """Rows that say who sent them to whom: element e of row j on rank r differs for every (r, j, e)."""
    v = (rank * nprocs + np.arange(nprocs)[:, None]) * 1000 + np.arange(n)[None, :]
    return (v % 251 if np.dtype(dtype).itemsize == 1 else v).astype(dtype)


def run_once(args) -> int:
    from mpi4py import MPI

    from ..collectives.alltoall import alltoall, message_lines, message_summary

    comm = MPI.COMM_WORLD
    placement.advise_ranks(comm, "alltoall", 2, placement.ONE_RANK_WHY, suggest=4)
    size = comm.Get_size()
    x = test_rows(size, args.N, args.dtype, comm.Get_rank())

    def reference():
        ref = np.empty_like(x)
        comm.Alltoall(x, ref)
        return ref

    def after():
        counts = message_summary(comm, args.algorithm, args.ppn, args.N)
        return message_lines(counts, args.algorithm), {"messages": counts}

    return records.once(comm, args, lambda out: alltoall(comm, x, args.algorithm, args.ppn, out=out,
                                                      inter_delay=args.inter_delay),
                     reference, collective="alltoall", reference_name="MPI.Alltoall", after=after,
                     describe=f"alltoall {args.algorithm} P={size} ppn={args.ppn or 'real nodes'} N={args.N} "
                              f"{args.dtype}")


once = arguments.Command(add_once_arguments, run_once)


# --------------------------------------------------------------------------- bench-alltoall
add_arguments = sampling.versus_arguments(
    "alltoall", DEFAULT_SIZES, "comma-separated float64 elements per pair, suffix k/M allowed "
                               "(default 1,8,64,512,4k,8k: 8 B to 64 KiB per pair)",
    budget="calls x bytes sent per size", more=_node_args, all_ranks=True)


def _prepare(comm, ppn, inter_delay):
    from ..collectives.alltoall import alltoall, exchange_for
    from ..executor import busy_wait

    rank, size = comm.Get_rank(), comm.Get_size()

    def prepare(n, algorithm, mode):
        x = pages.copy(np.random.default_rng(rank).random((size, n)))
        out, ref = pages.allocate((size, n), np.float64), np.empty((size, n))
        comm.Alltoall(x, ref)
        if algorithm == "mpi":
            delay = exchange_for(comm, "mpi", ppn, n, inter_delay=inter_delay).delay

            def call():
                if delay:
                    busy_wait(delay)
                comm.Alltoall(x, out)
        else:
            def executor():
                ex = exchange_for(comm, algorithm, ppn, n, inter_delay=inter_delay)
                return lambda: ex.run(x, out)
            call = records.mode_call(mode, alltoall, (comm, x, algorithm, ppn),
                                  dict(out=out, inter_delay=inter_delay), executor)
        call()
        return call, np.array_equal(out, ref)
    return prepare


def measure(comm, sizes, algorithms, iterations, warmup, budget_bytes, ppn=None, inter_delay=0.0,
            progress=True, modes=records.MODES, inner=timing.DEFAULT_INNER) -> list[dict]:
    """One result per (size, algorithm, mode) on every rank, all variants of one size interleaved."""
    return sampling.compare(comm, sizes, algorithms, modes, _prepare(comm, ppn, inter_delay),
                        lambda n: 8 * n * comm.Get_size(), iterations=iterations, warmup=warmup,
                        budget_bytes=budget_bytes, desc="bench-alltoall", progress=progress, inner=inner)[0]


def run(args) -> int:
    from mpi4py import MPI

    from ..collectives.alltoall import check_ppn, message_lines, message_summary

    comm = MPI.COMM_WORLD
    placement.advise_ranks(comm, "bench-alltoall", 2, placement.ONE_RANK_WHY, suggest=4)
    try:
        check_ppn(args.ppn, comm.Get_size())
    except ValueError as exc:
        if comm.Get_rank() == 0:
            print(f"error: ppn: {exc}", file=sys.stderr)
        return 2
    oversubscribed = placement.warn_if_oversubscribed(comm)

    def after():
        messages = {}
        for a in args.algorithms:
            if a != "mpi":
                messages.update(message_summary(comm, a, args.ppn, 1))
        return message_lines(messages), {"messages": messages}

    return sampling.versus_mpi(
        comm, args, _prepare(comm, args.ppn, args.inter_delay), lambda n: 8 * n * comm.Get_size(),
        collective="alltoall", reference="MPI.Alltoall", unit="N/pair", oversubscribed=oversubscribed, after=after,
        header=f"alltoall, float64, {comm.Get_size()} ranks, ppn={args.ppn or 'real nodes'}, "
               f"inter-node delay {args.inter_delay * 1e6:g} µs per message; sizes in elements per pair (x 8 bytes)",
        parameters={"sizes": args.sizes, "algorithms": args.algorithms, "dtype": "float64", "ppn": args.ppn,
                    "inter_delay_s": args.inter_delay, "modes": args.modes, "iterations": args.iterations,
                    "warmup": args.warmup, "budget_bytes": args.budget_bytes})
