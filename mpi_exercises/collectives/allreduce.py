"""Global combining (allreduce) with any allreduce of the registry.

    from mpi_exercises import allreduce
    y = allreduce(comm, x, algorithm="snake")        # == comm.Allreduce(x, y, MPI.SUM)
    allreduce(comm, x, "ring", out=y, check=False)   # time loops: arguments checked once before

The algorithms are the registry's allreduces (:func:`choices`: every
``allreduce.*`` of :mod:`netmodels.algorithms.registry`) and ``"mpi"``.  By default
every call first runs one small collective (an ``Allreduce`` of two int64 words; at P = 2
one exchange of them, which carries a small first step too) that
checks that all ranks passed valid and identical arguments: a bad argument on any rank
becomes a ``ValueError`` on every rank, never a rank left waiting.  ``check=False``
skips it (arguments are then the caller's responsibility).  Executors (schedule,
buffers, persistent requests) are cached on the communicator itself (an MPI attribute)
per normalised arguments.  The machinery, and why the check cannot be skipped safely on
a cache hit, is in :mod:`mpi_exercises.collectives._door`.  The command line is
:mod:`mpi_exercises.bench.allreduce`.  Importing this module does not start MPI.
"""

from __future__ import annotations

import numpy as np

from netmodels._check import positive_int

from ..executor import Executor
from ._door import FrontDoor, Plan, mpi, resolve, schedule_of
from ._door import choices as _choices

OPS = ("sum", "prod", "max", "min")
_DOOR = FrontDoor("allreduce")


def choices() -> tuple[str, ...]:
    """Every ``algorithm`` :func:`allreduce` accepts: the registry's allreduces, then ``"mpi"``."""
    return _choices("allreduce")


def _op_name(op) -> str:
    MPI = mpi()
    handle = getattr(op, "handle", op)
    for name in OPS:
        if handle == getattr(MPI, name.upper()).handle:
            return name
    named = [n for n in dir(MPI) if isinstance(getattr(MPI, n), MPI.Op) and getattr(MPI, n).handle == handle]
    got = f"MPI.{named[0]}" if named and handle != MPI.OP_NULL.handle else repr(op)
    raise ValueError(f"op must be one of MPI.SUM, MPI.PROD, MPI.MAX, MPI.MIN; got {got}")


def _validate(algorithm, block, op, mesh, dtype, nelems, nprocs, options) -> Plan:
    """The plan of one allreduce call (``op``: an MPI.Op's handle, None for SUM; ``options``:
    sorted (name, value) pairs); ValueError if invalid."""
    entry, options = resolve("allreduce", algorithm, options, dtype)
    if block is not None:
        block = positive_int("block", block)
    opname = "sum" if op is None else _op_name(op)
    if dtype.kind == "c" and opname in ("max", "min"):
        raise ValueError(f"MPI defines MAX and MIN for real types only, not for {dtype}")
    mpi_op = getattr(mpi(), opname.upper())
    if entry is None:
        args = dict(algorithm="mpi", nelems=nelems, dtype=dtype.str, op=opname)
        return Plan("allreduce", args, None, mpi_op)
    # block and mesh are arguments of the call; they reach the algorithms that take them
    if block is not None and "block" in entry.options:
        options["block"] = block
    if "mesh" in entry.options:
        options["mesh"] = tuple(mpi().Compute_dims(nprocs, 2)) if mesh is None else mesh
    schedule, used = schedule_of(entry, nprocs, nelems, options)
    args = dict(algorithm=entry.short, nelems=nelems, dtype=dtype.str, op=opname, **used)
    return Plan("allreduce", args, lambda comm: Executor(comm, schedule, dtype, mpi_op), mpi_op)


def _key(comm, algorithm, block, op, mesh, dtype, nelems, options):
    return (algorithm, block, None if op is None else getattr(op, "handle", op), mesh, dtype, nelems,
            comm.Get_size(), tuple(sorted(options.items())) if options else ())


def executor_for(comm, algorithm, nelems, dtype, op=None, block=None, mesh=None, **options):
    """The cached :class:`~mpi_exercises.executor.Executor` of an allreduce (collective on a miss)."""
    plan = _DOOR.plan(_key(comm, algorithm, block, op, mesh, np.dtype(dtype), nelems, options), _validate)
    if plan.build is None:
        raise ValueError("algorithm 'mpi' has no executor")
    return _DOOR.admit(comm, plan, check=False)


def allreduce(comm, x, algorithm: str = "snake", block: int | None = None, op=None, mesh=None, out=None,
              check: bool = True, **options):
    """Element-wise combination of ``x`` over all ranks of ``comm``, equal to ``MPI.Allreduce``.

    ``algorithm``: one of :func:`choices` (the registry's allreduces; ``"mpi"`` is the
    library's own Allreduce).
    ``block``: block size in elements of the pipelined algorithms (snake, fence; None: the
    builder's default); ignored by the others.
    ``op``: ``MPI.SUM`` (default, also when None), ``MPI.PROD``, ``MPI.MAX`` or ``MPI.MIN``.
    ``mesh``: ``(W, H)`` with ``W*H == comm.size`` for the mesh algorithms (tree, snake,
    fence; None: ``MPI.Compute_dims(P, 2)``); ignored by the others.
    ``options``: any other option of the algorithm (``registry.get(name).options``).
    ``out``: array of x's shape and dtype to write the result into (None: a new one).
    ``check``: True (default) runs one small collective first, so that bad or differing
    arguments raise ValueError on every rank; False skips it: the arguments are then the
    caller's responsibility (invalid ones raise only where they are seen, differing ones
    hang or give wrong results; see :mod:`mpi_exercises.collectives._door`).
    ``x`` is never modified.  Collective.
    """
    args = (algorithm, block, op, mesh, options)
    ex = _DOOR.again(comm, x, out, args, check)     # a time loop: the last call's arguments again
    if ex is None:
        size, x = _DOOR.arguments(comm, x, check)
        # the key of _key, built inline
        plan, ex, out = _DOOR.enter(comm, (algorithm, block, None if op is None else getattr(op, "handle", op),
                                           mesh, x.dtype, x.size, size,
                                           tuple(sorted(options.items())) if options else ()),
                                    _validate, check, x, out, x.shape, _start, args)
        if ex is None:                               # algorithm "mpi"
            comm.Allreduce(x if x.flags.c_contiguous else np.ascontiguousarray(x), out, op=plan.data)
            return out
    if ex.started:                                   # begun while the agreement was in flight
        ex.finish()
        return out
    out[...] = x
    ex.run(out)
    return out


def _start(plan, ex, x, out, inline):
    """The call started while the agreement is in flight (FrontDoor.enter's prime)."""
    out[...] = x
    ex.start(out, inline)
