"""Runnable mpi4py implementations of the algorithms of the course, and benchmarks.

Run ``python -m mpi_exercises --help`` for the command-line tools, under
``mpiexec -n P`` on a laptop or ``srun`` on a cluster.
"""


def __getattr__(name):
    # ``mpi_exercises.allreduce`` is the front door function; importing it lazily keeps
    # ``import mpi_exercises`` (and the CLI's --help) from starting MPI.
    # (The submodule of the same name is also callable as the function, see allreduce.py.)
    if name == "allreduce":
        from .allreduce import allreduce

        globals()["allreduce"] = allreduce
        return allreduce
    if name == "barrier":  # same for the barrier front door (barrier.py)
        from .barrier import barrier

        globals()["barrier"] = barrier
        return barrier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
