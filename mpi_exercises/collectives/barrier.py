"""Barriers from the registry's schedules, and a correctness check.

    from mpi_exercises import barrier
    from mpi_exercises.collectives.barrier import Barrier
    barrier(comm, algorithm="dissemination")           # one barrier (executor cached on comm)
    b = Barrier(comm, "nway_dissemination", n=3)       # reusable: persistent requests
    for _ in range(1000): b()
    b.free()

Algorithms (:func:`choices`): every ``barrier.*`` of :mod:`netmodels.algorithms.registry`
(central counter, combining tree (option ``fan_in``), tournament, dissemination, binomial,
n-way dissemination (option ``n``), butterfly, pairwise exchange, ...), run by
:class:`mpi_exercises.executor.Executor` on an empty vector, and ``mpi`` (``MPI.Barrier``).
Every algorithm works for any number of ranks; how each handles a P that is not a
power of two is said in :mod:`netmodels.algorithms.barriers`.

Correctness check (used by the tests): ``python -m mpi_exercises.collectives.barrier
--verify 50`` under mpiexec runs 50 barriers of every algorithm with random delays before
entry and checks with timestamps that no rank left a barrier before the last rank entered
it.  The benchmark (``barrier-bench``) is :mod:`mpi_exercises.bench.barrier`.
"""

from __future__ import annotations

import time

import numpy as np

from ..executor import Executor, Resource
from ._door import FrontDoor, Plan, algorithm_of, schedule_of, word_of
from ._door import choices as _choices


def choices() -> tuple[str, ...]:
    """Every ``algorithm`` :func:`barrier` accepts: the registry's barriers, then ``"mpi"``."""
    return _choices("barrier")


def _schedule(algorithm, nprocs: int, options: dict):
    """``(schedule or None for "mpi", normalised options)`` of a barrier ``algorithm`` (a name or
    a zero-count schedule); ValueError if invalid."""
    from netmodels.algorithms.arrays import ArraySchedule
    from netmodels.algorithms.schedule import Schedule

    if isinstance(algorithm, (Schedule, ArraySchedule)):   # any barrier schedule, e.g. one under study
        if options:
            raise ValueError(f"a schedule takes no options, got {sorted(options)}")
        if algorithm.nprocs != nprocs or algorithm.nelems != 0:
            raise ValueError(f"schedule {algorithm.name!r} must be a barrier (nelems 0) for {nprocs} ranks, "
                             f"got nprocs {algorithm.nprocs}, nelems {algorithm.nelems}")
        return algorithm, {}
    entry = algorithm_of("barrier", algorithm)
    if entry is None:
        if options:
            raise ValueError(f"algorithm 'mpi' takes no options, got {sorted(options)}")
        return None, {}
    return schedule_of(entry, nprocs, 0, options)


class Barrier(Resource):
    """A reusable barrier on ``comm`` (construction and :meth:`free` are collective).

    ``algorithm`` is a name of :func:`choices` or a zero-count schedule for ``comm``'s size.
    """

    def __init__(self, comm, algorithm="dissemination", **options):
        schedule, _ = _schedule(algorithm, comm.Get_size(), options)
        self.algorithm, self.comm = getattr(algorithm, "name", algorithm), comm
        self._executor = None
        if schedule is not None:
            self._executor = Executor(comm, schedule, np.uint8, None)
        self._buf = np.empty(0, dtype=np.uint8)

    def __call__(self) -> None:
        if self._executor is None:
            self.comm.Barrier()
        else:
            self._executor.run(self._buf)

    def free(self) -> None:
        if self._executor is not None:
            self._executor.free()
            self._executor = None


_DOOR = FrontDoor("barrier")
_EMPTY = np.empty(0, dtype=np.uint8)


def _validate(algorithm, options, nprocs) -> Plan:
    """The plan of one barrier call (``options``: sorted (name, value) pairs); ValueError if invalid."""
    schedule, used = _schedule(algorithm, nprocs, dict(options))
    if schedule is None:
        return Plan("barrier", dict(algorithm="mpi"))
    if isinstance(algorithm, str):
        args = dict(algorithm=algorithm_of("barrier", algorithm).short, **used)
    else:
        from netmodels.algorithms.arrays import as_transfers

        args = dict(algorithm=schedule.name, schedule=word_of(as_transfers(schedule).steps))
    return Plan("barrier", args, lambda comm: Executor(comm, schedule, np.uint8, None))


def barrier(comm, algorithm: str = "dissemination", check: bool = True, **options) -> None:
    """One barrier on ``comm`` with ``algorithm`` (one of :func:`choices`, or a barrier
    schedule); ``options``: the algorithm's (``registry.get(name).options``); collective.

    The executor is cached on ``comm`` like allreduce's.  ``check=True`` (default) first
    agrees on the arguments in one small collective: a bad or differing argument raises
    ValueError on every rank.  ``check=False`` skips it: the arguments are then the
    caller's responsibility (see :mod:`mpi_exercises.collectives._door`).
    """
    size, _ = _DOOR.arguments(comm)
    _, ex, _ = _DOOR.enter(comm, (algorithm, tuple(sorted(options.items())), size), _validate, check,
                           prime=_start)
    if ex is None:
        comm.Barrier()
    elif ex.started:                                 # begun while the agreement was in flight
        ex.finish()
    else:
        ex.run(_EMPTY)


def _start(plan, ex, x, out, inline):
    """The call started while the agreement is in flight (FrontDoor.enter's prime) where this
    rank's first messages are sends, or travel inside the agreement's (``inline``, P = 2): a
    barrier has no local work to overlap otherwise (dissemination started always beside an
    Allreduce agreement: 1.11 x slower than without, load 7-9)."""
    if ex.sends_first or inline is not None:
        ex.start(_EMPTY, inline)


# ---------------------------------------------------------------- correctness check
def _clock() -> float:
    """CLOCK_MONOTONIC in seconds: one clock for all processes of one Linux/macOS host."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def verify(comm, algorithm: str, barriers: int = 50, max_delay: float = 2e-3, seed: int = 0,
           **options) -> list[str]:
    """Run ``barriers`` back-to-back barriers with random delays before entry; return violations.

    Before barrier i every rank sleeps a random time in [0, max_delay) (s), and one
    rank, a different one each time, sleeps ``max_delay`` more.  Each rank records its
    entry and exit times on CLOCK_MONOTONIC, which is the same clock for all processes
    of one host; the check refuses to run across hosts.  On rank 0 the result lists
    every barrier whose latest entry comes after its earliest exit (empty: correct).
    """
    from mpi4py import MPI

    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    one_host = node.Get_size() == comm.Get_size()
    node.Free()
    if not one_host:
        raise RuntimeError("verify needs all ranks on one host (it compares CLOCK_MONOTONIC stamps)")
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = np.random.default_rng([seed, rank])
    delays = rng.uniform(0, max_delay, barriers) + max_delay * (np.arange(barriers) % size == rank)
    stamps = np.empty((barriers, 2))
    with Barrier(comm, algorithm, **options) as b:
        comm.Barrier()
        for i in range(barriers):
            time.sleep(delays[i])
            stamps[i, 0] = _clock()
            b()
            stamps[i, 1] = _clock()
    everyone = np.empty((size, barriers, 2)) if rank == 0 else None
    comm.Gather(stamps, everyone, root=0)
    if rank != 0:
        return []
    last_in, first_out = everyone[:, :, 0].max(axis=0), everyone[:, :, 1].min(axis=0)
    name = getattr(algorithm, "name", algorithm)
    return [f"{name}: barrier {i}: a rank left at {first_out[i]:.6f} s before the last entered "
            f"at {last_in[i]:.6f} s" for i in np.flatnonzero(first_out < last_in)]
