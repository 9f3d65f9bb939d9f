"""Runnable mpi4py implementations of the algorithms of the course, and benchmarks.

Run ``python -m mpi_exercises --help`` for the command-line tools, under
``mpiexec -n P`` on a laptop or ``srun`` on a cluster.
"""
