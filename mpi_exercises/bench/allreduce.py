"""Allreduce on the command line: one algorithm checked and timed (``allreduce``), and every
algorithm against ``MPI.Allreduce`` over vector lengths (``bench-allreduce``).

    mpiexec -n 4 python -m mpi_exercises allreduce --algorithm snake -N 100000 --block 500 \\
        --repeat 20 --json out.json
    mpiexec -n 4 python -m mpi_exercises bench-allreduce --json bench.json

``bench-allreduce``: for each N (float64, MPI.SUM), every algorithm is timed in up to
three modes, all interleaved round-robin with the bare ``comm.Allreduce(x, out)`` so that
every variant sees the same machine conditions; a sample is ``--inner`` back-to-back calls
after one barrier, timed with ``MPI.Wtime`` and divided by their number (so the barrier's exit
skew is not charged to every call); a sample's time is the slowest rank's.  Modes (``--modes``):

- ``default``: ``allreduce(comm, x, algorithm, out=out)``, as users call it, with
  its one-collective argument check;
- ``check=False``: the same without the check;
- ``executor``: only the algorithm: copy x into out and run the cached executor.

Prints the median per variant and, per mode, the best of ours as a ratio to
``MPI.Allreduce`` (of medians, and of minima in parentheses).
"""

from __future__ import annotations

import numpy as np

from .. import pages
from . import arguments, placement, records, timing
from . import measure as sampling

DEFAULT_SIZES = [1, 8, 64, 512, 4096, 32768, 262144, 1048576]
OPS = ("sum", "prod", "max", "min")


# --------------------------------------------------------------------------- allreduce
def mesh_arg(text: str) -> tuple[int, int]:
    """argparse type: ``WxH``, e.g. ``4x2``."""
    import argparse

    try:
        w, h = (int(v) for v in text.lower().split("x"))
        if w >= 1 and h >= 1:
            return w, h
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"mesh must be WxH with integers >= 1, e.g. 4x2; got {text!r}")


def add_once_arguments(p) -> None:
    from ..collectives.allreduce import choices

    arguments.add_once_options(p, 100_000, "vector length in elements (default 100000)", algorithms=choices(), default="snake",
                               mpi_call="Allreduce")
    p.add_argument("--block", type=arguments.positive_int, help="block size in elements (snake, fence)")
    p.add_argument("--mesh", type=mesh_arg, help="logical mesh WxH with W*H = ranks (default: MPI.Compute_dims)")
    p.add_argument("--op", choices=OPS, default="sum",
                   help="reduction operation, applied element-wise (max and min: real dtypes only; default: sum)")


def test_vector(n: int, dtype, rank: int, op: str) -> np.ndarray:
    """A rank-dependent vector whose combination is exact in integers and well-conditioned in floats."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(1234 + rank)
    if op == "prod":                                 # +-1 and small factors keep products in range
        v = rng.choice(np.array([1, 1, 1, 2, -1] if dtype.kind != "u" else [1, 1, 2]), size=n)
    else:
        v = rng.integers(-50 if dtype.kind != "u" else 0, 50, size=n)
    x = v.astype(dtype)
    if dtype.kind in "fc":
        x += rng.random(n).astype(dtype) * (0.5 if op != "prod" else 0.0)
    if dtype.kind == "c":
        x += 1j * rng.integers(-3, 3, size=n).astype(dtype)
    return x


def matches(result: np.ndarray, reference: np.ndarray) -> bool:
    """Exactly for integers, to a relative tolerance for floats."""
    if result.dtype.kind in "iu":
        return bool(np.array_equal(result, reference))
    rtol = 1e-4 if result.dtype in (np.float32, np.complex64) else 1e-10
    return bool(np.allclose(result, reference, rtol=rtol, atol=rtol))


def run_once(args) -> int:
    from mpi4py import MPI

    from ..collectives.allreduce import allreduce

    comm = MPI.COMM_WORLD
    placement.advise_ranks(comm, "allreduce", 2, placement.ONE_RANK_WHY, suggest=4)
    op = getattr(MPI, args.op.upper())
    x = test_vector(args.N, args.dtype, comm.Get_rank(), args.op)

    def reference():
        ref = np.empty_like(x)
        comm.Allreduce(x, ref, op=op)
        return ref

    return records.once(comm, args, lambda out: allreduce(comm, x, args.algorithm, args.block, op, args.mesh, out=out),
                     reference, collective="allreduce", reference_name="MPI.Allreduce", matches=matches,
                     describe=f"allreduce {args.algorithm} P={comm.Get_size()} N={args.N} {args.dtype} {args.op}")


once = arguments.Command(add_once_arguments, run_once)


# --------------------------------------------------------------------------- bench-allreduce
add_arguments = sampling.versus_arguments(
    "allreduce", DEFAULT_SIZES, "comma-separated vector lengths in elements (float64), suffix k/M allowed "
                                "(default 1,8,64,512,4k,32k,256k,1M)", budget="calls x bytes per size")


def make_call(comm, algorithm, x, out, mode):
    """The function timed for one variant (``mode`` "mpi": the bare library call)."""
    from mpi4py import MPI

    from ..collectives.allreduce import allreduce, executor_for

    if algorithm == "mpi" or mode == "mpi":
        return lambda: comm.Allreduce(x, out, op=MPI.SUM)

    def executor():
        ex = executor_for(comm, algorithm, x.size, x.dtype, MPI.SUM)

        def call():
            out[...] = x
            ex.run(out)
        return call
    return records.mode_call(mode, allreduce, (comm, x, algorithm), dict(out=out), executor)


def measure(comm, sizes, algorithms, iterations, warmup, budget_bytes, progress=True,
            modes=records.MODES, inner=timing.DEFAULT_INNER) -> list[dict]:
    """One result per (N, algorithm, mode) on every rank, all variants of one N interleaved."""
    return sampling.compare(comm, sizes, algorithms, modes, _prepare(comm), lambda n: 8 * n, iterations=iterations,
                        warmup=warmup, budget_bytes=budget_bytes, desc="bench-allreduce", progress=progress,
                        inner=inner)[0]


def _prepare(comm):
    from mpi4py import MPI

    rank = comm.Get_rank()
    refs, outs = {}, {}

    def prepare(n, algorithm, mode):
        if n not in refs:
            x = pages.copy(np.random.default_rng(rank).random(n))
            ref = np.empty_like(x)
            comm.Allreduce(x, ref, op=MPI.SUM)
            refs.clear()
            refs[n] = x, ref
        x, ref = refs[n]
        # one out per algorithm, shared by its modes: they share its executor, whose persistent
        # requests stay bound to one array (alternating arrays would rebind them at every call)
        out = outs.setdefault((n, algorithm), pages.allocate(x.shape, x.dtype))
        out[...] = 0
        call = make_call(comm, algorithm, x, out, mode)
        call()
        return call, np.allclose(out, ref, rtol=1e-12, atol=0)
    return prepare


ratios = records.ratios


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    placement.advise_ranks(comm, "bench-allreduce", 2, placement.ONE_RANK_WHY, suggest=4)
    oversubscribed = placement.warn_if_oversubscribed(comm)
    return sampling.versus_mpi(
        comm, args, _prepare(comm), lambda n: 8 * n, collective="allreduce", reference="MPI.Allreduce", unit="N",
        header=f"allreduce, float64 SUM, {comm.Get_size()} ranks", oversubscribed=oversubscribed,
        parameters={"sizes": args.sizes, "algorithms": args.algorithms, "dtype": "float64", "op": "sum",
                    "modes": args.modes, "iterations": args.iterations, "warmup": args.warmup,
                    "budget_bytes": args.budget_bytes})
