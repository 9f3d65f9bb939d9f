"""Runnable mpi4py implementations of the algorithms of the course, and benchmarks.

Run ``python -m mpi_exercises --help`` for the command-line tools, under
``mpiexec -n P`` on a laptop or ``srun`` on a cluster.  The front doors

    from mpi_exercises import allreduce, barrier, allgather, alltoall

live in :mod:`mpi_exercises.combining`, :mod:`mpi_exercises.barriers`,
:mod:`mpi_exercises.multicast` (allgather) and :mod:`mpi_exercises.exchange` (alltoall); they are
imported on first use, so that ``import mpi_exercises`` (and the CLI's ``--help``)
does not start MPI.
"""

_FRONT_DOORS = {"allreduce": "combining", "barrier": "barriers"}
_FRONT_DOORS.update(allgather="multicast", alltoall="exchange")


def __getattr__(name):
    if name in _FRONT_DOORS:
        from importlib import import_module

        func = getattr(import_module(f".{_FRONT_DOORS[name]}", __name__), name)
        globals()[name] = func
        return func
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
