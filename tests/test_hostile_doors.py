"""The front doors given what is no communicator, or ``check`` differing between ranks: a
ValueError naming the problem on every rank, never MPI's error stack nor a rank left
waiting in the agreement while the other waits in the exchange."""

from __future__ import annotations

import pytest

from tests.mpirun import run_mpi

pytestmark = pytest.mark.mpi

DRIVER = """
import sys
import numpy as np
from mpi4py import MPI
from mpi_exercises import allgather, allreduce, alltoall, barrier, broadcast
from tests.mpirun import finish_sweep

comm = MPI.COMM_WORLD
rank, P = comm.rank, comm.size
DOORS = {
    "allreduce": lambda c, x, check: allreduce(c, x, check=check),
    "allgather": lambda c, x, check: allgather(c, x, check=check),
    "alltoall": lambda c, x, check: alltoall(c, x if isinstance(x, list) else np.ones((P, 2)), check=check),
    "broadcast": lambda c, x, check: broadcast(c, x, check=check),
    "barrier": lambda c, x, check: barrier(c, check=check),
}
failures = []
freed = comm.Dup()
freed.Free()
for name, call in DOORS.items():
    for what, c in (("MPI.COMM_NULL", MPI.COMM_NULL), ("a freed communicator", freed), ("None", None)):
        for check in (True, False):
            try:
                call(c, np.ones(3), check)
                failures.append(f"{name} accepted {what}")
            except ValueError as exc:
                if "comm" not in str(exc):
                    failures.append(f"{name} {what}: {exc}")
            except Exception as exc:
                failures.append(f"{name} {what}: {type(exc).__name__} {exc}")
# check=True on one rank, False on the other, both ways round; then a bad argument on the
# rank whose call is unchecked: each time a ValueError on every rank, and the communicator
# still works afterwards, checked and unchecked
for name, call in DOORS.items():
    for first in (True, False):
        c = comm.Dup()
        try:
            call(c, np.ones(3), first if rank == 0 else not first)
            failures.append(f"{name}: check={first} on rank 0 only accepted")
        except ValueError as exc:
            if f"check = {first} on rank 0, {not first} on rank 1" not in str(exc):
                failures.append(f"{name}: {exc}")
        for check in (True, False, False, True):
            call(c, np.ones(3), check)
        c.Free()
    if name != "barrier":
        c = comm.Dup()
        try:
            call(c, np.ones(3) if rank == 0 else [[1.0], [2.0, 3.0]], rank == 0)
            failures.append(f"{name}: a ragged input on the unchecked rank accepted")
        except ValueError as exc:
            if "invalid arguments on rank 1" not in str(exc) and rank == 0:
                failures.append(f"{name}: {exc}")
        for check in (False, True, False):
            call(c, np.ones(3), check)
        c.Free()
finish_sweep(comm, failures, "front doors: no communicator and differing check refused on every rank", "FAILED")
"""


def test_no_communicator_and_a_check_that_differs_raise_on_every_rank():
    res = run_mpi(2, ["-c", DRIVER], timeout=30, sleep_while_waiting=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "refused on every rank" in res.stdout
