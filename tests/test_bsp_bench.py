"""The BSP benchmark: its h-relations, and the command under mpiexec (timeouts turn a deadlock
into a failure).  Timings are never asserted: the machine is shared."""

import json
from collections import Counter

import pytest

from mpi_exercises.bench import bsp_bench
from mpi_exercises.bench import placement
from tests.mpirun import run_mpi_ok

QUICK = ["--repetitions", "5", "--warmup", "2", "--target", "0", "--no-progress"]   # exactly 5 samples per h


@pytest.mark.parametrize("unit", ["words", "messages"])
@pytest.mark.parametrize("P", [2, 3, 4, 7])
@pytest.mark.parametrize("h", [0, 1, 5, 6, 64])
def test_every_superstep_is_an_h_relation_whose_sends_match_its_receives(unit, P, h):
    sent, received = Counter(), Counter()
    for r in range(P):
        sends, recvs = bsp_bench.plan(r, P, h, unit)
        assert sum(c for *_, c in sends) == h and sum(c for *_, c in recvs) == h
        if unit == "messages":
            assert len(sends) == len(recvs) == h and all(c == 1 for *_, c in sends)
        else:
            assert len(sends) == min(h, P - 1)              # one message per destination
        for peer, tag, _, c in sends:
            assert peer != r
            sent[(r, peer, tag)] += c
        for peer, tag, _, c in recvs:
            received[(peer, r, tag)] += c
    assert sent == received


@pytest.mark.mpi
@pytest.mark.parametrize("P", [2, 4])
@pytest.mark.parametrize("unit, hs", [("words", "0,64,1k,8k"), ("messages", "0,1,4,8")])
def test_bsp_writes_results_and_fit(tmp_path, P, unit, hs):
    out = tmp_path / "bsp.json"
    res = run_mpi_ok(P, ["-m", "mpi_exercises", "bsp", "--unit", unit, "--h", hs, *QUICK,
                         "--json", str(out)], timeout=120)
    assert "g =" in res.stdout and "l =" in res.stdout
    data = json.loads(out.read_text())
    assert data["benchmark"] == "bsp-h-relation" and data["parameters"]["unit"] == unit
    assert [r["h"] for r in data["results"]] == [int(x) if x[-1] != "k" else 1024 * int(x[:-1])
                                                 for x in hs.split(",")]
    for r in data["results"]:
        assert r["samples"] == 5 and 0 < r["min_s"] <= r["median_s"] <= r["max_s"]
        assert len(r["times_s"]) == 5 and r["median_ci_s"][0] <= r["median_s"] <= r["median_ci_s"][1]
    assert data["rounds"]["stopped_by"] == "fixed" and "slowest rank" in data["timing_method"]
    for key in ("fit", "fit_min"):
        f = data[key]
        assert f["g_ci_s"][0] <= f["g_s"] <= f["g_ci_s"][1]
        assert f["l_ci_s"][0] <= f["l_s"] <= f["l_ci_s"][1]
    assert data["environment"]["ranks"] == P
    over = P > placement.usable_cores()
    assert data["oversubscribed"] is over
    assert ("WARNING" in res.stderr) is over and ("oversubscribed" in res.stdout) is over
