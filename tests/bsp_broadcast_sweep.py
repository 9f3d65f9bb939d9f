"""Driver run by tests/test_bsp_broadcast_mpi.py on P ranks, for every P in one job
(tests/by_size.py; alone: ``mpiexec -n P python -m tests.bsp_broadcast_sweep``).

Runs the broadcasts of netmodels.models.bsp (binomial, flat, two-phase) with the MPI executor
at sizes 0, 1, P - 1, P + 1 and 1000, twice each (persistent requests reused), against MPI's
own Bcast.  Prints one line per failure and ``checked <count>`` or ``SWEEP FAILED`` on rank 0;
exit status 0 only if everything passed.
"""

import numpy as np
from mpi4py import MPI

from mpi_exercises.executor import Executor
from netmodels.algorithms import broadcast
from tests.mpirun import finish_sweep, sweep_comm

comm = sweep_comm()   # COMM_WORLD, or the first P ranks of it under tests/by_size.py
rank, size = comm.Get_rank(), comm.Get_size()
failures, checked = [], 0
for build in (broadcast.binomial, broadcast.flat, broadcast.two_phase):
    for n in sorted({0, 1, max(size - 1, 1), size + 1, 1000}):
        schedule = build(size, n)
        buf = np.random.default_rng(rank).random(n) + rank        # different on every rank
        want = buf.copy()
        comm.Bcast([want, MPI.DOUBLE], root=0)
        ex = Executor(comm, schedule, np.float64, MPI.SUM)
        for _ in range(2):                                         # persistent requests reused
            got = buf.copy()
            ex.run(got)
            if not np.array_equal(got, want):
                failures.append(f"{schedule.name} on {size} ranks, n = {n}: rank {rank} differs from MPI.Bcast")
        ex.free()
        checked += 1
finish_sweep(comm, failures, f"checked {checked}", "SWEEP FAILED")
