"""Broadcast with any broadcast of the registry.

    from mpi_exercises.collectives.broadcast import broadcast
    y = broadcast(comm, x, algorithm="binomial", root=0)   # y == the root's x on every rank: == comm.Bcast

The algorithms are the registry's broadcasts (:func:`choices`) and ``"mpi"``
(``comm.Bcast``).  Every rank passes an ``x`` of the same shape and dtype (only the
root's values are read, as with ``MPI.Bcast``); the result is a new array (or ``out``)
holding the root's ``x``.  The schedule's working vector is the result itself: the root
copies ``x`` into it, the executor does the rest.  Argument check, ``check=False`` and the
executor cache are those of every front door (:mod:`mpi_exercises.collectives._door`).
Importing this module does not start MPI.
"""

from __future__ import annotations

import numpy as np

from ..executor import Executor
from ._door import FrontDoor, Plan, resolve, schedule_of
from ._door import choices as _choices

_DOOR = FrontDoor("broadcast")


def choices() -> tuple[str, ...]:
    """Every ``algorithm`` :func:`broadcast` accepts: the registry's broadcasts, then ``"mpi"``."""
    return _choices("broadcast")


def _validate(algorithm, root, dtype, shape, nprocs, options) -> Plan:
    """The plan of one broadcast call; ValueError if an argument is invalid."""
    entry, options = resolve("broadcast", algorithm, options, dtype)
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) or not 0 <= root < nprocs:
        raise ValueError(f"root must be a rank in 0..{nprocs - 1}, got {root!r}")
    root = int(root)
    m = int(np.prod(shape, dtype=np.int64))
    if entry is None:
        return Plan("broadcast", dict(algorithm="mpi", root=root, dtype=dtype.str, shape=shape), None, root)
    if "root" in entry.options:
        options["root"] = root
    elif root != 0:
        raise ValueError(f"broadcast.{entry.short} broadcasts from rank 0 only; got root={root}")
    schedule, used = schedule_of(entry, nprocs, m, options)
    args = {**dict(algorithm=entry.short, root=root, dtype=dtype.str, shape=shape), **used}
    return Plan("broadcast", args, lambda comm: Executor(comm, schedule, dtype), root)


def executor_for(comm, algorithm, shape, dtype, root=0, **options):
    """The cached executor of a broadcast of an array of ``shape`` (collective on a miss)."""
    plan = _DOOR.plan((algorithm, root, np.dtype(dtype), tuple(shape), comm.Get_size(),
                       tuple(sorted(options.items()))), _validate)
    if plan.build is None:
        raise ValueError("algorithm 'mpi' has no executor")
    return _DOOR.admit(comm, plan, check=False)


def broadcast(comm, x, algorithm: str = "binomial", root: int = 0, out=None, check: bool = True, **options):
    """The root's ``x`` on every rank, in an array of x's shape: equal to ``comm.Bcast``.

    ``algorithm``: one of :func:`choices` (``"mpi"``: the library's Bcast).  ``root``: the
    rank whose ``x`` is broadcast (every rank passes an ``x`` of the same shape and dtype).
    ``options``: any other option of the algorithm.  ``out``: a C-contiguous array of x's
    shape and dtype (None: a new one).  ``check``: True (default) agrees on the arguments
    in one small collective first, so that bad or differing arguments raise ValueError on
    every rank; False skips it and leaves the arguments to the caller (see
    :mod:`mpi_exercises.collectives._door`).  ``x`` is never modified.  Collective.
    """
    args = (algorithm, root, options)
    ex = _DOOR.again(comm, x, out, args, check)     # a time loop: the last call's arguments again
    if ex is None:
        size, x = _DOOR.arguments(comm, x, check)
        plan, ex, out = _DOOR.enter(comm, (algorithm, root, x.dtype, x.shape, size,
                                           tuple(sorted(options.items())) if options else ()),
                                    _validate, check, x, out, x.shape, _start, args)
        if ex is None:
            if comm.Get_rank() == plan.data:
                out[...] = x
            comm.Bcast(out, root=plan.data)
            return out
    if ex.started:                                   # begun while the agreement was in flight
        ex.finish()
        return out
    if ex.rank == root:
        out[...] = x
    ex.run(out)
    return out


def _start(plan, ex, x, out, inline):
    """The call started while the agreement is in flight (FrontDoor.enter's prime)."""
    if ex.rank == plan.data:
        out[...] = x
    ex.start(out, inline)
