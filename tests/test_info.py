"""``python -m mpi_exercises info`` under mpiexec: library, launcher, placement, oversubscription."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mpi_exercises.bench import placement
from .mpirun import ROOT, mpiexec_path, run_mpi_ok

pytestmark = pytest.mark.mpi


@pytest.mark.parametrize("nprocs", [1, 2, 3])
def test_info_reports_the_library_and_the_placement(nprocs, tmp_path):
    out = tmp_path / "info.json"
    res = run_mpi_ok(nprocs, ["-m", "mpi_exercises", "info", "--json", str(out)])
    info = json.loads(out.read_text())
    place = info["placement"]
    cores = placement.usable_cores()
    assert info["ranks"] == nprocs and info["mpi_vendor"].startswith("MPICH")
    assert info["thread_level"].startswith("MPI_THREAD_")
    assert place["launcher"] == "mpiexec (Hydra)"
    assert place["ranks_per_node"] == [nprocs] and place["node_of_rank"] == [0] * nprocs
    assert place["nodes"][0]["cores"] == cores
    assert place["oversubscribed"] is (nprocs > cores)
    assert ("OVERSUBSCRIBED" in res.stdout) is (nprocs > cores)
    assert f"ranks         {nprocs} on 1 node(s)" in res.stdout


def test_benchmark_results_record_the_placement(tmp_path):
    out = tmp_path / "pp.json"
    run_mpi_ok(2, ["-m", "mpi_exercises", "pingpong", "--sizes", "0,8", "--iterations", "20", "--target", "0",
                   "--no-progress", "--json", str(out)])
    data = json.loads(out.read_text())
    place = data["environment"]["placement"]
    assert place["ranks_per_node"] == [2] and place["oversubscribed"] is data["oversubscribed"]


def test_rank_ranges_are_compact():
    from mpi_exercises.collectives._door import rank_list

    assert rank_list([0, 1, 2, 5, 7, 8]) == "ranks 0-2, 5, 7-8" and rank_list([3]) == "rank 3"


# a rank's threads once numpy is imported, after the kit's command line ("kit") or without it
THREADS = """
import sys
if sys.argv[1] == "kit":
    import mpi_exercises.__main__  # noqa: F401 (what `python -m mpi_exercises` runs first)
import numpy  # noqa: F401
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("Threads:")))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists() or len(os.sched_getaffinity(0)) < 2,
                    reason="counts threads in /proc (Linux), and OpenBLAS starts one thread per core (2 or more)")
def test_a_rank_runs_one_blas_thread_unless_its_user_sets_it():
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}

    def threads(how: str, **extra) -> int:
        res = subprocess.run([mpiexec_path(), "-n", "1", sys.executable, "-c", THREADS, how], cwd=ROOT,
                             env={**env, **extra}, capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        return int(res.stdout.split()[-1])

    assert threads("kit") == 1
    assert threads("numpy alone") > 1                    # OpenBLAS's pool: what the line above avoids
    assert threads("kit", OPENBLAS_NUM_THREADS="2") == 2  # the user's own setting is kept
