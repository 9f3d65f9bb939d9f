"""All-to-all multicast (allgather) with any allgather of the registry.

    from mpi_exercises import allgather
    y = allgather(comm, x, algorithm="ring")          # y[r] is rank r's x: == comm.Allgather
    allgather(comm, x, "k-prefix", k=4, out=y, check=False)

The algorithms are the registry's allgathers (:func:`choices`) and ``"mpi"``.  The
schedule's working vector is the result itself: ``out`` viewed as ``P * x.size``
elements, rank r's block at ``[r m, (r+1) m)``; the call copies ``x`` into its own
block and runs the cached executor on ``out`` (pass ``out=`` in loops: the executor's
persistent requests stay bound to the same array).  Argument check, ``check=False`` and
the executor cache are those of every front door (:mod:`mpi_exercises.collectives._door`).
The command line is :mod:`mpi_exercises.bench.allgather`.  Importing this module does not
start MPI.
"""

from __future__ import annotations

import numpy as np

from ..executor import Executor
from ._door import FrontDoor, Plan, resolve, schedule_of
from ._door import choices as _choices

_DOOR = FrontDoor("allgather")


def choices() -> tuple[str, ...]:
    """Every ``algorithm`` :func:`allgather` accepts: the registry's allgathers, then ``"mpi"``."""
    return _choices("allgather")


def _validate(algorithm, k, dtype, shape, nprocs, options) -> Plan:
    """The plan of one allgather call; ValueError if an argument is invalid."""
    entry, options = resolve("allgather", algorithm, options if k is None else dict(options, k=k), dtype)
    m = int(np.prod(shape, dtype=np.int64))
    if entry is None:
        return Plan("allgather", dict(algorithm="mpi", dtype=dtype.str, shape=shape), None, m)
    schedule, used = schedule_of(entry, nprocs, m, options)
    args = dict(algorithm=entry.short, dtype=dtype.str, shape=shape, **used)
    return Plan("allgather", args, lambda comm: Executor(comm, schedule, dtype), m)


def executor_for(comm, algorithm, shape, dtype, k=None, **options):
    """The cached executor of an allgather of blocks of ``shape`` (collective on a miss)."""
    plan = _DOOR.plan((algorithm, k, np.dtype(dtype), tuple(shape), comm.Get_size(),
                       tuple(sorted(options.items()))), _validate)
    if plan.build is None:
        raise ValueError("algorithm 'mpi' has no executor")
    return _DOOR.admit(comm, plan, check=False)


def allgather(comm, x, algorithm: str = "ring", k: int | None = None, out=None, check: bool = True,
              **options):
    """Every rank's ``x``, stacked: an array of shape ``(P,) + x.shape``, equal to ``comm.Allgather``.

    ``algorithm``: one of :func:`choices` (``"mpi"``: the library's Allgather).
    ``k``: partition (k-prefix, k-prefix-lb) or window (k-shift) size, an integer with
    1 <= k <= P, even for k-shift; None: the builder's default.  ``options``: any other
    option of the algorithm.
    ``out``: a C-contiguous array of shape ``(P,) + x.shape`` and x's dtype (None: a new one).
    ``check``: True (default) agrees on the arguments in one small collective first, so
    that bad or differing arguments (algorithm, k, dtype, shape) raise ValueError on
    every rank; False skips it and leaves the arguments to the caller (see
    :mod:`mpi_exercises.collectives._door`).  ``x`` is never modified.  Collective.
    """
    args = (algorithm, k, options)
    ex = _DOOR.again(comm, x, out, args, check)     # a time loop: the last call's arguments again
    if ex is None:
        size, x = _DOOR.arguments(comm, x, check)
        plan, ex, out = _DOOR.enter(comm, (algorithm, k, x.dtype, x.shape, size,
                                           tuple(sorted(options.items())) if options else ()),
                                    _validate, check, x, out, (size,) + x.shape, _start, args)
        if ex is None:
            comm.Allgather(x if x.flags.c_contiguous else np.ascontiguousarray(x), out)
            return out
    if ex.started:                                   # begun while the agreement was in flight
        ex.finish()
        return out
    out[ex.rank] = x
    ex.run(out)
    return out


def _start(plan, ex, x, out, inline):
    """The call started while the agreement is in flight (FrontDoor.enter's prime)."""
    out[ex.rank] = x
    ex.start(out, inline)
