"""mpi_exercises.allgather and mpi_exercises.alltoall (mpi_exercises.collectives) under mpiexec, against MPI's own.

One mpiexec job runs tests/collectives_sweep.py (every algorithm x k or ppn x sizes x dtypes,
then the bad-argument cases) on P = 1 to 6 and 8 ranks in turn (tests/by_size.py); timeouts turn a deadlock into a
failure.  The commands are checked for JSON output and message counts (their bad
arguments: tests/test_cli_errors.py).
"""

import json
import subprocess
import sys

import pytest

from tests.mpirun import ROOT, run_by_size, run_mpi_ok


@pytest.mark.mpi
def test_sweep_matches_mpi_and_bad_arguments_raise_everywhere():
    # on 1 to 6 and 8 ranks, one job (tests/by_size.py)
    run_by_size([1, 2, 3, 4, 5, 6, 8], ["tests/collectives_sweep.py"], "SWEEP OK", timeout=600)


@pytest.mark.mpi
def test_allgather_cli_checks_against_mpi_and_writes_json(tmp_path):
    out = tmp_path / "ag.json"
    res = run_mpi_ok(3, ["-m", "mpi_exercises", "allgather", "--algorithm", "k-prefix", "--k", "2", "-N", "101",
                         "--dtype", "int32", "--repeat", "3", "--json", str(out)], timeout=90)
    assert "correct (vs MPI.Allgather)" in res.stdout
    data = json.loads(out.read_text())
    assert data["correct"] is True and data["parameters"]["k"] == 2
    assert 0 < data["results"]["min_s"] <= data["results"]["median_s"]


@pytest.mark.mpi
def test_alltoall_cli_counts_messages_inside_and_between_nodes(tmp_path):
    """8 ranks as 2 nodes of 4: direct sends 8 x 7 = 56 messages, 8 x 3 = 24 inside nodes;
    multilevel 2 x 4 x 3 = 24 direct inside nodes, 2 x 3 gathers and 2 x 3 scatters
    (every non-leader of a node to and from its leader, once per other node), and
    2 x 1 leader messages between the nodes: 38."""
    out = tmp_path / "a2a.json"
    res = run_mpi_ok(8, ["-m", "mpi_exercises", "alltoall", "--ppn", "4", "-N", "3", "--repeat", "2",
                         "--warmup", "0", "--json", str(out)], timeout=180)
    assert "correct (vs MPI.Alltoall)" in res.stdout and "messages: 56 -> 38" in res.stdout
    data = json.loads(out.read_text())
    ml, direct = data["messages"]["multilevel"], data["messages"]["direct"]
    assert (direct["inside"], direct["between"]) == (24, 32)
    assert (ml["inside"], ml["between"]) == (36, 2)
    assert [r["between"] for r in ml["per_rank"]] == [1, 0, 0, 0, 1, 0, 0, 0]   # the leaders
    assert all(r == {"inside": 3, "between": 4} for r in direct["per_rank"])
    assert data["oversubscribed"] is True and data["correct"] is True


@pytest.mark.mpi
@pytest.mark.parametrize("command, extra", [
    ("bench-allgather", ["--algorithms", "ring,k-shift", "--k", "2"]),
    ("bench-alltoall", ["--algorithms", "pairwise,multilevel", "--ppn", "1", "--inter-delay", "1e-6"])])
def test_benchmarks_report_every_mode_against_mpi(tmp_path, command, extra):
    out = tmp_path / "bench.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", command, "--sizes", "1,100", "--iterations", "5", "--warmup", "1",
                         "--target", "0", "--no-progress", "--json", str(out), *extra], timeout=120)
    assert "best of ours" in res.stdout
    data = json.loads(out.read_text())
    algorithms = extra[1].split(",")
    modes = ("default", "check=False", "executor")
    assert {(r["nelems"], r["algorithm"], r["mode"]) for r in data["results"]} == \
        {(n, a, m) for n in (1, 100) for a in algorithms for m in modes} | {(1, "mpi", "mpi"), (100, "mpi", "mpi")}
    assert all(r["correct"] for r in data["results"])
    for mode in modes:
        row = data["ratios"]["100"][mode]
        assert row["best_ratio"] == min(row[a] for a in algorithms)
    if command == "bench-alltoall":     # ppn 1: every message goes between nodes
        assert data["messages"]["multilevel"]["between"] == 2 and data["messages"]["pairwise"]["inside"] == 0


def test_importing_the_front_doors_does_not_start_mpi():
    code = ("import sys, mpi_exercises, mpi_exercises.collectives.allgather, mpi_exercises.collectives.alltoall, "
            "mpi_exercises.collectives.broadcast, mpi_exercises.bench.allgather, mpi_exercises.bench.alltoall; "
            "assert 'mpi4py.MPI' not in sys.modules, 'MPI imported'; "
            "from mpi_exercises import allgather, alltoall, broadcast; "
            "assert callable(allgather) and callable(alltoall) and callable(broadcast)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 0, res.stderr
