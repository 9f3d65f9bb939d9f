"""benchmarks/collectives_vs_mpi.py under mpiexec: a short run's JSON holds every algorithm of
the registry in every mode against MPI's collective, its summary agrees with its own results,
and bad arguments end in one line and exit status 2."""

from __future__ import annotations

import json

import pytest

from mpi_exercises.bench.records import MODES
from netmodels.algorithms import registry
from tests.mpirun import run_mpi, run_mpi_ok

pytestmark = pytest.mark.mpi
SCRIPT = "benchmarks/collectives_vs_mpi.py"


def test_a_short_run_times_every_algorithm_and_summarises_its_own_results(tmp_path):
    out = tmp_path / "c.json"
    res = run_mpi_ok(2, [SCRIPT, "--collectives", "alltoall,barrier", "--sizes", "8,64", "--iterations", "3",
                         "--warmup", "1", "--rounds", "1", "--inner", "2", "--no-progress", "--json", str(out)],
                     timeout=180)
    assert "bare Sendrecv of the same bytes" in res.stdout and "results written to" in res.stdout
    data = json.loads(out.read_text())
    assert data["environment"]["ranks"] == 2 and isinstance(data["oversubscribed"], bool)
    for collective, sizes in (("alltoall", {1, 8}), ("barrier", {0})):
        rows = data["results"][collective]
        assert all(r["correct"] for r in rows)
        want = {(n, a, m) for n in sizes for a in registry.names(collective, short=True) for m in MODES}
        want |= {(n, "mpi", "mpi") for n in sizes}
        if collective == "alltoall":
            want |= {(n, "sendrecv", "default") for n in sizes}
        assert {(r["nelems"], r["algorithm"], r["mode"]) for r in rows} == want
    # the summary's best and ratio, recomputed from the results (the bare exchange is not ours)
    for row in data["summary"]:
        rows = data["results"][row["collective"]]
        n = row["bytes"] // 8
        mpi = next(r["median_s"] for r in rows if r["nelems"] == n and r["algorithm"] == "mpi")
        assert row["mpi_median_s"] == mpi and len(row["load_average_1min"]) == 2
        for mode in MODES:
            ours = {r["algorithm"]: r["median_s"] for r in rows
                    if r["nelems"] == n and r["mode"] == mode and r["algorithm"] != "sendrecv"}
            best = min(ours, key=ours.get)
            assert row[mode]["best"] == best and row[mode]["ratio"] == pytest.approx(ours[best] / mpi)
    assert len(data["summary"]) == 3


@pytest.mark.parametrize("args, says", [(["--sizes", "12"], "multiples of 8"),
                                        (["--collectives", "scatter"], "--collectives"),
                                        (["--json", "/proc/x/y.json"], "--json")])
def test_bad_arguments_end_in_one_line_and_status_2(args, says):
    res = run_mpi(2, [SCRIPT, *args], timeout=60)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "Traceback" not in res.stderr
