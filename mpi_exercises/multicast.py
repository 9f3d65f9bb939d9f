"""All-to-all multicast (allgather) with any schedule of :mod:`netmodels.algorithms.allgather`, and its CLI.

    from mpi_exercises import allgather
    y = allgather(comm, x, algorithm="ring")          # y[r] is rank r's x: == comm.Allgather
    allgather(comm, x, "k-prefix", k=4, out=y, check=False)

    mpiexec -n 4 python -m mpi_exercises allgather --algorithm k-shift --k 2 -N 1000 --json out.json

The schedule's working vector is the result itself: ``out`` viewed as ``P * x.size``
elements, rank r's block at ``[r m, (r+1) m)``; the call copies ``x`` into its own
block and runs the cached executor on ``out`` (pass ``out=`` in loops: the
executor's persistent requests stay bound to the same array).  Argument check,
``check=False`` and the executor cache are those of every front door
(:mod:`mpi_exercises._frontdoor`).  Importing this module does not start MPI.
"""

from __future__ import annotations

import sys

import numpy as np

from netmodels.algorithms import allgather as _schedules, registry

from . import _bench
from ._frontdoor import FrontDoor, Plan
from .executor import Executor, mpi_datatype

ALGORITHMS = registry.names("allgather", short=True) + ("mpi",)
_DOOR = FrontDoor("allgather")


def _validate(algorithm, k, dtype, shape, nprocs) -> Plan:
    """The plan of one allgather call; ValueError if an argument is invalid."""
    if algorithm == "mpi":
        if k is not None:
            raise ValueError(f"k is an option of {', '.join(a.short for a in registry.algorithms('allgather') if a.takes('k'))} only, not of mpi; got k={k!r}")
    elif algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {algorithm!r}")
    else:
        k = _schedules.check_k(algorithm, nprocs, k)
    mpi_datatype(dtype)
    m = int(np.prod(shape, dtype=np.int64))
    args = dict(algorithm=algorithm, k=k, dtype=dtype.str, shape=shape)
    if algorithm == "mpi":
        return Plan("allgather", args, None, m)
    return Plan("allgather", args,
                lambda comm: Executor(comm, registry.get(algorithm, "allgather").build(nprocs, m, k=k), dtype), m)


def allgather(comm, x, algorithm: str = "ring", k: int | None = None, out=None, check: bool = True):
    """Every rank's ``x``, stacked: an array of shape ``(P,) + x.shape``, equal to ``comm.Allgather``.

    ``algorithm``: one of :data:`ALGORITHMS` (``"mpi"``: the library's Allgather).
    ``k``: partition (k-prefix, k-prefix-lb) or window (k-shift) size, an integer with
    1 <= k <= P, even for k-shift; None: ``netmodels.algorithms.allgather.default_k``.
    ``out``: a C-contiguous array of shape ``(P,) + x.shape`` and x's dtype (None: a new one).
    ``check``: True (default) agrees on the arguments in one small collective first, so
    that bad or differing arguments (algorithm, k, dtype, shape) raise ValueError on
    every rank; False skips it and leaves the arguments to the caller (see
    :mod:`mpi_exercises._frontdoor`).  ``x`` is never modified.  Collective.
    """
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    size = comm.Get_size()
    plan, ex, out = _DOOR.enter(comm, (algorithm, k, x.dtype, x.shape, size), _validate, check,
                                x, out, (size,) + x.shape)
    if ex is None:
        comm.Allgather(x if x.flags.c_contiguous else np.ascontiguousarray(x), out)
        return out
    out[comm.Get_rank()] = x
    ex.run(out)
    return out


# --------------------------------------------------------------------------- command line
def add_arguments(p) -> None:
    from .combining import DTYPES

    p.add_argument("--algorithm", choices=ALGORITHMS, default="ring", help="default: ring")
    p.add_argument("-N", type=_bench.nonneg_int, default=1000, help="elements per rank (default 1000)")
    p.add_argument("--k", type=_bench.positive_int,
                   help="k of k-prefix, k-prefix-lb (1 <= k <= P) and k-shift (even)")
    p.add_argument("--dtype", choices=DTYPES, default="float64", help="default: float64")
    p.add_argument("--repeat", type=_bench.positive_int, default=20, help="timed calls (default 20)")
    p.add_argument("--warmup", type=_bench.nonneg_int, default=3, help="untimed calls first (default 3)")
    p.add_argument("--json", metavar="FILE", help="write the results to FILE as JSON")


def test_vector(n: int, dtype, rank: int) -> np.ndarray:
    """A vector that differs on every rank and at every element."""
    v = np.arange(n, dtype=np.int64) * 7 + 1000 * rank + 3
    return v.astype(dtype)


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    oversubscribed = _bench.warn_if_oversubscribed(comm)
    x = test_vector(args.N, args.dtype, rank)
    try:  # first, so that invalid arguments end in a message, not in an MPI error
        out = allgather(comm, x, args.algorithm, args.k)
    except ValueError as exc:
        if rank == 0:
            print(f"error: {exc}", file=sys.stderr)
        return 2
    ref = np.empty((size,) + x.shape, dtype=x.dtype)
    comm.Allgather(x, ref)
    ok = comm.allreduce(bool(np.array_equal(out, ref)), op=MPI.LAND)
    samples = np.empty(args.repeat)
    for i in range(-args.warmup, args.repeat):
        comm.Barrier()
        t0 = MPI.Wtime()
        allgather(comm, x, args.algorithm, args.k, out=out)
        if i >= 0:
            samples[i] = MPI.Wtime() - t0
    comm.Allreduce(MPI.IN_PLACE, samples, op=MPI.MAX)   # a call ends when the slowest rank is done
    if rank == 0:
        stats = _bench.summarize(samples)
        print(f"allgather {args.algorithm} P={size} N={args.N} {args.dtype}: "
              f"{'correct' if ok else 'WRONG'} (vs MPI.Allgather); min {stats['min_s'] * 1e6:.1f} µs, "
              f"median {stats['median_s'] * 1e6:.1f} µs over {args.repeat} calls", flush=True)
        if args.json:
            _bench.write_json(args.json, {
                "benchmark": "allgather", "environment": _bench.environment(comm),
                "oversubscribed": oversubscribed, "load_average_1min": _bench.load_average(), "correct": ok,
                "parameters": {k: v for k, v in vars(args).items() if k not in ("module", "command", "parser")},
                "results": stats})
            print(f"results written to {args.json}")
    if not ok:
        if rank == 0:
            print("error: the result differs from MPI.Allgather", file=sys.stderr)
        return 1
    return 0
