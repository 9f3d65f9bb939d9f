"""Allgather on the command line: one algorithm checked and timed (``allgather``), and every
algorithm against ``MPI.Allgather`` over sizes per rank (``bench-allgather``).

    mpiexec -n 4 python -m mpi_exercises allgather --algorithm k-shift --k 2 -N 1000 --json out.json
    mpiexec -n 4 python -m mpi_exercises bench-allgather --sizes 1,128k --json bench.json

``bench-allgather``: for each size (float64 elements per rank), every algorithm is timed
in the modes of ``--modes`` (``default``: ``allgather(comm, x, algorithm, out=out)`` with
its argument check; ``check=False``; ``executor``: copy x into its block and run the
cached executor), interleaved round-robin with the bare ``comm.Allgather(x, out)``; a
sample is ``--inner`` back-to-back calls after one barrier, divided by their number (the
barrier's exit skew is charged once per sample), the slowest rank's.  The algorithms that
take ``k`` use ``--k`` (default: their default k).  Prints the median per variant and, per
mode, the best of ours as a ratio to ``MPI.Allgather``.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import pages
from . import arguments, placement, records, timing
from . import measure as sampling

DEFAULT_SIZES = [1, 8, 64, 512, 4096, 32768, 131072]


def _k_arg(p) -> None:
    p.add_argument("--k", type=arguments.positive_int,
                   help="k of the algorithms that take one (k-prefix, k-prefix-lb: 1 <= k <= P; k-shift: even)")


# --------------------------------------------------------------------------- allgather
def add_once_arguments(p) -> None:
    from ..collectives.allgather import choices

    arguments.add_once_options(p, 1000, "elements per rank (default 1000)", all_ranks=True, algorithms=choices(), default="ring",
                               mpi_call="Allgather")
    _k_arg(p)


def test_vector(n: int, dtype, rank: int) -> np.ndarray:
    """A vector that differs on every rank and at every element."""
    v = np.arange(n, dtype=np.int64) * 7 + 1000 * rank + 3
    return v.astype(dtype)


def run_once(args) -> int:
    from mpi4py import MPI

    from ..collectives.allgather import allgather

    comm = MPI.COMM_WORLD
    placement.advise_ranks(comm, "allgather", 2, placement.ONE_RANK_WHY, suggest=4)
    x = test_vector(args.N, args.dtype, comm.Get_rank())

    def reference():
        ref = np.empty((comm.Get_size(),) + x.shape, dtype=x.dtype)
        comm.Allgather(x, ref)
        return ref

    return records.once(comm, args, lambda out: allgather(comm, x, args.algorithm, args.k, out=out), reference,
                     collective="allgather", reference_name="MPI.Allgather",
                     describe=f"allgather {args.algorithm} P={comm.Get_size()} N={args.N} {args.dtype}")


once = arguments.Command(add_once_arguments, run_once)


# --------------------------------------------------------------------------- bench-allgather
add_arguments = sampling.versus_arguments(
    "allgather", DEFAULT_SIZES, "comma-separated float64 elements per rank, suffix k/M allowed "
                                "(default 1,8,64,512,4k,32k,128k: 8 B to 1 MiB per rank)",
    budget="calls x bytes gathered per size", more=_k_arg, all_ranks=True)


def k_for(algorithm: str, k, nprocs: int):
    """``k`` for the algorithms that use one (their schedule records a k), None for the others."""
    from netmodels.algorithms import registry

    if k is None or algorithm == "mpi":
        return None
    return k if registry.build(f"allgather.{algorithm}", nprocs, 1).meta.get("k") is not None else None


def _prepare(comm, k):
    from ..collectives.allgather import allgather, executor_for

    rank, size = comm.Get_rank(), comm.Get_size()
    outs = {}

    def prepare(n, algorithm, mode):
        x = pages.copy(np.random.default_rng(rank).random(n))
        ref = np.empty((size, n))
        # one out per algorithm, shared by its modes: they share its executor, whose persistent
        # requests stay bound to one array (alternating arrays would rebind them at every call)
        out = outs.setdefault((n, algorithm), pages.allocate((size, n), np.float64))
        out[...] = 0
        comm.Allgather(x, ref)
        if algorithm == "mpi":
            def call():
                comm.Allgather(x, out)
        else:
            def executor():
                ex, mine = executor_for(comm, algorithm, x.shape, x.dtype, k_for(algorithm, k, size)), out[rank]

                def run():
                    mine[...] = x
                    ex.run(out)
                return run
            call = records.mode_call(mode, allgather, (comm, x, algorithm, k_for(algorithm, k, size)), dict(out=out),
                                  executor)
        call()
        return call, np.array_equal(out, ref)
    return prepare


def measure(comm, sizes, algorithms, iterations, warmup, budget_bytes, k=None, progress=True,
            modes=records.MODES, inner=timing.DEFAULT_INNER) -> list[dict]:
    """One result per (size, algorithm, mode) on every rank, all variants of one size interleaved."""
    return sampling.compare(comm, sizes, algorithms, modes, _prepare(comm, k), lambda n: 8 * n * comm.Get_size(),
                        iterations=iterations, warmup=warmup, budget_bytes=budget_bytes,
                        desc="bench-allgather", progress=progress, inner=inner)[0]


def run(args) -> int:
    from mpi4py import MPI

    from netmodels.algorithms import registry

    comm = MPI.COMM_WORLD
    placement.advise_ranks(comm, "bench-allgather", 2, placement.ONE_RANK_WHY, suggest=4)
    if args.k is not None:
        try:
            for a in args.algorithms:
                if k_for(a, args.k, comm.Get_size()) is not None:
                    registry.build(f"allgather.{a}", comm.Get_size(), 1, k=args.k)
        except ValueError as exc:
            if comm.Get_rank() == 0:
                print(f"error: {exc}", file=sys.stderr)
            return 2
    oversubscribed = placement.warn_if_oversubscribed(comm)
    return sampling.versus_mpi(
        comm, args, _prepare(comm, args.k), lambda n: 8 * n * comm.Get_size(), collective="allgather",
        reference="MPI.Allgather", unit="N/rank", oversubscribed=oversubscribed,
        header=f"allgather, float64, {comm.Get_size()} ranks; sizes in elements per rank (x 8 bytes)",
        parameters={"sizes": args.sizes, "algorithms": args.algorithms, "dtype": "float64", "k": args.k,
                    "modes": args.modes, "iterations": args.iterations, "warmup": args.warmup,
                    "budget_bytes": args.budget_bytes})
