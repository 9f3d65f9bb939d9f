"""mpi_exercises.allreduce and the executor under mpiexec, against MPI.Allreduce.

One mpiexec job runs tests/allreduce_sweep.py (every algorithm x N x dtypes x ops, then the
bad-argument cases) on P = 1 to 6 ranks in turn (tests/by_size.py); timeouts turn a deadlock
into a failure.
"""

import json
import subprocess
import sys

import pytest

from tests.mpirun import ROOT, run_by_size, run_mpi_ok


@pytest.mark.mpi
def test_sweep_matches_mpi_allreduce_and_bad_arguments_raise_everywhere():
    # on 1 to 6 ranks, one job (tests/by_size.py)
    run_by_size([1, 2, 3, 4, 5, 6], ["tests/allreduce_sweep.py"], "SWEEP OK", timeout=600)


@pytest.mark.mpi
def test_cli_checks_against_mpi_and_writes_json(tmp_path):
    out = tmp_path / "ar.json"
    res = run_mpi_ok(4, ["-m", "mpi_exercises", "allreduce", "--algorithm", "snake", "-N", "10001",
                         "--block", "500", "--repeat", "5", "--json", str(out)], timeout=90)
    assert "correct (vs MPI.Allreduce)" in res.stdout and "median" in res.stdout
    data = json.loads(out.read_text())
    assert data["correct"] is True and data["parameters"]["block"] == 500
    assert 0 < data["results"]["min_s"] <= data["results"]["median_s"]


LEAK = """
from mpi4py import MPI
import numpy as np
from mpi_exercises import allreduce
x = np.ones(8)
for i in range(3000):    # MPICH allows about 2048 communicators at once
    c = MPI.COMM_WORLD.Dup()
    allreduce(c, x, "ring")
    c.Free()
print("no leak")
"""


@pytest.mark.mpi
def test_freeing_a_communicator_frees_its_cached_executors():
    res = run_mpi_ok(2, ["-c", LEAK], timeout=120)
    assert "no leak" in res.stdout


@pytest.mark.mpi
def test_benchmark_runs_and_reports_ratios(tmp_path):
    out = tmp_path / "bench.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "bench-allreduce", "--sizes", "1,1000",
                         "--algorithms", "snake,ring", "--iterations", "10", "--warmup", "2", "--target", "0",
                         "--no-progress", "--json", str(out)], timeout=90)
    assert "best of ours" in res.stdout
    data = json.loads(out.read_text())
    assert {(r["nelems"], r["algorithm"], r["mode"]) for r in data["results"]} == \
        {(n, a, m) for n in (1, 1000) for a in ("snake", "ring") for m in ("default", "check=False", "executor")} \
        | {(1, "mpi", "mpi"), (1000, "mpi", "mpi")}
    assert all(r["correct"] for r in data["results"])
    # the synchronised start: a tight loop of --inner calls after one barrier, stated in the JSON
    assert data["parameters"]["inner"] == 10 and "tight loop of 10 calls" in data["timing_method"]
    assert "tight loop of 10 calls" in res.stdout
    for r in data["results"]:
        assert len(r["times_s"]) == r["samples"] and r["median_ci_s"][0] <= r["median_s"] <= r["median_ci_s"][1]
    for mode in ("default", "check=False", "executor"):
        row = data["ratios"]["1000"][mode]
        assert row["best"] in ("snake", "ring") and row["best_ratio"] == min(row["snake"], row["ring"])


def test_importing_the_package_and_the_cli_does_not_start_mpi():
    code = ("import sys, mpi_exercises, mpi_exercises.collectives.allreduce, mpi_exercises.bench.allreduce, "
            "mpi_exercises.executor; from mpi_exercises.__main__ import build_parser; build_parser(); "
            "assert 'mpi4py.MPI' not in sys.modules, 'MPI imported'; "
            # nor scipy (0.35 s): each of the hundreds of refused or short commands would pay it
            "assert 'scipy' not in sys.modules, 'scipy imported'; "
            "from mpi_exercises import allreduce; assert callable(allreduce)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 0, res.stderr
