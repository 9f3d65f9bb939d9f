"""The test harness itself: a deadlocked MPI job must fail within its timeout, not hang; a
driver run once per number of ranks (tests/by_size.py) fails where one of its runs fails."""

import subprocess
import time

import pytest

from tests.mpirun import run_by_size, run_mpi

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



# a driver that says it passed on every size but exits 1 on 3 ranks, and checks its communicator
BY_SIZE = """import sys
from tests.mpirun import sweep_comm
c = sweep_comm()
assert c.allreduce(c.Get_rank()) == c.Get_size() * (c.Get_size() - 1) // 2
if c.Get_rank() == 0:
    print("SWEEP OK on", c.Get_size(), "ranks")
sys.exit(1 if c.Get_size() == 3 else 0)
"""


@pytest.mark.mpi
def test_a_driver_run_by_size_fails_where_one_run_fails(tmp_path):
    driver = tmp_path / "driver.py"
    driver.write_text(BY_SIZE)
    runs = run_by_size([1, 2, 4], [str(driver)], "SWEEP OK", timeout=60)
    assert {p: out.splitlines()[0] for p, out in runs.items()} == {p: f"SWEEP OK on {p} ranks" for p in (1, 2, 4)}
    with pytest.raises(AssertionError, match=r"runs not ok: \[3\]"):
        run_by_size([1, 2, 3, 4], [str(driver)], "SWEEP OK", timeout=60)
