"""Global combining (allreduce) with any schedule of :mod:`netmodels.algorithms.combining`, and its CLI.

    from mpi_exercises import allreduce
    y = allreduce(comm, x, algorithm="snake")        # == comm.Allreduce(x, y, MPI.SUM)

    mpiexec -n 4 python -m mpi_exercises allreduce --algorithm snake -N 100000 --block 500 \\
        --repeat 20 --json out.json

Every call first runs one small collective (an ``Allreduce`` of five integers) that
checks that all ranks passed valid and identical arguments: a bad argument on any
rank becomes a ``ValueError`` on every rank, never a rank left waiting.  Executors
(schedule, buffers, persistent requests) are cached on the communicator itself (an
MPI attribute) per (algorithm, N, dtype, op, block, mesh), so repeated calls do not
rebuild them; the least recently used of more than ``CACHE_SIZE`` are freed.
Importing this module does not start MPI.
"""

from __future__ import annotations

import array
import sys
import zlib
from collections import OrderedDict

import numpy as np

from netmodels.algorithms import combining
from netmodels._check import positive_int

from . import _bench
from .executor import Executor, mpi_datatype

ALGORITHMS = combining.ALGORITHMS + ("mpi",)
OPS = ("sum", "prod", "max", "min")
CACHE_SIZE = 16
_KEYVAL = None
_MPI = None


def _mpi():
    """mpi4py.MPI, imported on first use (importing this module must not start MPI)."""
    global _MPI
    if _MPI is None:
        from mpi4py import MPI

        _MPI = MPI
    return _MPI


def _op_name(op) -> str:
    from mpi4py import MPI

    for name in OPS:
        if op == getattr(MPI, name.upper()):
            return name
    raise ValueError(f"op must be one of MPI.SUM, MPI.PROD, MPI.MAX, MPI.MIN; got {op!r}")


def _check_call(size, dtype, algorithm, block, op, mesh):
    """Validate what does not depend on the data; return (op name, mesh, block, agreement hash)."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {algorithm!r}")
    if block is not None:
        block = positive_int("block", block)
    opname = _op_name(op)
    mpi_datatype(dtype)
    if dtype.kind == "c" and opname in ("max", "min"):
        raise ValueError(f"MPI defines MAX and MIN for real types only, not for {dtype}")
    if mesh is None:
        from mpi4py import MPI

        mesh = tuple(MPI.Compute_dims(size, 2))
    mesh = combining.check_mesh(size, mesh)
    h = zlib.crc32(repr((algorithm, block, opname, mesh, dtype.str)).encode())
    return opname, mesh, block, h


#: validated (algorithm, block, op, mesh, dtype, size) -> _check_call's answer: repeated calls
#: (benchmarks, time loops) skip the validation and go straight to the agreement collective
_VALID: dict = {}


def _check_out(out, x):
    if not isinstance(out, np.ndarray) or out.shape != x.shape or out.dtype != x.dtype \
            or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"out must be a writeable C-contiguous numpy array of shape {x.shape} and "
                         f"dtype {x.dtype}")
    # arrays that own their memory overlap only if they are the same array
    if out is x or ((out.base is not None or x.base is not None) and np.may_share_memory(out, x)):
        raise ValueError("out must not share memory with x (x is never modified)")


def _agree(comm, error, n, h):
    """One small collective: raise the same ValueError on every rank if any rank failed or disagrees."""
    MPI = _mpi()
    buf = array.array("q", (1 if error else 0, n, -n, h, -h))     # int64, cheaper than numpy here
    comm.Allreduce(MPI.IN_PLACE, [buf, MPI.INT64_T], op=MPI.MAX)
    v = buf.tolist()
    if error is not None:
        raise error
    if v[0]:
        raise ValueError("allreduce: invalid arguments on another rank (its ValueError says which)")
    if v[1] != -v[2]:
        raise ValueError(f"allreduce: x must have the same number of elements on every rank; "
                         f"got sizes from {-v[2]} to {v[1]}")
    if v[3] != -v[4]:
        raise ValueError("allreduce: algorithm, block, op, mesh and dtype must be the same on every rank")


def _delete_cache(comm, keyval, cache):
    """MPI calls this when ``comm`` is freed: free the cached executors' duplicated
    communicators and persistent requests too (same order on every rank)."""
    while cache:
        cache.popitem(last=False)[1].free()


def _cache(comm) -> OrderedDict:
    """The executor cache stored on ``comm`` as an MPI attribute."""
    MPI = _mpi()
    global _KEYVAL
    if _KEYVAL is None:
        _KEYVAL = MPI.Comm.Create_keyval(delete_fn=_delete_cache)
    cache = comm.Get_attr(_KEYVAL)
    if cache is None:
        cache = OrderedDict()
        comm.Set_attr(_KEYVAL, cache)
    return cache


def executor_for(comm, algorithm, nelems, dtype, op, block=None, mesh=None, opname=None):
    """The cached :class:`~mpi_exercises.executor.Executor` for these arguments (collective on a miss)."""
    dtype = np.dtype(dtype)
    key = (algorithm, nelems, dtype.str, opname or _op_name(op), block, tuple(mesh))
    cache = _cache(comm)
    ex = cache.get(key)
    if ex is None:
        if block is None and algorithm in combining.PIPELINED:
            block = combining.default_block(algorithm, comm.Get_size(), nelems, mesh)
        ex = Executor(comm, combining.build(algorithm, comm.Get_size(), nelems, block, mesh), dtype, op)
        cache[key] = ex
        while len(cache) > CACHE_SIZE:               # same calls on every rank: same eviction
            cache.popitem(last=False)[1].free()
    else:
        cache.move_to_end(key)
    return ex


def allreduce(comm, x, algorithm: str = "snake", block: int | None = None, op=None, mesh=None, out=None):
    """Element-wise combination of ``x`` over all ranks of ``comm``, equal to ``MPI.Allreduce``.

    ``algorithm``: one of :data:`ALGORITHMS` (``"mpi"`` is the library's own Allreduce).
    ``block``: block size in elements for snake and fence (None: ``combining.default_block``).
    ``op``: ``MPI.SUM`` (default, also when None), ``MPI.PROD``, ``MPI.MAX`` or ``MPI.MIN``.
    ``mesh``: ``(W, H)`` with ``W*H == comm.size`` (None: ``MPI.Compute_dims(P, 2)``).
    ``out``: array of x's shape and dtype to write the result into (None: a new one).
    ``x`` is never modified.  Collective; raises ValueError on every rank on bad input.
    """
    MPI = _mpi()
    if op is None:
        op = MPI.SUM
    error = None
    try:
        if type(x) is not np.ndarray:
            x = np.asarray(x)
        size = comm.Get_size()
        try:
            vkey = (algorithm, block, id(op), mesh, x.dtype, size)
            checked = _VALID.get(vkey)
        except TypeError:                              # unhashable mesh or block: no caching
            vkey, checked = None, None
        if checked is None:
            checked = _check_call(size, x.dtype, algorithm, block, op, mesh)
            if vkey is not None and op in (MPI.SUM, MPI.PROD, MPI.MAX, MPI.MIN):   # predefined: ids stay valid
                _VALID[vkey] = checked
        opname, mesh, block, h = checked
        if out is not None:
            _check_out(out, x)
        n = x.size
    except ValueError as exc:
        error, n, h = exc, 0, 0
    _agree(comm, error, n, h)
    if out is None:
        out = np.empty(x.shape, dtype=x.dtype)
    flat = out if out.ndim == 1 else out.reshape(-1)
    if algorithm == "mpi":
        comm.Allreduce(x if x.flags.c_contiguous else np.ascontiguousarray(x), flat, op=op)
        return out
    np.copyto(flat, x.reshape(-1))
    executor_for(comm, algorithm, n, x.dtype, op, block, mesh, opname).run(flat)
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
