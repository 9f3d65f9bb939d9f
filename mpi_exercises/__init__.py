"""Runnable mpi4py implementations of the algorithms of the course, and benchmarks.

Run ``python -m mpi_exercises --help`` for the command-line tools, under
``mpiexec -n P`` on a laptop or ``srun`` on a cluster.  Layout by role:

- :mod:`mpi_exercises.collectives`: the front doors, one module per collective
  (``allreduce``, ``barrier``, ``broadcast``, ``allgather``, ``alltoall``), each running any
  algorithm of the registry (:mod:`netmodels.algorithms.registry`) or MPI's own;
- :mod:`mpi_exercises.executor`: runs any schedule on a communicator;
- :mod:`mpi_exercises.bench`: the benchmarks and their one measurement core;
- :mod:`mpi_exercises.info`: which MPI, which placement.

The front doors

    from mpi_exercises import allreduce, barrier, broadcast, allgather, alltoall

are imported on first use, so that ``import mpi_exercises`` (and the CLI's ``--help``)
does not start MPI.
"""

_FRONT_DOORS = ("allreduce", "barrier", "broadcast", "allgather", "alltoall")


def __getattr__(name):
    if name in _FRONT_DOORS:
        from importlib import import_module

        func = getattr(import_module(f".collectives.{name}", __name__), name)
        globals()[name] = func
        return func
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
