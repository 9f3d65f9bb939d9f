"""The broadcasts of netmodels.models.bsp run by the MPI executor, against MPI's own Bcast:
one mpiexec job for P = 1..5 (tests/by_size.py runs tests/bsp_broadcast_sweep.py on each P in
turn), a test for each P."""

import pytest

from tests.mpirun import run_mpi, sections_by_size

SIZES = [1, 2, 3, 4, 5]


@pytest.fixture(scope="module")
def runs():
    """Each P's output, ending with its driver's ``exit N``, and the job."""
    res = run_mpi(max(SIZES), ["-m", "tests.by_size", ",".join(map(str, SIZES)), "-m", "tests.bsp_broadcast_sweep"],
                  timeout=240, sleep_while_waiting=True)
    return sections_by_size(res.stdout), res


@pytest.mark.mpi
@pytest.mark.parametrize("P", SIZES)
def test_broadcasts_equal_mpi_bcast(runs, P):
    sections, res = runs
    out = sections.get(P, "")
    sizes = {0, 1, max(P - 1, 1), P + 1, 1000}
    assert out.endswith("exit 0\n") and f"checked {3 * len(sizes)}\n" in out, (
        f"{' '.join(res.args)} exited {res.returncode}\n--- stdout\n{res.stdout}\n--- stderr\n{res.stderr[-3000:]}")
