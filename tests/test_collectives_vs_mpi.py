"""benchmarks/collectives_vs_mpi.py under mpiexec: a short run's JSON holds every algorithm of
the registry in every mode against MPI's collective, its summary agrees with its own results,
and bad arguments end in one line and exit status 2."""

from __future__ import annotations

import json

import pytest

from mpi_exercises.bench.records import MODES
from netmodels.algorithms import registry
from tests.mpirun import ROOT, run_mpi, run_mpi_ok

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
    # before and after: every row both runs hold (the stored before-file has 8 B, not 64 B),
    # each ratio recomputed from its own file's medians
    before = json.loads((ROOT / "book/data/collectives_vs_mpi_before.json").read_text())["results"]
    pairs = data["before_after"]
    assert "rows slower than before" in res.stdout and pairs
    assert {(p["collective"], p["bytes"]) for p in pairs} == {("alltoall", 8), ("barrier", 0)}

    def ratio(results, p):
        rows = results[p["collective"]]
        n = p["bytes"] // 8
        med = {(r["algorithm"], r["mode"]): r["median_s"] for r in rows if r["nelems"] == n}
        return med[(p["algorithm"], p["mode"])] / med[("mpi", "mpi")]

    for p in pairs:
        assert p["before"] == pytest.approx(ratio(before, p)) and p["now"] == pytest.approx(ratio(data["results"], p))
        assert p["before_interval"][0] <= p["before"] <= p["before_interval"][1]
        assert p["slower"] == (p["now_interval"][0] > p["before_interval"][1])
    # one pair per mode of every registered algorithm the stored file holds too (a new one has no before)
    held = {c: {r["algorithm"] for r in before[c]} for c in ("alltoall", "barrier")}
    assert len(pairs) == len(MODES) * sum(len([a for a in registry.names(c, short=True) if a in held[c]])
                                          for c in held)


def test_rev_times_an_earlier_revision_in_the_same_rounds(tmp_path):
    out = tmp_path / "c.json"
    res = run_mpi_ok(2, [SCRIPT, "--collectives", "broadcast,barrier", "--sizes", "8", "--iterations", "3",
                         "--warmup", "1", "--rounds", "1", "--inner", "2", "--no-progress", "--before", "none",
                         "--rev", "HEAD", "--json", str(out)], timeout=180)
    assert "in the same interleaved rounds" in res.stdout
    data = json.loads(out.read_text())
    assert data["rev"] == "HEAD" and data["before_after"] == []
    for collective in ("broadcast", "barrier"):
        now = {(r["nelems"], r["algorithm"], r["mode"]): r["median_s"] for r in data["results"][collective]}
        then = {(r["nelems"], r["algorithm"][:-len("@HEAD")], r["mode"]): r["median_s"]
                for r in data["results_rev"][collective]}
        assert all(r["correct"] for r in data["results_rev"][collective])
        assert "mpi" not in {a for _, a, _ in then} and set(then) == {k for k in now if k[1] != "mpi"}
        rows = [r for r in data["same_run"] if r["collective"] == collective]
        assert len(rows) == len(then)
        for r in rows:
            key = (r["bytes"] // 8, r["algorithm"], r["mode"])
            assert r["now_over_before"] == pytest.approx(now[key] / then[key])
            assert r["rounds_paired"] == 1 and not r["slower"]      # one round: no verdict
            assert r["interval"][0] <= r["round_ratio_median"] <= r["interval"][1]


@pytest.mark.parametrize("args, says", [(["--sizes", "12"], "multiples of 8"),
                                        (["--collectives", "scatter"], "--collectives"),
                                        (["--json", "/proc/x/y.json"], "--json"),
                                        (["--before", "/nonexistent/before.json"], "--before"),
                                        (["--rev", "nonesuch"], "--rev: git has no")])
def test_bad_arguments_end_in_one_line_and_status_2(args, says):
    res = run_mpi(2, [SCRIPT, *args], timeout=60)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "Traceback" not in res.stderr
