"""The test harness itself: a deadlocked MPI job must fail within its timeout, not hang."""

import subprocess
import time

import pytest

from tests.mpirun import run_mpi

DEADLOCK = ("from mpi4py import MPI; import numpy as np; c = MPI.COMM_WORLD; "
            "b = np.empty(1); c.Recv(b, source=1 - c.rank)")   # both ranks receive first


@pytest.mark.mpi
def test_a_deadlock_becomes_a_timeout_and_the_job_is_killed():
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_mpi(2, ["-c", DEADLOCK], timeout=5, sleep_while_waiting=True)
    assert time.monotonic() - start < 30
    left = subprocess.run(["pgrep", "-f", "c.Recv\\(b, source=1 - c.rank\\)"], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"processes left behind: {left.stdout}"


@pytest.mark.mpi
def test_a_failing_rank_fails_the_job():
    res = run_mpi(2, ["-c", "from mpi4py import MPI; import sys; sys.exit(3 if MPI.COMM_WORLD.rank else 0)"],
                  timeout=30, sleep_while_waiting=True)
    assert res.returncode != 0

