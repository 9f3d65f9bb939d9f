"""Global combining (allreduce) with any schedule of :mod:`netmodels.algorithms.combining`, and its CLI.

    from mpi_exercises import allreduce
    y = allreduce(comm, x, algorithm="snake")        # == comm.Allreduce(x, y, MPI.SUM)
    allreduce(comm, x, "ring", out=y, check=False)   # time loops: arguments checked once before

    mpiexec -n 4 python -m mpi_exercises allreduce --algorithm snake -N 100000 --block 500 \\
        --repeat 20 --json out.json

By default every call first runs one small collective (an ``Allreduce`` of two
int64 words) that checks that all ranks passed valid and identical arguments: a
bad argument on any rank becomes a ``ValueError`` on every rank, never a rank left
waiting.  ``check=False`` skips it (arguments are then the caller's
responsibility).  Executors (schedule, buffers, persistent requests) are cached on
the communicator itself (an MPI attribute) per (algorithm, N, dtype, op, block,
mesh).  The machinery, and why the check cannot be skipped safely on a cache hit,
is in :mod:`mpi_exercises._frontdoor`.  Importing this module does not start MPI.
"""

from __future__ import annotations

import sys

import numpy as np

from netmodels.algorithms import combining, registry
from netmodels._check import positive_int

from . import _bench
from ._frontdoor import FrontDoor, Plan, mpi
from .executor import Executor, mpi_datatype

ALGORITHMS = registry.names("allreduce", short=True) + ("mpi",)
OPS = ("sum", "prod", "max", "min")
_DOOR = FrontDoor("allreduce")


def _op_name(op) -> str:
    MPI = mpi()
    handle = getattr(op, "handle", op)
    for name in OPS:
        if handle == getattr(MPI, name.upper()).handle:
            return name
    raise ValueError(f"op must be one of MPI.SUM, MPI.PROD, MPI.MAX, MPI.MIN; got {op!r}")


def _validate(algorithm, block, op, mesh, dtype, nelems, nprocs) -> Plan:
    """The plan of one allreduce call (``op``: an MPI.Op's handle, None for SUM); ValueError if invalid."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {algorithm!r}")
    if block is not None:
        block = positive_int("block", block)
    opname = "sum" if op is None else _op_name(op)
    mpi_datatype(dtype)
    if dtype.kind == "c" and opname in ("max", "min"):
        raise ValueError(f"MPI defines MAX and MIN for real types only, not for {dtype}")
    if mesh is None:
        mesh = tuple(mpi().Compute_dims(nprocs, 2))
    mesh = combining.check_mesh(nprocs, mesh)
    if block is None and algorithm != "mpi" and registry.get(algorithm, "allreduce").takes("block"):
        block = combining.default_block(algorithm, nprocs, nelems, mesh)
    mpi_op = getattr(mpi(), opname.upper())
    args = dict(algorithm=algorithm, nelems=nelems, dtype=dtype.str, op=opname, block=block, mesh=mesh)

    def build(comm):
        alg = registry.get(algorithm, "allreduce")
        options = {k: v for k, v in dict(block=block, mesh=mesh).items() if alg.takes(k)}
        return Executor(comm, alg.build(nprocs, nelems, **options), dtype, mpi_op)
    return Plan("allreduce", args, None if algorithm == "mpi" else build, mpi_op)


def executor_for(comm, algorithm, nelems, dtype, op=None, block=None, mesh=None):
    """The cached :class:`~mpi_exercises.executor.Executor` of an allreduce (collective on a miss)."""
    plan = _DOOR.plan((algorithm, block, None if op is None else getattr(op, "handle", op), mesh, np.dtype(dtype), nelems,
                       comm.Get_size()), _validate)
    if plan.build is None:
        raise ValueError("algorithm 'mpi' has no executor")
    return _DOOR.admit(comm, plan, check=False)


def allreduce(comm, x, algorithm: str = "snake", block: int | None = None, op=None, mesh=None, out=None,
              check: bool = True):
    """Element-wise combination of ``x`` over all ranks of ``comm``, equal to ``MPI.Allreduce``.

    ``algorithm``: one of :data:`ALGORITHMS` (``"mpi"`` is the library's own Allreduce).
    ``block``: block size in elements for snake and fence (None: ``combining.default_block``).
    ``op``: ``MPI.SUM`` (default, also when None), ``MPI.PROD``, ``MPI.MAX`` or ``MPI.MIN``.
    ``mesh``: ``(W, H)`` with ``W*H == comm.size`` (None: ``MPI.Compute_dims(P, 2)``).
    ``out``: array of x's shape and dtype to write the result into (None: a new one).
    ``check``: True (default) runs one small collective first, so that bad or differing
    arguments raise ValueError on every rank; False skips it: the arguments are then the
    caller's responsibility (invalid ones raise only where they are seen, differing ones
    hang or give wrong results; see :mod:`mpi_exercises._frontdoor`).
    ``x`` is never modified.  Collective.
    """
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    plan, ex, out = _DOOR.enter(comm, (algorithm, block, None if op is None else getattr(op, "handle", op),
                                       mesh, x.dtype, x.size, comm.Get_size()), _validate, check,
                                x, out, x.shape)
    if ex is None:                                   # algorithm "mpi"
        comm.Allreduce(x if x.flags.c_contiguous else np.ascontiguousarray(x), out, op=plan.data)
        return out
    np.copyto(out, x)
    ex.run(out)
    return out


# --------------------------------------------------------------------------- command line
DTYPES = ("float64", "float32", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint8",
          "complex128", "complex64")


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


def add_arguments(p) -> None:
    p.add_argument("--algorithm", choices=ALGORITHMS, default="snake", help="default: snake")
    p.add_argument("-N", type=_bench.nonneg_int, default=100_000, help="vector length in elements (default 100000)")
    p.add_argument("--block", type=_bench.positive_int, help="block size in elements (snake, fence)")
    p.add_argument("--mesh", type=mesh_arg, help="logical mesh WxH with W*H = ranks (default: MPI.Compute_dims)")
    p.add_argument("--dtype", choices=DTYPES, default="float64", help="default: float64")
    p.add_argument("--op", choices=OPS, default="sum", help="default: sum")
    p.add_argument("--repeat", type=_bench.positive_int, default=20, help="timed calls (default 20)")
    p.add_argument("--warmup", type=_bench.nonneg_int, default=3, help="untimed calls first (default 3)")
    p.add_argument("--json", metavar="FILE", help="write the results to FILE as JSON")


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


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    op = getattr(MPI, args.op.upper())
    oversubscribed = _bench.warn_if_oversubscribed(comm)
    x = test_vector(args.N, args.dtype, rank, args.op)
    try:  # first, so that invalid arguments end in a message, not in an MPI error
        out = allreduce(comm, x, args.algorithm, args.block, op, args.mesh)
    except ValueError as exc:
        if rank == 0:
            print(f"error: {exc}", file=sys.stderr)
        return 2
    ref = np.empty_like(x)
    comm.Allreduce(x, ref, op=op)
    ok = comm.allreduce(matches(out, ref), op=MPI.LAND)
    samples = np.empty(args.repeat)
    for i in range(-args.warmup, args.repeat):
        comm.Barrier()
        t0 = MPI.Wtime()
        allreduce(comm, x, args.algorithm, args.block, op, args.mesh, out=out)
        if i >= 0:
            samples[i] = MPI.Wtime() - t0
    comm.Allreduce(MPI.IN_PLACE, samples, op=MPI.MAX)   # a call ends when the slowest rank is done
    if rank == 0:
        stats = _bench.summarize(samples)
        print(f"allreduce {args.algorithm} P={comm.Get_size()} N={args.N} {args.dtype} {args.op}: "
              f"{'correct' if ok else 'WRONG'} (vs MPI.Allreduce); min {stats['min_s'] * 1e6:.1f} µs, "
              f"median {stats['median_s'] * 1e6:.1f} µs over {args.repeat} calls", flush=True)
        if args.json:
            _bench.write_json(args.json, {
                "benchmark": "allreduce", "environment": _bench.environment(comm),
                "oversubscribed": oversubscribed, "correct": ok,
                "parameters": {k: v for k, v in vars(args).items() if k not in ("module", "command")},
                "results": stats})
            print(f"results written to {args.json}")
    if not ok:
        if rank == 0:
            print("error: the result differs from MPI.Allreduce", file=sys.stderr)
        return 1
    return 0
