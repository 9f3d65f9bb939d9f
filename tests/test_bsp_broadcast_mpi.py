"""The broadcasts of netmodels.models.bsp run by the MPI executor, against MPI's own Bcast."""

import pytest

from tests.mpirun import run_mpi_ok

SCRIPT = """
import numpy as np
from mpi4py import MPI
from mpi_exercises.executor import Executor
from netmodels.algorithms import broadcast

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
checked = 0
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
            assert np.array_equal(got, want), (schedule.name, size, n, rank)
        ex.free()
        checked += 1
if rank == 0:
    print("checked", checked)
"""


@pytest.mark.mpi
@pytest.mark.parametrize("P", [1, 2, 3, 4, 5])
def test_broadcasts_equal_mpi_bcast(P):
    res = run_mpi_ok(P, ["-c", SCRIPT], timeout=120, sleep_while_waiting=True)
    sizes = {0, 1, max(P - 1, 1), P + 1, 1000}
    assert f"checked {3 * len(sizes)}" in res.stdout
