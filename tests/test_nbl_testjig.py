"""The f(L) test jig (Littlefield 1992, Table 1) under mpiexec, with small sizes."""

import json

import numpy as np
import pytest

from mpi_exercises.bench import placement, nbl_testjig
from tests.mpirun import run_mpi, run_mpi_ok

QUICK = ["--sizes", "60,600,6000", "--repetitions", "5", "--inner", "2", "--warmup", "1", "--time-budget", "1",
         "--no-progress"]


@pytest.mark.mpi
def test_four_ranks_measure_l_1_2_4_6_and_write_table1(tmp_path):
    out = tmp_path / "jig.json"
    res = run_mpi_ok(4, ["-m", "mpi_exercises", "nbl-testjig", *QUICK, "--allow-oversubscribed",
                         "--json", str(out)], timeout=90)
    assert "T(L=6)" in res.stdout
    data = json.loads(out.read_text())
    over = placement.usable_cores() < 4
    assert data["oversubscribed"] is over and (nbl_testjig.OVERSUBSCRIBED_NOTE in res.stdout) is over
    assert data["parameters"]["links"] == [1, 2, 4, 6]
    assert sorted({(r["L"], r["S"]) for r in data["results"]}) == [
        (L, S) for L in (1, 2, 4, 6) for S in (60, 600, 6000)]
    for r in data["results"]:
        assert 0 < r["min_s"] <= r["median_s"] <= r["max_s"] and r["bytes"] == 8 * r["S"]
    assert 0 < data["combine"]["c2_s_per_elem"] < 1e-6 and 0 < data["combine"]["c3_s_per_elem"] < 1e-6
    tab = data["table"]
    assert tab["S"] == [60, 600, 6000] and set(tab["T_s"]) == {"1", "2", "4", "6"}
    # the table is the arithmetic of Table 1 applied to the minimum times
    T = {int(L): np.array(v) for L, v in tab["T_s"].items()}
    mins = {(r["L"], r["S"]): r["min_s"] for r in data["results"]}
    assert T[4][1] == mins[4, 600]
    if tab["f"] is not None:
        d1 = np.diff(T[1])
        np.testing.assert_allclose(tab["f"]["6"], np.diff(T[6]) / d1)


@pytest.mark.mpi
@pytest.mark.parametrize("wait", ["block", "yield"])
def test_two_ranks_measure_only_l_1_and_2(tmp_path, wait):
    out = tmp_path / "jig.json"
    run_mpi_ok(2, ["-m", "mpi_exercises", "nbl-testjig", *QUICK, "--wait", wait, "--json", str(out)], timeout=60)
    data = json.loads(out.read_text())
    assert data["parameters"]["links"] == [1, 2] and data["parameters"]["wait"] == wait
    assert data["oversubscribed"] is (placement.usable_cores() < 2)
    assert {r["L"] for r in data["results"]} == {1, 2}
    for r in data["results"]:   # 5 samples in the first rounds, more where the interval was wide (1 s budget)
        assert len(r["times_s"]) == r["samples"] >= 5
        assert r["median_ci_s"][0] <= r["median_s"] <= r["median_ci_s"][1]
    assert data["parameters"]["time_budget_s"] == 1 and "time / inner" in data["timing_method"]
    assert [sorted(o) for o in data["rounds"]["order_per_round"]] == [list(range(6))] * data["rounds"]["rounds"]


@pytest.mark.mpi
def test_extra_ranks_wait():
    res = run_mpi_ok(5, ["-m", "mpi_exercises", "nbl-testjig", "--sizes", "1,10", "--repetitions", "2",
                         "--inner", "1", "--target", "0", "--no-progress", "--allow-oversubscribed"], timeout=90)
    assert "T(L=6)" in res.stdout


def test_table_from_known_times_reproduces_the_papers_arithmetic():
    from netmodels.models.machines import DELTA_TABLE1

    results = [{"L": L, "S": S, "min_s": t} for L, ts in DELTA_TABLE1["T"].items()
               for S, t in zip(DELTA_TABLE1["S"], ts)]
    tab = nbl_testjig.table(results, "min_s")
    np.testing.assert_allclose(tab["f"]["2"], [106 / 65, 267 / 154, 440 / 232])
    assert "f(4)=" in nbl_testjig.report(tab)


def test_link_counts():
    assert nbl_testjig.link_counts(2) == [1, 2]
    assert nbl_testjig.link_counts(4) == nbl_testjig.link_counts(9) == [1, 2, 4, 6]


@pytest.mark.mpi
def test_oversubscribed_run_is_refused_without_the_flag(tmp_path):
    nprocs = placement.usable_cores() + 1
    out = tmp_path / "jig.json"
    res = run_mpi(nprocs, ["-m", "mpi_exercises", "nbl-testjig", *QUICK, "--json", str(out)], timeout=60)
    assert res.returncode == 2 and "refusing" in res.stderr and "Traceback" not in res.stderr
    assert not out.exists()


def test_report_of_oversubscribed_data_says_so_first():
    results = [{"L": L, "S": S, "min_s": 1e-6 * L * S, "median_s": 1e-6 * L * S} for L in (1, 2) for S in (10, 20)]
    tab = nbl_testjig.table(results, "min_s")
    assert nbl_testjig.report(tab, True).splitlines()[0] == nbl_testjig.OVERSUBSCRIBED_NOTE
    assert nbl_testjig.OVERSUBSCRIBED_NOTE not in nbl_testjig.report(tab, False)
